#include "asn/topology/schedule.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace asn::topology {
namespace {

constexpr uint8_t A = 0;
constexpr uint8_t B = 1;
constexpr ScheduleStep kWait{};

constexpr ScheduleStep S(uint8_t length, uint8_t lane) { return {length, lane}; }

// T_d^(p) of the initial schedule, rows of length 1, 2, ... in turn (see schedule.hpp for
// where each reading comes from). The direct rows S_A^(d), S_B^(d) come first.
const std::vector<ScheduleRow>& initial_rows(uint32_t k) {
  static const std::vector<ScheduleRow> k2 = {
      {{S(1, A), kWait}},
      {{S(1, B), kWait}},
  };
  static const std::vector<ScheduleRow> k3 = {
      {{S(1, A), kWait}}, {{S(1, B), kWait}}, {{S(2, A), S(2, B)}},  // d = 1 (2 + 2)
      {{S(2, A), kWait}}, {{S(2, B), kWait}}, {{S(1, B), S(1, A)}},  // d = 2 (1 + 1)
  };
  // 004 L412-429: columns 1-2 of T_13, T_14 and T_11.
  static const std::vector<ScheduleRow> k4 = {
      {{S(1, A), kWait}}, {{S(1, B), kWait}}, {{S(2, A), S(3, A)}}, {{S(3, B), S(2, B)}},
      {{S(2, A), kWait}}, {{S(2, B), kWait}}, {{S(1, B), S(1, A)}}, {{S(3, A), S(3, B)}},
      {{S(3, A), kWait}}, {{S(3, B), kWait}}, {{S(1, A), S(2, A)}}, {{S(2, B), S(1, B)}},
  };
  switch (k) {
    case 2:
      return k2;
    case 3:
      return k3;
    default:
      return k4;
  }
}

std::optional<TopologyError> unsupported_error(const Fabric& fabric) {
  if (fabric.k() > 4) {
    return TopologyError("k", "k = " + std::to_string(fabric.k()) +
                                  "; a conflict-free static schedule exists for k = 2..4 only "
                                  "(two cycles per dimension, 004 L389-396)");
  }
  if (!fabric.power_of_k()) {
    return TopologyError("terminals", "N = " + std::to_string(fabric.terminals()) +
                                          " is not a power of k; the static schedule needs one");
  }
  if (fabric.dimensions() > 2) {
    return TopologyError("dimensions",
                         std::to_string(fabric.dimensions()) +
                             " dimensions; the static schedule covers 1 or 2 (an initial and a "
                             "final part, 004 L400)");
  }
  return std::nullopt;
}

// Depth-first search over the rows of each request, longest requests first. At most k <= 4
// requests: fixed arrays, no allocation (plans run for every permutation in the tests).
class Selector {
 public:
  Selector(const StaticSchedule& schedule, std::span<const uint8_t> lengths)
      : schedule_(schedule), lengths_(lengths) {
    std::iota(order_.begin(), order_.begin() + lengths.size(), uint8_t{0});
    std::stable_sort(order_.begin(), order_.begin() + lengths.size(),
                     [&](uint8_t a, uint8_t b) { return lengths_[a] > lengths_[b]; });
  }

  std::vector<uint8_t> run() {
    if (!place(0)) {
      // Proved impossible by the exhaustive test over every mix of lengths.
      throw std::logic_error("static schedule: no conflict-free choice of rows");
    }
    return {rows_.begin(), rows_.begin() + lengths_.size()};
  }

 private:
  bool place(size_t next) {
    if (next == lengths_.size()) return true;
    const uint8_t request = order_[next];
    const uint8_t length = lengths_[request];
    if (length == 0) {
      rows_[request] = 0;
      return place(next + 1);
    }
    for (unsigned row = 0; row < schedule_.k(); ++row) {
      const ScheduleRow& candidate = schedule_.initial_row(length, row);
      const std::array<uint32_t, 2> bits = {bit(candidate.steps[0]), bit(candidate.steps[1])};
      if ((used_[0] & bits[0]) != 0 || (used_[1] & bits[1]) != 0) continue;
      used_[0] |= bits[0];
      used_[1] |= bits[1];
      rows_[request] = static_cast<uint8_t>(row);
      if (place(next + 1)) return true;
      used_[0] &= ~bits[0];
      used_[1] &= ~bits[1];
    }
    return false;
  }

  // Channels in use per cycle, bit (length * 2 + lane).
  static uint32_t bit(ScheduleStep step) {
    return step.hop() ? uint32_t{1} << (step.length * 2 + step.lane) : 0;
  }

  const StaticSchedule& schedule_;
  std::span<const uint8_t> lengths_;
  std::array<uint8_t, 4> order_{};
  std::array<uint8_t, 4> rows_{};
  std::array<uint32_t, 2> used_{};
};

uint8_t digit_distance(uint32_t from, uint32_t to, uint32_t k) {
  return static_cast<uint8_t>((to + k - from) % k);
}

void check_destinations(const Fabric& fabric, std::span<const uint32_t> destinations) {
  if (destinations.size() != fabric.terminals()) {
    throw TopologyError("destinations", std::to_string(destinations.size()) +
                                            " entries; one per terminal is " +
                                            std::to_string(fabric.terminals()));
  }
  std::vector<bool> taken(fabric.terminals());
  for (size_t source = 0; source < destinations.size(); ++source) {
    const uint32_t to = destinations[source];
    if (to == kIdle) continue;
    if (to >= fabric.terminals() || taken[to]) {
      throw TopologyError(
          "destinations",
          "terminal " + std::to_string(source) + " sends to " + std::to_string(to) +
              (to >= fabric.terminals() ? ", outside the fabric"
                                        : ", which another terminal already sends to"));
    }
    taken[to] = true;
  }
}

}  // namespace

std::optional<std::string> StaticSchedule::unsupported(const Fabric& fabric) {
  if (auto error = unsupported_error(fabric)) return std::string(error->what());
  return std::nullopt;
}

StaticSchedule::StaticSchedule(uint32_t k) : k_(k) {
  if (k < 2 || k > 4) {
    throw TopologyError("k", "k = " + std::to_string(k) +
                                 "; a conflict-free static schedule exists for k = 2..4 only");
  }
  rows_ = initial_rows(k);
}

StaticSchedule StaticSchedule::for_fabric(const Fabric& fabric) {
  if (auto error = unsupported_error(fabric)) throw *error;
  return StaticSchedule(fabric.k());
}

const ScheduleRow& StaticSchedule::initial_row(unsigned length, unsigned row) const {
  if (length == 0 || length >= k_ || row >= k_) {
    throw TopologyError("length", "T_" + std::to_string(length) + "^(" + std::to_string(row) +
                                      "); accepted: lengths 1.." + std::to_string(k_ - 1) +
                                      ", rows 0.." + std::to_string(k_ - 1));
  }
  return rows_[(length - 1) * k_ + row];
}

std::vector<uint8_t> StaticSchedule::select(std::span<const uint8_t> lengths) const {
  if (lengths.size() > k_) {
    throw TopologyError("lengths", std::to_string(lengths.size()) +
                                       " requests; a router has at most k = " + std::to_string(k_));
  }
  for (uint8_t length : lengths) {
    if (length >= k_) {
      throw TopologyError("lengths", "length " + std::to_string(length) + "; accepted: 0.." +
                                         std::to_string(k_ - 1));
    }
  }
  return Selector(*this, lengths).run();
}

std::vector<StaticRoute> plan_static_routes(const Fabric& fabric,
                                            std::span<const uint32_t> destinations) {
  const StaticSchedule schedule = StaticSchedule::for_fabric(fabric);
  check_destinations(fabric, destinations);
  std::vector<StaticRoute> routes(destinations.size());
  if (fabric.dimensions() == 0) return routes;

  // Requests grouped by the router that picks their rows: the source for dimension 0, the
  // destination for dimension 1. Each router has at most k of either.
  const uint32_t k = fabric.k();
  std::vector<std::array<uint32_t, 4>> requests(fabric.routers());
  std::vector<uint8_t> count(fabric.routers());
  auto pick = [&](unsigned dim, bool by_destination) {
    std::fill(count.begin(), count.end(), uint8_t{0});
    for (uint32_t source = 0; source < destinations.size(); ++source) {
      if (destinations[source] == kIdle) continue;
      const uint32_t picker = (by_destination ? destinations[source] : source) / k;
      requests[picker][count[picker]++] = source;
    }
    std::array<uint8_t, 4> lengths{};
    for (uint32_t router = 0; router < fabric.routers(); ++router) {
      for (unsigned i = 0; i < count[router]; ++i) {
        const uint32_t source = requests[router][i];
        const uint32_t from = source / k, to = destinations[source] / k;
        lengths[i] = digit_distance(from / fabric.weight(dim) % k, to / fabric.weight(dim) % k, k);
      }
      const std::vector<uint8_t> rows =
          schedule.select(std::span<const uint8_t>(lengths.data(), count[router]));
      for (unsigned i = 0; i < count[router]; ++i) {
        StaticRoute& route = routes[requests[router][i]];
        (by_destination ? route.final_row : route.initial_row) = rows[i];
      }
    }
  };
  pick(0, false);
  if (fabric.dimensions() == 2) pick(1, true);
  return routes;
}

}  // namespace asn::topology

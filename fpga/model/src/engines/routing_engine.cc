#include "asn/model/engines/routing_engine.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "asn/topology/schedule.hpp"

namespace asn::model::engines {
namespace {

using topology::DestEntry;
using topology::DirectPorts;
using topology::kMaxDimensions;
using topology::kMaxPorts;
using topology::kNoPort;
using topology::PortMapEntry;
using topology::PortRole;
using topology::RouteRegisters;
using topology::RoutingMode;
using topology::ScheduleEntry;
using topology::ScheduleStep;

// One output port the packet could take, with what the priority encoder needs to know. No
// member initialisers: a Candidates buffer of 255 is not zeroed on every decision, and
// channel_candidate() sets every field.
struct Candidate {
  unsigned port;
  unsigned dim;
  uint32_t next;  // the router the port leads to
  VcClass vc_class;
  unsigned vc;        // the least occupied VC of its class
  unsigned first_vc;  // the VCs of its class: [first_vc, last_vc)
  unsigned last_vc;
  uint32_t occupancy;  // of that VC
  uint32_t queue;      // the port's output queue: every VC's packets
  bool room;           // the VC can take a packet
  bool usable;         // its Pi bit
};

// Candidates in priority order: higher dimension first, then lower port. A switch has at
// most 255 ports, so a fixed buffer keeps a decision free of allocation.
class Candidates {
 public:
  bool empty() const { return size_ == 0; }
  const Candidate* begin() const { return items_.data(); }
  const Candidate* end() const { return items_.data() + size_; }
  void add(const Candidate& c) {
    if (size_ < items_.size()) items_[size_++] = c;
  }
  void sort() {
    auto before = [](const Candidate& a, const Candidate& b) {
      return a.dim != b.dim ? a.dim > b.dim : a.port < b.port;
    };
    if (!std::is_sorted(begin(), end(), before)) {
      std::sort(items_.begin(), items_.begin() + size_, before);
    }
  }
  // The priority encoder's output Po, or nothing when Ps is false.
  const Candidate* first_usable() const {
    auto it = std::find_if(begin(), end(), [](const Candidate& c) { return c.usable; });
    return it == end() ? nullptr : it;
  }
  // The shortest-queued candidate of the highest dimension (the "higher dim link", L922).
  const Candidate* highest_dimension_least_occupied() const {
    if (empty()) return nullptr;
    const Candidate* best = begin();
    for (const Candidate& c : *this) {
      if (c.dim == begin()->dim && c.queue < best->queue) best = &c;
    }
    return best;
  }
  // The shortest-queued candidate of any dimension, ties by priority.
  const Candidate* least_occupied() const {
    return empty() ? nullptr : std::min_element(begin(), end(), [](auto& a, auto& b) {
      return a.queue < b.queue;
    });
  }

 private:
  std::array<Candidate, kMaxPorts> items_;
  size_t size_ = 0;
};

// One decision: the switch's registers read once, then the mode's algorithm. With `options`
// set, every choice the algorithm could make in some queue state is collected there instead
// (route_options), through the same candidate code.
class Decision {
 public:
  Decision(const RouterView& view, const PacketHeader& header,
           std::vector<RouteOption>* options = nullptr)
      : view_(view), header_(header), options_(options) {}

  RouteStatus load();
  RouteDecision run(uint32_t random);
  void escape_ports(std::vector<uint16_t>& out) const;

 private:
  RouteDecision route_static();
  RouteDecision route_minimal(PacketHeader next);
  RouteDecision route_ugal(uint32_t random);
  RouteDecision route_aldfb();

  uint32_t digit_of(uint32_t router, unsigned dim) const {
    return dim + 1 == regs_.r ? router / weight_[dim] : router / weight_[dim] % regs_.k;
  }
  uint32_t radix_of(unsigned dim) const { return dim + 1 == regs_.r ? regs_.last_radix : regs_.k; }
  unsigned lanes_of(unsigned dim) const { return topology::lanes_in(regs_, dim); }
  uint32_t router_with(unsigned dim, uint32_t digit) const {
    return own_ + (digit - regs_.own_digits[dim]) * weight_[dim];
  }
  // 004 L888: the 2r-digit link number, the ending router's digits above the starting
  // router's (see topology::Fabric::link_number).
  uint64_t link_number(uint32_t from, uint32_t to) const {
    return uint64_t{to} * weight_[regs_.r] + from;
  }
  // Dimensions still to correct for a destination entry (Dr), one bit each.
  unsigned dimensions_to_correct(const DestEntry& entry) const;
  // Dimensions in which two routers' digits differ: the minimal hops between them.
  unsigned hops_between(uint32_t a, uint32_t b) const;
  bool escape_policy() const { return mode_.vc_policy == topology::VcPolicy::kEscape; }

  // A port the port map names as a channel of this fabric, and its entry.
  bool channel_port(unsigned port, PortMapEntry& entry) const;
  bool channel_candidate(unsigned port, Candidate& out) const;
  bool direct_candidates(const DestEntry& entry, unsigned dims, Candidates& out) const;
  void detour_candidates(unsigned dims, uint32_t dest, Candidates& out) const;
  std::pair<unsigned, uint32_t> pick_vc(unsigned port, unsigned first, unsigned last) const;
  uint32_t port_queue(unsigned port) const;

  RouteDecision fail(RouteStatus status) const {
    RouteDecision d;
    d.status = status;
    d.header = header_;
    return d;
  }
  RouteDecision hop(const Candidate& c, PacketHeader next) const;
  // The candidate when its VC has room (or under the seed's policy, which waits there);
  // else the escape hop.
  RouteDecision take(const Candidate& c, PacketHeader next) const;
  RouteDecision escape(PacketHeader next) const;
  RouteDecision deliver(PacketHeader next) const;
  // route_options: every candidate of `list` on every VC of its class, leaving with `next`.
  void offer(const Candidates& list, const PacketHeader& next) const;
  void offer_escape(PacketHeader next) const;

  const RouterView& view_;
  const PacketHeader& header_;
  std::vector<RouteOption>* options_;
  topology::RouteMode mode_;
  RouteRegisters regs_;
  std::array<uint32_t, kMaxDimensions + 1> weight_{};  // k^i
  uint32_t own_ = 0;
  uint32_t routers_ = 1;
  unsigned ports_ = 0;
  unsigned vcs_ = 1;
  uint32_t depth_ = 0;
  uint32_t dest_ = 0;  // destination router
  DestEntry dest_entry_;
  // The input link, when the packet came from another router.
  std::optional<PortMapEntry> arrival_;
  uint64_t link_in_ = 0;
};

RouteStatus Decision::load() {
  mode_ = view_.mode();
  if (!mode_.enable) return RouteStatus::kDisabled;
  regs_ = view_.registers();
  if (regs_.k < 2 || regs_.r > kMaxDimensions || regs_.lanes == 0 || regs_.last_lanes == 0 ||
      regs_.last_radix == 0 || (regs_.r > 0 && regs_.last_radix > regs_.k)) {
    return RouteStatus::kBadConfig;
  }
  weight_[0] = 1;
  for (unsigned dim = 0; dim < regs_.r; ++dim) {
    if (regs_.own_digits[dim] >= radix_of(dim)) return RouteStatus::kBadConfig;
    own_ += regs_.own_digits[dim] * weight_[dim];
    weight_[dim + 1] = weight_[dim] * regs_.k;
  }
  routers_ = regs_.r == 0 ? 1 : weight_[regs_.r - 1] * regs_.last_radix;
  ports_ = std::min(view_.port_count(), kMaxPorts);
  vcs_ = view_.vcs_per_port();
  depth_ = view_.queue_depth();
  if (vcs_ == 0) return RouteStatus::kBadConfig;

  if (header_.in_port >= ports_) return RouteStatus::kBadInputPort;
  const PortMapEntry in = view_.port_map(header_.in_port);
  if (in.role == PortRole::kChannel) {
    if (in.dimension >= regs_.r || in.digit >= radix_of(in.dimension) ||
        in.digit == regs_.own_digits[in.dimension]) {
      return RouteStatus::kBadInputPort;
    }
    arrival_ = in;
    link_in_ = link_number(router_with(in.dimension, in.digit), own_);
  } else if (in.role != PortRole::kTerminal) {
    return RouteStatus::kBadInputPort;
  }

  dest_ = header_.dest_terminal / regs_.k;
  if (dest_ >= routers_ || dest_ >= view_.dest_entries()) return RouteStatus::kBadDestination;
  dest_entry_ = view_.dest_entry(dest_);
  if (!dest_entry_.valid) return RouteStatus::kBadDestination;
  return RouteStatus::kOk;
}

unsigned Decision::dimensions_to_correct(const DestEntry& entry) const {
  unsigned dims = 0;
  for (unsigned dim = 0; dim < regs_.r; ++dim) {
    if (entry.dims[dim].port_a != kNoPort) dims |= 1u << dim;
  }
  return dims;
}

unsigned Decision::hops_between(uint32_t a, uint32_t b) const {
  unsigned hops = 0;
  for (unsigned dim = 0; dim < regs_.r; ++dim) hops += digit_of(a, dim) != digit_of(b, dim);
  return hops;
}

uint32_t Decision::port_queue(unsigned port) const {
  uint32_t packets = 0;
  for (unsigned vc = 0; vc < vcs_; ++vc) packets += view_.occupancy(port, vc);
  return packets;
}

// The least occupied VC of [first, last), ties to the lower.
std::pair<unsigned, uint32_t> Decision::pick_vc(unsigned port, unsigned first,
                                                unsigned last) const {
  unsigned best = first;
  uint32_t best_occupancy = view_.occupancy(port, first);
  for (unsigned vc = first + 1; vc < last; ++vc) {
    const uint32_t occupancy = view_.occupancy(port, vc);
    if (occupancy < best_occupancy) {
      best = vc;
      best_occupancy = occupancy;
    }
  }
  return {best, best_occupancy};
}

bool Decision::channel_port(unsigned port, PortMapEntry& entry) const {
  if (port >= ports_) return false;
  entry = view_.port_map(port);
  return entry.role == PortRole::kChannel && entry.dimension < regs_.r &&
         entry.digit < radix_of(entry.dimension) &&
         entry.digit != regs_.own_digits[entry.dimension];
}

bool Decision::channel_candidate(unsigned port, Candidate& out) const {
  PortMapEntry entry;
  if (!channel_port(port, entry)) return false;
  out.port = port;
  out.dim = entry.dimension;
  out.next = router_with(entry.dimension, entry.digit);
  if (escape_policy()) {
    // VC 0 is the escape channel; with one VC there is no adaptive VC, and every hop is an
    // escape hop.
    out.vc_class = VcClass::kAdaptive;
    out.first_vc = vcs_ > 1 ? 1 : 0;
    out.last_vc = vcs_;
  } else {
    out.vc_class = arrival_ && link_in_ >= link_number(own_, out.next) ? VcClass::kReverse
                                                                       : VcClass::kForward;
    const unsigned half = vcs_ / 2;  // one VC: both classes share it
    out.first_vc = vcs_ >= 2 && out.vc_class == VcClass::kReverse ? half : 0;
    out.last_vc = vcs_ >= 2 && out.vc_class == VcClass::kForward ? half : vcs_;
  }
  std::tie(out.vc, out.occupancy) = pick_vc(port, out.first_vc, out.last_vc);
  out.queue = port_queue(port);
  out.room = out.occupancy < depth_ && !(escape_policy() && vcs_ == 1);
  out.usable = out.room && out.queue < view_.threshold(port);
  return true;
}

// The direct ports of the dimensions in `dims` (Pr): port_a, port_b and, where the last
// dimension has more lanes, the ports after port_b.
bool Decision::direct_candidates(const DestEntry& entry, unsigned dims, Candidates& out) const {
  for (unsigned dim = regs_.r; dim-- > 0;) {
    if ((dims >> dim & 1) == 0) continue;
    const DirectPorts& direct = entry.dims[dim];
    const unsigned lanes = direct.port_b == kNoPort ? 1 : lanes_of(dim);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const unsigned port = topology::lane_port(direct, lane);
      Candidate c;
      if (!channel_candidate(port, c) || c.dim != dim) return false;
      out.add(c);
    }
  }
  out.sort();
  return true;
}

// Every port of the dimensions in `dims` that does not lead to the destination's digit.
// Ports are visited from the last down, so a port map numbered by dimension (as
// topology::Fabric numbers ports) gives the priority order at once, and sort() has nothing
// to do.
void Decision::detour_candidates(unsigned dims, uint32_t dest, Candidates& out) const {
  std::array<Candidate, kMaxPorts> found;
  unsigned count = 0;
  for (unsigned port = ports_; port-- > 0;) {
    const PortMapEntry entry = view_.port_map(port);
    if (entry.role != PortRole::kChannel || entry.dimension >= regs_.r ||
        (dims >> entry.dimension & 1) == 0 || entry.digit == digit_of(dest, entry.dimension)) {
      continue;  // checked before the queues are read: most ports are not detours
    }
    if (channel_candidate(port, found[count])) ++count;
  }
  // Found highest port first: each dimension's run is reversed back to the lower port first.
  for (unsigned i = 0; i < count;) {
    unsigned end = i;
    while (end < count && found[end].dim == found[i].dim) ++end;
    for (unsigned j = end; j-- > i;) out.add(found[j]);
    i = end;
  }
  out.sort();
}

RouteDecision Decision::hop(const Candidate& c, PacketHeader next) const {
  RouteDecision d;
  d.port = static_cast<uint16_t>(c.port);
  d.vc = static_cast<uint8_t>(c.vc);
  d.vc_class = c.vc_class;
  d.minimal = digit_of(c.next, c.dim) == digit_of(dest_, c.dim);
  d.header = next;
  return d;
}

RouteDecision Decision::take(const Candidate& c, PacketHeader next) const {
  if (!escape_policy() || c.room) return hop(c, next);
  return escape(next);
}

void Decision::escape_ports(std::vector<uint16_t>& out) const {
  out.clear();
  const unsigned dims = dimensions_to_correct(dest_entry_);
  if (dest_entry_.local || dims == 0) return;
  const unsigned dim = static_cast<unsigned>(std::bit_width(dims)) - 1;  // highest first
  const DirectPorts& direct = dest_entry_.dims[dim];
  const unsigned lanes = direct.port_b == kNoPort ? 1 : lanes_of(dim);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    const unsigned port = topology::lane_port(direct, lane);
    PortMapEntry entry;
    if (!channel_port(port, entry) || entry.dimension != dim) continue;
    out.push_back(static_cast<uint16_t>(port));
  }
}

// The escape hop: the dimension-ordered minimal hop on VC 0, the lane whose VC 0 is least
// occupied. The packet routes minimally from here (`escaped`); a pending detour (h1) or
// intermediate router is dropped, so ALDFB still detours at most once per dimension.
RouteDecision Decision::escape(PacketHeader next) const {
  thread_local std::vector<uint16_t> ports;
  escape_ports(ports);
  if (ports.empty()) return fail(RouteStatus::kNoPort);
  unsigned best = ports.front();
  uint32_t best_occupancy = view_.occupancy(best, 0);
  for (uint16_t port : ports) {
    const uint32_t occupancy = view_.occupancy(port, 0);
    if (occupancy < best_occupancy) best = port, best_occupancy = occupancy;
  }
  RouteDecision d;
  d.port = static_cast<uint16_t>(best);
  d.vc = 0;
  d.vc_class = VcClass::kEscape;
  d.minimal = true;
  next.h1 = false;
  next.to_intermediate = false;
  next.escaped = true;
  d.header = next;
  return d;
}

RouteDecision Decision::deliver(PacketHeader next) const {
  const uint32_t terminal = header_.dest_terminal % regs_.k;
  for (unsigned port = 0; port < ports_; ++port) {
    const PortMapEntry entry = view_.port_map(port);
    if (entry.role != PortRole::kTerminal || entry.digit != terminal) continue;
    next.h1 = false;
    next.to_intermediate = false;
    // Ejection never waits on another switch: any VC of the terminal port (the seed's
    // forward half under its rule).
    const unsigned last = escape_policy() || vcs_ < 2 ? vcs_ : vcs_ / 2;
    if (options_) {
      for (unsigned vc = 0; vc < last; ++vc) {
        options_->push_back({static_cast<uint16_t>(port), static_cast<uint8_t>(vc),
                             VcClass::kForward, true, next});
      }
    }
    RouteDecision d;
    d.port = static_cast<uint16_t>(port);
    d.vc = static_cast<uint8_t>(pick_vc(port, 0, last).first);
    d.local = true;
    d.header = next;
    return d;
  }
  return fail(RouteStatus::kNoPort);
}

void Decision::offer(const Candidates& list, const PacketHeader& next) const {
  if (!options_) return;
  for (const Candidate& c : list) {
    if (escape_policy() && vcs_ == 1) continue;  // no adaptive VC: escape hops only
    for (unsigned vc = c.first_vc; vc < c.last_vc; ++vc) {
      options_->push_back(
          {static_cast<uint16_t>(c.port), static_cast<uint8_t>(vc), c.vc_class, false, next});
    }
  }
}

void Decision::offer_escape(PacketHeader next) const {
  if (!options_ || !escape_policy()) return;
  thread_local std::vector<uint16_t> ports;
  escape_ports(ports);
  next.h1 = false;
  next.to_intermediate = false;
  next.escaped = true;
  for (uint16_t port : ports) options_->push_back({port, 0, VcClass::kEscape, false, next});
}

// Algorithms 3 (L910-934) and 4 (L936-952), on the adaptive VCs.
RouteDecision Decision::route_aldfb() {
  if (dest_entry_.local) return deliver(header_);  // s_d == d_d
  const unsigned dr = dimensions_to_correct(dest_entry_);
  if (dr == 0) return fail(RouteStatus::kNoPort);
  if (header_.escaped && escape_policy()) return route_minimal(header_);
  unsigned pr_dims = dr;
  if (header_.h1 && arrival_ && (dr >> arrival_->dimension & 1) != 0) {
    pr_dims = 1u << arrival_->dimension;  // the minimal hop after a detour (see the header)
  }
  Candidates direct;
  if (!direct_candidates(dest_entry_, pr_dims, direct)) return fail(RouteStatus::kNoPort);
  PacketHeader next = header_;
  next.h1 = false;
  offer(direct, next);
  offer_escape(next);
  Candidates detours;
  if (!header_.h1) {
    detour_candidates(dr, dest_, detours);
    PacketHeader detour = next;
    detour.h1 = true;
    offer(detours, detour);
  }
  if (const Candidate* po = direct.first_usable()) return hop(*po, next);  // lines 8-10
  if (header_.h1) return take(*direct.highest_dimension_least_occupied(), next);  // 12-14

  // Algorithm 4: the status of all ports of Dr; a detour sets h1.
  if (const Candidate* po = detours.first_usable()) {
    next.h1 = true;
    return hop(*po, next);
  }
  return take(*direct.highest_dimension_least_occupied(), next);
}

RouteDecision Decision::route_minimal(PacketHeader next) {
  if (dest_entry_.local) return deliver(next);
  Candidates direct;
  if (!direct_candidates(dest_entry_, dimensions_to_correct(dest_entry_), direct) ||
      direct.empty()) {
    return fail(RouteStatus::kNoPort);
  }
  offer(direct, next);
  offer_escape(next);
  const Candidate* c = direct.first_usable();
  return c ? hop(*c, next) : take(*direct.least_occupied(), next);
}

RouteDecision Decision::route_ugal(uint32_t random) {
  PacketHeader next = header_;
  if (next.to_intermediate && next.intermediate == own_) next.to_intermediate = false;
  if (dest_entry_.local) return deliver(next);
  if (next.escaped && escape_policy()) return route_minimal(next);

  if (!next.to_intermediate && !arrival_) {
    // At the source, UGAL-L: the minimal path unless hops x queue says the path through the
    // drawn intermediate router is shorter.
    Candidates direct;
    if (!direct_candidates(dest_entry_, dimensions_to_correct(dest_entry_), direct) ||
        direct.empty()) {
      return fail(RouteStatus::kNoPort);
    }
    offer(direct, next);
    if (options_) {
      for (uint32_t i = 0; i < routers_ && i < view_.dest_entries(); ++i) {
        if (i == own_ || i == dest_) continue;
        const DestEntry entry = view_.dest_entry(i);
        Candidates toward;
        if (!entry.valid || !direct_candidates(entry, dimensions_to_correct(entry), toward)) {
          continue;
        }
        PacketHeader via = next;
        via.to_intermediate = true;
        via.intermediate = i;
        offer(toward, via);
      }
    }
    const uint32_t intermediate = random % routers_;
    if (intermediate != own_ && intermediate != dest_ && intermediate < view_.dest_entries()) {
      const DestEntry entry = view_.dest_entry(intermediate);
      Candidates toward;
      if (entry.valid && !entry.local &&
          direct_candidates(entry, dimensions_to_correct(entry), toward) && !toward.empty()) {
        // BookSim's UGAL-L adds a constant bias towards the minimal path; ours is the minimal
        // port's T_h, so that benign traffic (short, even queues) is not sent around.
        const Candidate& minimal = *direct.least_occupied();
        const uint64_t minimal_cost = uint64_t{hops_between(own_, dest_)} * minimal.queue;
        const uint64_t detour_cost =
            uint64_t{hops_between(own_, intermediate) + hops_between(intermediate, dest_)} *
                toward.least_occupied()->queue +
            view_.threshold(minimal.port);
        if (minimal_cost > detour_cost) {
          next.to_intermediate = true;
          next.intermediate = intermediate;
        }
      }
    }
  }
  const uint32_t target = next.to_intermediate ? next.intermediate : dest_;
  if (target >= routers_ || target >= view_.dest_entries()) return fail(RouteStatus::kBadHeader);
  const DestEntry entry = target == dest_ ? dest_entry_ : view_.dest_entry(target);
  if (!entry.valid || entry.local) return fail(RouteStatus::kBadHeader);
  Candidates toward;
  if (!direct_candidates(entry, dimensions_to_correct(entry), toward) || toward.empty()) {
    return fail(RouteStatus::kNoPort);
  }
  offer(toward, next);
  offer_escape(next);
  const Candidate* c = toward.first_usable();
  return c ? hop(*c, next) : take(*toward.least_occupied(), next);
}

// The schedule's rows for one dimension of a 1-D or 2-D fabric (topology/schedule.hpp).
RouteDecision Decision::route_static() {
  if (dest_entry_.local) return deliver(header_);
  const unsigned k = regs_.k;
  if (regs_.r > 2 || view_.schedule_entries() < (k - 1) * k) return fail(RouteStatus::kNoSchedule);
  if (header_.initial_row >= k || header_.final_row >= k) return fail(RouteStatus::kBadHeader);

  // Dimension 0 first (the initial part), then dimension 1 (the final part, mirrored).
  const unsigned dim = digit_of(dest_, 0) != regs_.own_digits[0] ? 0 : 1;
  const bool mirrored = dim == 1;
  const unsigned p = mirrored ? header_.final_row : header_.initial_row;
  auto row_of = [&](unsigned length) -> std::optional<std::array<ScheduleStep, 2>> {
    const ScheduleEntry e = view_.schedule_entry((length - 1) * k + p);
    std::array<ScheduleStep, 2> steps = {ScheduleStep{e.first_length, e.first_lane},
                                         ScheduleStep{e.second_length, e.second_lane}};
    if ((steps[0].length + steps[1].length) % k != length || steps[0].length >= k ||
        steps[1].length >= k) {
      return std::nullopt;  // not a row of this length: no schedule programmed
    }
    if (mirrored) std::swap(steps[0], steps[1]);
    return steps;
  };

  const uint32_t own_digit = regs_.own_digits[dim];
  const unsigned remaining = (digit_of(dest_, dim) + k - own_digit) % k;
  ScheduleStep step;
  if (arrival_ && arrival_->dimension == dim) {
    // Mid-row: the input port names the hop taken, its length and lane (with one
    // double-rate channel per peer, S_A and S_B share the port and only the length tells).
    const uint8_t taken = static_cast<uint8_t>((own_digit + k - arrival_->digit) % k);
    const auto row = row_of((taken + remaining) % k);
    if (!row) return fail(RouteStatus::kNoSchedule);
    if ((*row)[0].length != taken || (lanes_of(dim) > 1 && (*row)[0].lane != arrival_->lane)) {
      return fail(RouteStatus::kBadHeader);
    }
    step = (*row)[1];
  } else {
    const auto row = row_of(remaining);
    if (!row) return fail(RouteStatus::kNoSchedule);
    step = (*row)[0].hop() ? (*row)[0] : (*row)[1];
  }

  // The channel of that length and lane: the direct ports to the router one step away.
  if (step.length == 0) return fail(RouteStatus::kBadHeader);  // a row ending early
  const uint32_t neighbour = router_with(dim, (own_digit + step.length) % k);
  if (neighbour >= view_.dest_entries()) return fail(RouteStatus::kNoPort);
  const DirectPorts direct = view_.dest_entry(neighbour).dims[dim];
  const unsigned port = topology::lane_port(direct, step.lane);
  Candidate c;
  if (!channel_candidate(port, c) || c.dim != dim) return fail(RouteStatus::kNoPort);
  return hop(c, header_);
}

RouteDecision Decision::run(uint32_t random) {
  if (const RouteStatus status = load(); status != RouteStatus::kOk) return fail(status);
  switch (mode_.mode) {
    case RoutingMode::kStatic:
      return route_static();
    case RoutingMode::kMinimal:
      return route_minimal(header_);
    case RoutingMode::kUgal:
      return route_ugal(random);
    case RoutingMode::kAldfb:
      return route_aldfb();
  }
  return fail(RouteStatus::kBadConfig);
}

}  // namespace

std::string_view to_string(RouteStatus status) {
  switch (status) {
    case RouteStatus::kOk:
      return "ok";
    case RouteStatus::kDisabled:
      return "routing disabled (route.config.enable is 0)";
    case RouteStatus::kBadConfig:
      return "the ROUTE registers describe no fabric";
    case RouteStatus::kBadInputPort:
      return "the input port is not in the port map";
    case RouteStatus::kBadDestination:
      return "no valid dest_table entry for the destination router";
    case RouteStatus::kNoPort:
      return "the tables name no port to take";
    case RouteStatus::kNoSchedule:
      return "static mode without a programmed schedule for this fabric";
    case RouteStatus::kBadHeader:
      return "the packet header contradicts the tables";
  }
  return "?";
}

RouteDecision route_packet(const RouterView& view, const PacketHeader& header, uint32_t random) {
  return Decision(view, header).run(random);
}

RouteStatus route_options(const RouterView& view, const PacketHeader& header,
                          std::vector<RouteOption>& out) {
  out.clear();
  Decision decision(view, header, &out);
  const RouteDecision d = decision.run(0);
  if (d.status != RouteStatus::kOk) return d.status;
  if (view.mode().mode == RoutingMode::kStatic) {
    // Static routes are fixed by the header: the decision is the only option.
    out.assign(1, {d.port, d.vc, d.vc_class, d.local, d.header});
  }
  std::sort(out.begin(), out.end(), [](const RouteOption& a, const RouteOption& b) {
    return std::tie(a.port, a.vc, a.header.h1, a.header.escaped, a.header.to_intermediate,
                    a.header.intermediate) < std::tie(b.port, b.vc, b.header.h1,
                                                      b.header.escaped, b.header.to_intermediate,
                                                      b.header.intermediate);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return RouteStatus::kOk;
}

RouteStatus escape_ports(const RouterView& view, const PacketHeader& header,
                         std::vector<uint16_t>& out) {
  out.clear();
  Decision decision(view, header);
  if (const RouteStatus status = decision.load(); status != RouteStatus::kOk) return status;
  decision.escape_ports(out);
  return RouteStatus::kOk;
}

}  // namespace asn::model::engines

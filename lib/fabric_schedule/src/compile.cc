// compile(): the algorithm asked for; for default, the baselines and the own search, and the
// fewest slots of them all.
#include "asn/fabric_schedule/compile.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "asn/schedule/compile.hpp"
#include "search.hpp"

namespace asn::fabric_schedule {
namespace {

using detail::Clock;
using detail::Placed;

constexpr std::pair<Algorithm, std::string_view> kNames[] = {
    {Algorithm::kDefault, "default"},         {Algorithm::kGreedy, "greedy"},
    {Algorithm::kColoring, "coloring"},       {Algorithm::kAapc, "aapc"},
    {Algorithm::kCombined, "combined"},       {Algorithm::kLevelWise, "level-wise"},
    {Algorithm::kLocalRandom, "local-random"}};

std::vector<uint32_t> identity(size_t n) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  return order;
}

// One baseline, timed, with path 0 for the seed's 002 algorithms.
Placed run_baseline(const Target& t, std::span<const Conn> conns, Algorithm a, const Options& o) {
  const std::vector<uint32_t> zeros(conns.size(), 0);
  switch (a) {
    case Algorithm::kGreedy:
      return {detail::greedy(t, conns, identity(conns.size())), zeros};
    case Algorithm::kColoring:
      return {detail::coloring(t, conns), zeros};
    case Algorithm::kAapc:
      return {detail::ordered_aapc(t, conns), zeros};
    case Algorithm::kLevelWise:
      return detail::level_wise(t, conns);
    case Algorithm::kLocalRandom:
      return detail::local_random(t, conns, o.seed);
    default:
      throw std::logic_error("not a baseline");
  }
}

// Whether default (or combined) runs baseline a on this target and pattern.
bool runs(Algorithm a, const Target& t, size_t conns, const Options& o) {
  switch (a) {
    case Algorithm::kGreedy:
      return true;
    case Algorithm::kColoring:
      return conns <= o.coloring_limit;
    case Algorithm::kAapc:
      return t.aapc_phases() > 0;
    case Algorithm::kLevelWise:
      return t.fat_tree_width() > 0;
    case Algorithm::kLocalRandom:
      return t.fat_tree_width() > 0;
    default:
      return false;
  }
}
constexpr Algorithm kBaselines[] = {Algorithm::kGreedy, Algorithm::kColoring, Algorithm::kAapc,
                                    Algorithm::kLevelWise, Algorithm::kLocalRandom};

struct Best {
  Placed placed;
  uint32_t slots = UINT32_MAX;
  std::string method;
  void offer(Placed p, std::string_view name) {
    const uint32_t s = detail::slot_count(p.slot_of);
    if (s < slots) {
      slots = s;
      placed = std::move(p);
      method = name;
    }
  }
};

// Orders for first-fit: the AAPC order (when there is one), the hardest connections first
// (busiest resource on the balanced path, then the longest path), the pattern's own order.
std::vector<std::vector<uint32_t>> orders(const Target& t, std::span<const Conn> conns,
                                          std::span<const uint32_t> hint) {
  std::vector<std::vector<uint32_t>> out;
  const detail::Routed r = detail::route(t, conns, hint);
  std::vector<uint32_t> load(t.resources(), 0), hardness(conns.size(), 0);
  for (uint32_t x : r.res) ++load[x];
  for (uint32_t i = 0; i < conns.size(); ++i) {
    uint32_t most = 0;
    for (uint32_t x : r.of(i)) most = std::max(most, load[x]);
    hardness[i] = most << 8 | std::min<uint32_t>(255, static_cast<uint32_t>(r.of(i).size()));
  }
  std::vector<uint32_t> hard = identity(conns.size());
  std::stable_sort(hard.begin(), hard.end(),
                   [&](uint32_t a, uint32_t b) { return hardness[a] > hardness[b]; });
  out.push_back(std::move(hard));
  out.push_back(identity(conns.size()));
  return out;
}

// Spends `effort` (search.hpp): every step below is a function of the input, the seed and
// the work counted so far, never of the clock, unless the deadline cuts it (effort.cut()).
void own_search(const Target& t, std::span<const Conn> conns, uint32_t bound, const Options& o,
                detail::Effort& effort, Best& best) {
  const std::vector<uint32_t> hint = detail::balance_paths(t, conns);
  for (auto& order : orders(t, conns, hint)) {
    best.offer(detail::first_fit(t, conns, order, hint, effort), "first-fit");
    if (best.slots == bound) return;
  }
  // Random orders while an eighth of the effort lasts, then the local searches on the best.
  std::mt19937_64 random(o.seed);
  std::vector<uint32_t> order = identity(conns.size());
  // (Past a few hundred thousand connections one more order costs more than it finds.)
  while (conns.size() <= 200'000 && effort.below(8) && !effort.exhausted() && best.slots > bound) {
    std::shuffle(order.begin(), order.end(), random);
    best.offer(detail::first_fit(t, conns, order, hint, effort), "first-fit");
  }
  if (best.slots > bound) {
    Placed p = best.placed;
    detail::empty_slots(t, conns, p, bound, effort);
    best.offer(std::move(p), "search");
  }
  if (best.slots > bound) {
    Placed p = best.placed;
    detail::tabu_slots(t, conns, p, bound, effort, o.seed);
    best.offer(std::move(p), "tabu");
  }
}

}  // namespace

std::string_view to_string(Algorithm algorithm) {
  for (const auto& [a, name] : kNames) {
    if (a == algorithm) return name;
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  for (const auto& [a, name] : kNames) {
    if (name == text) return a;
  }
  return std::nullopt;
}

uint32_t lower_bound(const Target& t, std::span<const Conn> conns) {
  std::vector<uint32_t> sends(t.terminals(), 0), receives(t.terminals(), 0);
  uint32_t most = 0;
  for (const Conn& c : conns) most = std::max({most, ++sends[c.src], ++receives[c.dst]});
  return std::max(most, t.link_lower_bound(conns));
}

Schedule compile(const Target& t, std::span<const Conn> conns, const Options& o) {
  const auto start = Clock::now();
  for (const Conn& c : conns) t.check(c);
  Schedule out;
  out.algorithm = o.algorithm;
  out.lower_bound = lower_bound(t, conns);
  Best best;
  if (o.algorithm == Algorithm::kDefault && t.links() == 0) {
    // One crossbar: lib/schedule's exact edge colouring reaches the lower bound (König).
    std::vector<schedule::Connection> pattern;
    pattern.reserve(conns.size());
    for (const Conn& c : conns) pattern.push_back({c.src, c.dst, {}});
    schedule::Assignment a = schedule::compile_pattern(pattern);
    best.offer({std::move(a.slot_of), std::vector<uint32_t>(conns.size(), 0)}, "edge colouring");
  } else if (o.algorithm == Algorithm::kDefault || o.algorithm == Algorithm::kCombined) {
    const bool combined = o.algorithm == Algorithm::kCombined;
    for (Algorithm a : kBaselines) {
      if (!runs(a, t, conns.size(), o)) continue;
      const auto begin = Clock::now();
      Placed p = run_baseline(t, conns, a, o);
      out.baselines.push_back({a, detail::slot_count(p.slot_of), Clock::now() - begin});
      best.offer(std::move(p), to_string(a));
    }
    if (!combined && best.slots > out.lower_bound) {
      detail::Effort effort(o.effort, start + o.time_budget);
      own_search(t, conns, out.lower_bound, o, effort, best);
      out.effort_spent = effort.spent();
      out.cut_by_time = effort.cut();
    }
  } else {
    best.offer(run_baseline(t, conns, o.algorithm, o), to_string(o.algorithm));
  }
  out.slots = conns.empty() ? 0 : best.slots;
  out.slot_of = std::move(best.placed.slot_of);
  out.path_of = std::move(best.placed.path_of);
  out.method = best.method;
  out.elapsed = Clock::now() - start;
  return out;
}

}  // namespace asn::fabric_schedule

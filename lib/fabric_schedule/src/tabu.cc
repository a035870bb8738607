// Tabu search for one slot fewer (TabuCol, Hertz and de Werra 1987, on the conflict graph
// given implicitly by shared resources). Why: the one-displacement search of
// local_search.cc stalls on dense torus patterns (1600-3200 connections, 8-11% above the
// lower bound in fabric_schedule_bench); letting conflicts exist for a while and walking
// them away escapes those local optima. Paths stay as they are; only slots move.
#include <algorithm>
#include <random>

#include "search.hpp"

namespace asn::fabric_schedule::detail {
namespace {

class Tabu {
 public:
  Tabu(const Target& t, std::span<const Conn> conns, const Placed& placed, uint32_t slots,
       uint64_t seed)
      : r_(route(t, conns, placed.path_of)),
        resources_(t.resources()),
        slots_(slots),
        slot_of_(placed.slot_of),
        occ_(size_t{slots} * resources_, 0),
        tabu_(conns.size() * size_t{slots}, 0),
        random_(seed) {}

  // Drops the emptiest slot, spreads its connections, and walks until no conflict is left or
  // the effort is spent; true and slot_of() valid in slots - 1 slots on success.
  bool drop_one(Effort& effort);
  const std::vector<uint32_t>& slot_of() const { return slot_of_; }

 private:
  uint16_t& occ(uint32_t s, uint32_t r) { return occ_[size_t{s} * resources_ + r]; }
  int add_cost(uint32_t c, uint32_t s) {
    int cost = 0;
    for (uint32_t r : r_.of(c)) cost += occ(s, r) >= 1 ? 1 : 0;
    return cost;
  }
  int remove_gain(uint32_t c) {
    int gain = 0;
    for (uint32_t r : r_.of(c)) gain -= occ(slot_of_[c], r) >= 2 ? 1 : 0;
    return gain;
  }
  void put(uint32_t c, uint32_t s, int delta) {
    slot_of_[c] = s;
    for (uint32_t r : r_.of(c)) occ(s, r) += delta;
  }
  void setup(uint32_t slots, Effort& effort);
  bool walk(Effort& effort);

  Routed r_;
  uint32_t resources_;
  uint32_t slots_;
  std::vector<uint32_t> slot_of_;
  std::vector<uint16_t> occ_;
  std::vector<uint64_t> tabu_;  // [conn * slots + slot]: tabu until this iteration
  std::mt19937_64 random_;
  int64_t conflicts_ = 0;
};

// The emptiest slot goes; the last slot takes its number; its connections go to the slots
// where they add the fewest conflicts.
void Tabu::setup(uint32_t slots, Effort& effort) {
  std::vector<uint32_t> size(slots, 0);
  for (uint32_t s : slot_of_) ++size[s];
  const uint32_t victim =
      static_cast<uint32_t>(std::min_element(size.begin(), size.end()) - size.begin());
  slots_ = slots - 1;
  std::fill(occ_.begin(), occ_.end(), 0);
  std::vector<uint32_t> moved;
  for (uint32_t c = 0; c < slot_of_.size(); ++c) {
    if (slot_of_[c] == victim) {
      moved.push_back(c);
      continue;
    }
    put(c, slot_of_[c] == slots_ ? victim : slot_of_[c], +1);
  }
  conflicts_ = 0;
  effort.spend(r_.res.size());
  for (uint32_t c : moved) {
    effort.spend(uint64_t{slots_} * r_.of(c).size());
    uint32_t best = 0;
    int best_cost = INT32_MAX;
    for (uint32_t s = 0; s < slots_; ++s) {
      const int cost = add_cost(c, s);
      if (cost < best_cost) best_cost = cost, best = s;
    }
    conflicts_ += best_cost;
    put(c, best, +1);
  }
}

bool Tabu::walk(Effort& effort) {
  std::vector<uint32_t> conflicted;
  int64_t best_seen = conflicts_;
  for (uint64_t it = 1; conflicts_ > 0; ++it) {
    if (effort.exhausted()) return false;
    effort.spend(r_.res.size());  // every connection's remove_gain
    conflicted.clear();
    for (uint32_t c = 0; c < slot_of_.size(); ++c) {
      if (remove_gain(c) < 0) conflicted.push_back(c);
    }
    int best_delta = INT32_MAX;
    uint32_t best_c = 0, best_s = 0, ties = 0;
    for (uint32_t c : conflicted) {
      effort.spend(uint64_t{slots_} * r_.of(c).size());
      const int gain = remove_gain(c);
      for (uint32_t s = 0; s < slots_; ++s) {
        if (s == slot_of_[c]) continue;
        const int delta = gain + add_cost(c, s);
        const bool allowed = tabu_[size_t{c} * slots_ + s] < it || conflicts_ + delta < best_seen;
        if (!allowed || delta > best_delta) continue;
        ties = delta < best_delta ? 1 : ties + 1;
        if (delta < best_delta || random_() % ties == 0) best_c = c, best_s = s;
        best_delta = delta;
      }
    }
    if (best_delta == INT32_MAX) continue;  // every move tabu: the tenures run out
    const uint32_t from = slot_of_[best_c];
    put(best_c, from, -1);
    put(best_c, best_s, +1);
    conflicts_ += best_delta;
    best_seen = std::min(best_seen, conflicts_);
    const uint64_t tenure = 10 + random_() % 10 + conflicted.size() * 6 / 10;
    tabu_[size_t{best_c} * slots_ + from] = it + tenure;
  }
  return true;
}

bool Tabu::drop_one(Effort& effort) {
  const std::vector<uint32_t> before = slot_of_;
  setup(slots_, effort);
  std::fill(tabu_.begin(), tabu_.end(), 0);
  if (walk(effort)) return true;
  slot_of_ = before;
  ++slots_;
  return false;
}

}  // namespace

void tabu_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                Effort& effort, uint64_t seed) {
  const uint32_t slots = slot_count(placed.slot_of);
  // Its tables hold slots x resources counters and connections x slots tabu marks.
  if (uint64_t{slots} * t.resources() > (uint64_t{1} << 25) ||
      uint64_t{slots} * conns.size() > (uint64_t{1} << 25)) {
    return;
  }
  Tabu tabu(t, conns, placed, slots, seed);
  for (uint32_t s = slots; s > floor && !effort.exhausted(); --s) {
    if (!tabu.drop_one(effort)) break;
    placed.slot_of = tabu.slot_of();
  }
}

}  // namespace asn::fabric_schedule::detail

// The slot-emptying local search of the default compiler (search.hpp).
#include <algorithm>
#include <numeric>

#include "search.hpp"

namespace asn::fabric_schedule::detail {
namespace {

class Emptier {
 public:
  Emptier(const Target& t, std::span<const Conn> conns, Placed& placed, Effort& effort)
      : t_(t),
        conns_(conns),
        p_(placed),
        slots_(slot_count(placed.slot_of)),
        resources_(t.resources()),
        owner_(size_t{slots_} * resources_, 0),
        effort_(effort) {
    for (uint32_t i = 0; i < conns.size(); ++i) mark(i, i + 1);
  }
  uint32_t slots() const { return slots_; }

  // Tries to empty the victim slot; on success the last slot takes its number.
  bool empty(uint32_t victim) {
    std::vector<uint32_t> members;
    effort_.spend(conns_.size());
    for (uint32_t i = 0; i < conns_.size(); ++i) {
      if (p_.slot_of[i] == victim) members.push_back(i);
    }
    log_.clear();
    for (uint32_t c : members) {
      if (effort_.exhausted() || !(move(c, victim, victim) || displace(c, victim))) {
        undo();
        return false;
      }
    }
    const uint32_t last = slots_ - 1;
    effort_.spend(conns_.size());
    for (uint32_t i = 0; i < conns_.size() && victim != last; ++i) {
      if (p_.slot_of[i] != last) continue;
      mark(i, 0);
      p_.slot_of[i] = victim;
      mark(i, i + 1);
    }
    --slots_;
    return true;
  }

 private:
  // Paths the search tries: all of them, up to 64 (a large 2DFB's detours are too many to
  // try in every slot).
  uint32_t paths(uint32_t i) const {
    const uint32_t all = t_.path_count(conns_[i].src, conns_[i].dst);
    return all <= 64 ? all : t_.minimal_paths(conns_[i].src, conns_[i].dst);
  }
  const std::vector<uint32_t>& res(uint32_t i, uint32_t path) {
    resources_of(t_, conns_[i], path, res_, scratch_);
    return res_;
  }
  void mark(uint32_t i, uint32_t value) {
    const uint32_t s = p_.slot_of[i];
    for (uint32_t r : res(i, p_.path_of[i])) owner_[size_t{s} * resources_ + r] = value;
  }
  void relocate(uint32_t i, uint32_t slot, uint32_t path) {
    log_.push_back({i, p_.slot_of[i], p_.path_of[i]});
    mark(i, 0);
    p_.slot_of[i] = slot;
    p_.path_of[i] = path;
    mark(i, i + 1);
  }
  // Moves i to a slot other than a and b where one of its paths is free.
  bool move(uint32_t i, uint32_t a, uint32_t b) {
    const uint32_t n_paths = paths(i);
    for (uint32_t s = 0; s < slots_; ++s) {
      if (s == a || s == b) continue;
      for (uint32_t p = 0; p < n_paths; ++p) {
        const auto& r = res(i, p);
        effort_.spend_path(r.size());
        if (std::all_of(r.begin(), r.end(),
                        [&](uint32_t x) { return owner_[size_t{s} * resources_ + x] == 0; })) {
          relocate(i, s, p);
          return true;
        }
      }
    }
    return false;
  }
  // Puts c into a slot where one connection blocks one of its paths, moving that one away.
  bool displace(uint32_t c, uint32_t victim) {
    const uint32_t n_paths = paths(c);
    for (uint32_t s = 0; s < slots_; ++s) {
      if (s == victim) continue;
      // One displacement may try every slot and path twice over: the effort is checked here
      // too, so that it bounds a single move (the caller undoes the partial emptying).
      if (effort_.exhausted()) return false;
      for (uint32_t p = 0; p < n_paths; ++p) {
        uint32_t blocker = 0;
        bool several = false;
        const auto& r = res(c, p);
        effort_.spend_path(r.size());
        for (uint32_t x : r) {
          const uint32_t o = owner_[size_t{s} * resources_ + x];
          if (o != 0 && blocker != 0 && o != blocker) several = true;
          if (o != 0) blocker = o;
        }
        if (several || blocker == 0 || !move(blocker - 1, victim, s)) continue;
        relocate(c, s, p);
        return true;
      }
    }
    return false;
  }
  void undo() {
    for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
      mark(it->conn, 0);
      p_.slot_of[it->conn] = it->slot;
      p_.path_of[it->conn] = it->path;
      mark(it->conn, it->conn + 1);
    }
    log_.clear();
  }

  struct Move {
    uint32_t conn, slot, path;
  };
  const Target& t_;
  std::span<const Conn> conns_;
  Placed& p_;
  uint32_t slots_;
  uint32_t resources_;
  std::vector<uint32_t> owner_;  // [slot * resources + resource]: connection + 1, or 0
  Effort& effort_;
  std::vector<Move> log_;
  std::vector<uint32_t> res_, scratch_;
};

}  // namespace

void empty_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                 Effort& effort) {
  const uint32_t slots = slot_count(placed.slot_of);
  if (uint64_t{slots} * t.resources() > (uint64_t{1} << 26)) return;  // owner table too big
  Emptier e(t, conns, placed, effort);
  bool progress = true;
  while (progress && e.slots() > floor && !effort.exhausted()) {
    progress = false;
    effort.spend(conns.size());
    std::vector<uint32_t> size(e.slots(), 0), order(e.slots());
    for (uint32_t s : placed.slot_of) ++size[s];
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return size[a] < size[b]; });
    for (uint32_t victim : order) {
      if (effort.exhausted()) break;
      if (e.empty(victim)) {
        progress = true;
        break;
      }
    }
  }
}

}  // namespace asn::fabric_schedule::detail

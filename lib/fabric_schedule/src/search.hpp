// Default's own schedule (default.cc): balanced paths, first-fit over every candidate path,
// and the slot-emptying local search.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "core.hpp"

namespace asn::fabric_schedule::detail {

using Clock = std::chrono::steady_clock;

// What the search may still spend. Work is counted in visits: one resource looked up in a
// slot or occupancy table, or one connection scanned, is one visit; one resource of a path
// generated (Target::path) is kGenerate more. Counted so, a visit costs 1-3 ns on a 2.4 GHz
// x86 core in every phase (first-fit, local search, tabu; torus and 2DFB), and unlike the
// clock the count is the same on every machine and under any load: the search stops when
// `limit` visits are spent, so one input gives one output. The deadline is only a safety cap;
// when it is what stops the search, cut() says so, and the result then depends on the
// machine's speed.
class Effort {
 public:
  // Generating a path's resources costs about eight table lookups per resource (measured).
  static constexpr uint64_t kGenerate = 8;

  Effort(uint64_t limit, Clock::time_point deadline) : limit_(limit), deadline_(deadline) {}
  void spend(uint64_t visits) { spent_ += visits; }
  // A path of `resources` generated and each of them looked up once.
  void spend_path(uint64_t resources) { spent_ += resources * (kGenerate + 1); }
  // True when the search must stop. The effort is checked first: when both ran out, the
  // stop is the deterministic one.
  bool exhausted() {
    if (spent_ >= limit_) return true;
    if (Clock::now() >= deadline_) cut_ = true;
    return cut_;
  }
  // True while less than limit / parts has been spent (the random orders' share).
  bool below(uint64_t parts) const { return spent_ < limit_ / parts; }
  uint64_t spent() const { return spent_; }
  bool cut() const { return cut_; }

 private:
  uint64_t limit_;
  Clock::time_point deadline_;
  uint64_t spent_ = 0;
  bool cut_ = false;
};

// Per connection, the path that keeps the largest link load lowest: each connection takes
// the candidate whose busiest link is least loaded, then two passes re-route each one
// against all the others.
std::vector<uint32_t> balance_paths(const Target& t, std::span<const Conn> conns);

// First-fit in `order`, each connection on the candidate path free earliest (its balanced
// path `hint` on a tie). Spends its resource visits on `effort` (it always runs to the end).
Placed first_fit(const Target& t, std::span<const Conn> conns, std::span<const uint32_t> order,
                 std::span<const uint32_t> hint, Effort& effort);

// Empties slots while the effort lasts and the slot count is above `floor`.
void empty_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                 Effort& effort);

// Tabu search (TabuCol) for one slot fewer at a time, paths fixed, until the effort is spent
// or `floor` (tabu.cc).
void tabu_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                Effort& effort, uint64_t seed);

}  // namespace asn::fabric_schedule::detail

// Default's own schedule (default.cc): balanced paths, first-fit over every candidate path,
// and the slot-emptying local search.
#pragma once

#include <chrono>
#include <span>
#include <vector>

#include "core.hpp"

namespace asn::fabric_schedule::detail {

using Clock = std::chrono::steady_clock;

// Per connection, the path that keeps the largest link load lowest: each connection takes
// the candidate whose busiest link is least loaded, then two passes re-route each one
// against all the others.
std::vector<uint32_t> balance_paths(const Target& t, std::span<const Conn> conns);

// First-fit in `order`, each connection on the candidate path free earliest (its balanced
// path `hint` on a tie).
Placed first_fit(const Target& t, std::span<const Conn> conns, std::span<const uint32_t> order,
                 std::span<const uint32_t> hint);

// Empties slots while the deadline allows and the slot count is above `floor`.
void empty_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                 Clock::time_point deadline);

// Tabu search (TabuCol) for one slot fewer at a time, paths fixed, until the deadline or
// `floor` (tabu.cc).
void tabu_slots(const Target& t, std::span<const Conn> conns, Placed& placed, uint32_t floor,
                Clock::time_point deadline, uint64_t seed);

}  // namespace asn::fabric_schedule::detail

// The crossbar compiler (issue 8 part 2): a communication pattern on one switch becomes TDM
// slots. A crossbar slot connects each input to at most one output and each output to at
// most one input (000 L955), so a schedule is an edge colouring of the pattern's bipartite
// multigraph (inputs | outputs, one edge per connection, a repeated pair for more
// bandwidth), and by König's theorem the fewest slots is exactly the largest number of
// connections at any one port: the lower bound every summary reports.
//
// Algorithm::kOptimal reaches it always:
//  - regular patterns are recognised and laid out in closed form, O(connections): a
//    (partial) permutation is one slot; a pattern whose connections fall into exactly
//    "lower bound" classes of (to - from) mod n over its n ports (shifts, all-to-all, a
//    mesh neighbour exchange, ...) takes one slot per class;
//  - anything else goes to an exact edge colouring by Euler-partition divide and conquer,
//    O(connections * log(lower bound)) (src/edge_colouring.hpp says how).
// Algorithm::kGreedy is the real-time greedy scheduler of 000 (greedy.hpp), kept as the
// baseline: it may need up to 2 * lower bound - 1 slots.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule {

// Largest pattern compile_pattern() accepts (positions are 32-bit inside).
inline constexpr size_t kMaxCompileConnections = size_t{1} << 30;

struct CompileOptions {
  Algorithm algorithm = Algorithm::kOptimal;
};

// The slot of every connection of a pattern.
struct Assignment {
  std::vector<uint32_t> slot_of;  // slot_of[i]: the slot of pattern[i]
  CompileSummary summary;         // summary.slots: the number of slots
};

// Compiles one switch's pattern. Deterministic: the same pattern (in the same order) gives
// the same slots. Throws std::length_error past kMaxCompileConnections connections or port
// 2^20 - 1, and for the greedy baseline past port 8191 (it models an N x N array).
Assignment compile_pattern(std::span<const Connection> pattern, const CompileOptions& options = {});

// The slots of an assignment, each listing its connections in pattern order (marks kept).
std::vector<Slot> layout_slots(std::span<const Connection> pattern, const Assignment& assignment);

// Connections, slots, lower bound, ports in use and utilisation of slots as they stand.
CompileSummary summarize(std::span<const Slot> slots, Method method = Method::kExplicit);

// One line for people: "4032 connections in 63 slots (lower bound 63: optimal), 64 ports,
// utilisation 100.0%, closed form, 0.41 ms".
std::string describe(const CompileSummary& summary);

// Compiles every part of the plan that has a pattern (its slots are replaced) and sets the
// summary of every part. Throws PlanError (at the pattern) where compile_pattern throws.
void compile_plan(Plan& plan, const CompileOptions& options = {});

}  // namespace asn::schedule

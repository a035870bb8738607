// Pattern generators of the plan file (docs/schedule-format.md, "Generators"): regular
// patterns written in one line instead of thousands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule::detail {

// Connections between positions 0..n-1 of a port list; the caller maps them to ports.
struct IndexPair {
  uint32_t from;
  uint32_t to;
};

// How many connections each generator makes (checked against the budget before expanding).
uint64_t all_to_all_count(uint64_t n);
uint64_t mesh_count(uint32_t rows, uint32_t cols, bool wrap);

// Every ordered pair i != j.
void all_to_all(uint32_t n, std::vector<IndexPair>& out);
// i -> (i + by) mod n; by mod n must not be 0.
void shift(uint32_t n, int64_t by, std::vector<IndexPair>& out);
// The transpose of a rows x cols grid kept row-major: r * cols + c -> c * rows + r; the
// positions that map to themselves (the diagonal) keep their data and make no connection.
void transpose(uint32_t rows, uint32_t cols, std::vector<IndexPair>& out);
// Nearest-neighbour exchange on a rows x cols grid kept row-major (000 L740, the ordered
// mesh of L1040): every node sends to its east, west, south and north neighbours; with
// wrap (a torus) the edges wrap around. A neighbour that is the node itself is skipped.
void mesh(uint32_t rows, uint32_t cols, bool wrap, std::vector<IndexPair>& out);

}  // namespace asn::schedule::detail

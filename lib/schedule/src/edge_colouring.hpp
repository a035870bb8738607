// Exact edge colouring of bipartite multigraphs (König: max degree colours suffice), the
// heart of the crossbar compiler. Internal: compile.cc is the only caller.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule::detail {

// Colours `edges` (left vertex: the input port `from`, right vertex: the output port `to`)
// with exactly `max_degree` colours (the largest number of edges at any one
// vertex, which the caller has computed) so that no two edges at a vertex share a colour.
// Returns the colour of every edge, in input order. Deterministic: the same input gives the
// same colouring. Time O(m log max_degree) for m edges; memory about 40 bytes per edge.
//
// Method (see compile.cc's header comment for the reasons):
//  1. Contract: pack the vertices of each side into bins of total degree <= max_degree
//     (next fit), so that there are at most 2m/max_degree + 1 bins a side; colouring the
//     bins colours the vertices.
//  2. Regularise: add dummy edges between bins until every bin has degree max_degree.
//  3. Divide and conquer (Gabow; Cole, Ost and Schirra): a d-regular graph with d even
//     splits by an Euler partition into two d/2-regular halves coloured recursively with
//     disjoint colour ranges; with d odd, a perfect matching (found by a random walk, Goel,
//     Kapralov and Khanna, with an augmenting-path fallback) takes one colour first.
std::vector<uint32_t> colour_bipartite(std::span<const Connection> edges, uint32_t max_degree);

}  // namespace asn::schedule::detail

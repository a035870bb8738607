// The offline greedy baseline behind Algorithm::kGreedy (greedy.cc). Internal.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule::detail {

// The greedy models the seed's N x N array of SL modules; beyond this it is not a model of
// any hardware and its bit rows would take N^2 / 8 bytes.
inline constexpr uint32_t kMaxGreedyPorts = 8192;

// The slot of every connection under the greedy scheduler of 000 Ch. 5; `slots` is set to
// the number of slots it used. Throws std::length_error past kMaxGreedyPorts.
std::vector<uint32_t> greedy_assign(std::span<const Connection> pattern, uint32_t& slots);

}  // namespace asn::schedule::detail

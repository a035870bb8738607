// Rings: the odd-even shortest-way routing of 002 (L775, L1991) and a split of the ring's
// all-to-all pattern (self pairs included) into contention-free configurations, from which
// the torus builds its AAPC configurations (targets.cc).
#pragma once

#include <cstdint>
#include <vector>

namespace asn::fabric_schedule {

struct RingStep {
  bool positive = true;  // the way of increasing coordinate
  uint32_t hops = 0;
};

// The shortest way from s to d on a ring of n; at distance n / 2 the positive way from an
// even s and the negative way from an odd one (002 L775).
inline RingStep ring_step(uint32_t s, uint32_t d, uint32_t n) {
  const uint32_t plus = (d + n - s) % n;
  if (2 * plus < n) return {true, plus};
  if (2 * plus > n) return {false, n - plus};
  return {s % 2 == 0, plus};
}

struct RingAapc {
  uint32_t configurations = 0;  // 0: none found
  std::vector<uint32_t> phase;  // [s * n + d]: the configuration of s -> d
};

// The fewest configurations the load allows: max(n, ceil(hops / 2n)), each a permutation
// using every directed link at most once, found by a bounded search (n = 8 takes
// microseconds); configurations = 0 when the search gives up.
RingAapc ring_aapc(uint32_t n);

}  // namespace asn::fabric_schedule

// Random connection patterns for the fabric compiler's tests (fabric_schedule_test,
// fabric_plan_test, fabric_schedule_determinism_test): `count` distinct (source, destination)
// pairs of `terminals` terminals, none to itself; and all-to-all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "asn/fabric_schedule/target.hpp"

namespace asn::fabric_schedule::test {

inline std::vector<Conn> random_pattern(uint32_t terminals, size_t count, std::mt19937& random) {
  std::set<std::pair<uint32_t, uint32_t>> seen;
  std::vector<Conn> out;
  std::uniform_int_distribution<uint32_t> pick(0, terminals - 1);
  while (out.size() < count) {
    const uint32_t s = pick(random), d = pick(random);
    if (s == d || !seen.insert({s, d}).second) continue;
    out.push_back({s, d});
  }
  return out;
}

inline std::vector<Conn> random_pattern(uint32_t terminals, size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  return random_pattern(terminals, count, random);
}

// Every terminal to every other one.
inline std::vector<Conn> all_to_all(uint32_t terminals) {
  std::vector<Conn> out;
  for (uint32_t s = 0; s < terminals; ++s) {
    for (uint32_t d = 0; d < terminals; ++d) {
      if (s != d) out.push_back({s, d});
    }
  }
  return out;
}

}  // namespace asn::fabric_schedule::test

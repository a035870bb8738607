// The times a manager's change reports per step (compute, verify, write, commit, ...).
#pragma once

#include <chrono>
#include <cstdint>

namespace asn {

// Microseconds since `start` on the steady clock.
inline uint64_t micros_since(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

}  // namespace asn

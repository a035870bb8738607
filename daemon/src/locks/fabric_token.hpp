// The layout of fencing tokens (the LockManager's; lock_manager_fabric.cc has why it orders a
// slot's owners): what tests and tools decode tokens with.
#pragma once

#include <cstdint>

#include "asn/locks/lock_table.hpp"

namespace asn {

// Fencing tokens in a fabric (lock_manager_fabric.cc): bit 63 set, then the etcd revision at
// which this switch knew the lock map (40 bits), then a counter (23 bits). Standalone tokens
// are wall-clock nanoseconds, below 2^63 until 2262: every fabric token is above them all.
// Storage servers compare tokens as unsigned 64-bit numbers.
inline constexpr unsigned kTokenCounterBits = 23;
inline constexpr int64_t kMaxTokenRevision = (int64_t{1} << 40) - 1;
inline constexpr locks::Token kFabricTokenFlag = locks::Token{1} << 63;
// The lowest fabric token that embeds `revision` (0 <= revision <= kMaxTokenRevision).
constexpr locks::Token fabric_token_floor(int64_t revision) {
  return kFabricTokenFlag | (static_cast<locks::Token>(revision) << kTokenCounterBits);
}
// The revision a fabric token embeds (-1: a standalone token).
constexpr int64_t token_revision(locks::Token token) {
  if ((token & kFabricTokenFlag) == 0) return -1;
  return static_cast<int64_t>((token & ~kFabricTokenFlag) >> kTokenCounterBits);
}
// The clock standalone tokens are floored to (nanoseconds since the Unix epoch). Replaced
// only by tests, which put a switch's clock far off (nullptr: the system clock again).
void set_token_wall_clock(locks::Token (*clock)());

}  // namespace asn

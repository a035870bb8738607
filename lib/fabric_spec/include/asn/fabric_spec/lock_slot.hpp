// A file id's lock slot (asn/fabric_spec/lock_map.hpp): what the fabric's lock map assigns to
// switches. Header-only and without protobuf, so that libasnclient computes the same slot.
#pragma once

#include <cstdint>
#include <string_view>

namespace asn::fabric {

inline constexpr uint32_t kLockSlots = 4096;

// FNV-1a 64 of the file id's bytes, modulo kLockSlots.
constexpr uint32_t lock_slot(std::string_view file) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : file) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 1099511628211ULL;
  }
  return static_cast<uint32_t>(hash % kLockSlots);
}

}  // namespace asn::fabric

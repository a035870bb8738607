// file_in_slots: a file id whose lock slot (asn/fabric_spec/lock_slot.hpp) a fabric test needs,
// one helper for the service tests of one fabric member and the integration tests of a fabric.
#pragma once

#include <cstdint>
#include <string>

#include "asn/fabric_spec/lock_slot.hpp"

namespace asn::test {

// The first file id "<prefix><n>", n = 0, 1, ..., whose lock slot is within [first, last].
inline std::string file_in_slots(uint32_t first, uint32_t last,
                                 const std::string& prefix = "/pfs/file-") {
  for (int i = 0;; ++i) {
    std::string file = prefix + std::to_string(i);
    const uint32_t slot = fabric::lock_slot(file);
    if (first <= slot && slot <= last) return file;
  }
}

}  // namespace asn::test

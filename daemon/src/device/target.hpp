// What a register name or an offset refers to, as the Device service reads and writes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "asn/regmap/types.hpp"

namespace asn {

// One thing a name or an offset refers to: a register (or one element of a register
// array), a field, one word of a 64-bit register, a table or ring entry field, or a word.
struct Target {
  std::string name;    // canonical: "port[2].control.enable"
  uint32_t offset;     // absolute byte offset of the word (low word of a 64-bit register)
  uint8_t width_bits;  // of the value: the field's width, 32, or 64
  uint8_t lsb;
  uint32_t mask;           // bits of the word the target covers (0xffffffff for a whole word)
  uint32_t defined_mask;   // bits of the word some field covers; the rest are reserved
  uint32_t preserve_mask;  // bits a field write must keep (other RW fields of the register)
  regmap::Access access;
  std::string_view description;
  std::string read_only_hint;  // why it cannot be written, when it cannot
  bool board_reset = false;    // id.control.board_reset (or its whole register)

  bool is_64() const { return width_bits == 64; }
  uint64_t max_value() const { return width_bits >= 64 ? ~0ull : (1ull << width_bits) - 1; }
};

}  // namespace asn

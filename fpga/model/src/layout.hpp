// Internal: the placement of blocks in the register space, their reset values, and the
// per-block decode tables that make a bus access O(1) once the block is known.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/types.hpp"

namespace asn::model::detail {

// One 32-bit word of a block's register area. The masks say which bits each access type
// covers; bits in none of them are reserved.
struct WordDecode {
  const regmap::RegisterDesc* reg = nullptr;  // nullptr: no register here
  uint16_t element = 0;                       // of a register array
  uint32_t ro = 0;
  uint32_t rw = 0;
  uint32_t wo = 0;
  uint32_t w1c = 0;

  bool mapped() const { return reg != nullptr; }
  uint32_t readable() const { return ro | rw | w1c; }
  bool writable() const { return (rw | wo | w1c) != 0; }
};

// One window of table or ring entries (a double-buffered table has two).
struct WindowDecode {
  const regmap::TableDesc* table = nullptr;  // or
  const regmap::RingDesc* ring = nullptr;
  uint32_t offset = 0;  // of the window within the block
  uint32_t bytes = 0;   // window size (max_entries entries)
  uint32_t entry_bytes = 0;
  uint32_t entries = 0;  // entries this board implements; past them is a bus error
  bool writable = false;
  bool double_buffered = false;
  bool active_window = false;  // the _active window of a double-buffered table
  // Storage of physical bank 0 (at the shadow window) and bank 1 (at the active window);
  // the bank bit (a word of the block and its mask) says which one is active.
  uint32_t bank_offset[2] = {0, 0};
  uint32_t bank_word = 0;
  uint32_t bank_mask = 0;
};

struct BlockDecode {
  const regmap::BlockDesc* desc = nullptr;
  uint16_t version = 0;
  std::vector<WordDecode> words;  // indexed by byte offset / 4 within the block
  std::vector<WindowDecode> windows;
};

struct Layout {
  std::vector<BlockInstance> blocks;   // address order
  std::vector<uint32_t> bases;         // blocks[i].base, for the binary search
  std::vector<uint16_t> decode_index;  // blocks[i] -> decode[] (index of its BlockDesc)
  std::vector<BlockDecode> decode;     // one per BlockDesc of the map, in map order
  uint32_t address_space_bytes = 0;
  // Reset value of every register word that is not zero: (word index, value).
  std::vector<std::pair<uint32_t, uint32_t>> reset_words;
  // Words that say what the board is (block headers, magic, capabilities, port info): RO
  // and fixed by the profile, so memory that disagrees with them is damaged.
  struct IdentityWord {
    uint32_t word;
    uint32_t value;
    std::string name;  // "id.cap_route_entries", "port[3].port_info"
  };
  std::vector<IdentityWord> identity_words;
};

// Places the blocks for a profile and builds the decode tables. Throws BoardError
// kBadProfile when the profile does not fit the register map, std::logic_error when the
// register map itself is inconsistent.
Layout build_layout(const regmap::RegisterMap& map, const regmap::BoardProfile& profile);

// The window of a table or ring of a block (its shadow window for a double-buffered table).
const WindowDecode* find_window(const BlockDecode& decode, uint32_t offset);

}  // namespace asn::model::detail

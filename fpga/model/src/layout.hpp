// Internal: the placement of blocks in the register space, their reset values, and the
// per-block-type decode tables that make a bus access O(1) once the block is known.
#pragma once

#include <cstdint>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/types.hpp"

namespace asn::model::detail {

// What the model does beyond plain storage when a register word is accessed.
enum class Effect : uint8_t {
  kNone,
  kGeneration,    // id.generation: reads the generation kept in the memory header
  kBoardControl,  // id.control: board_reset
  kPortControl,   // port.control: enable drives the link
  kRouteControl,  // route.control: commit
  kTdmControl,    // tdm.control: arm, disarm
  kTdmTiming,     // tdm.config and the frame lengths: recompute status.running
};

// One 32-bit word of a block's register area. The masks say which bits each access type
// covers; bits in none of them are reserved.
struct WordDecode {
  bool mapped = false;
  uint32_t ro = 0;
  uint32_t rw = 0;
  uint32_t wo = 0;
  uint32_t w1c = 0;
  Effect effect = Effect::kNone;

  uint32_t readable() const { return ro | rw | w1c; }
  bool writable() const { return (rw | wo | w1c) != 0; }
};

// One table window of a block (a double-buffered table has two).
struct WindowDecode {
  uint32_t offset;  // of the window within the block
  uint32_t bytes;   // window size (max_entries entries)
  uint32_t entry_bytes;
  uint32_t entries;  // entries this board implements; past them is a bus error
  bool writable;     // the shadow window of an RW table
  bool double_buffered;
  bool active_window;       // the _active window of a double-buffered table
  uint32_t bank_offset[2];  // storage of physical bank 0 (shadow window) and 1 (active window)
};

struct BlockDecode {
  const regmap::BlockDesc* desc = nullptr;
  std::vector<WordDecode> words;  // indexed by byte offset / 4 within the block
  std::vector<WindowDecode> windows;
  // Where status.active_bank lives, for blocks with double-buffered tables.
  bool has_banks = false;
  uint32_t bank_offset = 0;
  uint32_t bank_mask = 0;
};

struct Layout {
  std::vector<BlockInstance> blocks;   // address order
  std::vector<uint32_t> bases;         // blocks[i].base, for the binary search
  std::vector<uint16_t> decode_index;  // blocks[i] -> decode[] (index of its BlockDesc)
  std::vector<BlockDecode> decode;     // one per BlockDesc of the map, in map order
  uint32_t address_space_bytes = 0;
  // Reset value of every register word that is not zero: (word index, value).
  std::vector<std::pair<uint32_t, uint32_t>> reset_words;
};

// Places the blocks for a profile and builds the decode tables. Throws BoardError
// kBadProfile when the profile does not fit the register map, std::logic_error when the
// register map asks for behaviour this model does not implement.
Layout build_layout(const regmap::RegisterMap& map, const regmap::BoardProfile& profile);

}  // namespace asn::model::detail

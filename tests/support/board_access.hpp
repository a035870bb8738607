// Register access to an EmulatedBoard by the generated references (regs::<block>::k...), for
// the model's tests: no test computes an offset by hand.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"

namespace asn::test::board_access {

using model::BlockInstance;
using model::EmulatedBoard;

inline uint32_t base_of(const EmulatedBoard& board, uint16_t type, unsigned index = 0) {
  const BlockInstance* block = board.find_block(type, index);
  if (block == nullptr) throw std::runtime_error("no block of type " + std::to_string(type));
  return block->base;
}

inline uint32_t addr(const EmulatedBoard& board, const regmap::RegRef& ref, unsigned index = 0) {
  return base_of(board, ref.block_type, index) + ref.offset;
}

inline uint32_t rd(EmulatedBoard& board, const regmap::RegRef& ref, unsigned index = 0) {
  uint32_t value = 0;
  EXPECT_TRUE(board.read32(addr(board, ref, index), value));
  return value;
}

inline uint32_t rd(EmulatedBoard& board, const regmap::FieldRef& field, unsigned index = 0) {
  return field.get(rd(board, field.reg, index));
}

inline uint64_t rd64(EmulatedBoard& board, const regmap::RegRef& ref, unsigned index = 0) {
  uint32_t lo = 0;
  uint32_t hi = 0;
  EXPECT_TRUE(board.read32(addr(board, ref, index), lo));
  EXPECT_TRUE(board.read32(addr(board, ref, index) + 4, hi));
  return (uint64_t{hi} << 32) | lo;
}

inline bool wr(EmulatedBoard& board, const regmap::RegRef& ref, uint32_t value,
               unsigned index = 0) {
  return board.write32(addr(board, ref, index), value);
}

inline bool wr(EmulatedBoard& board, const regmap::FieldRef& field, uint32_t value,
               unsigned index = 0) {
  return wr(board, field.reg, field.put(0, value), index);
}

inline uint32_t entry(const EmulatedBoard& board, const regmap::TableRef& table, uint32_t index,
                      uint32_t word = 0, bool active = false) {
  return base_of(board, table.block_type) +
         (active ? table.active_entry_offset(index) : table.entry_offset(index)) + 4 * word;
}

inline uint32_t rd_at(EmulatedBoard& board, uint32_t offset) {
  uint32_t value = 0;
  EXPECT_TRUE(board.read32(offset, value)) << "offset 0x" << std::hex << offset;
  return value;
}

struct TdmTiming {
  uint32_t slots = 0;
  uint32_t slot_length = 0;
  uint32_t policy = 0;  // 0 fixed, 1 SES, 2 SLA, 3 PREEMPT
  bool wormhole = false;
  uint32_t wormhole_length = 0;
};

// Writes `timing` into the shadow timing bank of tdm.
inline void write_timing(EmulatedBoard& board, const TdmTiming& timing) {
  namespace t = regs::tdm;
  uint32_t words[8] = {};
  t::kTimingPolicy.put(words, timing.policy);
  t::kTimingWormhole.put(words, timing.wormhole ? 1 : 0);
  t::kTimingSlots.put(words, timing.slots);
  t::kTimingSlotLength.put(words, timing.slot_length);
  t::kTimingWormholeLength.put(words, timing.wormhole_length);
  for (uint32_t w = 0; w < t::kTiming.words(); ++w) {
    EXPECT_TRUE(board.write32(entry(board, t::kTiming, 0, w), words[w]));
  }
}

// Gives a stopped sequencer `timing` in both banks (an arm swaps at once while stopped), so
// that later arms keep it.
inline void set_timing(EmulatedBoard& board, const TdmTiming& timing) {
  for (int bank = 0; bank < 2; ++bank) {
    write_timing(board, timing);
    EXPECT_TRUE(wr(board, regs::tdm::kControlArm, 1));
  }
}

}  // namespace asn::test::board_access

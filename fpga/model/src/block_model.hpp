// Internal: the behaviour of one register block. The board decodes a bus address to a block
// instance and a register or table word, applies the access type (RO, RW, WO, W1C, reserved
// bits) itself, and then tells the block's model what was written. Each model is one block
// type in its own file under blocks/; the engines a model drives (TDM sequencer, routing,
// lock engine, parity path) live under engines/ and see only the register views they are
// given. See fpga/model/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/types.hpp"

namespace asn::model::detail {

struct BlockDecode;
struct WindowDecode;

enum class Bank : uint8_t { kShadow, kActive };

// Typed access to the storage of one block instance: its registers and the banks of its
// tables. Nothing in it reaches another block.
class RegisterView {
 public:
  RegisterView(uint32_t* image, const BlockInstance& block, const BlockDecode& decode)
      : image_(image), block_(&block), decode_(&decode) {}

  const BlockInstance& block() const { return *block_; }
  uint16_t version() const { return block_->version; }

  uint32_t& word(const regmap::RegRef& reg, unsigned half = 0) {
    return image_[(block_->base + reg.offset) / 4 + half];
  }
  uint32_t get(const regmap::FieldRef& field) { return field.get(word(field.reg)); }
  void set(const regmap::FieldRef& field, uint32_t value) {
    uint32_t& w = word(field.reg);
    w = field.put(w, value);
  }
  uint64_t get64(const regmap::RegRef& reg) {
    return (uint64_t{word(reg, 1)} << 32) | word(reg, 0);
  }
  void set64(const regmap::RegRef& reg, uint64_t value) {
    word(reg, 0) = static_cast<uint32_t>(value);
    word(reg, 1) = static_cast<uint32_t>(value >> 32);
  }

  // Entries this board implements, and the words of one entry in the shadow or active
  // bank (for a table with one bank, both name it).
  uint32_t entries(const regmap::TableRef& table) const;
  std::span<uint32_t> entry(const regmap::TableRef& table, uint32_t index, Bank bank);
  // Flips the bank bit of a double-buffered table: the shadow bank becomes active. Every
  // table that shares the bit swaps with it.
  void swap_banks(const regmap::TableRef& table);

 private:
  const WindowDecode& window(const regmap::TableRef& table) const;

  uint32_t* image_;
  const BlockInstance* block_;
  const BlockDecode* decode_;
};

// What the board offers its block models beyond their own registers: the interrupt lines
// into the id block, board reset, and state that the hardware keeps but the bus cannot see.
class BoardContext {
 public:
  virtual ~BoardContext() = default;
  virtual const regmap::BoardProfile& profile() const = 0;
  virtual uint32_t generation() const = 0;
  // Raises an id.irq_status cause.
  virtual void raise(const regmap::FieldRef& cause) = 0;
  virtual void board_reset() = 0;
  // Words of persistent private state of a block instance (sized by private_words()),
  // kept in the board memory file outside the BAR image.
  virtual std::span<uint64_t> private_state(const BlockInstance& block) = 0;
  // The board memory (DRAM) of a block instance (sized by dram_bytes()), in the board
  // memory file after the BAR image: it outlives the process, as private_state does, and
  // a board reset (or a new board) zeroes it.
  virtual std::span<std::byte> dram(const BlockInstance& block) = 0;
};

// One block type's behaviour. One instance per block instance on the board.
class BlockModel {
 public:
  virtual ~BlockModel() = default;

  // The write-only fields and the bank swaps this model acts on. The board refuses a
  // register map whose block has a WO field or a swap its model does not list, so a map
  // change that needs new behaviour fails at once instead of being ignored.
  virtual std::vector<regmap::FieldRef> write_only_fields() const { return {}; }
  virtual std::vector<regmap::FieldRef> swaps() const { return {}; }
  // Words of private_state() the model needs.
  virtual size_t private_words() const { return 0; }
  // Bytes of board DRAM the model needs on a board of this profile (rounded up to pages).
  virtual size_t dram_bytes(const regmap::BoardProfile&) const { return 0; }

  // After the registers took their reset values (new board, power-on, board reset).
  virtual void reset(BoardContext&, RegisterView&) {}
  // Once the board is open, after reset() if the memory was (re)initialised, or on memory
  // kept from an earlier open: an engine rebuilds what it keeps outside the memory file
  // (the lock engine restores its table from DRAM).
  virtual void attach(BoardContext&, RegisterView&) {}
  // After a write to one of the block's registers was applied to storage. `written` is the
  // value on the bus (WO bits are only here), `old` the stored word before.
  virtual void on_write(BoardContext&, RegisterView&, const regmap::RegisterDesc&,
                        unsigned /*element*/, uint32_t /*old*/, uint32_t /*written*/) {}
  // A data path input of the block (a register only the hardware writes, set by tests or
  // the simulator through EmulatedBoard) changed.
  virtual void on_input(BoardContext&, RegisterView&) {}
  // The core clock advanced by `cycles`.
  virtual void advance(BoardContext&, RegisterView&, uint64_t /*cycles*/) {}

  // Whether the block's registers follow the core clock (a time base, frame counters): a
  // board whose clock runs by itself (EmulatedBoard::run_clock) runs it up to now before
  // they are read or written, and a write to them may move the block's next event.
  virtual bool clocked() const { return false; }
  // Core cycles from now until the block next acts on its own, on the clock, in a way that
  // software learns of only by an interrupt (the TDM sequencer's armed swap), assuming its
  // inputs stay as they are; kNoEvent when it will not before software or an input acts.
  // What the block does on the clock that software reads from its registers is not an
  // event: a clock that runs by itself brings those up to date when they are read. The board
  // takes the minimum over its blocks (EmulatedBoard::cycles_to_next_event), so a driver of
  // the emulated board may let the clock sleep until then.
  virtual uint64_t cycles_to_event(BoardContext&, RegisterView&) { return kNoEvent; }
};

// The model of a block type (blocks/registry.cc). Throws std::logic_error for a block type
// the model does not know.
std::unique_ptr<BlockModel> make_block_model(const regmap::BlockDesc& block);

}  // namespace asn::model::detail

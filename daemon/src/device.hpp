// The Device layer: finds the register blocks of a board by walking the block list (as
// Corundum's drivers do), refuses a board it does not understand, and gives typed access
// through the references generated from the register map (asn/regmap/regs.hpp). It also
// resolves the symbolic names operators use ("port[2].control.enable") to targets. No
// manager or service computes an offset itself.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "register_bus.hpp"

namespace asn {

struct DeviceBlock {
  const regmap::BlockDesc* desc;
  uint32_t base;
  unsigned index;    // port number for per-port blocks, else 0
  std::string name;  // "id", "port[3]"
};

// One thing a name or an offset refers to: a register (or one element of a register
// array), a field, one word of a 64-bit register, a table entry field or a table word.
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

  bool is_64() const { return width_bits == 64; }
  uint64_t max_value() const { return width_bits >= 64 ? ~0ull : (1ull << width_bits) - 1; }
};

struct Capabilities {
  uint32_t ports;
  uint32_t vcs_per_port;
  uint32_t queue_depth;
  uint32_t tdm_slots;
  uint32_t route_entries;
  uint32_t stripe_groups;
  uint32_t lock_entries;
  uint32_t clock_hz;
};

class Device {
 public:
  // Walks the board's blocks. Throws asn::Error (kHardware) when the magic is wrong, the
  // register map's major version or a block's version is one this asnd does not know, or
  // the block list is malformed (a loop, a block past the end); the message names both the
  // value found and the value expected.
  explicit Device(RegisterBus& bus);

  // Walks again (after a board reset, or when the generation counter changed).
  void rediscover();

  RegisterBus& bus() { return bus_; }
  const std::vector<DeviceBlock>& blocks() const { return blocks_; }
  const Capabilities& capabilities() const { return caps_; }
  uint16_t regmap_major() const { return major_; }
  uint16_t regmap_minor() const { return minor_; }
  uint16_t board_kind() const { return kind_; }

  // The base of block `type`, instance `index`; throws kNotFound.
  const DeviceBlock& block(uint16_t type, unsigned index = 0) const;
  unsigned count(uint16_t type) const;

  // Typed access. Field writes of RW fields read-modify-write under the device lock; WO and
  // W1C field writes touch only that field's bits.
  uint32_t read(regmap::RegRef reg, unsigned instance = 0);
  uint64_t read64(regmap::RegRef reg, unsigned instance = 0);
  uint32_t read(regmap::FieldRef field, unsigned instance = 0);
  void write(regmap::RegRef reg, uint32_t value, unsigned instance = 0);
  void write(regmap::FieldRef field, uint32_t value, unsigned instance = 0);

  // Symbolic access, for the API. resolve() throws kNotFound / kInvalidArgument with the
  // reason and, for a misspelt name, the closest real one.
  Target resolve(std::string_view name) const;
  Target resolve(uint32_t offset) const;
  uint64_t read(const Target& target);
  // Throws kFailedPrecondition for a read-only target, kInvalidArgument for a value wider
  // than the target or with reserved bits set. Writes nothing; the caller says so.
  void check_write(const Target& target, uint64_t value) const;
  // check_write() for every item first, then all writes in one bus transaction.
  void write(std::span<const std::pair<Target, uint64_t>> items);

  // Every target of the board in address order: registers (each array element, 64-bit
  // registers as one value) and, when asked, every word of every implemented table entry.
  // `block` filters: "" all, "port" all ports, "port[2]" one.
  std::vector<Target> enumerate(std::string_view block, bool include_tables) const;

  // Board reset through id.control.board_reset; walks again. Returns the new generation.
  uint32_t reset_board();

 private:
  struct Located {
    const DeviceBlock* block;
    uint32_t rel;  // offset within the block
  };
  void walk();
  const DeviceBlock* find_block(std::string_view name, std::optional<unsigned> index,
                                std::string_view full) const;
  std::optional<Located> locate(uint32_t offset) const;
  uint32_t entries_of(const regmap::TableDesc& table) const;
  uint32_t address(regmap::RegRef reg, unsigned instance) const;
  uint64_t read_counter(uint32_t low_offset);

  RegisterBus& bus_;
  std::mutex mutex_;  // makes read-modify-write sequences atomic among asnd's threads
  std::vector<DeviceBlock> blocks_;
  Capabilities caps_{};
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  uint16_t kind_ = 0;
};

// Name of a board kind or port medium from the register map ("netfpga-1g"), or "0x..".
std::string board_kind_name(uint32_t kind);
std::string port_media_name(uint32_t media);

}  // namespace asn

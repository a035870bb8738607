// Descriptor types of the register map. The data is generated from
// fpga/regmap/asn_regmap.yaml into asn_regmap_desc.cc (descriptors) and asn/regmap/regs.hpp
// (typed references and the capability enumeration); this header is the hand-written shape
// both of them share.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace asn::regmap {

enum class Access : uint8_t { kRO, kRW, kWO, kW1C };

constexpr std::string_view to_string(Access access) {
  switch (access) {
    case Access::kRO:
      return "RO";
    case Access::kRW:
      return "RW";
    case Access::kWO:
      return "WO";
    case Access::kW1C:
      return "W1C";
  }
  return "?";
}

// One enumerator per capability of the map (generated into regs.hpp); the value is the
// capability's index in the map's list and in every board profile.
enum class Cap : uint16_t;

constexpr uint16_t index_of(Cap cap) { return static_cast<uint16_t>(cap); }

// Reset values that come from neither a constant nor a capability. The model knows how to
// produce each one; the generator refuses any other name.
enum class Intrinsic : uint8_t {
  kMagic,
  kRegmapMajor,
  kRegmapMinor,
  kBlockType,
  kBlockVersion,
  kBlockNext,
  kKind,
  kPortIndex,
  kPortMedia,
  kPortSpeedMbps,
  kGeneration,  // the board's generation counter, kept outside the register image
  kCapabilityCount,
};

struct ValueSource {
  enum class Kind : uint8_t { kConstant, kIntrinsic, kCapability };
  Kind kind = Kind::kConstant;
  uint16_t index = 0;  // the Intrinsic, or the capability index

  static constexpr ValueSource intrinsic(Intrinsic which) {
    return {Kind::kIntrinsic, static_cast<uint16_t>(which)};
  }
  static constexpr ValueSource capability(uint16_t cap) { return {Kind::kCapability, cap}; }
  constexpr bool is(Intrinsic which) const {
    return kind == Kind::kIntrinsic && index == static_cast<uint16_t>(which);
  }
};

enum class Instances : uint8_t { kOne, kPorts };
enum class RingDirection : uint8_t { kToBoard, kFromBoard };

constexpr uint32_t mask_of(uint8_t lsb, uint8_t width) {
  return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << lsb;
}

struct FieldDesc {
  std::string_view name;
  uint8_t lsb;
  uint8_t width;
  Access access;
  uint32_t reset;
  ValueSource reset_from;
  uint16_t since;  // the block version that introduced the field
  std::string_view description;

  constexpr uint32_t mask() const { return mask_of(lsb, width); }
};

struct RegisterDesc {
  std::string_view name;
  uint32_t offset;                    // of element 0
  uint8_t width_bits;                 // 32 or 64 (low word at offset, high word at offset + 4)
  uint16_t count;                     // elements of a register array; 1 for a plain register
  Access access;                      // the register's access; fields may narrow it
  std::span<const FieldDesc> fields;  // empty for 64-bit counters: the whole value
  uint16_t since;
  int16_t capability;  // the capability an id.cap_<name> register holds, else -1
  std::string_view description;

  constexpr uint32_t bytes() const { return width_bits / 8u; }
  constexpr uint32_t offset_of(unsigned element) const { return offset + element * bytes(); }
  constexpr uint32_t end() const { return offset + count * bytes(); }
};

// A field of a table or ring entry. An array field (count > 1) has `count` elements of
// `width` bits, element i at bit lsb + i * width counted from the start of word `word`.
struct TableFieldDesc {
  std::string_view name;
  uint16_t word;
  uint8_t lsb;
  uint8_t width;
  uint16_t count;
  std::string_view description;

  constexpr uint16_t word_of(unsigned element) const {
    return static_cast<uint16_t>(word + (lsb + element * width) / 32u);
  }
  constexpr uint8_t lsb_of(unsigned element) const {
    return static_cast<uint8_t>((lsb + element * width) % 32u);
  }
  constexpr uint32_t mask_of_element(unsigned element) const {
    return mask_of(lsb_of(element), width);
  }
};

// entries_from of a table whose entry count is fixed by the map (`entries: N`).
inline constexpr uint16_t kFixedEntries = 0xffff;

struct TableDesc {
  std::string_view name;
  uint32_t offset;         // shadow bank window (or the only window)
  uint32_t active_offset;  // active bank window of a double-buffered table, else 0
  uint32_t entry_bytes;
  uint32_t max_entries;            // window size / entry_bytes
  uint16_t entries_from;           // the capability that counts the entries the board has,
  uint32_t fixed_entries;          // or kFixedEntries and the count here
  Access access;                   // of the (shadow) window; the active window is RO
  std::string_view swap_register;  // register whose WO field swaps the banks
  std::string_view swap_field;
  std::string_view bank_register;  // register whose RO bit says which bank is active
  std::string_view bank_field;
  std::span<const TableFieldDesc> fields;
  uint16_t since;
  std::string_view description;

  constexpr bool double_buffered() const { return active_offset != 0; }
  constexpr uint32_t window_bytes() const { return entry_bytes * max_entries; }
  constexpr uint32_t words() const { return entry_bytes / 4u; }
  // Entries the board implements, given its capability values.
  constexpr uint32_t entries(std::span<const uint32_t> capabilities) const {
    if (entries_from == kFixedEntries) return fixed_entries;
    return entries_from < capabilities.size() ? capabilities[entries_from] : 0;
  }
};

// A descriptor ring in board memory: whoever produces entries owns the producer index,
// the other side the consumer index. Software announces new entries of a to-board ring
// with the doorbell; the board announces entries of a from-board ring with an interrupt.
struct RingDesc {
  std::string_view name;
  RingDirection direction;
  uint32_t offset;
  uint32_t entry_bytes;
  uint32_t max_entries;  // a power of two: indices wrap
  uint16_t entries_from;
  std::string_view producer_register;
  std::string_view producer_field;
  std::string_view consumer_register;
  std::string_view consumer_field;
  std::string_view doorbell_register;  // to-board rings
  std::string_view doorbell_field;
  std::string_view irq_field;  // from-board rings: the id.irq_status cause
  std::span<const TableFieldDesc> fields;
  uint16_t since;
  std::string_view description;

  constexpr uint32_t window_bytes() const { return entry_bytes * max_entries; }
};

struct BlockDesc {
  std::string_view name;
  uint16_t type;
  uint16_t version;      // the newest layout
  uint16_t min_version;  // the oldest layout software still drives
  uint32_t size;         // power of two; blocks are placed at offsets aligned to it
  Instances instances;
  std::span<const RegisterDesc> registers;
  std::span<const TableDesc> tables;
  std::span<const RingDesc> rings;
  std::string_view description;

  constexpr bool supports(uint16_t v) const { return v >= min_version && v <= version; }
};

struct CapabilityDesc {
  std::string_view name;
  uint16_t index;
  uint8_t bits;
  uint32_t max;
  uint32_t offset;     // of its id.cap_<name> register in the id block
  bool is_port_count;  // derived: the number of ports of the profile
  std::string_view description;
};

struct PortProfile {
  uint8_t media;
  uint32_t speed_mbps;
};

struct BlockVersion {
  uint16_t type;
  uint16_t version;
};

struct BoardProfile {
  std::string_view name;
  std::string_view kind_name;
  uint16_t kind;
  std::string_view description;
  std::span<const PortProfile> ports;
  std::span<const uint32_t> capabilities;        // value of every capability, by index
  std::span<const BlockVersion> block_versions;  // blocks pinned to an older version

  constexpr uint32_t cap(Cap which) const { return capabilities[index_of(which)]; }
  constexpr uint16_t version_of(const BlockDesc& block) const {
    for (const BlockVersion& pin : block_versions) {
      if (pin.type == block.type) return pin.version;
    }
    return block.version;
  }
};

struct NamedValue {
  std::string_view name;
  uint32_t value;
};

struct RegisterMap {
  std::string_view name;
  uint16_t major;
  uint16_t minor;
  uint32_t magic;
  std::span<const BlockDesc> blocks;
  std::span<const CapabilityDesc> capabilities;
  std::span<const BoardProfile> boards;
  std::span<const NamedValue> board_kinds;
  std::span<const NamedValue> port_media;
  uint64_t digest;  // of the YAML source: changes whenever the map does

  constexpr const BlockDesc* block(uint16_t type) const {
    for (const BlockDesc& b : blocks) {
      if (b.type == type) return &b;
    }
    return nullptr;
  }
  constexpr const BoardProfile* board(std::string_view board_name) const {
    for (const BoardProfile& b : boards) {
      if (b.name == board_name) return &b;
    }
    return nullptr;
  }
};

// The generated map (asn_regmap_desc.cc).
const RegisterMap& register_map();

// Typed references emitted into asn/regmap/regs.hpp: code names registers by these, never
// by raw offsets. `since` is the block version that introduced the item.
struct RegRef {
  uint16_t block_type;
  uint32_t offset;
  uint8_t width_bits;
  uint16_t count;
  uint16_t since;

  constexpr RegRef at(unsigned element) const {
    return RegRef{block_type, offset + element * (width_bits / 8u), width_bits, 1, since};
  }
};

struct FieldRef {
  RegRef reg;
  uint8_t lsb;
  uint8_t width;  // 0 for "no field" (a table without banks, a ring without a doorbell)
  uint16_t since;

  constexpr bool valid() const { return width != 0; }
  // The field in element `element` of a register array (port.vc_occupancy[3].packets).
  constexpr FieldRef at(unsigned element) const { return {reg.at(element), lsb, width, since}; }
  constexpr uint32_t mask() const { return mask_of(lsb, width); }
  constexpr uint32_t get(uint32_t reg_value) const { return (reg_value & mask()) >> lsb; }
  constexpr uint32_t put(uint32_t reg_value, uint32_t field_value) const {
    return (reg_value & ~mask()) | ((field_value << lsb) & mask());
  }
};

// TableRef::entries_from of a table whose entry count is fixed (TableRef::fixed_entries).
inline constexpr Cap kFixedEntriesCap = static_cast<Cap>(kFixedEntries);

struct TableRef {
  uint16_t block_type;
  uint32_t offset;
  uint32_t active_offset;
  uint32_t entry_bytes;
  uint32_t max_entries;
  Cap entries_from;
  uint32_t fixed_entries;  // when entries_from is kFixedEntriesCap
  uint16_t since;
  FieldRef bank;  // double-buffered tables: the RO bit naming the active bank
  FieldRef swap;  // double-buffered tables: the WO field that swaps the banks

  constexpr bool double_buffered() const { return active_offset != 0; }
  constexpr uint32_t words() const { return entry_bytes / 4u; }
  constexpr uint32_t entry_offset(uint32_t entry) const { return offset + entry * entry_bytes; }
  constexpr uint32_t active_entry_offset(uint32_t entry) const {
    return active_offset + entry * entry_bytes;
  }
};

// A field of a table entry; get/put work on the entry's words.
struct TableFieldRef {
  TableRef table;
  uint16_t word;
  uint8_t lsb;
  uint8_t width;

  constexpr uint32_t mask() const { return mask_of(lsb, width); }
  constexpr uint32_t get(std::span<const uint32_t> entry) const {
    return (entry[word] & mask()) >> lsb;
  }
  constexpr void put(std::span<uint32_t> entry, uint32_t value) const {
    entry[word] = (entry[word] & ~mask()) | ((value << lsb) & mask());
  }
};

// An array field of a table entry (tdm.slot_table[s].out[p]): element i by at(i).
struct TableArrayRef {
  TableRef table;
  uint16_t word;
  uint8_t lsb;
  uint8_t width;
  uint16_t count;

  constexpr TableFieldRef at(unsigned element) const {
    return TableFieldRef{table, static_cast<uint16_t>(word + (lsb + element * width) / 32u),
                         static_cast<uint8_t>((lsb + element * width) % 32u), width};
  }
};

struct RingRef {
  TableRef window;  // the entries, as a single-bank table
  RingDirection direction;
  FieldRef producer;
  FieldRef consumer;
  FieldRef doorbell;  // to-board rings
};

}  // namespace asn::regmap

// Descriptor types of the register map. The data is generated from
// fpga/regmap/asn_regmap.yaml into asn_regmap_desc.cc (descriptors) and asn/regmap/regs.hpp
// (typed references); this header is the hand-written shape both of them share.
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

// Where a reset value or a table's entry count comes from when it is not a constant: the
// register map's own identity, the block layout, or the board profile.
enum class BoardValue : uint8_t {
  kConstant,
  kMagic,
  kRegmapMajor,
  kRegmapMinor,
  kBlockType,
  kBlockVersion,
  kBlockNext,
  kKind,
  kPortCount,
  kVcsPerPort,
  kQueueDepth,
  kTdmSlots,
  kRouteEntries,
  kStripeGroups,
  kLockEntries,
  kClockHz,
  kPortIndex,
  kPortMedia,
  kPortSpeedMbps,
  kGeneration,  // the board's generation counter, kept outside the register image
};

enum class Instances : uint8_t { kOne, kPorts };

struct FieldDesc {
  std::string_view name;
  uint8_t lsb;
  uint8_t width;
  Access access;
  uint32_t reset;
  BoardValue reset_from;
  std::string_view description;

  constexpr uint32_t mask() const {
    return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << lsb;
  }
};

struct RegisterDesc {
  std::string_view name;
  uint32_t offset;                    // of element 0
  uint8_t width_bits;                 // 32 or 64 (low word at offset, high word at offset + 4)
  uint16_t count;                     // elements of a register array; 1 for a plain register
  Access access;                      // the register's access; fields may narrow it
  std::span<const FieldDesc> fields;  // empty for 64-bit counters: the whole value
  std::string_view description;

  constexpr uint32_t bytes() const { return width_bits / 8u; }
  constexpr uint32_t offset_of(unsigned element) const { return offset + element * bytes(); }
};

struct TableFieldDesc {
  std::string_view name;
  uint16_t word;
  uint8_t lsb;
  uint8_t width;
  std::string_view description;

  constexpr uint32_t mask() const {
    return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << lsb;
  }
};

struct TableDesc {
  std::string_view name;
  uint32_t offset;         // shadow bank window (or the only window)
  uint32_t active_offset;  // active bank window of a double-buffered table, else 0
  uint32_t entry_bytes;
  uint32_t max_entries;            // window size / entry_bytes
  BoardValue entries_from;         // entries the board implements
  Access access;                   // of the (shadow) window; the active window is RO
  std::string_view swap_register;  // register whose field swaps the banks
  std::string_view swap_field;
  std::span<const TableFieldDesc> fields;
  std::string_view description;

  constexpr bool double_buffered() const { return active_offset != 0; }
  constexpr uint32_t window_bytes() const { return entry_bytes * max_entries; }
};

struct BlockDesc {
  std::string_view name;
  uint16_t type;
  uint16_t version;
  uint32_t size;  // power of two; blocks are placed at offsets aligned to it
  Instances instances;
  std::span<const RegisterDesc> registers;
  std::span<const TableDesc> tables;
  std::string_view description;
};

struct PortProfile {
  uint8_t media;
  uint32_t speed_mbps;
};

struct BoardProfile {
  std::string_view name;
  std::string_view kind_name;
  uint16_t kind;
  std::string_view description;
  uint32_t clock_hz;
  std::span<const PortProfile> ports;
  uint8_t vcs_per_port;
  uint16_t queue_depth;
  uint32_t tdm_slots;
  uint32_t route_entries;
  uint32_t stripe_groups;
  uint32_t lock_entries;
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
  std::span<const BoardProfile> boards;
  std::span<const NamedValue> board_kinds;
  std::span<const NamedValue> port_media;
  uint64_t digest;  // of the YAML source: changes whenever the map does
};

// The generated map (asn_regmap_desc.cc).
const RegisterMap& register_map();

// Typed references emitted into asn/regmap/regs.hpp: code names registers by these, never
// by raw offsets.
struct RegRef {
  uint16_t block_type;
  uint32_t offset;
  uint8_t width_bits;
  uint16_t count;

  constexpr RegRef at(unsigned element) const {
    return RegRef{block_type, offset + element * (width_bits / 8u), width_bits, 1};
  }
};

struct FieldRef {
  RegRef reg;
  uint8_t lsb;
  uint8_t width;

  constexpr uint32_t mask() const {
    return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << lsb;
  }
  constexpr uint32_t get(uint32_t reg_value) const { return (reg_value & mask()) >> lsb; }
  constexpr uint32_t put(uint32_t reg_value, uint32_t field_value) const {
    return (reg_value & ~mask()) | ((field_value << lsb) & mask());
  }
};

struct TableRef {
  uint16_t block_type;
  uint32_t offset;
  uint32_t active_offset;
  uint32_t entry_bytes;
  uint32_t max_entries;

  constexpr uint32_t entry_offset(uint32_t entry) const { return offset + entry * entry_bytes; }
  constexpr uint32_t active_entry_offset(uint32_t entry) const {
    return active_offset + entry * entry_bytes;
  }
};

struct TableFieldRef {
  TableRef table;
  uint16_t word;
  uint8_t lsb;
  uint8_t width;

  constexpr uint32_t mask() const {
    return width >= 32 ? 0xffffffffu : ((1u << width) - 1u) << lsb;
  }
};

}  // namespace asn::regmap

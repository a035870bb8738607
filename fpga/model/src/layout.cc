#include "layout.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace asn::model::detail {
namespace {

using regmap::Access;
using regmap::BlockDesc;
using regmap::BoardProfile;
using regmap::Intrinsic;
using regmap::RegisterDesc;
using regmap::ValueSource;

std::string hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

[[noreturn]] void map_error(const BlockDesc& block, const std::string& what) {
  // The register map and the model are built together, so this is a programming error that
  // any test opening a board reports at once.
  throw std::logic_error("register map block '" + std::string(block.name) + "': " + what);
}

[[noreturn]] void profile_error(const BoardProfile& profile, const std::string& what) {
  throw BoardError(BoardError::Kind::kBadProfile,
                   "board profile '" + std::string(profile.name) + "': " + what);
}

uint32_t capability(const BoardProfile& profile, uint16_t index, const BlockDesc& block) {
  if (index >= profile.capabilities.size()) map_error(block, "capability index out of range");
  return profile.capabilities[index];
}

// The reset value a field takes on this instance of a block.
uint32_t source_value(const regmap::RegisterMap& map, const BoardProfile& profile,
                      const std::vector<BlockInstance>& blocks, size_t i, ValueSource from) {
  const BlockInstance& inst = blocks[i];
  if (from.kind == ValueSource::Kind::kCapability) {
    return capability(profile, from.index, *inst.desc);
  }
  switch (static_cast<Intrinsic>(from.index)) {
    case Intrinsic::kMagic:
      return map.magic;
    case Intrinsic::kRegmapMajor:
      return map.major;
    case Intrinsic::kRegmapMinor:
      return map.minor;
    case Intrinsic::kBlockType:
      return inst.desc->type;
    case Intrinsic::kBlockVersion:
      return inst.version;
    case Intrinsic::kBlockNext:
      return i + 1 < blocks.size() ? blocks[i + 1].base : 0;
    case Intrinsic::kKind:
      return profile.kind;
    case Intrinsic::kGeneration:
      return 0;  // the id block's model writes the generation kept in the memory header
    case Intrinsic::kCapabilityCount:
      return static_cast<uint32_t>(profile.capabilities.size());
    case Intrinsic::kPortIndex:
    case Intrinsic::kPortMedia:
    case Intrinsic::kPortSpeedMbps: {
      if (inst.desc->instances != regmap::Instances::kPorts) {
        map_error(*inst.desc, "port value used outside a per-port block");
      }
      const regmap::PortProfile& port = profile.ports[inst.index];
      if (static_cast<Intrinsic>(from.index) == Intrinsic::kPortIndex) return inst.index;
      return static_cast<Intrinsic>(from.index) == Intrinsic::kPortMedia ? port.media
                                                                         : port.speed_mbps;
    }
  }
  map_error(*inst.desc, "unknown intrinsic value");
}

void add_access(WordDecode& word, Access access, uint32_t mask) {
  switch (access) {
    case Access::kRO:
      word.ro |= mask;
      break;
    case Access::kRW:
      word.rw |= mask;
      break;
    case Access::kWO:
      word.wo |= mask;
      break;
    case Access::kW1C:
      word.w1c |= mask;
      break;
  }
}

const regmap::FieldDesc* find_field(const BlockDesc& block, std::string_view reg_name,
                                    std::string_view field_name, const RegisterDesc** reg_out) {
  for (const RegisterDesc& reg : block.registers) {
    if (reg.name != reg_name) continue;
    for (const regmap::FieldDesc& field : reg.fields) {
      if (field.name == field_name) {
        *reg_out = &reg;
        return &field;
      }
    }
  }
  return nullptr;
}

void decode_registers(const BlockDesc& block, uint16_t version, BlockDecode& decode) {
  for (const RegisterDesc& reg : block.registers) {
    if (reg.since > version) continue;  // a later layout's register: a bus error here
    if (reg.width_bits != 32 && reg.width_bits != 64) map_error(block, "odd register width");
    for (unsigned element = 0; element < reg.count; ++element) {
      for (uint32_t half = 0; half < reg.bytes() / 4; ++half) {
        const uint32_t offset = reg.offset_of(element) + 4 * half;
        if (offset % 4 != 0 || offset + 4 > block.size) {
          map_error(block, "register " + std::string(reg.name) + " is misplaced");
        }
        const size_t index = offset / 4;
        if (decode.words.size() <= index) decode.words.resize(index + 1);
        WordDecode& word = decode.words[index];
        if (word.mapped()) map_error(block, "registers overlap at " + hex(offset));
        word.reg = &reg;
        word.element = static_cast<uint16_t>(element);
        if (reg.fields.empty()) {
          add_access(word, reg.access, 0xffffffffu);
        } else {
          for (const regmap::FieldDesc& field : reg.fields) {
            if (field.since <= version) add_access(word, field.access, field.mask());
          }
        }
      }
    }
  }
}

uint32_t entries_of(const BoardProfile& profile, const BlockDesc& block, uint16_t from,
                    uint32_t fixed, uint32_t max_entries, std::string_view name) {
  const uint32_t entries =
      from == regmap::kFixedEntries ? fixed : capability(profile, from, block);
  if (entries > max_entries) {
    profile_error(profile, std::string(block.name) + "." + std::string(name) + " needs " +
                               std::to_string(entries) + " entries, the register map has " +
                               std::to_string(max_entries));
  }
  return entries;
}

void decode_tables(const BoardProfile& profile, const BlockDesc& block, uint16_t version,
                   BlockDecode& decode) {
  for (const regmap::TableDesc& table : block.tables) {
    if (table.since > version) continue;
    if (table.entry_bytes == 0 || table.entry_bytes % 4 != 0) {
      map_error(block, "table " + std::string(table.name) + " has an odd entry size");
    }
    WindowDecode window;
    window.table = &table;
    window.bytes = table.window_bytes();
    window.entry_bytes = table.entry_bytes;
    window.entries = entries_of(profile, block, table.entries_from, table.fixed_entries, table.max_entries,
                   table.name);
    window.double_buffered = table.double_buffered();
    window.bank_offset[0] = table.offset;
    window.bank_offset[1] = table.active_offset;
    if (table.double_buffered()) {
      const RegisterDesc* bank_reg = nullptr;
      const regmap::FieldDesc* bank =
          find_field(block, table.bank_register, table.bank_field, &bank_reg);
      if (bank == nullptr || bank->width != 1 || bank->access != Access::kRO) {
        map_error(block, "table " + std::string(table.name) + " needs an RO 1-bit bank field");
      }
      window.bank_word = bank_reg->offset / 4;
      window.bank_mask = bank->mask();
    }
    window.offset = table.offset;
    window.writable = table.access == Access::kRW;
    decode.windows.push_back(window);
    if (table.double_buffered()) {
      window.offset = table.active_offset;
      window.writable = false;  // what the data path uses; software only reads it
      window.active_window = true;
      decode.windows.push_back(window);
    }
  }
  for (const regmap::RingDesc& ring : block.rings) {
    if (ring.since > version) continue;
    WindowDecode window;
    window.ring = &ring;
    window.offset = window.bank_offset[0] = ring.offset;
    window.bytes = ring.window_bytes();
    window.entry_bytes = ring.entry_bytes;
    window.entries = entries_of(profile, block, ring.entries_from, 0, ring.max_entries, ring.name);
    // Software writes the entries of a ring it produces and only reads the others.
    window.writable = ring.direction == regmap::RingDirection::kToBoard;
    decode.windows.push_back(window);
  }
}

BlockDecode build_block_decode(const BoardProfile& profile, const BlockDesc& block,
                               uint16_t version) {
  BlockDecode decode;
  decode.desc = &block;
  decode.version = version;
  decode_registers(block, version, decode);
  decode_tables(profile, block, version, decode);
  const uint32_t register_area_end = static_cast<uint32_t>(decode.words.size() * 4);
  for (size_t i = 0; i < decode.windows.size(); ++i) {
    const WindowDecode& a = decode.windows[i];
    if (a.offset < register_area_end || a.offset % 4 != 0 || a.offset + a.bytes > block.size) {
      map_error(block, "table window at " + hex(a.offset) + " is misplaced");
    }
    for (size_t j = 0; j < i; ++j) {
      const WindowDecode& b = decode.windows[j];
      if (a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes) {
        map_error(block, "table windows overlap at " + hex(a.offset));
      }
    }
  }
  return decode;
}

void add_reset_words(const regmap::RegisterMap& map, const BoardProfile& profile, Layout& layout,
                     size_t i) {
  const BlockInstance& inst = layout.blocks[i];
  for (const RegisterDesc& reg : inst.desc->registers) {
    if (reg.since > inst.version) continue;
    uint32_t value = 0;
    for (const regmap::FieldDesc& field : reg.fields) {
      if (field.since > inst.version) continue;
      const uint32_t v = field.reset_from.kind == ValueSource::Kind::kConstant
                             ? field.reset
                             : source_value(map, profile, layout.blocks, i, field.reset_from);
      const uint32_t max = field.mask() >> field.lsb;
      if (v > max) {
        profile_error(profile, std::string(inst.desc->name) + "." + std::string(reg.name) + "." +
                                   std::string(field.name) + " = " + std::to_string(v) +
                                   " does not fit in " + std::to_string(field.width) + " bits");
      }
      value |= (v << field.lsb) & field.mask();
    }
    const bool identity =
        reg.access == regmap::Access::kRO && !reg.fields.empty() &&
        std::all_of(reg.fields.begin(), reg.fields.end(), [](const regmap::FieldDesc& f) {
          return f.reset_from.kind != ValueSource::Kind::kConstant &&
                 !f.reset_from.is(Intrinsic::kGeneration);
        });
    for (unsigned element = 0; element < reg.count; ++element) {
      const uint32_t word = (inst.base + reg.offset_of(element)) / 4;
      if (value != 0) layout.reset_words.emplace_back(word, value);
      if (identity) {
        std::string name(inst.desc->name);
        if (inst.desc->instances == regmap::Instances::kPorts) {
          name += "[" + std::to_string(inst.index) + "]";
        }
        layout.identity_words.push_back({word, value, name + "." + std::string(reg.name)});
      }
    }
  }
}

}  // namespace

const WindowDecode* find_window(const BlockDecode& decode, uint32_t offset) {
  for (const WindowDecode& window : decode.windows) {
    if (window.offset == offset) return &window;
  }
  return nullptr;
}

Layout build_layout(const regmap::RegisterMap& map, const BoardProfile& profile) {
  if (profile.name.empty() || profile.name.size() >= kProfileNameBytes) {
    profile_error(profile,
                  "the name must be 1-" + std::to_string(kProfileNameBytes - 1) + " characters");
  }
  if (profile.ports.empty()) profile_error(profile, "a board has at least one port");
  if (profile.capabilities.size() != map.capabilities.size()) {
    profile_error(profile, "has " + std::to_string(profile.capabilities.size()) +
                               " capability values, the register map " +
                               std::to_string(map.capabilities.size()));
  }
  for (const regmap::CapabilityDesc& cap : map.capabilities) {
    if (cap.is_port_count && profile.capabilities[cap.index] != profile.ports.size()) {
      profile_error(profile, "capability " + std::string(cap.name) + " is " +
                                 std::to_string(profile.capabilities[cap.index]) +
                                 " but the profile lists " + std::to_string(profile.ports.size()) +
                                 " ports");
    }
    if (profile.capabilities[cap.index] > cap.max) {
      profile_error(profile, "capability " + std::string(cap.name) + " is " +
                                 std::to_string(profile.capabilities[cap.index]) +
                                 ", more than the register map allows (" + std::to_string(cap.max) +
                                 ")");
    }
  }
  if (map.blocks.empty() || map.blocks.front().instances != regmap::Instances::kOne) {
    throw std::logic_error("register map: the first block must be a single id block");
  }

  Layout layout;
  uint64_t next = 0;
  for (size_t d = 0; d < map.blocks.size(); ++d) {
    const BlockDesc& block = map.blocks[d];
    if (!std::has_single_bit(block.size)) map_error(block, "size is not a power of two");
    const uint16_t version = profile.version_of(block);
    if (!block.supports(version)) {
      profile_error(profile, "pins block " + std::string(block.name) + " to version " +
                                 std::to_string(version) + ", outside " +
                                 std::to_string(block.min_version) + ".." +
                                 std::to_string(block.version));
    }
    const size_t count =
        block.instances == regmap::Instances::kPorts ? profile.ports.size() : size_t{1};
    for (size_t i = 0; i < count; ++i) {
      const uint64_t base = (next + block.size - 1) & ~uint64_t{block.size - 1};
      next = base + block.size;
      if (next > UINT32_MAX) profile_error(profile, "the register space exceeds 4 GiB");
      layout.blocks.push_back(
          BlockInstance{&block, static_cast<uint32_t>(base), static_cast<unsigned>(i), version});
      layout.bases.push_back(static_cast<uint32_t>(base));
      layout.decode_index.push_back(static_cast<uint16_t>(d));
    }
    layout.decode.push_back(build_block_decode(profile, block, version));
  }
  layout.address_space_bytes = static_cast<uint32_t>(next);
  for (size_t i = 0; i < layout.blocks.size(); ++i) add_reset_words(map, profile, layout, i);
  return layout;
}

}  // namespace asn::model::detail

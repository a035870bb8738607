#include "layout.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "asn/regmap/regs.hpp"

namespace asn::model::detail {
namespace {

using regmap::Access;
using regmap::BlockDesc;
using regmap::BoardProfile;
using regmap::BoardValue;
using regmap::RegisterDesc;

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

// Profile values that do not depend on the block instance (capabilities, table sizes).
bool profile_value(const regmap::RegisterMap& map, const BoardProfile& profile, BoardValue from,
                   uint32_t& value) {
  switch (from) {
    case BoardValue::kMagic:
      value = map.magic;
      return true;
    case BoardValue::kRegmapMajor:
      value = map.major;
      return true;
    case BoardValue::kRegmapMinor:
      value = map.minor;
      return true;
    case BoardValue::kKind:
      value = profile.kind;
      return true;
    case BoardValue::kPortCount:
      value = static_cast<uint32_t>(profile.ports.size());
      return true;
    case BoardValue::kVcsPerPort:
      value = profile.vcs_per_port;
      return true;
    case BoardValue::kQueueDepth:
      value = profile.queue_depth;
      return true;
    case BoardValue::kTdmSlots:
      value = profile.tdm_slots;
      return true;
    case BoardValue::kRouteEntries:
      value = profile.route_entries;
      return true;
    case BoardValue::kStripeGroups:
      value = profile.stripe_groups;
      return true;
    case BoardValue::kLockEntries:
      value = profile.lock_entries;
      return true;
    case BoardValue::kClockHz:
      value = profile.clock_hz;
      return true;
    case BoardValue::kConstant:
    case BoardValue::kBlockType:
    case BoardValue::kBlockVersion:
    case BoardValue::kBlockNext:
    case BoardValue::kPortIndex:
    case BoardValue::kPortMedia:
    case BoardValue::kPortSpeedMbps:
    case BoardValue::kGeneration:  // read from the memory header, not the image
      break;
  }
  return false;
}

uint32_t instance_value(const regmap::RegisterMap& map, const BoardProfile& profile,
                        const std::vector<BlockInstance>& blocks, size_t i, BoardValue from) {
  const BlockInstance& inst = blocks[i];
  switch (from) {
    case BoardValue::kBlockType:
      return inst.desc->type;
    case BoardValue::kBlockVersion:
      return inst.desc->version;
    case BoardValue::kBlockNext:
      return i + 1 < blocks.size() ? blocks[i + 1].base : 0;
    case BoardValue::kGeneration:
      return 0;  // id.generation reads the memory header's counter, not the image
    case BoardValue::kPortIndex:
    case BoardValue::kPortMedia:
    case BoardValue::kPortSpeedMbps: {
      if (inst.desc->instances != regmap::Instances::kPorts) {
        map_error(*inst.desc, "port value used outside a per-port block");
      }
      const regmap::PortProfile& port = profile.ports[inst.index];
      if (from == BoardValue::kPortIndex) return inst.index;
      return from == BoardValue::kPortMedia ? port.media : port.speed_mbps;
    }
    default:
      break;
  }
  uint32_t value = 0;
  if (!profile_value(map, profile, from, value)) {
    map_error(*inst.desc, "unknown reset_from value");
  }
  return value;
}

// The action a WO field triggers is behaviour the map cannot describe: the model has to know
// every one of them, and refuses a map with a WO field it would silently ignore.
Effect effect_for(uint16_t type, uint32_t offset) {
  namespace r = regs;
  if (type == r::id::kType && offset == r::id::kGeneration.offset) return Effect::kGeneration;
  if (type == r::id::kType && offset == r::id::kControl.offset) return Effect::kBoardControl;
  if (type == r::port::kType && offset == r::port::kControl.offset) return Effect::kPortControl;
  if (type == r::route::kType && offset == r::route::kControl.offset) return Effect::kRouteControl;
  if (type == r::tdm::kType) {
    if (offset == r::tdm::kControl.offset) return Effect::kTdmControl;
    if (offset == r::tdm::kConfig.offset || offset == r::tdm::kSlotsInUse.offset ||
        offset == r::tdm::kSlotLength.offset || offset == r::tdm::kWormholeLength.offset) {
      return Effect::kTdmTiming;
    }
  }
  return Effect::kNone;
}

uint32_t handled_wo_bits(Effect effect) {
  switch (effect) {
    case Effect::kBoardControl:
      return regs::id::kControlBoardReset.mask();
    case Effect::kRouteControl:
      return regs::route::kControlCommit.mask();
    case Effect::kTdmControl:
      return regs::tdm::kControlArm.mask() | regs::tdm::kControlDisarm.mask();
    default:
      return 0;
  }
}

// The swap fields the model implements: route's commit (at once) and tdm's arm (at the
// next frame boundary).
bool is_known_swap(uint16_t type, uint32_t reg_offset, uint8_t lsb) {
  if (type == regs::route::kType) {
    return reg_offset == regs::route::kControlCommit.reg.offset &&
           lsb == regs::route::kControlCommit.lsb;
  }
  if (type == regs::tdm::kType) {
    return reg_offset == regs::tdm::kControlArm.reg.offset && lsb == regs::tdm::kControlArm.lsb;
  }
  return false;
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

BlockDecode build_block_decode(const regmap::RegisterMap& map, const BoardProfile& profile,
                               const BlockDesc& block) {
  BlockDecode decode;
  decode.desc = &block;

  for (const RegisterDesc& reg : block.registers) {
    if (reg.width_bits != 32 && reg.width_bits != 64) map_error(block, "odd register width");
    if (reg.width_bits == 64 && !reg.fields.empty()) {
      map_error(block, "64-bit register " + std::string(reg.name) + " has fields");
    }
    const Effect effect = effect_for(block.type, reg.offset);
    for (unsigned element = 0; element < reg.count; ++element) {
      for (uint32_t half = 0; half < reg.bytes() / 4; ++half) {
        const uint32_t offset = reg.offset_of(element) + 4 * half;
        if (offset % 4 != 0 || offset + 4 > block.size) {
          map_error(block, "register " + std::string(reg.name) + " is misplaced");
        }
        const size_t index = offset / 4;
        if (decode.words.size() <= index) decode.words.resize(index + 1);
        WordDecode& word = decode.words[index];
        if (word.mapped) map_error(block, "registers overlap at " + hex(offset));
        word.mapped = true;
        word.effect = effect;
        if (reg.fields.empty()) {
          add_access(word, reg.access, 0xffffffffu);
        } else {
          for (const regmap::FieldDesc& field : reg.fields) {
            add_access(word, field.access, field.mask());
          }
        }
        if ((word.wo & ~handled_wo_bits(effect)) != 0) {
          map_error(block, "write-only register " + std::string(reg.name) +
                               " has a field the model has no behaviour for");
        }
      }
    }
  }

  const uint32_t register_area_end = static_cast<uint32_t>(decode.words.size() * 4);
  for (const regmap::TableDesc& table : block.tables) {
    uint32_t entries = 0;
    if (!profile_value(map, profile, table.entries_from, entries)) {
      map_error(block, "table " + std::string(table.name) + " has an odd entries_from");
    }
    if (entries > table.max_entries) {
      profile_error(profile, std::string(block.name) + "." + std::string(table.name) + " needs " +
                                 std::to_string(entries) + " entries, the register map has " +
                                 std::to_string(table.max_entries));
    }
    if (table.entry_bytes == 0 || table.entry_bytes % 4 != 0) {
      map_error(block, "table " + std::string(table.name) + " has an odd entry size");
    }
    WindowDecode window{};
    window.bytes = table.window_bytes();
    window.entry_bytes = table.entry_bytes;
    window.entries = entries;
    window.double_buffered = table.double_buffered();
    window.bank_offset[0] = table.offset;
    window.bank_offset[1] = table.active_offset;

    window.offset = table.offset;
    window.writable = table.access == Access::kRW;
    window.active_window = false;
    decode.windows.push_back(window);
    if (table.double_buffered()) {
      window.offset = table.active_offset;
      window.writable = false;  // what the data path uses; software only reads it
      window.active_window = true;
      decode.windows.push_back(window);

      const RegisterDesc* swap_reg = nullptr;
      const regmap::FieldDesc* swap =
          find_field(block, table.swap_register, table.swap_field, &swap_reg);
      if (swap == nullptr || swap->access != Access::kWO ||
          !is_known_swap(block.type, swap_reg->offset, swap->lsb)) {
        map_error(block, "table " + std::string(table.name) +
                             " swaps on a field the model does not implement");
      }
      const RegisterDesc* status = nullptr;
      const regmap::FieldDesc* bank = find_field(block, "status", "active_bank", &status);
      if (bank == nullptr || bank->width != 1 || bank->access != Access::kRO) {
        map_error(block, "double-buffered tables need an RO status.active_bank bit");
      }
      decode.has_banks = true;
      decode.bank_offset = status->offset;
      decode.bank_mask = bank->mask();
    }
  }
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

}  // namespace

Layout build_layout(const regmap::RegisterMap& map, const BoardProfile& profile) {
  if (profile.name.empty() || profile.name.size() >= kProfileNameBytes) {
    profile_error(profile,
                  "the name must be 1-" + std::to_string(kProfileNameBytes - 1) + " characters");
  }
  if (profile.ports.empty()) profile_error(profile, "a board has at least one port");
  if (map.blocks.empty() || map.blocks.front().instances != regmap::Instances::kOne) {
    throw std::logic_error("register map: the first block must be a single id block");
  }

  Layout layout;
  uint64_t next = 0;
  for (size_t d = 0; d < map.blocks.size(); ++d) {
    const BlockDesc& block = map.blocks[d];
    if (!std::has_single_bit(block.size)) map_error(block, "size is not a power of two");
    const size_t count =
        block.instances == regmap::Instances::kPorts ? profile.ports.size() : size_t{1};
    for (size_t i = 0; i < count; ++i) {
      const uint64_t base = (next + block.size - 1) & ~uint64_t{block.size - 1};
      next = base + block.size;
      if (next > UINT32_MAX) profile_error(profile, "the register space exceeds 4 GiB");
      layout.blocks.push_back(
          BlockInstance{&block, static_cast<uint32_t>(base), static_cast<unsigned>(i)});
      layout.bases.push_back(static_cast<uint32_t>(base));
      layout.decode_index.push_back(static_cast<uint16_t>(d));
    }
    layout.decode.push_back(build_block_decode(map, profile, block));
  }
  layout.address_space_bytes = static_cast<uint32_t>(next);

  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const BlockInstance& inst = layout.blocks[i];
    for (const RegisterDesc& reg : inst.desc->registers) {
      uint32_t value = 0;
      for (const regmap::FieldDesc& field : reg.fields) {
        const uint32_t v = field.reset_from == BoardValue::kConstant
                               ? field.reset
                               : instance_value(map, profile, layout.blocks, i, field.reset_from);
        const uint32_t max = field.mask() >> field.lsb;
        if (v > max) {
          profile_error(profile, std::string(inst.desc->name) + "." + std::string(reg.name) + "." +
                                     std::string(field.name) + " = " + std::to_string(v) +
                                     " does not fit in " + std::to_string(field.width) + " bits");
        }
        value |= (v << field.lsb) & field.mask();
      }
      if (value == 0) continue;
      for (unsigned element = 0; element < reg.count; ++element) {
        layout.reset_words.emplace_back((inst.base + reg.offset_of(element)) / 4, value);
      }
    }
  }
  return layout;
}

}  // namespace asn::model::detail

#include "device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "error.hpp"
#include "suggest.hpp"

namespace asn {

namespace {

using regmap::Access;
using regmap::BlockDesc;
using regmap::FieldDesc;
using regmap::RegisterDesc;
using regmap::TableDesc;

constexpr unsigned kMaxBlocks = 4096;

const BlockDesc* block_desc_by_type(uint16_t type) {
  for (const auto& b : regmap::register_map().blocks) {
    if (b.type == type) return &b;
  }
  return nullptr;
}

const RegisterDesc* register_desc(uint16_t type, uint32_t offset) {
  const BlockDesc* block = block_desc_by_type(type);
  if (block == nullptr) return nullptr;
  for (const auto& r : block->registers) {
    if (offset >= r.offset && offset < r.offset + r.count * r.bytes() &&
        (offset - r.offset) % r.bytes() == 0) {
      return &r;
    }
  }
  return nullptr;
}

uint32_t fields_mask(const RegisterDesc& reg) {
  if (reg.fields.empty()) return 0xffffffffu;
  uint32_t mask = 0;
  for (const auto& f : reg.fields) mask |= f.mask();
  return mask;
}

uint32_t rw_mask_except(const RegisterDesc& reg, const FieldDesc* except) {
  uint32_t mask = 0;
  for (const auto& f : reg.fields) {
    if (&f != except && f.access == Access::kRW) mask |= f.mask();
  }
  return mask;
}

uint32_t table_word_mask(const TableDesc& table, unsigned word) {
  uint32_t mask = 0;
  for (const auto& f : table.fields) {
    if (f.word == word) mask |= f.mask();
  }
  return mask;
}

struct NamePart {
  std::string_view ident;
  std::optional<unsigned> index;
};

std::vector<NamePart> split_name(std::string_view name) {
  std::vector<NamePart> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = name.find('.', start);
    std::string_view piece =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    NamePart part;
    size_t bracket = piece.find('[');
    if (bracket == std::string_view::npos) {
      part.ident = piece;
    } else {
      if (piece.back() != ']') {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("'{}': '{}' has an unclosed '['", name, piece));
      }
      part.ident = piece.substr(0, bracket);
      std::string_view digits = piece.substr(bracket + 1, piece.size() - bracket - 2);
      unsigned value = 0;
      int base = 10;
      if (digits.starts_with("0x") || digits.starts_with("0X")) {
        digits.remove_prefix(2);
        base = 16;
      }
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
      if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("'{}': index in '{}' is not a number", name, piece));
      }
      part.index = value;
    }
    if (part.ident.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}' is not a register name (expected block.register[.field], "
                              "e.g. id.scratch or port[0].control.enable)",
                              name));
    }
    parts.push_back(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string read_only_hint(const std::string& name, Access access) {
  return fmt::format("{} is read-only ({})", name, regmap::to_string(access));
}

}  // namespace

std::string board_kind_name(uint32_t kind) {
  for (const auto& k : regmap::register_map().board_kinds) {
    if (k.value == kind) return std::string(k.name);
  }
  return fmt::format("0x{:x}", kind);
}

std::string port_media_name(uint32_t media) {
  for (const auto& m : regmap::register_map().port_media) {
    if (m.value == media) return std::string(m.name);
  }
  return fmt::format("0x{:x}", media);
}

Device::Device(RegisterBus& bus) : bus_(bus) { walk(); }

void Device::rediscover() {
  std::lock_guard lock(mutex_);
  walk();
}

void Device::walk() {
  const auto& map = regmap::register_map();
  uint32_t magic = bus_.read32(regs::id::kMagic.offset);
  if (magic != map.magic) {
    throw Error(ErrorCode::kHardware,
                fmt::format("no asn board on {}: id.magic at 0x{:02x} reads 0x{:08x}, expected "
                            "0x{:08x} (\"ASN1\")",
                            bus_.describe(), regs::id::kMagic.offset, magic, map.magic));
  }
  uint32_t version = bus_.read32(regs::id::kRegmapVersion.offset);
  major_ = static_cast<uint16_t>(regs::id::kRegmapVersionMajor.get(version));
  minor_ = static_cast<uint16_t>(regs::id::kRegmapVersionMinor.get(version));
  if (major_ != map.major) {
    throw Error(ErrorCode::kHardware,
                fmt::format("{} speaks register map {}.{}; this asnd knows {}.x: install the asnd "
                            "that matches the board's firmware",
                            bus_.describe(), major_, minor_, map.major));
  }

  std::vector<DeviceBlock> found;
  std::map<uint16_t, unsigned> instances;
  uint32_t offset = 0;
  for (;;) {
    if (found.size() >= kMaxBlocks) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("{}: more than {} register blocks; the block list is corrupt",
                              bus_.describe(), kMaxBlocks));
    }
    BusOp header[] = {BusOp::read(offset + regs::id::kBlockType.offset),
                      BusOp::read(offset + regs::id::kBlockVersion.offset),
                      BusOp::read(offset + regs::id::kBlockNext.offset)};
    bus_.execute(header);
    uint16_t type = static_cast<uint16_t>(header[0].value);
    uint16_t block_version = static_cast<uint16_t>(header[1].value);
    uint32_t next = header[2].value;
    const BlockDesc* desc = block_desc_by_type(type);
    if (found.empty() && (desc == nullptr || desc->type != regs::id::kType)) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("{}: the block at offset 0 has type 0x{:04x}, expected the id "
                              "block (0x{:04x})",
                              bus_.describe(), type, regs::id::kType));
    }
    if (desc != nullptr) {
      // A block type this asnd knows, at a version it does not, is refused: the meaning of
      // its registers may have changed. Unknown block types are skipped (a newer firmware
      // may add blocks an older asnd does not use).
      if (block_version != desc->version) {
        throw Error(
            ErrorCode::kHardware,
            fmt::format("{}: block {} (type 0x{:04x}) at 0x{:x} has version {}; this "
                        "asnd supports version {}",
                        bus_.describe(), desc->name, type, offset, block_version, desc->version));
      }
      unsigned index = instances[type]++;
      std::string name = desc->instances == regmap::Instances::kPorts
                             ? fmt::format("{}[{}]", desc->name, index)
                             : std::string(desc->name);
      found.push_back(DeviceBlock{desc, offset, index, std::move(name)});
    }
    if (next == 0) break;
    if (next <= offset || next % 4 != 0) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("{}: block at 0x{:x} points to 0x{:x}; the block list must move "
                              "forward",
                              bus_.describe(), offset, next));
    }
    offset = next;
  }

  // A board may lack a block (firmware built without striping, say): what needs it fails
  // with kNotFound from block(). Two of a single-instance block is a corrupt list.
  for (const auto& b : map.blocks) {
    if (b.instances == regmap::Instances::kOne && instances[b.type] > 1) {
      throw Error(ErrorCode::kHardware, fmt::format("{}: expected one {} block, found {}",
                                                    bus_.describe(), b.name, instances[b.type]));
    }
  }
  // The layout of a board does not change when it is reset; keep the vector other threads
  // may be reading unless the board really is a different one.
  bool same = found.size() == blocks_.size() &&
              std::equal(found.begin(), found.end(), blocks_.begin(),
                         [](const DeviceBlock& a, const DeviceBlock& b) {
                           return a.desc == b.desc && a.base == b.base && a.index == b.index;
                         });
  if (!same) blocks_ = std::move(found);

  Capabilities caps;
  uint32_t ports = read(regs::id::kCapPorts);
  caps.ports = regs::id::kCapPortsPorts.get(ports);
  caps.vcs_per_port = regs::id::kCapPortsVcsPerPort.get(ports);
  caps.queue_depth = regs::id::kCapPortsQueueDepth.get(ports);
  caps.tdm_slots = read(regs::id::kCapTdmSlotsSlots);
  caps.route_entries = read(regs::id::kCapRouteEntriesEntries);
  caps.stripe_groups = read(regs::id::kCapStripeGroupsGroups);
  caps.lock_entries = read(regs::id::kCapLockEntriesEntries);
  caps.clock_hz = read(regs::id::kClockHz);
  kind_ = static_cast<uint16_t>(read(regs::id::kBoardKindKind));
  if (instances[regs::port::kType] != caps.ports) {
    throw Error(ErrorCode::kHardware,
                fmt::format("{}: id.cap_ports says {} ports but the block list has {} port "
                            "blocks",
                            bus_.describe(), caps.ports, instances[regs::port::kType]));
  }
  caps_ = caps;
}

const DeviceBlock& Device::block(uint16_t type, unsigned index) const {
  for (const auto& b : blocks_) {
    if (b.desc->type == type && b.index == index) return b;
  }
  const BlockDesc* desc = block_desc_by_type(type);
  throw Error(ErrorCode::kNotFound,
              fmt::format("the board has no {} block{}", desc ? desc->name : "unknown",
                          index ? fmt::format(" number {}", index) : ""));
}

unsigned Device::count(uint16_t type) const {
  return static_cast<unsigned>(
      std::count_if(blocks_.begin(), blocks_.end(),
                    [type](const DeviceBlock& b) { return b.desc->type == type; }));
}

uint32_t Device::address(regmap::RegRef reg, unsigned instance) const {
  return block(reg.block_type, instance).base + reg.offset;
}

uint32_t Device::read(regmap::RegRef reg, unsigned instance) {
  return bus_.read32(address(reg, instance));
}

uint64_t Device::read64(regmap::RegRef reg, unsigned instance) {
  return read_counter(address(reg, instance));
}

uint64_t Device::read_counter(uint32_t low) {
  // High, low, high: when the counter carried between the reads, the low word is read again
  // and belongs with the second high word.
  BusOp ops[] = {BusOp::read(low + 4), BusOp::read(low), BusOp::read(low + 4)};
  bus_.execute(ops);
  if (ops[0].value != ops[2].value) ops[1].value = bus_.read32(low);
  return (uint64_t{ops[2].value} << 32) | ops[1].value;
}

uint32_t Device::read(regmap::FieldRef field, unsigned instance) {
  return field.get(read(field.reg, instance));
}

void Device::write(regmap::RegRef reg, uint32_t value, unsigned instance) {
  bus_.write32(address(reg, instance), value);
}

void Device::write(regmap::FieldRef field, uint32_t value, unsigned instance) {
  const RegisterDesc* desc = register_desc(field.reg.block_type, field.reg.offset);
  const FieldDesc* fdesc = nullptr;
  if (desc != nullptr) {
    for (const auto& f : desc->fields) {
      if (f.lsb == field.lsb && f.width == field.width) fdesc = &f;
    }
  }
  uint32_t preserve = desc ? rw_mask_except(*desc, fdesc) : ~field.mask();
  uint32_t at = address(field.reg, instance);
  std::lock_guard lock(mutex_);
  uint32_t base = preserve ? bus_.read32(at) : 0;
  bus_.write32(at, (base & preserve) | ((value << field.lsb) & field.mask()));
}

const DeviceBlock* Device::find_block(std::string_view name, std::optional<unsigned> index,
                                      std::string_view full) const {
  const BlockDesc* desc = nullptr;
  std::vector<std::string> names;
  for (const auto& b : regmap::register_map().blocks) {
    names.emplace_back(b.name);
    if (b.name == name) desc = &b;
  }
  if (desc == nullptr) {
    throw Error(ErrorCode::kNotFound,
                fmt::format("'{}': no block named '{}'{}", full, name, did_you_mean(name, names)));
  }
  unsigned n = count(desc->type);
  if (desc->instances == regmap::Instances::kPorts) {
    if (!index) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': {} needs a port number, {}[0] to {}[{}]", full, name, name,
                              name, n - 1));
    }
    if (*index >= n) {
      throw Error(ErrorCode::kNotFound,
                  fmt::format("'{}': the board has {} ports ({}[0] to {}[{}])", full, n, name, name,
                              n - 1));
    }
  } else if (index && *index != 0) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("'{}': there is one {} block; drop the [{}]", full, name, *index));
  }
  return &block(desc->type, index.value_or(0));
}

uint32_t Device::entries_of(const TableDesc& table) const {
  switch (table.entries_from) {
    case regmap::BoardValue::kPortCount:
      return caps_.ports;
    case regmap::BoardValue::kTdmSlots:
      return caps_.tdm_slots;
    case regmap::BoardValue::kRouteEntries:
      return caps_.route_entries;
    case regmap::BoardValue::kStripeGroups:
      return caps_.stripe_groups;
    case regmap::BoardValue::kLockEntries:
      return caps_.lock_entries;
    default:
      return table.max_entries;
  }
}

namespace {

Target register_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element) {
  Target t;
  t.name = fmt::format("{}.{}", block.name, reg.name);
  if (reg.count > 1) t.name += fmt::format("[{}]", element);
  t.offset = block.base + reg.offset_of(element);
  t.width_bits = reg.width_bits;
  t.lsb = 0;
  t.mask = 0xffffffffu;
  t.defined_mask = fields_mask(reg);
  t.preserve_mask = 0;
  t.access = reg.access;
  t.description = reg.description;
  if (reg.access == Access::kRO) t.read_only_hint = read_only_hint(t.name, reg.access);
  return t;
}

Target field_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element,
                    const FieldDesc& field) {
  Target t = register_target(block, reg, element);
  t.name += fmt::format(".{}", field.name);
  t.width_bits = field.width;
  t.lsb = field.lsb;
  t.mask = field.mask();
  t.preserve_mask = rw_mask_except(reg, &field);
  t.access = field.access;
  if (!field.description.empty()) t.description = field.description;
  t.read_only_hint =
      field.access == Access::kRO ? read_only_hint(t.name, field.access) : std::string();
  return t;
}

Target half_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element, bool high) {
  Target t = register_target(block, reg, element);
  t.name += high ? ".hi" : ".lo";
  t.offset += high ? 4 : 0;
  t.width_bits = 32;
  return t;
}

Target table_target(const DeviceBlock& block, const TableDesc& table, bool active, uint32_t entry,
                    unsigned word, const regmap::TableFieldDesc* field) {
  Target t;
  t.name = fmt::format("{}.{}{}[{}].", block.name, table.name, active ? "_active" : "", entry);
  t.name += field ? std::string(field->name) : fmt::format("w{}", word);
  t.offset = block.base + (active ? table.active_offset : table.offset) +
             entry * table.entry_bytes + word * 4;
  t.width_bits = field ? field->width : 32;
  t.lsb = field ? field->lsb : 0;
  t.mask = field ? field->mask() : 0xffffffffu;
  t.defined_mask = table_word_mask(table, word);
  // A table word is plain memory: a field write keeps every other bit of the word.
  t.preserve_mask = field ? ~field->mask() : 0;
  t.access = active ? Access::kRO : table.access;
  t.description = field && !field->description.empty() ? field->description : table.description;
  if (active) {
    t.read_only_hint = fmt::format(
        "{} is the active bank (RO): write {}.{}[{}] (the shadow bank) and swap the banks with "
        "{}.{}.{}",
        t.name, block.name, table.name, entry, block.name, table.swap_register, table.swap_field);
  } else if (table.access == Access::kRO) {
    t.read_only_hint =
        fmt::format("{}.{} is read-only (the board maintains it)", block.name, table.name);
  }
  return t;
}

}  // namespace

Target Device::resolve(std::string_view name) const {
  auto parts = split_name(name);
  if (parts.size() < 2 || parts.size() > 3) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not a register name (expected block.register[.field], e.g. "
                            "id.scratch or port[0].control.enable)",
                            name));
  }
  const DeviceBlock& block = *find_block(parts[0].ident, parts[0].index, name);
  const NamePart& item = parts[1];
  std::vector<std::string> candidates;

  for (const auto& reg : block.desc->registers) {
    candidates.emplace_back(reg.name);
    if (reg.name != item.ident) continue;
    if (reg.count > 1 && !item.index) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': {} is an array; name an element, {}[0] to {}[{}]", name,
                              reg.name, reg.name, reg.name, reg.count - 1));
    }
    if (reg.count == 1 && item.index) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': {} is not an array", name, reg.name));
    }
    unsigned element = item.index.value_or(0);
    if (element >= reg.count) {
      throw Error(ErrorCode::kNotFound,
                  fmt::format("'{}': {} has {} elements", name, reg.name, reg.count));
    }
    if (parts.size() == 2) return register_target(block, reg, element);
    std::string_view field_name = parts[2].ident;
    if (parts[2].index) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': field {} takes no index", name, field_name));
    }
    if (reg.width_bits == 64) {
      if (field_name == "lo" || field_name == "hi") {
        return half_target(block, reg, element, field_name == "hi");
      }
      throw Error(
          ErrorCode::kNotFound,
          fmt::format("'{}': {} is a 64-bit value; its words are .lo and .hi", name, reg.name));
    }
    std::vector<std::string> fields;
    for (const auto& f : reg.fields) {
      fields.emplace_back(f.name);
      if (f.name == field_name) return field_target(block, reg, element, f);
    }
    throw Error(ErrorCode::kNotFound,
                fmt::format("'{}': {}.{} has no field '{}'{}", name, block.name, reg.name,
                            field_name, did_you_mean(field_name, fields)));
  }

  for (const auto& table : block.desc->tables) {
    candidates.emplace_back(table.name);
    std::string active_name = std::string(table.name) + "_active";
    if (table.double_buffered()) candidates.push_back(active_name);
    bool active = table.double_buffered() && item.ident == active_name;
    if (item.ident != table.name && !active) continue;
    uint32_t entries = entries_of(table);
    if (!item.index) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': {} is a table; name an entry, {}[0] to {}[{}]", name,
                              item.ident, item.ident, item.ident, entries - 1));
    }
    if (*item.index >= entries) {
      throw Error(ErrorCode::kNotFound, fmt::format("'{}': {}.{} has {} entries on this board",
                                                    name, block.name, table.name, entries));
    }
    if (parts.size() == 2) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("'{}': name a field of the entry or a word (w0 to w{})", name,
                              table.entry_bytes / 4 - 1));
    }
    std::string_view field_name = parts[2].ident;
    std::vector<std::string> fields;
    for (const auto& f : table.fields) {
      fields.emplace_back(f.name);
      if (f.name == field_name) return table_target(block, table, active, *item.index, f.word, &f);
    }
    if (field_name.size() > 1 && field_name[0] == 'w') {
      unsigned word = 0;
      auto [end, ec] =
          std::from_chars(field_name.data() + 1, field_name.data() + field_name.size(), word);
      if (ec == std::errc() && end == field_name.data() + field_name.size() &&
          word < table.entry_bytes / 4) {
        return table_target(block, table, active, *item.index, word, nullptr);
      }
    }
    throw Error(ErrorCode::kNotFound,
                fmt::format("'{}': {}.{} entries have no field '{}'{}", name, block.name,
                            table.name, field_name, did_you_mean(field_name, fields)));
  }
  throw Error(ErrorCode::kNotFound,
              fmt::format("'{}': block {} has no register or table '{}'{}", name, block.name,
                          item.ident, did_you_mean(item.ident, candidates)));
}

std::optional<Device::Located> Device::locate(uint32_t offset) const {
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), offset,
                             [](uint32_t off, const DeviceBlock& b) { return off < b.base; });
  if (it == blocks_.begin()) return std::nullopt;
  --it;
  if (offset - it->base >= it->desc->size) return std::nullopt;
  return Located{&*it, offset - it->base};
}

Target Device::resolve(uint32_t offset) const {
  if (offset % 4 != 0) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("offset 0x{:x} is not 32-bit aligned", offset));
  }
  auto where = locate(offset);
  if (!where) {
    const auto& last = blocks_.back();
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("offset 0x{:x} is outside the register map (blocks cover 0x0 to "
                            "0x{:x}, see `asnctl info`)",
                            offset, last.base + last.desc->size - 1));
  }
  const DeviceBlock& block = *where->block;
  uint32_t rel = where->rel;
  for (const auto& reg : block.desc->registers) {
    uint32_t end = reg.offset + reg.count * reg.bytes();
    if (rel < reg.offset || rel >= end) continue;
    unsigned element = (rel - reg.offset) / reg.bytes();
    if (reg.width_bits == 64) {
      return half_target(block, reg, element, (rel - reg.offset) % 8 != 0);
    }
    return register_target(block, reg, element);
  }
  for (const auto& table : block.desc->tables) {
    for (bool active : {false, true}) {
      if (active && !table.double_buffered()) continue;
      uint32_t window = active ? table.active_offset : table.offset;
      if (rel < window || rel >= window + table.window_bytes()) continue;
      uint32_t entry = (rel - window) / table.entry_bytes;
      unsigned word = ((rel - window) % table.entry_bytes) / 4;
      if (entry >= entries_of(table)) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("offset 0x{:x} is entry {} of {}.{}, which has {} entries on "
                                "this board",
                                offset, entry, block.name, table.name, entries_of(table)));
      }
      return table_target(block, table, active, entry, word, nullptr);
    }
  }
  throw Error(ErrorCode::kInvalidArgument,
              fmt::format("offset 0x{:x} (block {} at 0x{:x} + 0x{:x}) is no register", offset,
                          block.name, block.base, rel));
}

uint64_t Device::read(const Target& target) {
  if (target.is_64()) return read_counter(target.offset);
  return (bus_.read32(target.offset) & target.mask) >> target.lsb;
}

void Device::check_write(const Target& target, uint64_t value) const {
  if (target.access == Access::kRO) {
    throw Error(ErrorCode::kFailedPrecondition, target.read_only_hint.empty()
                                                    ? read_only_hint(target.name, target.access)
                                                    : target.read_only_hint);
  }
  if (value > target.max_value()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("value 0x{:x} does not fit {} ({} bits, at most 0x{:x})", value,
                            target.name, target.width_bits, target.max_value()));
  }
  if (target.mask == 0xffffffffu) {
    uint32_t reserved = static_cast<uint32_t>(value) & ~target.defined_mask;
    if (reserved != 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("value 0x{:x} sets reserved bits 0x{:08x} of {} (defined bits "
                              "0x{:08x})",
                              value, reserved, target.name, target.defined_mask));
    }
  }
}

void Device::write(std::span<const std::pair<Target, uint64_t>> items) {
  for (const auto& [target, value] : items) {
    try {
      check_write(target, value);
    } catch (const Error& e) {
      throw Error(e.code(), std::string(e.what()) + "; nothing was written");
    }
  }
  std::lock_guard lock(mutex_);
  // Field writes keep the other RW fields of their word; the current words are read first,
  // and a word written by an earlier item of the batch is taken from the batch.
  std::map<uint32_t, uint32_t> words;
  std::set<uint32_t> need;
  for (const auto& [target, value] : items) {
    if (target.preserve_mask != 0) need.insert(target.offset);
  }
  std::vector<BusOp> reads;
  for (uint32_t offset : need) reads.push_back(BusOp::read(offset));
  if (!reads.empty()) bus_.execute(reads);
  for (const auto& op : reads) words[op.offset] = op.value;

  std::vector<BusOp> writes;
  for (const auto& [target, value] : items) {
    uint32_t base = target.preserve_mask != 0 ? words[target.offset] : 0;
    uint32_t word = (base & target.preserve_mask) |
                    ((static_cast<uint32_t>(value) << target.lsb) & target.mask);
    writes.push_back(BusOp::write(target.offset, word));
    words[target.offset] = word;
  }
  bus_.execute(writes);
}

std::vector<Target> Device::enumerate(std::string_view block_filter, bool include_tables) const {
  std::string_view filter_name = block_filter;
  std::optional<unsigned> filter_index;
  if (!block_filter.empty()) {
    auto parts = split_name(block_filter);
    if (parts.size() != 1) {
      throw Error(
          ErrorCode::kInvalidArgument,
          fmt::format("'{}' is not a block name (id, port, port[2], route, ...)", block_filter));
    }
    filter_name = parts[0].ident;
    filter_index = parts[0].index;
    bool known = false;
    std::vector<std::string> names;
    for (const auto& b : regmap::register_map().blocks) {
      names.emplace_back(b.name);
      known = known || b.name == filter_name;
    }
    if (!known) {
      throw Error(ErrorCode::kNotFound, fmt::format("no block named '{}'{}", filter_name,
                                                    did_you_mean(filter_name, names)));
    }
    if (filter_index) find_block(filter_name, filter_index, block_filter);
  }
  std::vector<Target> out;
  for (const auto& block : blocks_) {
    if (!filter_name.empty() && block.desc->name != filter_name) continue;
    if (filter_index && block.index != *filter_index) continue;
    for (const auto& reg : block.desc->registers) {
      for (unsigned e = 0; e < reg.count; ++e) out.push_back(register_target(block, reg, e));
    }
    if (!include_tables) continue;
    for (const auto& table : block.desc->tables) {
      for (bool active : {false, true}) {
        if (active && !table.double_buffered()) continue;
        for (uint32_t entry = 0; entry < entries_of(table); ++entry) {
          for (unsigned w = 0; w < table.entry_bytes / 4; ++w) {
            out.push_back(table_target(block, table, active, entry, w, nullptr));
          }
        }
      }
    }
  }
  return out;
}

uint32_t Device::reset_board() {
  std::lock_guard lock(mutex_);
  bus_.write32(address(regs::id::kControl, 0), regs::id::kControlBoardReset.put(0, 1));
  walk();
  return bus_.read32(address(regs::id::kGeneration, 0));
}

}  // namespace asn

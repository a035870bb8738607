#include "device/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "error.hpp"

namespace asn {

namespace {

using regmap::BlockDesc;

// Enough for 255 ports and every other block many times over; more is a corrupt list.
constexpr unsigned kMaxBlocks = 4096;
// id.cap_count is 8 bits wide; asnd reads no more capability words than this.
constexpr uint32_t kMaxCapabilityWords = 64;

[[noreturn]] void hardware(RegisterBus& bus, const std::string& what) {
  throw Error(ErrorCode::kHardware, fmt::format("{}: {}", bus.describe(), what));
}

void check_identity(RegisterBus& bus, const regmap::RegisterMap& map, DeviceLayout& layout) {
  BusOp ops[] = {BusOp::read(regs::id::kMagic.offset), BusOp::read(regs::id::kRegmapVersion.offset),
                 BusOp::read(regs::id::kBoardKind.offset)};
  bus.execute(ops);
  if (ops[0].value != map.magic) {
    throw Error(ErrorCode::kHardware,
                fmt::format("no asn board on {}: id.magic at 0x{:02x} reads 0x{:08x}, expected "
                            "0x{:08x} (\"ASN1\")",
                            bus.describe(), regs::id::kMagic.offset, ops[0].value, map.magic));
  }
  layout.major = static_cast<uint16_t>(regs::id::kRegmapVersionMajor.get(ops[1].value));
  layout.minor = static_cast<uint16_t>(regs::id::kRegmapVersionMinor.get(ops[1].value));
  layout.kind = static_cast<uint16_t>(regs::id::kBoardKindKind.get(ops[2].value));
  if (layout.major != map.major) {
    hardware(bus, fmt::format("the board speaks register map {}.{}; this asnd knows {}.x: install "
                              "the asnd that matches the board's firmware",
                              layout.major, layout.minor, map.major));
  }
}

void walk_blocks(RegisterBus& bus, const regmap::RegisterMap& map, DeviceLayout& layout) {
  std::map<uint16_t, unsigned> instances;
  uint32_t offset = 0;
  for (;;) {
    if (layout.blocks.size() >= kMaxBlocks) {
      hardware(bus,
               fmt::format("more than {} register blocks; the block list is corrupt", kMaxBlocks));
    }
    BusOp header[] = {BusOp::read(offset + regs::id::kBlockType.offset),
                      BusOp::read(offset + regs::id::kBlockVersion.offset),
                      BusOp::read(offset + regs::id::kBlockNext.offset)};
    bus.execute(header);
    const auto type = static_cast<uint16_t>(header[0].value);
    const auto version = static_cast<uint16_t>(header[1].value);
    const uint32_t next = header[2].value;
    const BlockDesc* desc = map.block(type);
    if (layout.blocks.empty() && (desc == nullptr || desc->type != regs::id::kType)) {
      hardware(bus, fmt::format("the block at offset 0 has type 0x{:04x}, expected the id block "
                                "(0x{:04x})",
                                type, regs::id::kType));
    }
    if (desc != nullptr) {
      // A block type this asnd knows, at a version it does not, is refused: the meaning of
      // its registers may have changed. Unknown block types are skipped (a newer firmware
      // may add blocks an older asnd does not use).
      if (!desc->supports(version)) {
        hardware(bus,
                 fmt::format("block {} (type 0x{:04x}) at 0x{:x} has version {}; this asnd "
                             "supports versions {} to {}",
                             desc->name, type, offset, version, desc->min_version, desc->version));
      }
      const unsigned index = instances[type]++;
      std::string name = desc->instances == regmap::Instances::kPorts
                             ? fmt::format("{}[{}]", desc->name, index)
                             : std::string(desc->name);
      layout.blocks.push_back(DeviceBlock{desc, offset, index, version, std::move(name)});
    }
    if (next == 0) break;
    if (next <= offset || next % 4 != 0) {
      hardware(bus, fmt::format("block at 0x{:x} points to 0x{:x}; the block list must move "
                                "forward",
                                offset, next));
    }
    offset = next;
  }
  // A board may lack a block (firmware built without striping, say): what needs it fails
  // with kNotFound from block(). Two of a single-instance block is a corrupt list.
  for (const auto& b : map.blocks) {
    if (b.instances == regmap::Instances::kOne && instances[b.type] > 1) {
      hardware(bus, fmt::format("expected one {} block, found {}", b.name, instances[b.type]));
    }
  }
}

// All capability words in one batch, each checked against what the map allows: a value
// past that is damaged board memory or a broken board, never a size to trust.
void read_capabilities(RegisterBus& bus, const regmap::RegisterMap& map, DeviceLayout& layout) {
  const uint32_t count = std::min(
      regs::id::kCapCountCount.get(bus.read32(regs::id::kCapCount.offset)), kMaxCapabilityWords);
  const uint32_t first = map.capabilities.empty() ? 0 : map.capabilities[0].offset;
  std::vector<BusOp> ops;
  for (uint32_t i = 0; i < count; ++i) ops.push_back(BusOp::read(first + 4 * i));
  if (!ops.empty()) bus.execute(ops);
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t value = ops[i].value;
    if (i < map.capabilities.size() && value > map.capabilities[i].max) {
      hardware(bus, fmt::format("id.cap_{} reads {}; the register map allows at most {} (the "
                                "board memory is damaged or the firmware is broken)",
                                map.capabilities[i].name, value, map.capabilities[i].max));
    }
    values.push_back(value);
  }
  layout.caps = Capabilities(map, std::move(values));
  if (!layout.caps.has(regmap::Cap::kPorts)) {
    hardware(bus, "the board reports no port count (id.cap_count is 0)");
  }
  const unsigned ports = layout.count(regs::port::kType);
  if (ports != layout.caps.get(regmap::Cap::kPorts)) {
    hardware(bus, fmt::format("id.cap_ports says {} ports but the block list has {} port blocks",
                              layout.caps.get(regmap::Cap::kPorts), ports));
  }
  for (const DeviceBlock& block : layout.blocks) {
    for (const regmap::TableDesc& table : block.desc->tables) {
      const uint32_t entries = layout.entries(table.entries_from, table.fixed_entries);
      if (table.since <= block.version && entries > table.max_entries) {
        hardware(bus, fmt::format("{}.{} would have {} entries; its window holds {}", block.name,
                                  table.name, entries, table.max_entries));
      }
    }
  }
}

}  // namespace

std::optional<uint32_t> Capabilities::find(std::string_view name) const {
  if (map_ == nullptr) return std::nullopt;
  for (const auto& cap : map_->capabilities) {
    if (cap.name == name && cap.index < values_.size()) return values_[cap.index];
  }
  return std::nullopt;
}

const regmap::CapabilityDesc* Capabilities::desc(size_t index) const {
  if (map_ == nullptr || index >= map_->capabilities.size()) return nullptr;
  return &map_->capabilities[index];
}

const DeviceBlock* DeviceLayout::find(uint16_t type, unsigned index) const {
  for (const auto& b : blocks) {
    if (b.desc->type == type && b.index == index) return &b;
  }
  return nullptr;
}

const DeviceBlock& DeviceLayout::block(uint16_t type, unsigned index) const {
  if (const DeviceBlock* b = find(type, index)) return *b;
  const BlockDesc* desc = map->block(type);
  throw Error(ErrorCode::kNotFound,
              fmt::format("the board has no {} block{}", desc ? desc->name : "unknown",
                          index ? fmt::format(" number {}", index) : ""));
}

void DeviceLayout::require_port(uint32_t port, std::string_view then) const {
  if (port < ports()) return;
  throw Error(ErrorCode::kNotFound, fmt::format("port {} does not exist: the board has ports 0 to "
                                                "{}{}",
                                                port, ports() - 1, then));
}

unsigned DeviceLayout::count(uint16_t type) const {
  return static_cast<unsigned>(std::count_if(
      blocks.begin(), blocks.end(), [type](const DeviceBlock& b) { return b.desc->type == type; }));
}

std::optional<DeviceLayout::Located> DeviceLayout::locate(uint32_t offset) const {
  auto it = std::upper_bound(blocks.begin(), blocks.end(), offset,
                             [](uint32_t off, const DeviceBlock& b) { return off < b.base; });
  if (it == blocks.begin()) return std::nullopt;
  --it;
  if (offset - it->base >= it->desc->size) return std::nullopt;
  return Located{&*it, offset - it->base};
}

uint32_t DeviceLayout::end() const {
  return blocks.empty() ? 0 : blocks.back().base + blocks.back().desc->size;
}

std::shared_ptr<const DeviceLayout> walk_board(RegisterBus& bus, const regmap::RegisterMap& map) {
  auto layout = std::make_shared<DeviceLayout>();
  layout->map = &map;
  check_identity(bus, map, *layout);
  walk_blocks(bus, map, *layout);
  read_capabilities(bus, map, *layout);
  return layout;
}

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

}  // namespace asn

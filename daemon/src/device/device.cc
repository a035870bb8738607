#include "device/device.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

#include "device/resolver.hpp"
#include "error.hpp"

namespace asn {

namespace {

using regmap::Access;
using regmap::FieldDesc;
using regmap::RegisterDesc;

const RegisterDesc* register_desc(const regmap::RegisterMap& map, uint16_t type, uint32_t offset) {
  const regmap::BlockDesc* block = map.block(type);
  if (block == nullptr) return nullptr;
  for (const auto& r : block->registers) {
    if (offset >= r.offset && offset < r.end() && (offset - r.offset) % r.bytes() == 0) return &r;
  }
  return nullptr;
}

// Bits a write of `field` must keep: the register's other RW fields.
uint32_t preserve_mask(const regmap::RegisterMap& map, regmap::FieldRef field) {
  const RegisterDesc* desc = register_desc(map, field.reg.block_type, field.reg.offset);
  if (desc == nullptr) return ~field.mask();
  uint32_t mask = 0;
  for (const auto& f : desc->fields) {
    const bool same = f.lsb == field.lsb && f.width == field.width;
    if (!same && f.access == Access::kRW) mask |= f.mask();
  }
  return mask;
}

// Reads of a batch item's words: one for a register, high-low-high for a 64-bit counter.
constexpr size_t kWideReads = 3;

}  // namespace

Device::Device(RegisterBus& bus, const regmap::RegisterMap& map)
    : bus_(bus), map_(map), layout_(walk_board(bus, map)) {}

void Device::rediscover() { publish(walk_board(bus_, map_)); }

void Device::publish(std::shared_ptr<const DeviceLayout> layout) {
  std::lock_guard lock(layout_mutex_);
  layout_ = std::move(layout);
}

std::shared_ptr<const DeviceLayout> Device::layout() const {
  std::lock_guard lock(layout_mutex_);
  return layout_;
}

const DeviceBlock& Device::block_for(const DeviceLayout& layout, uint16_t type, unsigned instance,
                                     uint16_t since, std::string_view what) const {
  const DeviceBlock& block = layout.block(type, instance);
  if (since > block.version) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{} needs {} block version {}; this board's is version {} (a "
                            "firmware update adds it)",
                            what, block.desc->name, since, block.version));
  }
  return block;
}

uint32_t Device::address(const DeviceLayout& layout, regmap::RegRef reg, unsigned instance) const {
  const DeviceBlock& block = layout.block(reg.block_type, instance);
  if (reg.since > block.version) {
    // The register's name is looked up for the error only: this runs on every access.
    const RegisterDesc* desc = register_desc(map_, reg.block_type, reg.offset);
    block_for(layout, reg.block_type, instance, reg.since,
              desc ? std::string(desc->name) : fmt::format("offset 0x{:x}", reg.offset));
  }
  return block.base + reg.offset;
}

uint32_t Device::address(regmap::RegRef reg, unsigned instance) const {
  return address(*layout(), reg, instance);
}

uint32_t Device::read(regmap::RegRef reg, unsigned instance) {
  return bus_.read32(address(reg, instance));
}

uint32_t Device::read(regmap::FieldRef field, unsigned instance) {
  return field.get(read(field.reg, instance));
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

void Device::write(regmap::RegRef reg, uint32_t value, unsigned instance) {
  bus_.write32(address(reg, instance), value);
}

void Device::write(regmap::FieldRef field, uint32_t value, unsigned instance) {
  const uint32_t preserve = preserve_mask(map_, field);
  const uint32_t at = address(field.reg, instance);
  std::lock_guard lock(rmw_mutex_);
  const uint32_t base = preserve ? bus_.read32(at) : 0;
  bus_.write32(at, (base & preserve) | ((value << field.lsb) & field.mask()));
}

size_t Device::ReadBatch::add(regmap::RegRef reg, unsigned instance) {
  Item item;
  item.reg = reg;
  item.instance = instance;
  items_.push_back(item);
  ++reads_;
  return items_.size() - 1;
}

size_t Device::ReadBatch::add(regmap::FieldRef field, unsigned instance) {
  Item item;
  item.reg = field.reg;
  item.instance = instance;
  item.field = field;
  items_.push_back(item);
  ++reads_;
  return items_.size() - 1;
}

size_t Device::ReadBatch::add64(regmap::RegRef reg, unsigned instance) {
  Item item;
  item.reg = reg;
  item.instance = instance;
  item.wide = true;
  items_.push_back(item);
  reads_ += kWideReads;
  return items_.size() - 1;
}

size_t Device::ReadBatch::add_entries(const regmap::TableRef& table, uint32_t first, uint32_t count,
                                      Bank bank) {
  Item item;
  item.table = &table;
  item.first = first;
  item.count = count;
  item.bank = bank;
  items_.push_back(item);
  reads_ += size_t{count} * table.words();
  entry_words_ += size_t{count} * table.words();
  return items_.size() - 1;
}

std::span<const uint32_t> Device::ReadBatch::entries(size_t item) const {
  const Item& i = items_.at(item);
  if (i.table == nullptr || values_.size() != items_.size()) {
    throw Error(ErrorCode::kInternal, "ReadBatch::entries of an item that read no entries");
  }
  return std::span(words_).subspan(i.begin, size_t{i.count} * i.table->words());
}

void Device::read(ReadBatch& batch) {
  const auto snapshot = layout();
  std::vector<BusOp> ops;
  ops.reserve(batch.reads_);
  for (auto& item : batch.items_) {
    if (item.table != nullptr) {
      entry_reads(*snapshot, *item.table, item.first, item.count, item.bank, ops);
      continue;
    }
    const uint32_t at = address(*snapshot, item.reg, item.instance);
    if (item.wide) {
      ops.insert(ops.end(), {BusOp::read(at + 4), BusOp::read(at), BusOp::read(at + 4)});
    } else {
      ops.push_back(BusOp::read(at));
    }
  }
  if (!ops.empty()) bus_.execute(ops);
  batch.values_.clear();
  batch.values_.reserve(batch.items_.size());
  batch.words_.clear();
  batch.words_.reserve(batch.entry_words_);
  size_t op = 0;
  for (auto& item : batch.items_) {
    if (item.table != nullptr) {
      const size_t words = size_t{item.count} * item.table->words();
      item.begin = batch.words_.size();
      for (size_t w = 0; w < words; ++w) batch.words_.push_back(ops[op + w].value);
      op += words;
      batch.values_.push_back(0);
    } else if (item.wide) {
      uint32_t low = ops[op + 1].value;
      // A carry between the reads: the low word belongs with the second high word.
      if (ops[op].value != ops[op + 2].value) low = bus_.read32(ops[op + 1].offset);
      batch.values_.push_back((uint64_t{ops[op + 2].value} << 32) | low);
      op += kWideReads;
    } else {
      const uint32_t word = ops[op++].value;
      batch.values_.push_back(item.field.valid() ? item.field.get(word) : word);
    }
  }
}

// ---- tables -----------------------------------------------------------------------------

uint32_t Device::entries(const regmap::TableRef& table) const {
  return layout()->entries(regmap::index_of(table.entries_from), table.fixed_entries);
}

uint32_t Device::window_base(const DeviceLayout& layout, const regmap::TableRef& table,
                             Bank bank) const {
  const DeviceBlock& block = block_for(layout, table.block_type, 0, table.since, "the table");
  // The shadow window always shows the inactive bank; the data path uses the active one.
  const bool active = bank == Bank::kActive && table.double_buffered();
  return block.base + (active ? table.active_offset : table.offset);
}

void Device::entry_reads(const DeviceLayout& layout, const regmap::TableRef& table, uint32_t first,
                         uint32_t count, Bank bank, std::vector<BusOp>& ops) const {
  const uint32_t total = layout.entries(regmap::index_of(table.entries_from), table.fixed_entries);
  if (first > total || count > total - first) {
    throw Error(ErrorCode::kOutOfRange, fmt::format("entries {} to {} of a table with {} entries",
                                                    first, uint64_t{first} + count, total));
  }
  const uint32_t base = window_base(layout, table, bank) + first * table.entry_bytes;
  const uint32_t words = count * table.words();
  ops.reserve(ops.size() + words);
  for (uint32_t w = 0; w < words; ++w) ops.push_back(BusOp::read(base + 4 * w));
}

std::vector<uint32_t> Device::read_entries(const regmap::TableRef& table, uint32_t first,
                                           uint32_t count, Bank bank) {
  std::vector<BusOp> ops;
  entry_reads(*layout(), table, first, count, bank, ops);
  if (!ops.empty()) bus_.execute(ops);
  std::vector<uint32_t> words;
  words.reserve(ops.size());
  for (const auto& op : ops) words.push_back(op.value);
  return words;
}

void Device::entry_writes(const DeviceLayout& layout, const regmap::TableRef& table, uint32_t first,
                          std::span<const uint32_t> words, std::vector<BusOp>& ops) const {
  if (words.size() % table.words() != 0) {
    throw Error(ErrorCode::kInternal,
                fmt::format("{} words are not whole {}-word entries", words.size(), table.words()));
  }
  const uint32_t count = static_cast<uint32_t>(words.size() / table.words());
  const uint32_t total = layout.entries(regmap::index_of(table.entries_from), table.fixed_entries);
  if (first > total || count > total - first) {
    throw Error(ErrorCode::kOutOfRange,
                fmt::format("entries {} to {} of a table with {} entries on this board", first,
                            uint64_t{first} + count, total));
  }
  const uint32_t base = window_base(layout, table, Bank::kShadow) + first * table.entry_bytes;
  ops.reserve(ops.size() + words.size());
  for (size_t w = 0; w < words.size(); ++w) {
    ops.push_back(BusOp::write(base + 4 * static_cast<uint32_t>(w), words[w]));
  }
}

void Device::write_entries(const regmap::TableRef& table, uint32_t first,
                           std::span<const uint32_t> words) {
  std::vector<BusOp> ops;
  entry_writes(*layout(), table, first, words, ops);
  if (!ops.empty()) bus_.execute(ops);
}

void Device::WriteBatch::add(regmap::RegRef reg, uint32_t value, unsigned instance) {
  Item item;
  item.reg = reg;
  item.instance = instance;
  item.value = value;
  items_.push_back(item);
}

void Device::WriteBatch::add(regmap::FieldRef field, uint32_t value, unsigned instance) {
  Item item;
  item.reg = field.reg;
  item.field = field;
  item.instance = instance;
  item.value = value;
  items_.push_back(item);
}

void Device::WriteBatch::add_entries(const regmap::TableRef& table, uint32_t first,
                                     std::span<const uint32_t> words) {
  Item item;
  item.table = &table;
  item.first = first;
  item.begin = words_.size();
  item.count = words.size();
  words_.insert(words_.end(), words.begin(), words.end());
  items_.push_back(item);
}

void Device::write(WriteBatch& batch) {
  const auto snapshot = layout();
  std::vector<BusOp> ops;
  ops.reserve(batch.items_.size() + batch.words_.size());
  for (const auto& item : batch.items_) {
    if (item.table == nullptr) {
      uint32_t value = item.value;
      if (item.field.valid()) {
        if (preserve_mask(map_, item.field) != 0) {
          throw Error(
              ErrorCode::kInternal,
              fmt::format("a write batch cannot write field bits {}..{} of the register "
                          "at offset 0x{:x}: its register has other RW fields",
                          item.field.lsb, item.field.lsb + item.field.width - 1, item.reg.offset));
        }
        value = (value << item.field.lsb) & item.field.mask();
      }
      ops.push_back(BusOp::write(address(*snapshot, item.reg, item.instance), value));
    } else {
      entry_writes(*snapshot, *item.table, item.first,
                   std::span(batch.words_).subspan(item.begin, item.count), ops);
    }
  }
  if (!ops.empty()) bus_.execute(ops);
}

unsigned Device::active_bank(const regmap::TableRef& table) {
  if (!table.double_buffered()) return 0;
  return read(table.bank);
}

void Device::swap_banks(const regmap::TableRef& table) {
  if (!table.double_buffered()) {
    throw Error(ErrorCode::kInternal, "swap_banks on a table with one bank");
  }
  write(table.swap, 1);
}

// ---- symbolic access --------------------------------------------------------------------

Target Device::resolve(std::string_view name) const { return resolve_name(*layout(), name); }

Target Device::resolve(uint32_t offset) const { return resolve_offset(*layout(), offset); }

uint64_t Device::read(const Target& target) {
  if (target.is_64()) return read_counter(target.offset);
  return (bus_.read32(target.offset) & target.mask) >> target.lsb;
}

std::vector<uint64_t> Device::read(std::span<const Target> targets) {
  std::vector<BusOp> ops;
  ops.reserve(targets.size());
  for (const auto& t : targets) {
    if (t.is_64()) {
      ops.insert(ops.end(),
                 {BusOp::read(t.offset + 4), BusOp::read(t.offset), BusOp::read(t.offset + 4)});
    } else {
      ops.push_back(BusOp::read(t.offset));
    }
  }
  if (!ops.empty()) bus_.execute(ops);
  std::vector<uint64_t> values;
  values.reserve(targets.size());
  size_t op = 0;
  for (const auto& t : targets) {
    if (t.is_64()) {
      uint32_t low = ops[op + 1].value;
      if (ops[op].value != ops[op + 2].value) low = bus_.read32(t.offset);
      values.push_back((uint64_t{ops[op + 2].value} << 32) | low);
      op += kWideReads;
    } else {
      values.push_back((ops[op++].value & t.mask) >> t.lsb);
    }
  }
  return values;
}

void Device::check_write(const Target& target, uint64_t value) const {
  if (target.access == Access::kRO) {
    throw Error(ErrorCode::kFailedPrecondition,
                target.read_only_hint.empty() ? fmt::format("{} is read-only (RO)", target.name)
                                              : target.read_only_hint);
  }
  if (value > target.max_value()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("value 0x{:x} does not fit {} ({} bits, at most 0x{:x})", value,
                            target.name, target.width_bits, target.max_value()));
  }
  if (target.mask == 0xffffffffu) {
    const uint32_t reserved = static_cast<uint32_t>(value) & ~target.defined_mask;
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
  std::lock_guard lock(rmw_mutex_);
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
    const uint32_t base = target.preserve_mask != 0 ? words[target.offset] : 0;
    const uint32_t word = (base & target.preserve_mask) |
                          ((static_cast<uint32_t>(value) << target.lsb) & target.mask);
    writes.push_back(BusOp::write(target.offset, word));
    words[target.offset] = word;
  }
  bus_.execute(writes);
}

std::vector<Target> Device::enumerate(std::string_view block, bool include_tables) const {
  return enumerate_targets(*layout(), block, include_tables);
}

uint32_t Device::reset_board() {
  {
    std::lock_guard lock(rmw_mutex_);
    write(regs::id::kControl, regs::id::kControlBoardReset.put(0, 1));
  }
  rediscover();
  return read(regs::id::kGenerationValue);
}

}  // namespace asn

#include "device/resolver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "asn/text/text.hpp"
#include "error.hpp"

namespace asn {

namespace {

using regmap::Access;
using regmap::BlockDesc;
using regmap::FieldDesc;
using regmap::RegisterDesc;
using regmap::TableFieldDesc;

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, what);
}
[[noreturn]] void not_found(const std::string& what) { throw Error(ErrorCode::kNotFound, what); }

uint32_t fields_mask(const RegisterDesc& reg, uint16_t version) {
  if (reg.fields.empty()) return 0xffffffffu;
  uint32_t mask = 0;
  for (const auto& f : reg.fields) {
    if (f.since <= version) mask |= f.mask();
  }
  return mask;
}

uint32_t rw_mask_except(const RegisterDesc& reg, const FieldDesc* except, uint16_t version) {
  uint32_t mask = 0;
  for (const auto& f : reg.fields) {
    if (&f != except && f.access == Access::kRW && f.since <= version) mask |= f.mask();
  }
  return mask;
}

// The entries of a table window or a ring, seen alike: a named window of entries.
struct EntryWindow {
  std::string name;  // "dest_table", "dest_table_active", "request"
  uint32_t offset;
  uint32_t entry_bytes;
  uint32_t max_entries;
  uint16_t entries_from;
  uint32_t fixed_entries;
  uint16_t since;
  Access access;
  std::span<const TableFieldDesc> fields;
  std::string_view description;
  std::string read_only_hint;  // filled in per block when the window is read-only
  std::string shadow;          // the active window of a double-buffered table: the shadow's name
  std::string swap;            // ... and the field that swaps the banks

  uint32_t word_mask(unsigned word) const {
    uint32_t mask = 0;
    for (const auto& f : fields) {
      for (unsigned e = 0; e < f.count; ++e) {
        if (f.word_of(e) == word) mask |= f.mask_of_element(e);
      }
    }
    return mask;
  }
};

std::vector<EntryWindow> windows_of(const DeviceBlock& block) {
  std::vector<EntryWindow> out;
  for (const auto& t : block.desc->tables) {
    EntryWindow w{std::string(t.name),
                  t.offset,
                  t.entry_bytes,
                  t.max_entries,
                  t.entries_from, t.fixed_entries,
                  t.since,
                  t.access,
                  t.fields,
                  t.description,
                  {},
                  {},
                  {}};
    if (t.access == Access::kRO) {
      w.read_only_hint =
          fmt::format("{}.{} is read-only (the board maintains it)", block.name, t.name);
    }
    out.push_back(w);
    if (t.double_buffered()) {
      w.name = std::string(t.name) + "_active";
      w.offset = t.active_offset;
      w.access = Access::kRO;
      w.shadow = std::string(t.name);
      w.swap = fmt::format("{}.{}.{}", block.name, t.swap_register, t.swap_field);
      out.push_back(w);
    }
  }
  for (const auto& r : block.desc->rings) {
    const bool software_writes = r.direction == regmap::RingDirection::kToBoard;
    EntryWindow w{std::string(r.name),
                  r.offset,
                  r.entry_bytes,
                  r.max_entries,
                  r.entries_from, 0,
                  r.since,
                  software_writes ? Access::kRW : Access::kRO,
                  r.fields,
                  r.description,
                  {},
                  {},
                  {}};
    if (!software_writes) {
      w.read_only_hint = fmt::format("{}.{} is a ring the board fills (RO)", block.name, r.name);
    }
    out.push_back(w);
  }
  return out;
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
        invalid(fmt::format("{}: {} has an unclosed '['", text::quoted(name), text::quoted(piece)));
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
        invalid(fmt::format("{}: the index in {} is not a number", text::quoted(name),
                            text::quoted(piece)));
      }
      part.index = value;
    }
    if (part.ident.empty()) {
      invalid(
          fmt::format("{} is not a register name (expected block.register[.field], e.g. "
                      "id.scratch or port[0].control.enable)",
                      text::quoted(name)));
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

std::string newer_version(const DeviceBlock& block, uint16_t since) {
  return fmt::format("; it needs {} version {} and this board's is version {}", block.desc->name,
                     since, block.version);
}

Target register_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element) {
  Target t;
  t.name = fmt::format("{}.{}", block.name, reg.name);
  if (reg.count > 1) t.name += fmt::format("[{}]", element);
  t.offset = block.base + reg.offset_of(element);
  t.width_bits = reg.width_bits;
  t.lsb = 0;
  t.mask = 0xffffffffu;
  t.defined_mask = fields_mask(reg, block.version);
  t.preserve_mask = 0;
  t.access = reg.access;
  t.description = reg.description;
  if (reg.access == Access::kRO) t.read_only_hint = read_only_hint(t.name, reg.access);
  t.board_reset = block.desc->type == regs::id::kType && reg.offset == regs::id::kControl.offset;
  return t;
}

Target field_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element,
                    const FieldDesc& field) {
  Target t = register_target(block, reg, element);
  t.name += fmt::format(".{}", field.name);
  t.width_bits = field.width;
  t.lsb = field.lsb;
  t.mask = field.mask();
  t.preserve_mask = rw_mask_except(reg, &field, block.version);
  t.access = field.access;
  if (!field.description.empty()) t.description = field.description;
  t.read_only_hint =
      field.access == Access::kRO ? read_only_hint(t.name, field.access) : std::string();
  t.board_reset = t.board_reset && field.lsb == regs::id::kControlBoardReset.lsb;
  return t;
}

Target half_target(const DeviceBlock& block, const RegisterDesc& reg, unsigned element, bool high) {
  Target t = register_target(block, reg, element);
  t.name += high ? ".hi" : ".lo";
  t.offset += high ? 4 : 0;
  t.width_bits = 32;
  return t;
}

// A field (or a whole word when field is nullptr) of one entry of a window.
Target entry_target(const DeviceBlock& block, const EntryWindow& window, uint32_t entry,
                    unsigned word, const TableFieldDesc* field, unsigned element) {
  Target t;
  t.name = fmt::format("{}.{}[{}].", block.name, window.name, entry);
  if (field == nullptr) {
    t.name += fmt::format("w{}", word);
  } else {
    t.name += std::string(field->name);
    if (field->count > 1) t.name += fmt::format("[{}]", element);
    word = field->word_of(element);
  }
  t.offset = block.base + window.offset + entry * window.entry_bytes + word * 4;
  t.width_bits = field ? field->width : 32;
  t.lsb = field ? field->lsb_of(element) : 0;
  t.mask = field ? field->mask_of_element(element) : 0xffffffffu;
  t.defined_mask = window.word_mask(word);
  // An entry word is plain memory: a field write keeps every other bit of the word.
  t.preserve_mask = field ? ~t.mask : 0;
  t.access = window.access;
  t.description = field && !field->description.empty() ? field->description : window.description;
  t.read_only_hint = window.read_only_hint;
  if (!window.shadow.empty()) {
    t.read_only_hint = fmt::format(
        "{} is the active bank (RO): write {}.{}[{}] (the shadow bank) and swap the banks with {}",
        t.name, block.name, window.shadow, entry, window.swap);
  }
  return t;
}

const DeviceBlock& find_block(const DeviceLayout& layout, std::string_view name,
                              std::optional<unsigned> index, std::string_view full) {
  const BlockDesc* desc = nullptr;
  std::vector<std::string> names;
  for (const auto& b : layout.map->blocks) {
    names.emplace_back(b.name);
    if (b.name == name) desc = &b;
  }
  if (desc == nullptr) {
    not_found(fmt::format("{}: no block named {}{}", text::quoted(full), text::quoted(name),
                          text::did_you_mean(name, names)));
  }
  const unsigned n = layout.count(desc->type);
  if (desc->instances == regmap::Instances::kPorts) {
    if (!index) {
      invalid(fmt::format("{}: {} needs a port number, {}[0] to {}[{}]", text::quoted(full), name,
                          name, name, n - 1));
    }
    if (*index >= n) {
      not_found(fmt::format("{}: the board has {} ports ({}[0] to {}[{}])", text::quoted(full), n,
                            name, name, n - 1));
    }
  } else if (index && *index != 0) {
    invalid(
        fmt::format("{}: there is one {} block; drop the [{}]", text::quoted(full), name, *index));
  }
  return layout.block(desc->type, index.value_or(0));
}

// The element an index names in an array of `count` (a register array, an array field of
// an entry); a plain item (count 1) takes no index.
unsigned element_of(std::string_view name, std::string_view item, unsigned count,
                    std::optional<unsigned> index) {
  if (count > 1 && !index) {
    invalid(fmt::format("{}: {} is an array; name an element, {}[0] to {}[{}]", text::quoted(name),
                        item, item, item, count - 1));
  }
  if (count == 1 && index) invalid(fmt::format("{}: {} is not an array", text::quoted(name), item));
  if (index.value_or(0) >= count) {
    not_found(fmt::format("{}: {} has {} elements", text::quoted(name), item, count));
  }
  return index.value_or(0);
}

std::optional<Target> resolve_register(const DeviceBlock& block, std::string_view name,
                                       const std::vector<NamePart>& parts,
                                       std::vector<std::string>& candidates) {
  const NamePart& item = parts[1];
  for (const auto& reg : block.desc->registers) {
    if (reg.name != item.ident) {
      if (reg.since <= block.version) candidates.emplace_back(reg.name);
      continue;
    }
    if (reg.since > block.version) {
      not_found(fmt::format("{}: {}.{} does not exist on this board{}", text::quoted(name),
                            block.name, reg.name, newer_version(block, reg.since)));
    }
    const unsigned element = element_of(name, reg.name, reg.count, item.index);
    if (parts.size() == 2) return register_target(block, reg, element);
    const std::string_view field_name = parts[2].ident;
    if (parts[2].index)
      invalid(fmt::format("{}: field {} takes no index", text::quoted(name), field_name));
    if (reg.width_bits == 64) {
      if (field_name == "lo" || field_name == "hi") {
        return half_target(block, reg, element, field_name == "hi");
      }
      not_found(fmt::format("{}: {} is a 64-bit value; its words are .lo and .hi",
                            text::quoted(name), reg.name));
    }
    std::vector<std::string> fields;
    for (const auto& f : reg.fields) {
      if (f.name == field_name && f.since > block.version) {
        not_found(fmt::format("{}: {}.{}.{} does not exist on this board{}", text::quoted(name),
                              block.name, reg.name, f.name, newer_version(block, f.since)));
      }
      if (f.since > block.version) continue;
      fields.emplace_back(f.name);
      if (f.name == field_name) return field_target(block, reg, element, f);
    }
    not_found(fmt::format("{}: {}.{} has no field {}{}", text::quoted(name), block.name, reg.name,
                          text::quoted(field_name), text::did_you_mean(field_name, fields)));
  }
  return std::nullopt;
}

std::optional<Target> resolve_entry(const DeviceLayout& layout, const DeviceBlock& block,
                                    std::string_view name, const std::vector<NamePart>& parts,
                                    std::vector<std::string>& candidates) {
  const NamePart& item = parts[1];
  for (const EntryWindow& window : windows_of(block)) {
    if (window.name != item.ident) {
      if (window.since <= block.version) candidates.push_back(window.name);
      continue;
    }
    if (window.since > block.version) {
      not_found(fmt::format("{}: {}.{} does not exist on this board{}", text::quoted(name),
                            block.name, window.name, newer_version(block, window.since)));
    }
    const uint32_t entries = layout.entries(window.entries_from, window.fixed_entries);
    if (!item.index) {
      invalid(fmt::format("{}: {} has entries; name one, {}[0] to {}[{}]", text::quoted(name),
                          window.name, window.name, window.name, entries - 1));
    }
    if (*item.index >= entries) {
      not_found(fmt::format("{}: {}.{} has {} entries on this board", text::quoted(name),
                            block.name, window.name, entries));
    }
    const unsigned words = window.entry_bytes / 4;
    if (parts.size() == 2) {
      invalid(fmt::format("{}: name a field of the entry or a word (w0 to w{})", text::quoted(name),
                          words - 1));
    }
    const NamePart& field_part = parts[2];
    std::vector<std::string> fields;
    for (const auto& f : window.fields) {
      fields.emplace_back(f.name);
      if (f.name != field_part.ident) continue;
      const unsigned element = element_of(name, f.name, f.count, field_part.index);
      return entry_target(block, window, *item.index, 0, &f, element);
    }
    const std::string_view w = field_part.ident;
    if (w.size() > 1 && w[0] == 'w' && !field_part.index) {
      unsigned word = 0;
      auto [end, ec] = std::from_chars(w.data() + 1, w.data() + w.size(), word);
      if (ec == std::errc() && end == w.data() + w.size() && word < words) {
        return entry_target(block, window, *item.index, word, nullptr, 0);
      }
    }
    not_found(fmt::format("{}: {}.{} entries have no field {}{}", text::quoted(name), block.name,
                          window.name, text::quoted(w), text::did_you_mean(w, fields)));
  }
  return std::nullopt;
}

}  // namespace

Target resolve_name(const DeviceLayout& layout, std::string_view name) {
  if (name.size() > kMaxRegisterNameBytes) {
    invalid(fmt::format("a register name of {} bytes ({}); names are at most {} bytes", name.size(),
                        text::quoted(name, 40), kMaxRegisterNameBytes));
  }
  const auto parts = split_name(name);
  if (parts.size() < 2 || parts.size() > 3) {
    invalid(
        fmt::format("{} is not a register name (expected block.register[.field], e.g. "
                    "id.scratch or port[0].control.enable)",
                    text::quoted(name)));
  }
  const DeviceBlock& block = find_block(layout, parts[0].ident, parts[0].index, name);
  std::vector<std::string> candidates;
  if (auto t = resolve_register(block, name, parts, candidates)) return *t;
  if (auto t = resolve_entry(layout, block, name, parts, candidates)) return *t;
  not_found(fmt::format("{}: block {} has no register, table or ring {}{}", text::quoted(name),
                        block.name, text::quoted(parts[1].ident),
                        text::did_you_mean(parts[1].ident, candidates)));
}

Target resolve_offset(const DeviceLayout& layout, uint32_t offset) {
  if (offset % 4 != 0) invalid(fmt::format("offset 0x{:x} is not 32-bit aligned", offset));
  auto where = layout.locate(offset);
  if (!where) {
    invalid(
        fmt::format("offset 0x{:x} is outside the register map (blocks cover 0x0 to 0x{:x}, "
                    "see `asnctl info`)",
                    offset, layout.end() - 1));
  }
  const DeviceBlock& block = *where->block;
  const uint32_t rel = where->rel;
  for (const auto& reg : block.desc->registers) {
    if (rel < reg.offset || rel >= reg.end() || reg.since > block.version) continue;
    const unsigned element = (rel - reg.offset) / reg.bytes();
    if (reg.width_bits == 64) return half_target(block, reg, element, (rel - reg.offset) % 8 != 0);
    return register_target(block, reg, element);
  }
  for (const EntryWindow& window : windows_of(block)) {
    if (window.since > block.version) continue;
    if (rel < window.offset || rel >= window.offset + window.entry_bytes * window.max_entries) {
      continue;
    }
    const uint32_t entry = (rel - window.offset) / window.entry_bytes;
    const unsigned word = ((rel - window.offset) % window.entry_bytes) / 4;
    const uint32_t entries = layout.entries(window.entries_from, window.fixed_entries);
    if (entry >= entries) {
      invalid(fmt::format("offset 0x{:x} is entry {} of {}.{}, which has {} entries on this board",
                          offset, entry, block.name, window.name, entries));
    }
    return entry_target(block, window, entry, word, nullptr, 0);
  }
  invalid(fmt::format("offset 0x{:x} (block {} at 0x{:x} + 0x{:x}) is no register", offset,
                      block.name, block.base, rel));
}

struct TargetCursor::State {
  std::shared_ptr<const DeviceLayout> layout;
  std::string filter_name;
  std::optional<unsigned> filter_index;
  bool include_tables = false;
  // Where the walk is: a block, then its registers (element by element), then its entry
  // windows (entry by entry, word by word).
  size_t block = 0;
  bool in_windows = false;
  size_t reg = 0;
  unsigned element = 0;
  std::vector<EntryWindow> windows;
  size_t window = 0;
  uint32_t entry = 0;
  unsigned word = 0;

  bool wanted(const DeviceBlock& b) const {
    return (filter_name.empty() || b.desc->name == filter_name) &&
           (!filter_index || b.index == *filter_index);
  }
  void next_block() {
    ++block;
    in_windows = false;
    reg = element = 0;
  }
  // One more target of the current block into `out`, or a step past what has none.
  void step(const DeviceBlock& b, std::vector<Target>& out) {
    if (!in_windows) {
      if (reg >= b.desc->registers.size()) {
        in_windows = true;
        windows = include_tables ? windows_of(b) : std::vector<EntryWindow>();
        window = entry = word = 0;
        return;
      }
      const RegisterDesc& r = b.desc->registers[reg];
      if (r.since <= b.version) out.push_back(register_target(b, r, element));
      if (r.since > b.version || ++element >= r.count) {
        ++reg;
        element = 0;
      }
      return;
    }
    if (window >= windows.size()) {
      next_block();
      return;
    }
    const EntryWindow& w = windows[window];
    if (w.since > b.version || entry >= layout->entries(w.entries_from, w.fixed_entries)) {
      ++window;
      entry = word = 0;
      return;
    }
    out.push_back(entry_target(b, w, entry, word, nullptr, 0));
    if (++word >= w.entry_bytes / 4) {
      word = 0;
      ++entry;
    }
  }
};

TargetCursor::TargetCursor(std::shared_ptr<const DeviceLayout> layout,
                           std::string_view block_filter, bool include_tables)
    : state_(std::make_unique<State>()) {
  state_->layout = std::move(layout);
  state_->include_tables = include_tables;
  if (block_filter.empty()) return;
  if (block_filter.size() > kMaxRegisterNameBytes) {
    invalid(fmt::format("a block name of {} bytes; names are at most {} bytes", block_filter.size(),
                        kMaxRegisterNameBytes));
  }
  auto parts = split_name(block_filter);
  if (parts.size() != 1) {
    invalid(fmt::format("{} is not a block name (id, port, port[2], route, ...)",
                        text::quoted(block_filter)));
  }
  state_->filter_name = std::string(parts[0].ident);
  state_->filter_index = parts[0].index;
  std::vector<std::string> names;
  for (const auto& b : state_->layout->map->blocks) names.emplace_back(b.name);
  if (std::find(names.begin(), names.end(), state_->filter_name) == names.end()) {
    not_found(fmt::format("no block named {}{}", text::quoted(state_->filter_name),
                          text::did_you_mean(state_->filter_name, names)));
  }
  if (state_->filter_index) {
    find_block(*state_->layout, state_->filter_name, state_->filter_index, block_filter);
  }
}

TargetCursor::~TargetCursor() = default;
TargetCursor::TargetCursor(TargetCursor&&) noexcept = default;
TargetCursor& TargetCursor::operator=(TargetCursor&&) noexcept = default;

std::vector<Target> TargetCursor::next(size_t max) {
  std::vector<Target> out;
  State& s = *state_;
  while (out.size() < max && s.block < s.layout->blocks.size()) {
    const DeviceBlock& b = s.layout->blocks[s.block];
    if (!s.wanted(b)) {
      s.next_block();
      continue;
    }
    s.step(b, out);
  }
  return out;
}

std::vector<Target> enumerate_targets(const DeviceLayout& layout, std::string_view block_filter,
                                      bool include_tables) {
  // The cursor keeps the layout alive; this caller already does, so share without owning.
  TargetCursor cursor(std::shared_ptr<const DeviceLayout>(&layout, [](const DeviceLayout*) {}),
                      block_filter, include_tables);
  std::vector<Target> out;
  for (auto chunk = cursor.next(4096); !chunk.empty(); chunk = cursor.next(4096)) {
    out.insert(out.end(), std::make_move_iterator(chunk.begin()),
               std::make_move_iterator(chunk.end()));
  }
  return out;
}

}  // namespace asn

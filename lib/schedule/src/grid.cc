#include "asn/schedule/grid.hpp"

#include <algorithm>

#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

constexpr std::string_view kSlotHeader = "slot";
// Between the slot label column and the first port column: wider than between ports, so
// that the labels do not read as a port column.
constexpr std::string_view kLabelGap = "  ";

size_t digits(uint64_t n) { return std::to_string(n).size(); }

void pad_left(std::string& out, std::string_view text, size_t width) {
  if (text.size() < width) out.append(width - text.size(), ' ');
  out += text;
}

// The output ports shown, in order: those asked for that exist, or every port.
std::vector<uint32_t> grid_columns(uint32_t ports, const GridOptions& options) {
  std::vector<uint32_t> columns;
  for (uint32_t o : options.columns) {
    if (o < ports) columns.push_back(o);
  }
  if (options.columns.empty()) {
    for (uint32_t o = 0; o < ports; ++o) columns.push_back(o);
  }
  return columns;
}

}  // namespace

std::vector<Connection> connections_of(const SlotEntry& entry, uint32_t ports) {
  ports = std::min(ports, kSlotTablePorts);
  std::vector<Connection> connections;
  for (uint32_t o = 0; o < ports; ++o) {
    if ((entry[o] & kEntryConnected) == 0) continue;
    Connection c;
    c.from = entry[o] & kEntryInputMask;
    c.to = o;
    connections.push_back(c);
  }
  std::sort(connections.begin(), connections.end(), [](const Connection& a, const Connection& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  return connections;
}

std::string format_grid(std::span<const SlotEntry> slots, uint32_t ports,
                        const GridOptions& options) {
  ports = std::min(ports, kSlotTablePorts);
  const size_t shown = std::min<size_t>(slots.size(), options.max_slots);
  const std::vector<uint32_t> columns = grid_columns(ports, options);

  // Every port column is as wide as the widest number in any of them: a port in the header,
  // or an input port past it (an entry may name any of the 64 inputs).
  uint32_t largest = 0;
  for (uint32_t o : columns) largest = std::max(largest, o);
  for (size_t s = 0; s < shown; ++s) {
    for (uint32_t o : columns) {
      if ((slots[s][o] & kEntryConnected) != 0) {
        largest = std::max<uint32_t>(largest, slots[s][o] & kEntryInputMask);
      }
    }
  }
  const size_t width = digits(largest);
  // Slot labels are left-aligned, so that the wormhole line's "W" stands under them.
  const size_t label_width = std::max(kSlotHeader.size(), shown > 0 ? digits(shown - 1) : 0);

  auto label = [&](std::string& line, std::string_view text) {
    line += text;
    if (!columns.empty()) line.append(label_width - text.size(), ' ');  // no trailing blanks
  };
  std::string out;
  label(out, kSlotHeader);
  for (size_t c = 0; c < columns.size(); ++c) {
    out += c == 0 ? kLabelGap : " ";
    pad_left(out, std::to_string(columns[c]), width);
  }
  out += '\n';
  for (size_t s = 0; s < shown; ++s) {
    label(out, std::to_string(s));
    for (size_t c = 0; c < columns.size(); ++c) {
      const uint32_t o = columns[c];
      out += c == 0 ? kLabelGap : " ";
      const uint8_t cell = slots[s][o];
      pad_left(out, (cell & kEntryConnected) != 0 ? std::to_string(cell & kEntryInputMask) : ".",
               width);
    }
    out += '\n';
  }
  if (shown < slots.size()) {
    const size_t more = slots.size() - shown;
    out += cat("... ", more, more == 1 ? " more slot\n" : " more slots\n");
  }
  if (options.wormhole) out += "W  (wormhole slot: packet switched)\n";
  return out;
}

std::string format_slot(const SlotEntry& entry, uint32_t ports) {
  std::string out;
  for (const Connection& c : connections_of(entry, ports)) {
    out += cat(out.empty() ? "" : " ", c.from, "->", c.to);
  }
  return out;
}

}  // namespace asn::schedule

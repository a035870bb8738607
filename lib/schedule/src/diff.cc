#include "asn/schedule/diff.hpp"

#include <algorithm>
#include <iterator>

#include "asn/schedule/grid.hpp"
#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

std::string on_off(bool value) { return value ? "on" : "off"; }

void compare(std::vector<FieldChange>& changes, std::string_view field, std::string before,
             std::string after, std::string_view unit = "") {
  if (before == after) return;
  changes.push_back({std::string(field), std::move(before), std::move(after), std::string(unit)});
}

// Connections of `from` that `to` lacks. Both come from connections_of(), so sorted.
std::vector<Connection> missing_from(const std::vector<Connection>& from,
                                     const std::vector<Connection>& to) {
  std::vector<Connection> out;
  auto order = [](const Connection& a, const Connection& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  };
  std::set_difference(from.begin(), from.end(), to.begin(), to.end(), std::back_inserter(out),
                      order);
  return out;
}

std::string connections(const std::vector<Connection>& list) {
  if (list.empty()) return "(empty)";
  std::string out;
  for (const Connection& c : list) out += cat(out.empty() ? "" : " ", c.from, "->", c.to);
  return out;
}

}  // namespace

ProgramDiff diff_programs(const TdmProgram& before, const TdmProgram& after) {
  ProgramDiff diff;
  compare(diff.timing, "policy", std::string(to_string(before.policy)),
          std::string(to_string(after.policy)));
  compare(diff.timing, "wormhole", on_off(before.wormhole), on_off(after.wormhole));
  compare(diff.timing, "slots_in_use", std::to_string(before.slots_in_use),
          std::to_string(after.slots_in_use));
  compare(diff.timing, "slot_length", std::to_string(before.slot_length_cycles),
          std::to_string(after.slot_length_cycles), "cycles");
  compare(diff.timing, "wormhole_length", std::to_string(before.wormhole_length_cycles),
          std::to_string(after.wormhole_length_cycles), "cycles");
  compare(diff.timing, "guard_band", std::to_string(before.guard_band_cycles),
          std::to_string(after.guard_band_cycles), "cycles");

  // The entries are the slots (slots_in_use is compared above as the register it is).
  const size_t slots = std::max(before.entries.size(), after.entries.size());
  for (size_t s = 0; s < slots; ++s) {
    const bool in_before = s < before.entries.size();
    const bool in_after = s < after.entries.size();
    std::vector<Connection> old_connections;
    std::vector<Connection> new_connections;
    if (in_before) old_connections = connections_of(before.entries[s]);
    if (in_after) new_connections = connections_of(after.entries[s]);
    SlotDiff slot;
    slot.slot = static_cast<uint32_t>(s);
    slot.side = in_before && in_after ? SlotSide::kBoth
                : in_before           ? SlotSide::kBeforeOnly
                                      : SlotSide::kAfterOnly;
    slot.removed = missing_from(old_connections, new_connections);
    slot.added = missing_from(new_connections, old_connections);
    if (slot.side == SlotSide::kBoth && slot.removed.empty() && slot.added.empty()) continue;
    diff.slots.push_back(std::move(slot));
  }
  return diff;
}

std::string format_diff(const ProgramDiff& diff) {
  std::string out;
  for (const FieldChange& change : diff.timing) {
    out += cat("~ ", change.field, ": ", change.before, " -> ", change.after,
               change.unit.empty() ? "" : " ", change.unit, "\n");
  }
  for (const SlotDiff& slot : diff.slots) {
    switch (slot.side) {
      case SlotSide::kBoth:
        if (!slot.removed.empty()) {
          out += cat("- slot ", slot.slot, ": ", connections(slot.removed), "\n");
        }
        if (!slot.added.empty()) {
          out += cat("+ slot ", slot.slot, ": ", connections(slot.added), "\n");
        }
        break;
      // A slot one program lacks is shown even when empty: it still changes the frame.
      case SlotSide::kBeforeOnly:
        out += cat("- slot ", slot.slot, " (only before): ", connections(slot.removed), "\n");
        break;
      case SlotSide::kAfterOnly:
        out += cat("+ slot ", slot.slot, " (only after): ", connections(slot.added), "\n");
        break;
    }
  }
  return out;
}

}  // namespace asn::schedule

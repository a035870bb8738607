// What changes on a switch when one TDM program replaces another (`asnctl schedule diff`):
// the timing registers that differ and, slot by slot, the circuits torn down and set up.
// Compares what the board would run (the registers), not how the plans were written: two
// plans that compile to the same slots have no diff. The names (plan, phase, switch) are
// not compared; the caller labels the two sides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/schedule/tdm_program.hpp"

namespace asn::schedule {

// A timing register that differs. Values are as format_diff() shows them: "sla", "on",
// "125"; lengths in cycles, with the unit kept apart so that a line reads
// "~ slot_length: 125 -> 250 cycles".
struct FieldChange {
  std::string field;  // policy, wormhole, slots_in_use, slot_length, wormhole_length, guard_band
  std::string before;
  std::string after;
  std::string unit;  // "cycles" for the lengths, else ""
};

// Which programs have the slot: a program with fewer slots lacks the last ones.
enum class SlotSide : uint8_t { kBoth, kBeforeOnly, kAfterOnly };

// One slot whose connections differ (or that only one program has, even if empty).
struct SlotDiff {
  uint32_t slot = 0;
  SlotSide side = SlotSide::kBoth;
  std::vector<Connection> removed;  // in the slot before, not after (input order)
  std::vector<Connection> added;    // in the slot after, not before
};

struct ProgramDiff {
  std::vector<FieldChange> timing;  // in the order of the fields above
  std::vector<SlotDiff> slots;      // in slot order
  bool empty() const { return timing.empty() && slots.empty(); }
};

ProgramDiff diff_programs(const TdmProgram& before, const TdmProgram& after);

// Unified-diff-like lines, each ending with "\n"; "" for an empty diff:
//   ~ slot_length: 125 -> 250 cycles
//   - slot 3: 1->4
//   + slot 3: 2->4 5->0
//   + slot 8 (only after): 0->1
//   - slot 9 (only before): (empty)
std::string format_diff(const ProgramDiff& diff);

}  // namespace asn::schedule

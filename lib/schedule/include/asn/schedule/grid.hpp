// A TDM program's slot table as text for people (`asnctl schedule show`): a grid of slots
// by output ports, and one slot as a line of connections. Deterministic, no colour, so that
// the output can be compared and pasted into an issue.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/schedule/tdm_program.hpp"

namespace asn::schedule {

struct GridOptions {
  // Slots shown; the rest are counted in one line ("... 960 more slots"). A full table of
  // 1024 slots would scroll the point out of sight. UINT32_MAX shows every slot.
  uint32_t max_slots = 64;
  // The program has the wormhole slot: a last line says so (it has no crossbar entry).
  bool wormhole = false;
  // The output ports shown as columns, in this order (`asnctl schedule show --ports`): at 64
  // ports the whole grid is about 200 columns wide. Empty: every port 0 .. ports - 1. Ports
  // at or past `ports` are left out (the caller says which exist).
  std::vector<uint32_t> columns;
};

// The connections of one slot table entry for its first `ports` outputs (at most
// kSlotTablePorts), ordered by input port, then output port. Marks are unknown.
std::vector<Connection> connections_of(const SlotEntry& entry, uint32_t ports = kSlotTablePorts);

// One line per slot, one column per output port 0 .. ports - 1 (at most kSlotTablePorts; or
// the ports of options.columns):
// a cell holds the input port that feeds the output in that slot, "." when unconnected.
//
//   slot  0 1 2 3
//   0     1 0 3 2
//   1     . . 0 .
//   ... 2 more slots
//   W  (wormhole slot: packet switched)
//
// Port columns are as wide as the largest number shown; each line ends with "\n".
std::string format_grid(std::span<const SlotEntry> slots, uint32_t ports,
                        const GridOptions& options = {});

// One slot as "0->3 1->2" (input->output, in connections_of() order); "" when the slot
// connects nothing.
std::string format_slot(const SlotEntry& entry, uint32_t ports = kSlotTablePorts);

}  // namespace asn::schedule

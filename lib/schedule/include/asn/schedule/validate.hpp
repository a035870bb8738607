// Validation (issue 8 part 3): the rules a schedule must obey before it is loaded, checked
// by code of its own, independent of the compiler, on every schedule, compiled or written
// by hand. asnctl runs it for --dry-run and its messages; asnd runs it again before it
// writes the board.
//
// Rules, per part (one switch's slots in one phase):
//  - every part has slots (a pattern must have been compiled: compile_plan());
//  - slot count <= the board's slot table (RESOURCE_EXHAUSTED: needed vs available);
//  - per slot, at most one input per output and one output per input (000 L955);
//  - ports exist on the board; no self-connection (port p -> p) unless the board allows it:
//    a port is one attached device, sending and receiving, and a circuit from a port back to
//    itself would only return the device's own data (its NIC loops back without the
//    crossbar), so a self-connection is a mistake in the plan;
// per phase (timing, converted with the board's clock):
//  - slot_length and guard_band given; slot and wormhole lengths 1 .. max_slot_cycles
//    (tdm.slot_length and tdm.wormhole_length are 24-bit), guard band <= max_guard_cycles
//    (16-bit) and shorter than the slot and the wormhole slot;
//  - policy sla and preempt need the wormhole slot (sla gives it its own length, 000 L783;
//    preempt leaves only it while no predictable traffic is pending, L795); a wormhole
//    length different from slot_length needs policy sla;
//  - a phase runs something: at least one slot or the wormhole slot (under ses, a slot
//    with a connection or the wormhole slot);
// per plan:
//  - in a fabric plan, policy fixed or sla only: ses and preempt skip slots by each switch's
//    own state, and the frames of different switches would drift apart, while a circuit
//    across switches needs the same slot on every switch at the same time (002 L240-312).
// Warnings (do not stop a load): a length that is not a whole number of cycles (rounded),
// sla with the wormhole slot as long as the others, empty slots under policy fixed, a plan
// written for another board profile (Plan::board).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "asn/schedule/error.hpp"
#include "asn/schedule/plan.hpp"

namespace asn::schedule {

// What a board offers the schedule, from its profile / ID block (the lead's manager fills
// it: ports = cap_ports, slots = cap_tdm_slots, clock_hz = id.clock_hz).
struct BoardLimits {
  std::string board;  // a name for messages ("netfpga-1g"); may be empty
  uint32_t ports = 0;
  uint32_t slots = 0;
  uint64_t clock_hz = 0;
  uint32_t max_slot_cycles = (1u << 24) - 1;   // tdm.slot_length / wormhole_length: 24 bits
  uint32_t max_guard_cycles = (1u << 16) - 1;  // tdm.guard_band: 16 bits
  bool self_connections = false;               // no board allows them today
};

struct ValidateOptions {
  // Validate only this switch's parts (what asnd does for a fabric plan); nullopt: all.
  // A single-switch plan's one part is validated whatever the name.
  std::optional<std::string> switch_name;
  // Validate only this phase (before loading it); nullopt: all. The plan-wide rules apply.
  std::optional<std::string> phase;
  // Stop collecting after this many problems (a hostile plan could have millions).
  size_t max_problems = 50;
};

struct ValidationReport {
  std::vector<Problem> problems;  // errors and warnings, in plan order
  size_t omitted = 0;             // problems past max_problems, not listed
  size_t omitted_warnings = 0;    // the warnings among them
  size_t error_count = 0;         // errors, listed or not

  bool ok() const;  // no errors (warnings allowed)
  std::vector<Problem> errors() const;
  // The listed warnings, then, when some were not listed, one more that says how many:
  // "and 12 more warnings, not listed".
  std::vector<Problem> warnings() const;
  // Throws PlanError with the errors when there are any (its message counts the unlisted).
  void throw_if_errors() const;
};

ValidationReport validate(const Plan& plan, const BoardLimits& limits,
                          const ValidateOptions& options = {});

}  // namespace asn::schedule

// A compiled fabric schedule as a TDM fabric plan (issue 11 parts 4 and 5): one part per
// switch in every phase, slot for slot the crossbar configuration each switch needs so that
// every connection finds its path set up in its slot on every switch along it (002
// L240-312). lib/schedule's validator checks such a plan like any other, and its fabric-wide
// load activates it. A program of several phases compiles phase by phase (002 L248,
// L1841-1916); between phases the network is reconfigured, and the output says what changes
// on each switch.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "asn/fabric_schedule/compile.hpp"
#include "asn/schedule/plan.hpp"

namespace asn::fabric_schedule {

struct PhaseInput {
  std::string name;
  std::vector<Conn> conns;
  schedule::Timing timing;  // slot_length and guard_band needed by the validator
};

struct PhaseReport {
  std::string name;
  size_t connections = 0;
  uint32_t slots = 0;
  uint32_t lower_bound = 0;
  std::string method;
  std::vector<BaselineResult> baselines;  // what each baseline gave (default, combined)
  std::chrono::nanoseconds elapsed{0};
  bool cut_by_time = false;  // Schedule::cut_by_time: this phase may compile differently again
  bool optimal() const { return slots == lower_bound; }
};

// What a switch's slot table loses and gains from one phase to the next: circuits (slot,
// input, output) torn down and set up.
struct SwitchChange {
  std::string switch_name;
  uint64_t torn_down = 0;
  uint64_t set_up = 0;
};
struct Reconfiguration {
  std::string from_phase;
  std::string to_phase;
  std::vector<SwitchChange> switches;  // the switches whose table changes, in switch order
};

struct FabricProgram {
  schedule::Plan plan;                       // plan.switches: the target's switches
  std::vector<PhaseReport> phases;           // in order
  std::vector<Reconfiguration> reconfigure;  // between phase i and i + 1
};

// One phase of the plan: a part per switch, each with `schedule.slots` slots.
schedule::Phase to_phase(const Target& target, std::span<const Conn> conns,
                         const Schedule& schedule, std::string name, schedule::Timing timing);

// Compiles every phase with `options` (each gets the whole time budget) and builds the plan.
FabricProgram compile_program(const Target& target, std::span<const PhaseInput> phases,
                              const Options& options = {}, std::string plan_name = "fabric");

}  // namespace asn::fabric_schedule

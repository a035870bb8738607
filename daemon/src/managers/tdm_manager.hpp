// TDM slot schedules (issue 8): named plans kept as desired state (003 L273: a machine keeps
// many schedules and switches between them), one phase of one plan running on the TDM block.
//
// A plan is parsed, compiled and validated by lib/schedule against this board before
// anything is written; every phase of this switch's part is kept compiled. Loading a phase
// is hitless: the timing and the slot table go into the inactive banks, are read back and
// compared, and `control.arm` swaps both at a frame boundary, so the running schedule is
// untouched by any error before the arm. The fabric-wide path splits a load in two: stage
// (write and verify the inactive banks) and arm for a frame every switch agrees on.
//
// Crash-atomic as the fabric manager is: the document is stored marked pending before the
// arm and the mark cleared after the swap; a restarted asnd finishes the change. A board that
// already runs the desired program (its active timing bank holds the program id) is left
// running, not rewritten.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "asn/fabric_schedule/fabric_plan.hpp"
#include "asn/schedule/error.hpp"
#include "asn/schedule/plan.hpp"
#include "asn/schedule/validate.hpp"
#include "asn/state/v1/state.pb.h"
#include "device/device.hpp"
#include "state/desired_state.hpp"
#include "state/reconciler.hpp"

namespace asn {

// A plan as a client sends it.
struct PlanSource {
  std::string text;         // the YAML
  std::string file;         // its name, for messages
  std::string switch_name;  // this switch's part of a fabric plan
  schedule::Algorithm algorithm = schedule::Algorithm::kOptimal;
};

// Microseconds per phase of a load (issue 8 benchmarks).
struct LoadTimes {
  uint64_t parse_us = 0;
  uint64_t compile_us = 0;
  uint64_t validate_us = 0;
  uint64_t write_us = 0;
  uint64_t readback_us = 0;
  uint64_t arm_us = 0;  // the desired state stored (the intent and its confirmation), the arm
  uint64_t wait_us = 0;
  uint64_t total_us = 0;
};

// A plan compiled and validated for this switch, not yet stored: every phase of its part.
struct CompiledPlan {
  state::v1::TdmPlan plan;
  std::vector<schedule::Problem> warnings;
  std::string compiled_yaml;  // compile(with_yaml): the plan with its patterns laid out
  LoadTimes times;            // parse, compile, validate
};

// Issue 11: a one-switch plan whose patterns name terminals, to compile for a multi-hop
// fabric (lib/fabric_schedule), and what that gives.
struct FabricCompileSource {
  PlanSource plan;
  std::string target;     // parse_target's text: "torus:8x8", "2dfb:1024:32", ...
  std::string algorithm;  // "" or default, greedy, coloring, aapc, combined, ...
  // The library's cap on default's search (its output depends on the counted effort, not on
  // this, unless the cap cuts it).
  std::chrono::milliseconds time_budget = fabric_schedule::Options{}.time_budget;
  uint64_t seed = 1;       // the default compiler's random choices
  bool with_yaml = false;  // also write the fabric plan as YAML (compiled_yaml)
};
struct CompiledFabric {
  std::string plan_name;
  std::string target_name;
  fabric_schedule::FabricProgram program;  // the fabric plan, per-phase reports, changes
  std::vector<schedule::Problem> warnings;
  std::string compiled_yaml;  // FabricCompileSource::with_yaml
  LoadTimes times;            // parse, compile, validate
};

struct LoadOutcome {
  state::v1::TdmPlan plan;
  std::string phase;
  std::vector<schedule::Problem> warnings;
  bool changed = false;
  uint64_t active_from_frame = 0;
  uint64_t program_id = 0;
  LoadTimes times;
  std::string status;
};

// The sequencer and the program in one bank, as the board has them.
struct BankProgram {
  bool present = false;
  std::string plan;  // names from the desired state, when the program id is known there
  std::string phase;
  state::v1::TdmPhase program;  // timing, id and (if asked) entries
  uint64_t frame_cycles = 0;
};

// The sequencer's registers, read in one batch.
struct Sequencer {
  bool enabled = false;
  bool running = false;
  bool armed = false;
  bool preempted = false;
  uint64_t frame = 0;
  uint64_t time = 0;
  uint64_t frame_start = 0;
  uint32_t current_slot = 0;
  uint64_t arm_at_frame = 0;
  uint64_t swap_frame = 0;
  uint64_t swap_time = 0;
  uint32_t swap_count = 0;
};

struct ScheduleView {
  BankProgram active;
  BankProgram staged;
  Sequencer sequencer;
  uint64_t clock_hz = 0;
  uint32_t ports = 0;
  uint32_t max_slots = 0;
  uint64_t revision = 0;
  std::string status;
};

struct StageOutcome {
  state::v1::TdmPlan plan;
  std::string phase;
  uint64_t program_id = 0;
  std::vector<schedule::Problem> warnings;
  bool running = false;
  uint64_t frame = 0;
  uint64_t time = 0;
  uint64_t frame_start = 0;
  uint64_t frame_cycles = 0;
  uint64_t clock_hz = 0;
};

struct ArmOutcome {
  uint64_t swap_frame = 0;
  uint64_t swap_time = 0;
  uint64_t arm_us = 0;   // the arm's register writes
  uint64_t wait_us = 0;  // from the arm to the swap
};

class TdmManager final : public Reconcilable {
 public:
  TdmManager(Device& device, const StateStore& store);

  std::string_view kind() const override { return "tdm"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  std::string drift() override;

  // Parses, compiles and validates; writes nothing. Throws asn::Error: kInvalidArgument for a
  // plan that is wrong (every message has file:line:column), kResourceExhausted for one that
  // does not fit the board (slots needed and available).
  // `with_yaml`: also writes the compiled plan back as YAML (compiled_yaml).
  CompiledPlan compile(const PlanSource& source, bool with_yaml = false) const;
  // Compiles the plan's patterns for a fabric and validates the fabric plan against this
  // board (every switch's part); writes nothing. Throws asn::Error kInvalidArgument for a
  // bad target, algorithm or plan (a fabric plan, a phase without a pattern, a terminal
  // outside the target), kResourceExhausted when a part does not fit the board.
  CompiledFabric compile_fabric(const FabricCompileSource& source) const;
  // Loads `phase` (the first when empty) of the plan and keeps the plan. Throws as compile(),
  // kNotFound for an unknown phase, kFailedPrecondition while a fabric-wide swap is armed,
  // kHardware when the inactive banks do not read back, kDeadlineExceeded when the board
  // does not swap in time. The active schedule keeps running on every error.
  LoadOutcome load(const PlanSource& source, const std::string& phase, bool validate_only);
  // Loads a phase of a kept plan; kNotFound for an unknown plan or phase.
  LoadOutcome activate(const std::string& name, const std::string& phase, bool validate_only);
  ScheduleView schedule(bool include_slots);
  std::vector<state::v1::TdmPlan> plans(std::string* active_plan, std::string* active_phase,
                                        uint64_t* revision) const;

  // The fabric-wide path: write and verify the inactive banks, not armed.
  StageOutcome stage(const PlanSource& source, const std::string& phase);
  // Arms the staged program for the start of `frame` and waits for the swap (`timeout`;
  // zero: 2 s past the frame's start). kFailedPrecondition when `program_id` is not what is
  // staged; kAborted when DiscardStaged cancelled it first.
  ArmOutcome arm_at_frame(uint64_t program_id, uint64_t frame, std::chrono::milliseconds timeout);
  // Forgets the staged program (0: whatever is staged) and disarms it if armed. Returns
  // whether there was one.
  bool discard_staged(uint64_t program_id);

 private:
  // How long past the expected swap asnd waits before it gives up and disarms.
  static constexpr std::chrono::seconds kSwapGrace{2};

  struct Staged {
    state::v1::TdmPlan plan;
    std::string phase;
    uint64_t program_id = 0;
    bool armed = false;
  };
  schedule::BoardLimits limits() const;
  // Parses, compiles (with source.algorithm) and validates the plan against the board;
  // `with_yaml`: also writes the compiled plan back as YAML.
  CompiledPlan prepare(const PlanSource& source, bool with_yaml) const;
  const state::v1::TdmPhase& find_phase(const state::v1::TdmPlan& plan,
                                        const std::string& phase) const;
  // Writes the program into the inactive banks and reads them back. Throws kHardware.
  void write_shadow(const state::v1::TdmPhase& program, LoadTimes& times);
  bool board_runs(const state::v1::TdmPhase& program);
  // What of the board is not `program` (named `what`) running: the engine disabled, the
  // active bank's timing or slots; board_runs() is its being empty.
  std::vector<std::string> differences(const state::v1::TdmPhase& program, std::string_view what);
  Sequencer read_sequencer();
  Sequencer read_sequencer_once(uint64_t& frame_after);
  // Arms the shadow banks for `frame` (0: the next boundary), then waits without the lock
  // for the swap. Returns the swap's frame and time; throws kAborted if disarmed meanwhile,
  // kDeadlineExceeded (after disarming) if the swap does not come in time.
  ArmOutcome arm_and_wait(std::unique_lock<std::mutex>& lock, uint64_t frame,
                          std::chrono::milliseconds timeout);
  void require_not_armed();
  // Stores `next` pending, programs `program` hitlessly, clears the mark.
  LoadOutcome change(std::unique_lock<std::mutex>& lock, const state::v1::TdmState& next,
                     const state::v1::TdmPhase& program, LoadTimes times);
  std::string reprogram(std::unique_lock<std::mutex>& lock, const state::v1::TdmState& doc);
  BankProgram read_bank(Bank bank, bool include_slots);
  // The plan and phase of the desired state that hold `program_id`.
  void name_program(BankProgram& bank) const;

  Device& device_;
  mutable std::mutex mutex_;
  DesiredState<state::v1::TdmState> state_;
  std::optional<Staged> staged_;
  bool changing_ = false;  // a swap is armed and a request waits for it (mutex_ released)
};

}  // namespace asn

#include "managers/tdm_manager.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "asn/regmap/regs.hpp"
#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "error.hpp"
#include "managers/stopwatch.hpp"
#include "managers/tdm_words.hpp"

namespace asn {

namespace t = regs::tdm;

namespace {

constexpr uint32_t kTdmSchema = 1;
using Clock = std::chrono::steady_clock;
constexpr auto kPollEvery = std::chrono::microseconds(200);

// `hint`: a line of asnd's own after the plan's problems ("" for none).
Error plan_error(const schedule::PlanError& e, const std::string& hint = "") {
  const ErrorCode code = e.kind() == schedule::ErrorKind::kResourceExhausted
                             ? ErrorCode::kResourceExhausted
                             : ErrorCode::kInvalidArgument;
  return Error(code,
               std::string(e.what()) + (hint.empty() ? "" : "\n" + hint) + "\nnothing was written");
}

// For a plan written for another board (its `board:`) that this one cannot run: the board
// it needs and, when asnd emulates the board, how to start asnd with that one.
std::string board_hint(const schedule::Plan& plan, const schedule::BoardLimits& board,
                       bool emulated) {
  if (plan.board.empty() || plan.board == board.board) return "";
  if (!emulated) {
    return fmt::format(
        "plan '{}' is for board {}, and this board is a {}: load it on a switch "
        "with that board, or write the plan for this one",
        plan.name, plan.board, board.board);
  }
  if (regmap::register_map().board(plan.board) == nullptr) {
    return fmt::format(
        "plan '{}' is for board {}, which asnd cannot emulate; this asnd "
        "emulates a {}",
        plan.name, plan.board, board.board);
  }
  return fmt::format(
      "plan '{}' is for board {}, and this asnd emulates a {}: start asnd with "
      "--profile {} (backend.emulated.profile in asnd.yaml) to load it",
      plan.name, plan.board, board.board, plan.board);
}

std::string plan_name(const schedule::Plan& plan, const std::string& file) {
  if (!plan.name.empty()) return plan.name;
  const std::string stem = std::filesystem::path(file).stem().string();
  return stem.empty() ? "plan" : stem;
}

std::string phase_names(const state::v1::TdmPlan& plan) {
  std::string names;
  for (const auto& phase : plan.phases()) names += (names.empty() ? "" : ", ") + phase.name();
  return names;
}

std::chrono::nanoseconds cycles_to_time(uint64_t cycles, uint64_t hz) {
  if (hz == 0) return std::chrono::nanoseconds(0);
  return std::chrono::nanoseconds(
      static_cast<int64_t>(static_cast<unsigned __int128>(cycles) * 1'000'000'000u / hz));
}

}  // namespace

TdmManager::TdmManager(Device& device, const StateStore& store)
    : device_(device), state_(store, "tdm", kTdmSchema) {}

schedule::BoardLimits TdmManager::limits() const {
  const auto layout = device_.layout();
  schedule::BoardLimits limits;
  // The profile, as plans name it (`board: emulated-64port`); a real board has none, and its
  // kind names it.
  limits.board = device_.bus().identity().profile;
  if (limits.board.empty()) limits.board = board_kind_name(layout->kind);
  limits.ports = layout->caps.get(regmap::Cap::kPorts);
  limits.slots = layout->caps.get(regmap::Cap::kTdmSlots);
  limits.clock_hz = layout->caps.get(regmap::Cap::kClockHz);
  return limits;
}

CompiledPlan TdmManager::compile(const PlanSource& source, bool with_yaml) const {
  return prepare(source, with_yaml);
}

CompiledPlan TdmManager::prepare(const PlanSource& source, bool with_yaml) const {
  CompiledPlan out;
  const std::string file = source.file.empty() ? "<plan>" : source.file;
  try {
    auto start = Clock::now();
    schedule::Plan plan = schedule::parse_plan(source.text, file);
    out.times.parse_us = micros_since(start);

    start = Clock::now();
    schedule::compile_plan(plan, {source.algorithm});
    out.times.compile_us = micros_since(start);

    start = Clock::now();
    if (plan.is_fabric() && std::find(plan.switches.begin(), plan.switches.end(),
                                      source.switch_name) == plan.switches.end()) {
      std::string names;
      for (const auto& s : plan.switches) names += (names.empty() ? "" : ", ") + s;
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("switch: '{}' is a fabric plan; name this switch's part ({}) with "
                              "--switch",
                              file, names));
    }
    const std::string switch_name = plan.is_fabric() ? source.switch_name : "";
    const schedule::BoardLimits board = limits();
    schedule::ValidateOptions options;
    if (plan.is_fabric()) options.switch_name = switch_name;
    const schedule::ValidationReport report = schedule::validate(plan, board, options);
    if (!report.ok()) {
      // The identity names a profile only on the emulated board.
      const bool emulated = !device_.bus().identity().profile.empty();
      throw plan_error(schedule::PlanError(report.errors(), report.error_count),
                       board_hint(plan, board, emulated));
    }
    out.warnings = report.warnings();

    out.plan.set_name(plan_name(plan, source.file));
    out.plan.set_file(source.file);
    out.plan.set_description(plan.description);
    out.plan.set_switch_name(switch_name);
    for (const schedule::Phase& phase : plan.phases) {
      const schedule::TdmProgram program =
          schedule::make_tdm_program(plan, phase.name, switch_name, board);
      const schedule::Part* part = phase.find_part(switch_name);
      *out.plan.add_phases() =
          tdm_words::to_record(program, phase.description, part ? part->summary : std::nullopt);
    }
    out.times.validate_us = micros_since(start);
    if (with_yaml) out.compiled_yaml = schedule::format_plan(plan);
  } catch (const schedule::PlanError& e) {
    throw plan_error(e);
  }
  return out;
}

const state::v1::TdmPhase& TdmManager::find_phase(const state::v1::TdmPlan& plan,
                                                  const std::string& phase) const {
  if (plan.phases().empty()) {
    throw Error(ErrorCode::kInvalidArgument, fmt::format("plan '{}' has no phases", plan.name()));
  }
  if (phase.empty()) return plan.phases(0);
  for (const auto& p : plan.phases()) {
    if (p.name() == phase) return p;
  }
  throw Error(ErrorCode::kNotFound, fmt::format("phase: plan '{}' has no phase '{}' (phases: {})",
                                                plan.name(), phase, phase_names(plan)));
}

void TdmManager::write_shadow(const state::v1::TdmPhase& program, LoadTimes& times) {
  auto start = Clock::now();
  const std::vector<uint32_t> slots = tdm_words::slot_words(program);
  const std::vector<uint32_t> timing = tdm_words::timing_words(program);
  // The slot table first: the timing (with the program id) last, so a bank half written
  // never carries the id of a whole program.
  device_.write_entries(t::kSlotTable, 0, slots);
  device_.write_entries(t::kTiming, 0, timing);
  times.write_us = micros_since(start);

  start = Clock::now();
  const auto check = [&](const regmap::TableRef& table, const char* name,
                         const std::vector<uint32_t>& words) {
    const uint32_t count = static_cast<uint32_t>(words.size() / table.words());
    const std::vector<uint32_t> back = device_.read_entries(table, 0, count, Bank::kShadow);
    for (size_t w = 0; w < back.size(); ++w) {
      if (back[w] == words[w]) continue;
      throw Error(ErrorCode::kHardware,
                  fmt::format("tdm.{}[{}] word {} of the inactive bank reads back 0x{:x}, not the "
                              "0x{:x} written; nothing was armed and the active schedule keeps "
                              "running",
                              name, w / table.words(), w % table.words(), back[w], words[w]));
    }
  };
  check(t::kSlotTable, "slot_table", slots);
  check(t::kTiming, "timing", timing);
  times.readback_us = micros_since(start);
}

std::vector<std::string> TdmManager::differences(const state::v1::TdmPhase& program,
                                                 std::string_view what) {
  std::vector<std::string> out;
  if (device_.read(t::kConfigEnable) == 0) out.push_back("tdm.config.enable is 0");
  const std::vector<uint32_t> slots = tdm_words::slot_words(program);
  const uint32_t count = static_cast<uint32_t>(slots.size() / t::kSlotTable.words());
  if (device_.read_entries(t::kTiming, 0, 1, Bank::kActive) != tdm_words::timing_words(program) ||
      device_.read_entries(t::kSlotTable, 0, count, Bank::kActive) != slots) {
    out.push_back(
        fmt::format("the active bank is not {} (`asnctl schedule show --slots` shows "
                    "what the board runs)",
                    what));
  }
  return out;
}

bool TdmManager::board_runs(const state::v1::TdmPhase& program) {
  return differences(program, "").empty();
}

// The registers of one moment: the frame counter is read first and again last, and the batch
// read again when a frame boundary passed between the two (the board's counters run while
// it is read; frame and frame_start from either side of a boundary would disagree).
Sequencer TdmManager::read_sequencer() {
  constexpr int kAttempts = 8;
  Sequencer s;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    uint64_t frame_after = 0;
    s = read_sequencer_once(frame_after);
    if (s.frame == frame_after) break;
  }
  return s;
}

Sequencer TdmManager::read_sequencer_once(uint64_t& frame_after) {
  Device::ReadBatch batch;
  const size_t status = batch.add(t::kStatus);
  const size_t enable = batch.add(t::kConfigEnable);
  const size_t frame = batch.add64(t::kFrameCounter);
  const size_t time = batch.add64(t::kTime);
  const size_t frame_start = batch.add64(t::kFrameStart);
  const size_t slot = batch.add(t::kCurrentSlotSlot);
  const size_t arm_lo = batch.add(t::kArmAtFrameLo);
  const size_t arm_hi = batch.add(t::kArmAtFrameHi);
  const size_t swap_frame = batch.add64(t::kSwapFrame);
  const size_t swap_time = batch.add64(t::kSwapTime);
  const size_t swaps = batch.add(t::kSwapCount);
  const size_t frame_again = batch.add64(t::kFrameCounter);
  device_.read(batch);
  frame_after = batch[frame_again];
  Sequencer s;
  const auto word = static_cast<uint32_t>(batch[status]);
  s.running = t::kStatusRunning.get(word) != 0;
  s.armed = t::kStatusArmed.get(word) != 0;
  s.preempted = t::kStatusPreempted.get(word) != 0;
  s.enabled = batch[enable] != 0;
  s.frame = batch[frame];
  s.time = batch[time];
  s.frame_start = batch[frame_start];
  s.current_slot = static_cast<uint32_t>(batch[slot]);
  s.arm_at_frame = (batch[arm_hi] << 32) | batch[arm_lo];
  s.swap_frame = batch[swap_frame];
  s.swap_time = batch[swap_time];
  s.swap_count = static_cast<uint32_t>(batch[swaps]);
  return s;
}

void TdmManager::require_not_armed() {
  if (changing_) {
    throw Error(ErrorCode::kFailedPrecondition,
                "a schedule change is in progress (a swap is armed and asnd waits for it); try "
                "again when it is done");
  }
  if (device_.read(t::kStatusArmed) != 0) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("a swap is armed on the board for frame {}; wait for it, or cancel "
                            "it (DiscardStaged)",
                            (uint64_t{device_.read(t::kArmAtFrameHi)} << 32) |
                                device_.read(t::kArmAtFrameLo)));
  }
}

ArmOutcome TdmManager::arm_and_wait(std::unique_lock<std::mutex>& lock, uint64_t frame,
                                    std::chrono::milliseconds timeout) {
  const auto arm_start = Clock::now();
  const uint32_t before = device_.read(t::kSwapCount);
  device_.write(t::kArmAtFrameLo, static_cast<uint32_t>(frame));
  device_.write(t::kArmAtFrameHi, static_cast<uint32_t>(frame >> 32));
  device_.write(t::kControl, t::kControlArm.mask());

  const auto start = Clock::now();
  const auto deadline = start + timeout;
  const uint64_t arm_us = micros_since(arm_start);
  enum class Ended { kSwapped, kDisarmed, kTimedOut } ended = Ended::kTimedOut;
  changing_ = true;
  lock.unlock();  // DiscardStaged may cancel meanwhile; readers go on
  while (Clock::now() < deadline) {
    Device::ReadBatch batch;
    const size_t armed = batch.add(t::kStatusArmed);
    const size_t swaps = batch.add(t::kSwapCount);
    device_.read(batch);
    if (static_cast<uint32_t>(batch[swaps]) != before) {
      ended = Ended::kSwapped;
      break;
    }
    if (batch[armed] == 0) {
      ended = Ended::kDisarmed;
      break;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  lock.lock();
  changing_ = false;
  ArmOutcome outcome;
  outcome.arm_us = arm_us;
  outcome.wait_us = micros_since(start);
  if (ended == Ended::kTimedOut) {
    device_.write(t::kControl, t::kControlDisarm.mask());
    if (device_.read(t::kSwapCount) == before) {
      throw Error(ErrorCode::kDeadlineExceeded,
                  fmt::format("the board did not swap to the new schedule within {} ms (frame "
                              "{}); the swap was cancelled and the active schedule keeps running",
                              timeout.count(), frame));
    }
  } else if (ended == Ended::kDisarmed) {
    throw Error(ErrorCode::kAborted,
                "the armed swap was cancelled (DiscardStaged) before it happened; the active "
                "schedule keeps running");
  }
  outcome.swap_frame = device_.read64(t::kSwapFrame);
  outcome.swap_time = device_.read64(t::kSwapTime);
  return outcome;
}

LoadOutcome TdmManager::change(std::unique_lock<std::mutex>& lock, const state::v1::TdmState& next,
                               const state::v1::TdmPhase& program, LoadTimes times) {
  LoadOutcome outcome;
  const Sequencer before = read_sequencer();
  auto start = Clock::now();
  state_.begin(next);  // the intent, before the first write
  uint64_t store_us = micros_since(start);
  try {
    write_shadow(program, times);
    const uint64_t frame = tdm_words::frame_cycles(
        tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, Bank::kActive)));
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        cycles_to_time(frame, limits().clock_hz) + kSwapGrace);
    const ArmOutcome armed = arm_and_wait(lock, 0, timeout);
    times.arm_us = armed.arm_us;
    times.wait_us = armed.wait_us;
    outcome.active_from_frame = armed.swap_frame;
    if (!before.enabled) {
      // A stopped sequencer swapped at once; started now, it numbers its frames from the
      // time base, and the new schedule runs from the frame it starts in.
      device_.write(t::kConfigEnable, 1);
      outcome.active_from_frame = device_.read64(t::kFrameCounter);
    }
  } catch (const Error&) {
    state_.rollback();
    throw;
  }
  start = Clock::now();
  state_.commit();
  store_us += micros_since(start);
  times.arm_us += store_us;  // LoadTimes.arm_us: the desired state stored, and the arm
  outcome.changed = true;
  outcome.program_id = program.program_id();
  outcome.times = times;
  return outcome;
}

LoadOutcome TdmManager::load(const PlanSource& source, const std::string& phase,
                             bool validate_only) {
  const auto start = Clock::now();
  CompiledPlan compiled = prepare(source, false);
  const state::v1::TdmPhase& program = find_phase(compiled.plan, phase);
  LoadOutcome outcome;
  if (!validate_only) {
    std::unique_lock lock(mutex_);
    state_.require_usable();
    require_not_armed();
    state::v1::TdmState next = state_.doc().value_or(state::v1::TdmState());
    (*next.mutable_plans())[compiled.plan.name()] = compiled.plan;
    next.set_active_plan(compiled.plan.name());
    next.set_active_phase(program.name());
    const bool same = state_.doc() && state_.doc()->SerializeAsString() == next.SerializeAsString();
    if (!same || !board_runs(program)) {
      outcome = change(lock, next, program, compiled.times);
    } else {
      outcome.times = compiled.times;
    }
    outcome.status = outcome.changed ? "loaded" : "the board already runs this schedule";
  } else {
    outcome.times = compiled.times;
    outcome.status = "checked, nothing written (validate only)";
  }
  outcome.plan = std::move(compiled.plan);
  outcome.phase = program.name();
  outcome.program_id = program.program_id();
  outcome.warnings = std::move(compiled.warnings);
  outcome.times.total_us = micros_since(start);
  return outcome;
}

LoadOutcome TdmManager::activate(const std::string& name, const std::string& phase,
                                 bool validate_only) {
  const auto start = Clock::now();
  std::unique_lock lock(mutex_);
  state_.require_usable();
  state::v1::TdmState next = state_.doc().value_or(state::v1::TdmState());
  const auto found = next.plans().find(name);
  if (found == next.plans().end()) {
    std::vector<std::string> kept;
    for (const auto& [plan_name, plan] : next.plans()) kept.push_back(plan_name);
    std::sort(kept.begin(), kept.end());
    std::string names;
    for (const auto& n : kept) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorCode::kNotFound,
                fmt::format("plan: asnd keeps no plan '{}' ({}); load it first (asnctl "
                            "load-schedule FILE)",
                            name, names.empty() ? "it keeps none" : "it keeps " + names));
  }
  const state::v1::TdmPlan plan = found->second;
  const state::v1::TdmPhase& program = find_phase(plan, phase);
  LoadOutcome outcome;
  outcome.status = "checked, nothing written (validate only)";
  if (!validate_only) {
    require_not_armed();
    next.set_active_plan(name);
    next.set_active_phase(program.name());
    if (board_runs(program) && state_.doc() &&
        state_.doc()->SerializeAsString() == next.SerializeAsString()) {
      outcome.status = "the board already runs this schedule";
    } else {
      outcome = change(lock, next, program, {});
      outcome.status = "activated";
    }
  }
  outcome.plan = plan;
  outcome.phase = program.name();
  outcome.program_id = program.program_id();
  outcome.times.total_us = micros_since(start);
  return outcome;
}

std::string TdmManager::reprogram(std::unique_lock<std::mutex>& lock,
                                  const state::v1::TdmState& doc) {
  if (doc.active_plan().empty()) return "no schedule active; the board is left as it is";
  const auto found = doc.plans().find(doc.active_plan());
  if (found == doc.plans().end()) {
    throw Error(ErrorCode::kInternal,
                fmt::format("the stored state names plan '{}' active but keeps no such plan",
                            doc.active_plan()));
  }
  const state::v1::TdmPhase& program = find_phase(found->second, doc.active_phase());
  const std::string what = fmt::format("plan '{}' phase '{}'", doc.active_plan(), program.name());
  if (board_runs(program)) return "the board already runs " + what;
  if (device_.read(t::kStatusArmed) != 0) device_.write(t::kControl, t::kControlDisarm.mask());
  const bool enabled = device_.read(t::kConfigEnable) != 0;
  LoadTimes times;
  write_shadow(program, times);
  const uint64_t frame = tdm_words::frame_cycles(
      tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, Bank::kActive)));
  arm_and_wait(lock, 0,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   cycles_to_time(frame, limits().clock_hz) + kSwapGrace));
  if (!enabled) device_.write(t::kConfigEnable, 1);
  return "loaded " + what;
}

std::string TdmManager::drift() {
  std::lock_guard lock(mutex_);
  // While a swap is armed the active bank is about to change; its request reports.
  if (!state_.doc() || state_.doc()->active_plan().empty() || changing_) return "";
  const state::v1::TdmState& doc = *state_.doc();
  const auto found = doc.plans().find(doc.active_plan());
  if (found == doc.plans().end()) return "";  // reconcile() says so, as a restore failure
  const state::v1::TdmPhase& program = find_phase(found->second, doc.active_phase());
  return fmt::format(
      "{}", fmt::join(differences(program, fmt::format("plan '{}' phase '{}'", doc.active_plan(),
                                                       program.name())),
                      "; "));
}

std::string TdmManager::reconcile(ReconcileCause cause) {
  std::unique_lock lock(mutex_);
  staged_.reset();  // a board reset lost the banks; a new asnd never staged anything
  return state_.reconcile(cause,
                          [&](const state::v1::TdmState& doc) { return reprogram(lock, doc); });
}

BankProgram TdmManager::read_bank(Bank bank, bool include_slots) {
  BankProgram out;
  out.program = tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, bank));
  out.present = out.program.program_id() != 0 || out.program.slots() != 0;
  out.frame_cycles = tdm_words::frame_cycles(out.program);
  if (include_slots && out.program.slots() != 0) {
    const uint32_t slots = std::min(out.program.slots(), device_.entries(t::kSlotTable));
    out.program.set_entries(
        tdm_words::decode_slots(device_.read_entries(t::kSlotTable, 0, slots, bank)));
  }
  return out;
}

void TdmManager::name_program(BankProgram& bank) const {
  if (!state_.doc() || !bank.present) return;
  const state::v1::TdmState& doc = *state_.doc();
  // The active plan first: a phase kept in two plans is named by the one that runs.
  const auto named = [&](const state::v1::TdmPlan& plan) {
    for (const auto& phase : plan.phases()) {
      if (phase.program_id() != bank.program.program_id()) continue;
      bank.plan = plan.name();
      bank.phase = phase.name();
      return true;
    }
    return false;
  };
  if (const auto active = doc.plans().find(doc.active_plan());
      active != doc.plans().end() && named(active->second)) {
    return;
  }
  for (const auto& [name, plan] : doc.plans()) {
    if (named(plan)) return;
  }
}

ScheduleView TdmManager::schedule(bool include_slots) {
  ScheduleView view;
  view.sequencer = read_sequencer();
  const Sequencer& s = view.sequencer;
  const schedule::BoardLimits board = limits();
  view.clock_hz = board.clock_hz;
  view.ports = board.ports;
  view.max_slots = board.slots;
  view.active = read_bank(Bank::kActive, include_slots);

  std::lock_guard lock(mutex_);
  if (staged_ || s.armed) {
    view.staged = read_bank(Bank::kShadow, include_slots);
    if (staged_) {
      view.staged.plan = staged_->plan.name();
      view.staged.phase = staged_->phase;
    } else {
      name_program(view.staged);
    }
  }
  name_program(view.active);
  view.revision = state_.revision();
  view.status = state_.status();
  return view;
}

std::vector<state::v1::TdmPlan> TdmManager::plans(std::string* active_plan,
                                                  std::string* active_phase,
                                                  uint64_t* revision) const {
  std::lock_guard lock(mutex_);
  std::vector<state::v1::TdmPlan> plans;
  if (revision) *revision = state_.revision();
  if (!state_.doc()) return plans;
  for (const auto& [name, plan] : state_.doc()->plans()) plans.push_back(plan);
  std::sort(plans.begin(), plans.end(),
            [](const auto& a, const auto& b) { return a.name() < b.name(); });
  if (active_plan) *active_plan = state_.doc()->active_plan();
  if (active_phase) *active_phase = state_.doc()->active_phase();
  return plans;
}

ManagerSummary TdmManager::summary() const {
  std::lock_guard lock(mutex_);
  return state_.summary("tdm");
}

}  // namespace asn

// The fabric-wide path of the TDM manager (issue 8 part 7): stage a program in the inactive
// banks, arm it for a frame a coordinator chose for every switch, or discard it. Boards of
// one fabric share a time base (PTP on hardware; the host's clock for emulated boards), and
// a sequencer numbers its frames from it, so frame F starts at the same instant on every
// switch that runs the same frame length.
#include <fmt/format.h>

#include "error.hpp"
#include "managers/tdm_manager.hpp"
#include "managers/tdm_words.hpp"

namespace asn {

namespace t = regs::tdm;

namespace {

using Clock = std::chrono::steady_clock;
// A coordinator chooses a frame tens of milliseconds ahead; a frame a minute away is a
// mistake, and would hold the TDM manager that long.
constexpr auto kMaxArmAhead = std::chrono::seconds(60);

}  // namespace

StageOutcome TdmManager::stage(const PlanSource& source, const std::string& phase) {
  CompiledPlan compiled = prepare(source, false);
  const state::v1::TdmPhase& program = find_phase(compiled.plan, phase);
  std::unique_lock lock(mutex_);
  state_.require_usable();
  require_not_armed();
  LoadTimes times;
  write_shadow(program, times);
  staged_ = Staged{compiled.plan, program.name(), program.program_id(), false};

  StageOutcome outcome;
  outcome.plan = std::move(compiled.plan);
  outcome.phase = program.name();
  outcome.program_id = program.program_id();
  outcome.warnings = std::move(compiled.warnings);
  const Sequencer s = read_sequencer();
  outcome.running = s.running;
  outcome.frame = s.frame;
  outcome.time = s.time;
  outcome.frame_start = s.frame_start;
  outcome.frame_cycles = tdm_words::frame_cycles(
      tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, Bank::kActive)));
  outcome.clock_hz = limits().clock_hz;
  return outcome;
}

ArmOutcome TdmManager::arm_at_frame(uint64_t program_id, uint64_t frame,
                                    std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  state_.require_usable();
  if (!staged_ || staged_->program_id != program_id) {
    throw Error(ErrorCode::kFailedPrecondition,
                staged_ ? fmt::format("program {:016x} is not staged here (staged: {:016x} of "
                                      "plan '{}'); stage it first (StagePlan)",
                                      program_id, staged_->program_id, staged_->plan.name())
                        : fmt::format("program {:016x} is not staged here (nothing is); stage "
                                      "it first (StagePlan)",
                                      program_id));
  }
  require_not_armed();
  const auto shadow =
      tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, Bank::kShadow));
  if (shadow.program_id() != program_id) {
    staged_.reset();
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the inactive bank no longer holds program {:016x} (someone wrote "
                            "it since); stage it again",
                            program_id));
  }
  const Sequencer s = read_sequencer();
  const uint64_t hz = limits().clock_hz;
  auto ahead = std::chrono::nanoseconds(0);
  if (s.running) {
    if (frame != 0 && frame <= s.frame) {
      throw Error(ErrorCode::kFailedPrecondition,
                  fmt::format("frame: frame {} has begun already (the board is at frame {}); "
                              "choose a later one",
                              frame, s.frame));
    }
    const uint64_t length = tdm_words::frame_cycles(
        tdm_words::decode_timing(device_.read_entries(t::kTiming, 0, 1, Bank::kActive)));
    const uint64_t frames = frame == 0 ? 1 : frame - s.frame;
    const auto cycles = static_cast<unsigned __int128>(frames) * length;
    ahead = std::chrono::nanoseconds(static_cast<int64_t>(
        std::min<unsigned __int128>(cycles * 1'000'000'000u / (hz ? hz : 1), INT64_MAX)));
    if (ahead > kMaxArmAhead) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("frame: frame {} starts in about {} s; a swap is armed at most {} s "
                              "ahead",
                              frame, ahead.count() / 1'000'000'000, kMaxArmAhead.count()));
    }
  }
  if (timeout.count() == 0) {
    timeout = std::chrono::duration_cast<std::chrono::milliseconds>(ahead + kSwapGrace);
  }

  state::v1::TdmState next = state_.doc().value_or(state::v1::TdmState());
  (*next.mutable_plans())[staged_->plan.name()] = staged_->plan;
  next.set_active_plan(staged_->plan.name());
  next.set_active_phase(staged_->phase);
  state_.begin(next);
  staged_->armed = true;
  ArmOutcome outcome;
  try {
    outcome = arm_and_wait(lock, frame, timeout);
  } catch (const Error&) {
    state_.rollback();
    staged_.reset();
    throw;
  }
  staged_.reset();
  if (!s.enabled) {
    // A stopped sequencer swapped at once; started now, the program runs from the frame of
    // its time grid that is under way.
    device_.write(t::kConfigEnable, 1);
    outcome.swap_frame = device_.read64(t::kFrameCounter);
    outcome.swap_time = device_.read64(t::kTime);
  }
  state_.commit();
  return outcome;
}

bool TdmManager::discard_staged(uint64_t program_id) {
  std::lock_guard lock(mutex_);
  if (!staged_ || (program_id != 0 && program_id != staged_->program_id)) return false;
  if (staged_->armed) {
    // The waiting ArmAtFrame sees the disarm, rolls its change back and clears staged_.
    device_.write(t::kControl, t::kControlDisarm.mask());
  } else {
    staged_.reset();
  }
  return true;
}

}  // namespace asn

#include "fabric/activation_agent.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "error.hpp"

namespace asn {

namespace {

using fabric::v1::Activation;
using fabric::v1::ActivationReport;

// "CODE: message", as asnctl shows a failed gRPC call of the direct path.
std::string describe(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) {
    return fmt::format("{}: {}", code_name(error->code()), error->what());
  }
  return fmt::format("INTERNAL: {}", e.what());
}

bool names(const Activation& activation, const std::string& switch_name) {
  const auto& s = activation.switches();
  return std::find(s.begin(), s.end(), switch_name) != s.end();
}

}  // namespace

ActivationAgent::ActivationAgent(const FabricConfig& config, etcd::Client& client, TdmManager& tdm)
    : config_(config),
      client_(client),
      tdm_(tdm),
      key_(fabric::activation_key(config.etcd.prefix, config.name)),
      report_key_(
          fabric::activation_report_key(config.etcd.prefix, config.name, config.switch_name)) {}

ActivationAgent::~ActivationAgent() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  join_arm();
}

void ActivationAgent::stop() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
}

void ActivationAgent::on_value(const std::string& value, int64_t revision) {
  if (value.empty()) return;
  Activation activation;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer asnctl may say more; the steps are these
  if (!google::protobuf::util::JsonStringToMessage(value, &activation, options).ok() ||
      activation.id().empty()) {
    spdlog::warn("fabric: the activation at {} (revision {}) is not one this asnd can read", key_,
                 revision);
    return;
  }
  std::string current;
  Part part;
  {
    std::lock_guard lock(mutex_);
    current = id_;
    part = part_;
  }
  if (activation.id() != current) {
    begin(activation);
    part = Part::kNone;
  }
  if (!names(activation, config_.switch_name)) return;
  if (part == Part::kNone && fabric::now_unix_ms() > activation.deadline_unix_ms()) {
    // Seen too late (asnd started or etcd returned after the load): asnctl gave up on it.
    std::lock_guard lock(mutex_);
    part_ = Part::kFinished;
    return;
  }
  const std::string& step = activation.step();
  if (step == "stage" && part == Part::kNone) {
    stage(activation);
  } else if (step == "arm" && part == Part::kStaged) {
    arm(activation);
  } else if (step == "arm" && part == Part::kNone) {
    {
      std::lock_guard lock(mutex_);
      part_ = Part::kFinished;
    }
    report(restarted_in(activation), activation.deadline_unix_ms());
  } else if (step == "abort") {
    abort();
  }
}

ActivationReport ActivationAgent::restarted_in(const Activation& activation) {
  ActivationReport r;
  r.set_id(activation.id());
  // asnd (re)started after the stage step: it swapped before the restart if the board runs
  // the activation's program; otherwise it has nothing staged to arm.
  try {
    const CompiledPlan compiled = tdm_.compile(source_of(activation));
    const ScheduleView view = tdm_.schedule(false);
    for (const auto& phase : compiled.plan.phases()) {
      if (phase.name() != activation.phase() || !view.active.present ||
          view.active.program.program_id() != phase.program_id()) {
        continue;
      }
      r.set_step("swapped");
      r.set_program_id(phase.program_id());
      r.set_swap_frame(view.sequencer.swap_frame);
      r.set_swap_time(view.sequencer.swap_time);
      return r;
    }
  } catch (const std::exception& e) {
    spdlog::warn("fabric: activation {}: {}", activation.id(), e.what());
  }
  r.set_step("arm-failed");
  r.set_error(fmt::format(
      "FAILED_PRECONDITION: switch {} has nothing staged for activation {} (asnd started after "
      "the stage step)",
      config_.switch_name, activation.id()));
  return r;
}

void ActivationAgent::begin(const Activation& activation) {
  Part part;
  uint64_t program_id;
  std::string replaced;
  {
    std::lock_guard lock(mutex_);
    part = part_;
    program_id = program_id_;
    replaced = id_;
    aborted_ = true;  // an arm of the one replaced reports "disarmed"
  }
  if (part == Part::kStaged || part == Part::kArming) {
    // Its asnctl can no longer arm or abort it: the activation key is not its own any more.
    if (tdm_.discard_staged(program_id)) {
      spdlog::info("fabric: activation {} replaced by {}: program {:016x} discarded", replaced,
                   activation.id(), program_id);
    }
  }
  join_arm();
  std::lock_guard lock(mutex_);
  id_ = activation.id();
  deadline_unix_ms_ = activation.deadline_unix_ms();
  part_ = Part::kNone;
  program_id_ = 0;
  aborted_ = false;
}

PlanSource ActivationAgent::source_of(const Activation& activation) const {
  PlanSource source;
  source.text = activation.plan_text();
  source.file = activation.plan_file();
  source.switch_name = config_.switch_name;
  source.algorithm =
      schedule::parse_algorithm(activation.algorithm()).value_or(schedule::Algorithm::kOptimal);
  return source;
}

void ActivationAgent::stage(const Activation& activation) {
  const PlanSource source = source_of(activation);
  ActivationReport r;
  r.set_id(activation.id());
  try {
    const StageOutcome o = tdm_.stage(source, activation.phase());
    r.set_step("staged");
    r.set_program_id(o.program_id);
    for (const auto& w : o.warnings) r.add_warnings(w.to_string());
    r.set_running(o.running);
    r.set_frame(o.frame);
    r.set_time(o.time);
    r.set_frame_start(o.frame_start);
    r.set_frame_cycles(o.frame_cycles);
    r.set_clock_hz(o.clock_hz);
    spdlog::info("fabric: activation {} by {}: plan '{}' phase '{}' staged (program {:016x})",
                 activation.id(), activation.by(), o.plan.name(), o.phase, o.program_id);
    std::lock_guard lock(mutex_);
    program_id_ = o.program_id;
    part_ = Part::kStaged;
  } catch (const std::exception& e) {
    r.set_step("stage-failed");
    r.set_error(describe(e));
    spdlog::warn("fabric: activation {}: staging refused: {}", activation.id(), e.what());
    std::lock_guard lock(mutex_);
    part_ = Part::kFinished;
  }
  r.set_reported_unix_ms(fabric::now_unix_ms());
  report(std::move(r), activation.deadline_unix_ms());
}

void ActivationAgent::arm(const Activation& activation) {
  const auto frame = activation.frames().find(config_.switch_name);
  uint64_t program_id;
  {
    std::lock_guard lock(mutex_);
    program_id = program_id_;
    part_ = Part::kArming;
  }
  join_arm();  // the arm of an earlier activation, long finished
  const std::string id = activation.id();
  const int64_t deadline = activation.deadline_unix_ms();
  const bool has_frame = frame != activation.frames().end();
  const uint64_t at = has_frame ? frame->second : 0;
  arm_thread_ = std::thread([this, id, deadline, program_id, has_frame, at] {
    ActivationReport r;
    try {
      if (!has_frame) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("activation {} gives switch {} no frame", id, config_.switch_name));
      }
      // Zero: wait until 2 s past the frame's start, as ArmAtFrame with timeout_ms 0.
      const ArmOutcome o = tdm_.arm_at_frame(program_id, at, std::chrono::milliseconds::zero());
      r.set_step("swapped");
      r.set_swap_frame(o.swap_frame);
      r.set_swap_time(o.swap_time);
      r.set_wait_us(o.wait_us);
      spdlog::info("fabric: activation {}: program {:016x} active from frame {}", id, program_id,
                   o.swap_frame);
    } catch (const std::exception& e) {
      bool aborted;
      {
        std::lock_guard lock(mutex_);
        aborted = aborted_;
      }
      const auto* error = dynamic_cast<const Error*>(&e);
      aborted = aborted || (error != nullptr && error->code() == ErrorCode::kAborted);
      r.set_step(aborted ? "disarmed" : "arm-failed");
      r.set_error(aborted ? std::string() : describe(e));
      spdlog::log(aborted ? spdlog::level::info : spdlog::level::warn, "fabric: activation {}: {}",
                  id, aborted ? "disarmed" : e.what());
    }
    {
      std::lock_guard lock(mutex_);
      if (id_ == id) part_ = Part::kFinished;
    }
    r.set_id(id);
    r.set_reported_unix_ms(fabric::now_unix_ms());
    report(std::move(r), deadline);
  });
}

void ActivationAgent::abort() {
  Part part;
  uint64_t program_id;
  int64_t deadline;
  std::string id;
  {
    std::lock_guard lock(mutex_);
    id = id_;
    part = part_;
    program_id = program_id_;
    deadline = deadline_unix_ms_;
    aborted_ = true;
    if (part_ == Part::kStaged) part_ = Part::kFinished;
  }
  if (part != Part::kStaged && part != Part::kArming) return;
  // Armed: the arm thread's wait ends (kAborted) and it reports "disarmed"; or it swapped
  // already, and reports that.
  const bool discarded = tdm_.discard_staged(program_id);
  spdlog::info("fabric: activation {} aborted: program {:016x} {}", id, program_id,
               discarded ? "discarded" : "was not staged any more");
  if (part == Part::kStaged) {
    ActivationReport r;
    r.set_step("discarded");
    r.set_program_id(program_id);
    r.set_reported_unix_ms(fabric::now_unix_ms());
    report(std::move(r), deadline);
  }
}

void ActivationAgent::report(ActivationReport r, int64_t deadline_unix_ms) {
  {
    std::lock_guard lock(mutex_);
    if (r.id().empty()) r.set_id(id_);
  }
  r.set_switch_name(config_.switch_name);
  const std::string json = fabric::to_json(r);
  for (;;) {
    try {
      client_.put(etcd::Put{report_key_, json});
      return;
    } catch (const etcd::Error& e) {
      bool stopping;
      {
        std::lock_guard lock(mutex_);
        stopping = stopping_;
      }
      if (stopping || fabric::now_unix_ms() > deadline_unix_ms) {
        spdlog::warn("fabric: activation {}: the report '{}' could not be written: {}", r.id(),
                     r.step(), e.what());
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void ActivationAgent::join_arm() {
  if (arm_thread_.joinable()) arm_thread_.join();
}

}  // namespace asn

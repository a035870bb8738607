#include "services/tdm_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asn/schedule/plan_file.hpp"
#include "managers/tdm_words.hpp"
#include "services/grpc_status.hpp"

namespace asn {

namespace {

// Plan text beyond this is refused before it is parsed (the parser's own limit).
constexpr size_t kMaxPlanBytes = schedule::ParseLimits{}.max_file_bytes;

PlanSource source_of(const v1::PlanSource& in) {
  if (in.text().size() > kMaxPlanBytes) {
    throw Error(
        ErrorCode::kInvalidArgument,
        fmt::format("plan: {} is {} bytes; a plan file may have at most {} (write large "
                    "patterns with generators)",
                    in.file().empty() ? "the plan" : in.file(), in.text().size(), kMaxPlanBytes));
  }
  PlanSource source;
  source.text = in.text();
  source.file = in.file();
  source.switch_name = in.switch_name();
  switch (in.algorithm()) {
    case v1::COMPILE_ALGORITHM_UNSPECIFIED:
    case v1::OPTIMAL:
      source.algorithm = schedule::Algorithm::kOptimal;
      break;
    case v1::GREEDY:
      source.algorithm = schedule::Algorithm::kGreedy;
      break;
    default:
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("algorithm: {} is not one of optimal, greedy",
                              static_cast<int>(in.algorithm())));
  }
  return source;
}

void fill(const schedule::Problem& problem, v1::PlanProblem* out) {
  out->set_warning(problem.severity == schedule::Severity::kWarning);
  out->set_file(problem.file);
  out->set_line(problem.mark.line);
  out->set_column(problem.mark.column);
  out->set_phase(problem.phase);
  out->set_switch_name(problem.switch_name);
  out->set_slot(problem.slot ? static_cast<int64_t>(*problem.slot) : -1);
  out->set_port(problem.port ? static_cast<int64_t>(*problem.port) : -1);
  out->set_message(problem.message);
  out->set_text(problem.to_string());
}

void fill(const state::v1::TdmPhase& phase, v1::PhaseSummary* out) {
  out->set_phase(phase.name());
  out->set_description(phase.description());
  out->set_connections(phase.connections());
  out->set_slots(phase.slots());
  out->set_lower_bound(phase.lower_bound());
  out->set_ports_in_use(phase.ports_in_use());
  const uint64_t capacity = uint64_t{phase.slots()} * phase.ports_in_use();
  out->set_utilisation(capacity == 0 ? 0.0
                                     : static_cast<double>(phase.connections()) /
                                           static_cast<double>(capacity));
  out->set_method(phase.method().empty() ? "explicit" : phase.method());
  out->set_policy(tdm_words::policy_name(phase.policy()));
  out->set_wormhole(phase.wormhole());
  out->set_frame_cycles(tdm_words::frame_cycles(phase));
  out->set_line(
      fmt::format("{}: {} connections in {} slots (lower bound {}{}), {} ports, "
                  "utilisation {:.1f}%, {}, policy {}",
                  phase.name(), phase.connections(), phase.slots(), phase.lower_bound(),
                  phase.slots() == phase.lower_bound() ? ": optimal" : "", phase.ports_in_use(),
                  100.0 * out->utilisation(), out->method(), out->policy()));
}

template <typename Summaries>
void fill_phases(const state::v1::TdmPlan& plan, Summaries* out) {
  for (const auto& phase : plan.phases()) fill(phase, out->Add());
}

void fill(const LoadOutcome& outcome, v1::LoadScheduleResponse* out) {
  out->set_plan(outcome.plan.name());
  out->set_phase(outcome.phase);
  fill_phases(outcome.plan, out->mutable_phases());
  for (const auto& w : outcome.warnings) fill(w, out->add_warnings());
  out->set_changed(outcome.changed);
  out->set_active_from_frame(outcome.active_from_frame);
  out->set_program_id(outcome.program_id);
  out->set_status(outcome.status);
  auto* t = out->mutable_times();
  t->set_parse_us(outcome.times.parse_us);
  t->set_compile_us(outcome.times.compile_us);
  t->set_validate_us(outcome.times.validate_us);
  t->set_write_us(outcome.times.write_us);
  t->set_readback_us(outcome.times.readback_us);
  t->set_arm_us(outcome.times.arm_us);
  t->set_wait_us(outcome.times.wait_us);
  t->set_total_us(outcome.times.total_us);
}

void fill(const BankProgram& bank, v1::Program* out) {
  out->set_present(bank.present);
  if (!bank.present) return;
  out->set_plan(bank.plan);
  out->set_phase(bank.phase);
  out->set_program_id(bank.program.program_id());
  out->set_policy(tdm_words::policy_name(bank.program.policy()));
  out->set_wormhole(bank.program.wormhole());
  out->set_slots(bank.program.slots());
  out->set_slot_length_cycles(bank.program.slot_length());
  out->set_wormhole_length_cycles(bank.program.wormhole_length());
  out->set_guard_band_cycles(bank.program.guard_band());
  out->set_frame_cycles(bank.frame_cycles);
  const std::string& bytes = bank.program.entries();
  for (size_t at = 0; at + schedule::kSlotTablePorts <= bytes.size();
       at += schedule::kSlotTablePorts) {
    out->add_entries(bytes.substr(at, schedule::kSlotTablePorts));
  }
}

}  // namespace

// A fabric target (issue 11): the fabric plan and a summary per phase.
void TdmService::compile_fabric(const v1::CompileScheduleRequest& request,
                                v1::CompileScheduleResponse* response) {
  FabricCompileSource source;
  source.plan = source_of(request.plan());
  source.target = request.fabric_target();
  source.algorithm = request.fabric_algorithm();
  if (request.time_budget_ms() != 0) {
    source.time_budget = std::chrono::milliseconds(request.time_budget_ms());
  }
  if (request.seed() != 0) source.seed = request.seed();
  source.with_yaml = request.include_compiled_yaml();
  const CompiledFabric compiled = tdm_.compile_fabric(source);
  response->set_plan(compiled.plan_name);
  response->set_fabric_target(compiled.target_name);
  for (const auto& p : compiled.program.phases) {
    auto* out = response->add_fabric_phases();
    out->set_phase(p.name);
    out->set_connections(p.connections);
    out->set_slots(p.slots);
    out->set_lower_bound(p.lower_bound);
    out->set_optimal(p.optimal());
    out->set_method(p.method);
    out->set_cut_by_time(p.cut_by_time);
    out->set_compile_us(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(p.elapsed).count()));
    for (const auto& b : p.baselines) {
      out->add_baselines(std::string(fabric_schedule::to_string(b.algorithm)) + " " +
                         std::to_string(b.slots));
    }
  }
  for (const auto& r : compiled.program.reconfigure) {
    auto* out = response->add_fabric_reconfigurations();
    out->set_from_phase(r.from_phase);
    out->set_to_phase(r.to_phase);
    out->set_switches(static_cast<uint32_t>(r.switches.size()));
    for (const auto& sw : r.switches) {
      out->set_torn_down(out->torn_down() + sw.torn_down);
      out->set_set_up(out->set_up() + sw.set_up);
    }
  }
  for (const auto& w : compiled.warnings) fill(w, response->add_warnings());
  if (request.include_compiled_yaml()) response->set_compiled_yaml(compiled.compiled_yaml);
  response->set_parse_us(compiled.times.parse_us);
  response->set_compile_us(compiled.times.compile_us);
  response->set_validate_us(compiled.times.validate_us);
}

grpc::Status TdmService::CompileSchedule(grpc::ServerContext*,
                                         const v1::CompileScheduleRequest* request,
                                         v1::CompileScheduleResponse* response) {
  return guarded("CompileSchedule", [&] {
    authorizer_.require(Permission::kRead, "compiling a schedule");
    if (!request->fabric_target().empty()) return compile_fabric(*request, response);
    if (request->seed() != 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "seed: only a fabric compile (fabric_target) has random choices to seed; "
                  "leave it 0");
    }
    const CompiledPlan compiled =
        tdm_.compile(source_of(request->plan()), request->include_compiled_yaml());
    response->set_plan(compiled.plan.name());
    fill_phases(compiled.plan, response->mutable_phases());
    for (const auto& w : compiled.warnings) fill(w, response->add_warnings());
    if (request->include_compiled_yaml()) response->set_compiled_yaml(compiled.compiled_yaml);
    response->set_parse_us(compiled.times.parse_us);
    response->set_compile_us(compiled.times.compile_us);
    response->set_validate_us(compiled.times.validate_us);
  });
}

grpc::Status TdmService::LoadSchedule(grpc::ServerContext* context,
                                      const v1::LoadScheduleRequest* request,
                                      v1::LoadScheduleResponse* response) {
  return guarded("LoadSchedule", [&] {
    authorizer_.require(Permission::kConfigure, "loading a schedule", *context);
    const LoadOutcome outcome =
        tdm_.load(source_of(request->plan()), request->phase(), request->validate_only());
    fill(outcome, response);
    if (outcome.changed) {
      spdlog::info("tdm: plan '{}' phase '{}' active from frame {}, loaded by {}",
                   outcome.plan.name(), outcome.phase, outcome.active_from_frame,
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status TdmService::GetSchedule(grpc::ServerContext*, const v1::GetScheduleRequest* request,
                                     v1::GetScheduleResponse* response) {
  return guarded("GetSchedule", [&] {
    authorizer_.require(Permission::kRead, "reading the schedule");
    const ScheduleView view = tdm_.schedule(request->include_slots());
    fill(view.active, response->mutable_active());
    fill(view.staged, response->mutable_staged());
    response->set_enabled(view.sequencer.enabled);
    response->set_running(view.sequencer.running);
    response->set_armed(view.sequencer.armed);
    response->set_preempted(view.sequencer.preempted);
    response->set_frame(view.sequencer.frame);
    response->set_time(view.sequencer.time);
    response->set_frame_start(view.sequencer.frame_start);
    response->set_current_slot(view.sequencer.current_slot);
    response->set_arm_at_frame(view.sequencer.arm_at_frame);
    response->set_swap_frame(view.sequencer.swap_frame);
    response->set_swap_time(view.sequencer.swap_time);
    response->set_swap_count(view.sequencer.swap_count);
    response->set_clock_hz(view.clock_hz);
    response->set_ports(view.ports);
    response->set_max_slots(view.max_slots);
    response->set_revision(view.revision);
    response->set_status(view.status);
  });
}

grpc::Status TdmService::ListPlans(grpc::ServerContext*, const v1::ListPlansRequest*,
                                   v1::ListPlansResponse* response) {
  return guarded("ListPlans", [&] {
    authorizer_.require(Permission::kRead, "listing the schedules");
    std::string active_plan, active_phase;
    uint64_t revision = 0;
    for (const auto& plan : tdm_.plans(&active_plan, &active_phase, &revision)) {
      auto* info = response->add_plans();
      info->set_name(plan.name());
      info->set_file(plan.file());
      info->set_description(plan.description());
      info->set_switch_name(plan.switch_name());
      fill_phases(plan, info->mutable_phases());
      info->set_active(plan.name() == active_plan);
      if (info->active()) info->set_active_phase(active_phase);
    }
    response->set_revision(revision);
  });
}

grpc::Status TdmService::ActivatePlan(grpc::ServerContext* context,
                                      const v1::ActivatePlanRequest* request,
                                      v1::LoadScheduleResponse* response) {
  return guarded("ActivatePlan", [&] {
    authorizer_.require(Permission::kConfigure, "activating a schedule", *context);
    const LoadOutcome outcome =
        tdm_.activate(request->name(), request->phase(), request->validate_only());
    fill(outcome, response);
    if (outcome.changed) {
      spdlog::info("tdm: plan '{}' phase '{}' active from frame {}, activated by {}",
                   outcome.plan.name(), outcome.phase, outcome.active_from_frame,
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status TdmService::StagePlan(grpc::ServerContext* context,
                                   const v1::StagePlanRequest* request,
                                   v1::StagePlanResponse* response) {
  return guarded("StagePlan", [&] {
    authorizer_.require(Permission::kConfigure, "staging a schedule", *context);
    const StageOutcome outcome = tdm_.stage(source_of(request->plan()), request->phase());
    response->set_plan(outcome.plan.name());
    response->set_phase(outcome.phase);
    response->set_program_id(outcome.program_id);
    for (const auto& w : outcome.warnings) fill(w, response->add_warnings());
    response->set_running(outcome.running);
    response->set_frame(outcome.frame);
    response->set_time(outcome.time);
    response->set_frame_start(outcome.frame_start);
    response->set_frame_cycles(outcome.frame_cycles);
    response->set_clock_hz(outcome.clock_hz);
    spdlog::info("tdm: plan '{}' phase '{}' staged (program {:016x}) by {}", outcome.plan.name(),
                 outcome.phase, outcome.program_id, authorizer_.principal(*context));
  });
}

grpc::Status TdmService::ArmAtFrame(grpc::ServerContext* context,
                                    const v1::ArmAtFrameRequest* request,
                                    v1::ArmAtFrameResponse* response) {
  return guarded("ArmAtFrame", [&] {
    authorizer_.require(Permission::kConfigure, "arming a schedule", *context);
    const ArmOutcome outcome = tdm_.arm_at_frame(request->program_id(), request->frame(),
                                                 std::chrono::milliseconds(request->timeout_ms()));
    response->set_swap_frame(outcome.swap_frame);
    response->set_swap_time(outcome.swap_time);
    response->set_wait_us(outcome.wait_us);
    spdlog::info("tdm: program {:016x} active from frame {}, armed by {}", request->program_id(),
                 outcome.swap_frame, authorizer_.principal(*context));
  });
}

grpc::Status TdmService::DiscardStaged(grpc::ServerContext* context,
                                       const v1::DiscardStagedRequest* request,
                                       v1::DiscardStagedResponse* response) {
  return guarded("DiscardStaged", [&] {
    authorizer_.require(Permission::kConfigure, "discarding a staged schedule", *context);
    response->set_discarded(tdm_.discard_staged(request->program_id()));
  });
}

}  // namespace asn

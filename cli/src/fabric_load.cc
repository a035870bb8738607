// run_fabric_load (fabric_load.hpp): stage on every switch, choose the frame, arm them all,
// or discard everywhere. One channel and one thread per switch, so that a fabric of many
// switches takes as long as its slowest switch, not their sum.
#include "fabric_load.hpp"

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "asn/schedule/plan_file.hpp"
#include "asn/v1/tdm.grpc.pb.h"
#include "errors.hpp"
#include "progress.hpp"
#include "schedule_common.hpp"

namespace asnctl {

namespace {

using asn::v1::Tdm;
using Clock = std::chrono::steady_clock;

// One switch of the load: its asnd and what it answered. During the arm step the fields
// marked (locked) are shared with the coordinator under ArmState::mutex.
struct Member {
  std::string name;
  std::string endpoint;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Tdm::Stub> stub;

  bool staged = false;
  asn::v1::StagePlanResponse stage;
  Clock::time_point staged_at;
  std::string checked;  // a dry run: the phase's summary line
  google::protobuf::RepeatedPtrField<asn::v1::PlanProblem> warnings;  // of a dry run

  uint64_t armed_frame = 0;  // the frame at whose start it swaps (0: at once)
  asn::v1::ArmAtFrameResponse arm;
  Clock::time_point armed_at;  // when asnd armed: its answer less its wait for the swap
  bool swapped = false;        // (locked)
  bool disarming = false;      // (locked) disarmed because another switch failed
  bool failed = false;         // (locked) this switch failed the step; `error` says why
  std::string error;
  std::string discard_error;  // "" : discarded (or nothing to discard)
  bool discarded = false;
};

// What a run reports beyond the members.
struct Run {
  const FabricLoad& load;
  std::string plan;
  std::string phase;
  OutputFormat format;
  Clock::time_point start;
  std::vector<Member> members;
};

template <typename Fn>
void each_in_parallel(std::vector<Member*> members, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(members.size());
  for (Member* m : members) threads.emplace_back([m, &fn] { fn(*m); });
  for (auto& t : threads) t.join();
}

std::vector<Member*> all(std::vector<Member>& members) {
  std::vector<Member*> out;
  for (auto& m : members) out.push_back(&m);
  return out;
}

void prepare(grpc::ClientContext& context, Clock::duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout));
  context.set_wait_for_ready(false);
}

std::string seconds(Clock::duration d) {
  return strprintf("%g s", std::chrono::duration<double>(d).count());
}

// Why a call to a switch failed, for its row and the error line.
std::string why(const Member& m, const grpc::Status& status, Clock::duration timeout) {
  const auto code = status.error_code();
  const bool connected = m.channel->GetState(false) == GRPC_CHANNEL_READY;
  if (!connected && code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "cannot reach asnd at " + m.endpoint + ": no connection within " + seconds(timeout);
  }
  if (!connected && code == grpc::StatusCode::UNAVAILABLE) {
    return "cannot reach asnd at " + m.endpoint + ": " + status.error_message();
  }
  if (code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "asnd did not answer within " + seconds(timeout) +
           " (the switch's timeout in the fabric file)";
  }
  return std::string(code_name(code)) + ": " + status.error_message();
}

void fill_source(asn::v1::PlanSource& source, const FabricLoad& load, const std::string& name) {
  source.set_text(load.plan_text);
  source.set_file(load.plan_file);
  source.set_switch_name(name);
  source.set_algorithm(load.algorithm);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The phase to load: the one asked for, or the plan's first.
std::string pick_phase(const asn::schedule::Plan& plan, const FabricLoad& load) {
  if (!plan.is_fabric()) {
    throw std::runtime_error(load.plan_file + ": plan '" + plan.name +
                             "' is for one switch (it has no 'switches:'); load it without "
                             "--fabric");
  }
  if (load.phase.empty()) return plan.phases.front().name;
  if (plan.find_phase(load.phase) == nullptr) {
    std::vector<std::string> names;
    for (const auto& p : plan.phases) names.push_back(p.name);
    throw std::runtime_error(load.plan_file + ": plan '" + plan.name + "' has no phase '" +
                             load.phase + "' (its phases: " + join(names) + ")");
  }
  return load.phase;
}

// A member for each switch of the plan, in plan order, with its channel.
std::vector<Member> connect(const asn::schedule::Plan& plan, const FabricLoad& load) {
  const auto missing = asn::schedule::missing_switches(load.fabric, plan);
  if (!missing.empty()) {
    throw std::runtime_error(load.fabric.file + " names no endpoint for switch" +
                             (missing.size() == 1 ? " " : "es ") + join(missing) + " of plan '" +
                             plan.name + "'");
  }
  std::vector<Member> members(plan.switches.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const auto* sw = load.fabric.find_switch(plan.switches[i]);
    members[i].name = sw->name;
    members[i].endpoint = sw->endpoint;
    members[i].timeout = sw->timeout;
    members[i].channel = grpc::CreateChannel(sw->endpoint, grpc::InsecureChannelCredentials());
    members[i].stub = Tdm::NewStub(members[i].channel);
  }
  return members;
}

void stage(Member& m, const FabricLoad& load, const std::string& phase) {
  asn::v1::StagePlanRequest request;
  fill_source(*request.mutable_plan(), load, m.name);
  request.set_phase(phase);
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->StagePlan(&context, request, &m.stage);
  m.staged_at = Clock::now();
  m.staged = status.ok();
  if (!status.ok()) {
    m.failed = true;
    m.error = why(m, status, m.timeout);
  }
}

void check(Member& m, const FabricLoad& load, const std::string& phase) {
  asn::v1::CompileScheduleRequest request;
  fill_source(*request.mutable_plan(), load, m.name);
  asn::v1::CompileScheduleResponse response;
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->CompileSchedule(&context, request, &response);
  if (!status.ok()) {
    m.failed = true;
    m.error = why(m, status, m.timeout);
    return;
  }
  m.warnings = response.warnings();
  for (const auto& p : response.phases()) {
    if (p.phase() == phase) m.checked = p.line();
  }
}

// Forgets the program `m` staged. Only ever one thread per member.
void discard(Member& m) {
  asn::v1::DiscardStagedRequest request;
  request.set_program_id(m.stage.program_id());
  asn::v1::DiscardStagedResponse response;
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->DiscardStaged(&context, request, &response);
  m.discarded = status.ok();
  if (!status.ok()) m.discard_error = why(m, status, m.timeout);
}

void discard_staged(std::vector<Member>& members) {
  std::vector<Member*> staged;
  for (auto& m : members) {
    if (m.staged) staged.push_back(&m);
  }
  each_in_parallel(staged, discard);
}

struct ArmState {
  std::mutex mutex;
  std::condition_variable changed;
  size_t done = 0;
  bool failed = false;
};

void arm_one(Member& m, Clock::duration until, ArmState& state) {
  asn::v1::ArmAtFrameRequest request;
  request.set_program_id(m.stage.program_id());
  request.set_frame(m.armed_frame);
  // asnd waits until 2 s past the frame (timeout_ms 0); the call may take that and the
  // switch's own timeout.
  const Clock::duration deadline = until + std::chrono::seconds(2) + m.timeout;
  grpc::ClientContext context;
  prepare(context, deadline);
  const grpc::Status status = m.stub->ArmAtFrame(&context, request, &m.arm);
  const Clock::time_point answered = Clock::now();
  std::lock_guard lock(state.mutex);
  ++state.done;
  if (status.ok()) {
    m.swapped = true;
    m.armed_at = answered - std::chrono::microseconds(m.arm.wait_us());
  } else if (!m.disarming) {
    m.failed = true;
    m.error = why(m, status, deadline);
    if (m.error.find("has begun already") != std::string::npos) {
      m.error += " (the arm came too late: raise arm_margin in the fabric file)";
    }
    state.failed = true;
  }
  state.changed.notify_all();
}

// ArmAtFrame on every switch at once. When one fails, the others not yet swapped are
// disarmed (DiscardStaged) while their calls still wait, and so is the one that failed.
void arm_all(std::vector<Member>& members, Clock::duration until) {
  ArmState state;
  std::vector<std::thread> arms;
  for (auto& m : members) {
    arms.emplace_back([&m, until, &state] { arm_one(m, until, state); });
  }
  std::vector<Member*> to_discard;
  {
    std::unique_lock lock(state.mutex);
    state.changed.wait(lock, [&] { return state.done == members.size() || state.failed; });
    for (auto& m : members) {
      if (!state.failed || m.swapped) continue;
      if (!m.failed) m.disarming = true;
      to_discard.push_back(&m);
    }
  }
  each_in_parallel(to_discard, discard);
  for (auto& t : arms) t.join();
}

// Every switch's warnings, each text once (a plan-wide warning comes from every switch).
void print_warnings(const std::vector<Member>& members, bool staged) {
  std::set<std::string> seen;
  google::protobuf::RepeatedPtrField<asn::v1::PlanProblem> unique;
  for (const auto& m : members) {
    for (const auto& w : staged ? m.stage.warnings() : m.warnings) {
      if (seen.insert(w.text()).second) *unique.Add() = w;
    }
  }
  asnctl::print_warnings(unique);
}

bool any_failed(const std::vector<Member>& members) {
  for (const auto& m : members) {
    if (m.failed) return true;
  }
  return false;
}

// What became of a switch, for the table's RESULT column.
std::string result(const Member& m) {
  std::string out;
  if (m.swapped) {
    out = "swapped at frame " + std::to_string(m.arm.swap_frame());
  } else if (m.failed) {
    out = "error: " + m.error;
  } else if (m.disarming) {
    out = "disarmed before its swap";
  } else if (!m.checked.empty()) {
    out = "ok: " + m.checked;
  } else {
    out = m.staged ? "staged" : "ok";
  }
  if (m.discarded && !m.disarming) out += m.failed ? "; discarded" : ", discarded";
  if (!m.discard_error.empty()) out += "; discard failed: " + m.discard_error;
  return out;
}

// The report as JSON: 64-bit numbers as strings, as the proto3 JSON mapping has them.
JsonObject to_json(const Run& run, bool ok) {
  std::vector<JsonObject> switches;
  for (const auto& m : run.members) {
    JsonObject s;
    s.add("switch", m.name)
        .add("endpoint", m.endpoint)
        .add("program_id", std::to_string(m.stage.program_id()))
        .add("swapped", m.swapped)
        .add("armed_frame", std::to_string(m.armed_frame))
        .add("swap_frame", std::to_string(m.arm.swap_frame()))
        .add("swap_time", std::to_string(m.arm.swap_time()))
        .add("result", result(m))
        .add("error", m.error);
    switches.push_back(std::move(s));
  }
  JsonObject out;
  out.add("plan", run.plan).add("phase", run.phase).add("fabric", run.load.fabric.name);
  out.add("ok", ok).add("switches", switches);
  return out;
}

// Stderr: which switches failed and why, and what became of the others.
int report_failure(Run& run, const std::string& what, const std::string& aftermath) {
  if (run.format == OutputFormat::kJson) {
    std::printf("%s\n", to_json(run, false).add("error", what + aftermath).text().c_str());
  } else {
    Table table({"SWITCH", "ENDPOINT", "RESULT"});
    for (const auto& m : run.members) table.add_row({m.name, m.endpoint, result(m)});
    table.print(stdout);
  }
  std::fprintf(stderr, "asnctl: fabric load of plan '%s' phase '%s' failed: %s%s\n",
               run.plan.c_str(), run.phase.c_str(), what.c_str(), aftermath.c_str());
  return kExitFailed;
}

std::string failures(const std::vector<Member>& members) {
  std::string out;
  for (const auto& m : members) {
    if (m.failed) out += (out.empty() ? "" : "; ") + m.name + " (" + m.endpoint + "): " + m.error;
  }
  return out;
}

// The names of the members for which `pick` holds.
template <typename Pick>
std::string names(const std::vector<Member>& members, Pick pick) {
  std::vector<std::string> out;
  for (const auto& m : members) {
    if (pick(m)) out.push_back(m.name);
  }
  return join(out);
}

std::string after_discard(const std::vector<Member>& members) {
  const std::string kept = names(members, [](const Member& m) { return !m.discard_error.empty(); });
  std::string out = "; nothing was armed";
  if (const std::string d = names(members, [](const Member& m) { return m.discarded; });
      !d.empty()) {
    out += ", the staged programs were discarded on " + d;
  }
  if (!kept.empty()) out += "; could not discard on " + kept + " (asnctl schedule show there)";
  return out;
}

std::string after_arm_failure(const std::vector<Member>& members) {
  std::string out;
  const std::string disarmed = names(members, [](const Member& m) {
    return m.disarming && !m.swapped && m.discard_error.empty();
  });
  if (!disarmed.empty()) out += "; disarmed " + disarmed + " before the swap";
  const std::string swapped = names(members, [](const Member& m) { return m.swapped; });
  if (!swapped.empty()) {
    out += "; " + swapped +
           " had already swapped: the fabric runs mixed programs until it is loaded again";
  }
  const std::string unknown =
      names(members, [](const Member& m) { return !m.swapped && !m.discard_error.empty(); });
  if (!unknown.empty()) {
    out += "; could not disarm " + unknown +
           ": it may still swap at its armed frame (asnctl schedule show there)";
  }
  return out;
}

int report_check(Run& run) {
  if (any_failed(run.members)) {
    return report_failure(run, failures(run.members), "; nothing was written");
  }
  if (run.format == OutputFormat::kJson) {
    std::printf("%s\n", to_json(run, true).text().c_str());
    return kExitOk;
  }
  Table table({"SWITCH", "ENDPOINT", "RESULT"});
  for (const auto& m : run.members) table.add_row({m.name, m.endpoint, result(m)});
  table.print(stdout);
  std::printf("plan '%s' phase '%s': checked on %zu switches, nothing written\n", run.plan.c_str(),
              run.phase.c_str(), run.members.size());
  return kExitOk;
}

// How close together the switches swapped, and how long arming took.
struct Outcome {
  double to_armed_ms = 0;  // from the command's start until the last switch armed
  bool one_clock = true;   // every switch counts the same clock: the spread in cycles
  uint64_t spread_cycles = 0;
  double spread_ns = 0;
};

Outcome outcome(const Run& run) {
  Outcome o;
  Clock::time_point armed = run.start;
  const uint64_t clock_hz = run.members.front().stage.clock_hz();
  double first_ns = 0, last_ns = 0;
  uint64_t first = UINT64_MAX, last = 0;
  for (size_t i = 0; i < run.members.size(); ++i) {
    const auto& m = run.members[i];
    armed = std::max(armed, m.armed_at);
    o.one_clock = o.one_clock && m.stage.clock_hz() == clock_hz && clock_hz != 0;
    const double hz = m.stage.clock_hz() == 0 ? 1e9 : static_cast<double>(m.stage.clock_hz());
    const double ns = static_cast<double>(m.arm.swap_time()) * 1e9 / hz;
    first_ns = i == 0 ? ns : std::min(first_ns, ns);
    last_ns = i == 0 ? ns : std::max(last_ns, ns);
    first = std::min(first, m.arm.swap_time());
    last = std::max(last, m.arm.swap_time());
  }
  o.to_armed_ms = std::chrono::duration<double, std::milli>(armed - run.start).count();
  o.spread_cycles = last - first;
  o.spread_ns =
      o.one_clock ? static_cast<double>(o.spread_cycles) * 1e9 / clock_hz : last_ns - first_ns;
  return o;
}

// "for frame F" when every switch swapped at the start of the same frame; else the instant.
std::string armed_for(const Run& run, const FrameChoice& choice) {
  const uint64_t frame = run.members.front().armed_frame;
  bool same = true;
  for (const auto& m : run.members) same = same && m.armed_frame == frame;
  if (frame == 0 && same) {
    return "at once (none was running: each started on the time grid of the new program, "
           "so they run its slots in step)";
  }
  if (same) return "for frame " + std::to_string(frame);
  return "for the frames starting at time " + std::to_string(choice.start) +
         " (they ran different programs: each its own frame)";
}

int report_success(Run& run, const FrameChoice& choice) {
  const Outcome o = outcome(run);
  if (run.format == OutputFormat::kJson) {
    JsonObject out = to_json(run, true);
    out.add("arm_time", std::to_string(choice.start));
    out.add("command_to_armed_ms", o.to_armed_ms);
    if (o.one_clock) out.add("swap_spread_cycles", static_cast<double>(o.spread_cycles));
    out.add("swap_spread_ns", o.spread_ns);
    std::printf("%s\n", out.text().c_str());
    return kExitOk;
  }
  Table table({"SWITCH", "ENDPOINT", "PROGRAM", "ARMED FRAME", "SWAP FRAME", "SWAP TIME"});
  for (const auto& m : run.members) {
    table.add_row({m.name, m.endpoint, hex(m.stage.program_id(), 16), std::to_string(m.armed_frame),
                   std::to_string(m.arm.swap_frame()), std::to_string(m.arm.swap_time())});
  }
  table.print(stdout);
  const std::string spread =
      o.one_clock ? strprintf("%llu cycles (%s)", static_cast<unsigned long long>(o.spread_cycles),
                              format_ns(o.spread_ns).c_str())
                  : format_ns(o.spread_ns);
  std::printf("armed %zu switches %s: command to armed %.1f ms, swap instants spread %s\n",
              run.members.size(), armed_for(run, choice).c_str(), o.to_armed_ms, spread.c_str());
  return kExitOk;
}

std::vector<SwitchClock> clocks(const std::vector<Member>& members) {
  std::vector<SwitchClock> out;
  const Clock::time_point now = Clock::now();
  for (const auto& m : members) {
    const auto& s = m.stage;
    out.push_back({m.name, s.running(), s.frame(), s.time(), s.frame_start(), s.frame_cycles(),
                   s.clock_hz(), now - m.staged_at});
  }
  return out;
}

// How far ahead to arm: the fabric file's margin, and at least twice the slowest StagePlan
// round trip, so that on a loaded host every ArmAtFrame lands before the frame (a late one
// fails, and the switches armed in time would swap without it).
std::chrono::nanoseconds arm_margin(const Run& run) {
  Clock::duration slowest{0};
  for (const auto& m : run.members) slowest = std::max(slowest, m.staged_at - run.start);
  return std::max(run.load.fabric.arm_margin,
                  std::chrono::duration_cast<std::chrono::nanoseconds>(2 * slowest));
}

// Stage, choose the frame, arm; or discard.
int stage_and_arm(Run& run, Progress& progress) {
  each_in_parallel(all(run.members), [&](Member& m) { stage(m, run.load, run.phase); });
  print_warnings(run.members, true);
  if (any_failed(run.members)) {
    discard_staged(run.members);
    progress.stop();
    return report_failure(run, failures(run.members), after_discard(run.members));
  }
  const FrameChoice choice = choose_frame(clocks(run.members), arm_margin(run));
  if (!choice.error.empty()) {
    discard_staged(run.members);
    progress.stop();
    return report_failure(run, choice.error, after_discard(run.members));
  }
  for (size_t i = 0; i < run.members.size(); ++i) run.members[i].armed_frame = choice.frames[i];
  arm_all(run.members, choice.until);
  progress.stop();
  if (any_failed(run.members)) {
    return report_failure(run, failures(run.members), after_arm_failure(run.members));
  }
  return report_success(run, choice);
}

}  // namespace

int run_fabric_load(const FabricLoad& load, OutputFormat format) {
  Run run{load, "", "", format, Clock::now(), {}};
  const asn::schedule::Plan plan = asn::schedule::parse_plan(load.plan_text, load.plan_file);
  run.plan = plan.name;
  run.phase = pick_phase(plan, load);
  run.members = connect(plan, load);
  Progress progress("loading " + load.plan_file + " on " + std::to_string(run.members.size()) +
                    " switches");
  if (load.dry_run) {
    each_in_parallel(all(run.members), [&](Member& m) { check(m, load, run.phase); });
    progress.stop();
    print_warnings(run.members, false);
    return report_check(run);
  }
  return stage_and_arm(run, progress);
}

}  // namespace asnctl

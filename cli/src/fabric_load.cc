// run_fabric_load (fabric_load.hpp): stage on every switch, choose the frame, arm them all,
// or discard everywhere; the steps reach the switches by a LoadPath (fabric_load_run.hpp).
#include "fabric_load.hpp"

#include <cstdio>
#include <set>
#include <stdexcept>

#include "asn/schedule/plan_file.hpp"
#include "errors.hpp"
#include "fabric_load_run.hpp"
#include "progress.hpp"
#include "schedule_common.hpp"

namespace asnctl {

std::string seconds(LoadClock::duration d) {
  return strprintf("%g s", std::chrono::duration<double>(d).count());
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

namespace {

using Clock = LoadClock;

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

// A member for each switch of the plan, in plan order, as the fabric names it.
std::vector<Member> members_of(const asn::schedule::Plan& plan,
                               const asn::schedule::FabricFile& fabric) {
  const auto missing = asn::schedule::missing_switches(fabric, plan);
  if (!missing.empty()) {
    throw std::runtime_error(fabric.file + " names no endpoint for switch" +
                             (missing.size() == 1 ? " " : "es ") + join(missing) + " of plan '" +
                             plan.name + "'");
  }
  std::vector<Member> members(plan.switches.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const auto* sw = fabric.find_switch(plan.switches[i]);
    members[i].name = sw->name;
    members[i].endpoint = sw->endpoint;
    members[i].timeout = sw->timeout;
  }
  return members;
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
  out.add("plan", run.plan).add("phase", run.phase).add("fabric", run.fabric.name);
  out.add("via", run.load.etcd ? "etcd" : "grpc");
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
  std::printf("armed %zu switches %s: command to armed %.1f ms, swap instants spread %s, %s\n",
              run.members.size(), armed_for(run, choice).c_str(), o.to_armed_ms, spread.c_str(),
              run.via.c_str());
  return kExitOk;
}

std::vector<SwitchClock> clocks(const std::vector<Member>& members) {
  std::vector<SwitchClock> out;
  const Clock::time_point now = Clock::now();
  for (const auto& m : members) {
    const auto& s = m.stage;
    out.push_back({m.name, s.running(), s.frame(), s.time(), s.frame_start(), s.frame_cycles(),
                   s.clock_hz(), now - m.staged_at + m.in_transit});
  }
  return out;
}

// How far ahead to arm: the fabric file's margin, and at least twice the slowest stage round
// trip (from the command's start, so through etcd also the time the activation took to reach
// the switches), so that on a loaded host every arm lands before the frame (a late one fails,
// and the switches armed in time would swap without it).
std::chrono::nanoseconds arm_margin(const Run& run) {
  Clock::duration slowest{0};
  for (const auto& m : run.members) slowest = std::max(slowest, m.staged_at - run.start);
  return std::max(run.fabric.arm_margin,
                  std::chrono::duration_cast<std::chrono::nanoseconds>(2 * slowest));
}

// Stage, choose the frame, arm; or discard. The one flow of both paths: the frame is chosen
// here, from what the switches said when they staged, whichever way they said it.
int stage_and_arm(Run& run, LoadPath& path, Progress& progress) {
  path.stage(run);
  print_warnings(run.members, true);
  if (any_failed(run.members)) {
    path.discard(run);
    path.finish(run, false);
    progress.stop();
    return report_failure(run, failures(run.members), after_discard(run.members));
  }
  const FrameChoice choice = choose_frame(clocks(run.members), arm_margin(run));
  if (!choice.error.empty()) {
    path.discard(run);
    path.finish(run, false);
    progress.stop();
    return report_failure(run, choice.error, after_discard(run.members));
  }
  for (size_t i = 0; i < run.members.size(); ++i) run.members[i].armed_frame = choice.frames[i];
  path.arm(run, choice.until);
  for (auto& m : run.members) {
    if (m.failed && m.error.find("has begun already") != std::string::npos) {
      m.error += " (the arm came too late: raise arm_margin in the fabric file)";
    }
  }
  const bool ok = !any_failed(run.members);
  path.finish(run, ok);
  progress.stop();
  if (!ok) return report_failure(run, failures(run.members), after_arm_failure(run.members));
  return report_success(run, choice);
}

}  // namespace

int run_fabric_load(const FabricLoad& load, OutputFormat format) {
  Run run{load, load.fabric, "", "", format, Clock::now(), {}, ""};
  const asn::schedule::Plan plan = asn::schedule::parse_plan(load.plan_text, load.plan_file);
  run.plan = plan.name;
  run.phase = pick_phase(plan, load);
  // Through etcd the fabric (endpoints, timeouts, arm margin) is the one etcd holds.
  std::unique_ptr<LoadPath> through_etcd;
  if (load.etcd) through_etcd = open_etcd_path(run, plan);
  run.members = members_of(plan, run.fabric);
  Progress progress("loading " + load.plan_file + " on " + std::to_string(run.members.size()) +
                    " switches");
  if (load.dry_run) {
    // A dry run asks each asnd to compile its part (CompileSchedule), at the endpoint the
    // fabric names: through etcd too, since nothing is to be written there.
    GrpcPath grpc(run);
    grpc.check(run);
    progress.stop();
    print_warnings(run.members, false);
    return report_check(run);
  }
  if (through_etcd) return stage_and_arm(run, *through_etcd, progress);
  GrpcPath grpc(run);
  return stage_and_arm(run, grpc, progress);
}

}  // namespace asnctl

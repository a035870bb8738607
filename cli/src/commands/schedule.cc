// asnctl schedule show|compile|diff|list|activate: the TDM schedule a switch runs, what a
// plan compiles to on its board, what loading it would change, the plans asnd keeps and
// switching between them (the Tdm service; docs/schedule-format.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/diff.hpp"
#include "asn/schedule/grid.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "asn/v1/tdm.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "schedule_common.hpp"

namespace asnctl {

namespace {

namespace sched = asn::schedule;
using asn::v1::Tdm;

asn::v1::GetScheduleResponse get_schedule(Connection& connection, bool include_slots) {
  auto stub = Tdm::NewStub(connection.channel());
  grpc::ClientContext context;
  connection.prepare(context);
  asn::v1::GetScheduleRequest request;
  request.set_include_slots(include_slots);
  asn::v1::GetScheduleResponse response;
  connection.check(stub->GetSchedule(&context, request, &response));
  return response;
}

std::string program_name(const asn::v1::Program& p) {
  const std::string name = p.plan().empty() ? std::string("a program unknown to asnd")
                                            : "plan '" + p.plan() + "' phase '" + p.phase() + "'";
  return name + " (program " + hex(p.program_id(), 16) + ")";
}

std::vector<sched::SlotEntry> entries_of(const asn::v1::Program& p) {
  std::vector<sched::SlotEntry> out(static_cast<size_t>(p.entries_size()));
  for (int s = 0; s < p.entries_size(); ++s) {
    const std::string& bytes = p.entries(s);
    std::copy_n(bytes.begin(), std::min(bytes.size(), out[s].size()), out[s].begin());
  }
  return out;
}

// The timing of a program: policy, slots, lengths.
void add_timing(KeyValues& kv, const asn::v1::Program& p, const asn::v1::GetScheduleResponse& r) {
  const uint64_t hz = r.clock_hz();
  kv.add("policy", p.policy() + (p.wormhole() ? ", wormhole slot" : ", no wormhole slot"));
  kv.add("slots", std::to_string(p.slots()) + " of " + std::to_string(r.max_slots()));
  kv.add("slot length", cycles_and_time(p.slot_length_cycles(), hz));
  kv.add("wormhole", p.wormhole() ? cycles_and_time(p.wormhole_length_cycles(), hz) : "off");
  kv.add("guard band", cycles_and_time(p.guard_band_cycles(), hz));
  kv.add("frame length", cycles_and_time(p.frame_cycles(), hz));
}

void print_status(const asn::v1::GetScheduleResponse& r) {
  const auto& a = r.active();
  std::string state = r.running() ? "running" : (r.enabled() ? "enabled, not running" : "stopped");
  if (r.preempted()) state += ", preempted (no predictable traffic pending)";
  if (!a.present()) {
    std::printf("no schedule loaded (%s); asnctl load-schedule FILE loads one\n", state.c_str());
  } else {
    std::printf("%s: %s\n", state.c_str(), program_name(a).c_str());
  }
  KeyValues kv;
  if (a.present()) add_timing(kv, a, r);
  kv.add("frame", std::to_string(r.frame()) + ", begun at time " + std::to_string(r.frame_start()) +
                      "; slot " + std::to_string(r.current_slot()));
  kv.add("time", cycles_and_time(r.time(), r.clock_hz()) + " at " + frequency(r.clock_hz()));
  kv.add("last swap", r.swap_count() == 0
                          ? std::string("none since the board's reset")
                          : "frame " + std::to_string(r.swap_frame()) + " at time " +
                                std::to_string(r.swap_time()) + " (" +
                                std::to_string(r.swap_count()) +
                                (r.swap_count() == 1 ? " swap" : " swaps") + " since reset)");
  if (r.staged().present()) {
    kv.add(r.armed() ? "armed" : "staged",
           program_name(r.staged()) +
               (r.armed() ? ", for frame " + std::to_string(r.arm_at_frame()) : ", not armed"));
  }
  kv.add("desired state", (r.status().empty() ? std::string("-") : r.status()) + ", revision " +
                              std::to_string(r.revision()));
  kv.print(stdout);
}

class ScheduleShow final : public Command {
 public:
  explicit ScheduleShow(CLI::App* sub) {
    slots_ = sub->add_option("--slots", max_slots_,
                             "Slots of the grid shown (default 64; -o json has the entries only "
                             "with --slots, and no entries field without)")
                 ->type_name("N");
    sub->add_option("--ports", ports_,
                    "Output ports shown as the grid's columns, in this order (e.g. 0-7 or "
                    "3,10,12; default every port)")
        ->type_name("LIST");
  }
  void check() override {
    if (!ports_.empty()) columns_ = parse_port_list(ports_);
  }
  int run(Session& s) override {
    const bool json = s.format == OutputFormat::kJson;
    const auto r = get_schedule(s.connection, json ? slots_->count() > 0 : max_slots_ > 0);
    if (json) {
      // Without --slots the entries were not asked for: left out, not shown as none.
      const std::string text = to_json(r);
      std::printf("%s\n",
                  slots_->count() > 0 ? text.c_str() : without_empty_list(text, "entries").c_str());
      return kExitOk;
    }
    const uint32_t ports = std::min(r.ports(), sched::kSlotTablePorts);
    for (uint32_t p : columns_) {
      if (p >= ports) {
        throw std::runtime_error(
            "--ports: port " + std::to_string(p) + " is not in the slot table: " +
            (ports > 0 ? "it has ports 0-" + std::to_string(ports - 1) : "it is empty"));
      }
    }
    print_status(r);
    if (!r.active().present() || max_slots_ == 0) return kExitOk;
    const auto entries = entries_of(r.active());
    std::printf("\nSlots: the input port each output port takes (%s)\n",
                r.ports() > ports ? "ports 0-63: the slot table's" : "'.' unconnected");
    sched::GridOptions options;
    options.max_slots = max_slots_;
    options.wormhole = r.active().wormhole();
    options.columns = columns_;
    std::fputs(sched::format_grid(entries, ports, options).c_str(), stdout);
    return kExitOk;
  }

 private:
  CLI::Option* slots_ = nullptr;
  uint32_t max_slots_ = 64;
  std::string ports_;
  std::vector<uint32_t> columns_;
};

class ScheduleCompile final : public Command {
 public:
  explicit ScheduleCompile(CLI::App* sub) : sub_(sub) {
    sub->add_option("FILE", file_, "The plan file")->type_name("PATH")->required();
    sub->add_option("--algorithm", algorithm_,
                    "How patterns become slots: optimal (default: the fewest slots) or greedy "
                    "(the 000 baseline); with --fabric: default, greedy, coloring, aapc, "
                    "combined, level-wise, local-random")
        ->check(CLI::IsMember({"optimal", "greedy", "default", "coloring", "aapc", "combined",
                               "level-wise", "local-random"})
                    .description(""))
        ->type_name("ALGORITHM");
    sub->add_option("--switch", switch_name_, "This switch's name in a fabric plan")
        ->type_name("NAME");
    sub->add_option("--fabric", fabric_,
                    "Compile for a multi-hop fabric (patterns name its terminals): torus:XxY, "
                    "2dfb:N:k[:minimal], fat-tree:LEVELS:W, crossbar:PORTS, linear:NODES")
        ->type_name("TARGET");
    sub->add_option("--time-budget", budget_,
                    "With --fabric: a cap on the default compiler's search per phase (500ms, "
                    "2s; default 10s); the search stops on counted work, so the result does not "
                    "depend on it unless it cuts the search")
        ->type_name("DURATION");
    seed_option_ =
        sub->add_option("--seed", seed_,
                        "With --fabric: the seed of the default compiler's random choices (default "
                        "1); one seed, one plan: the same output on any machine")
            ->type_name("N");
    sub->add_flag("--yaml", yaml_, "Print the plan with every pattern laid out as slots");
  }
  void check() override {
    const CLI::App* root = sub_;
    while (root->get_parent() != nullptr) root = root->get_parent();
    const auto* output = root->get_option("--output");
    const bool json = (output->count() > 0 && output->as<std::string>() == "json") ||
                      root->get_option("-j")->count() > 0;
    if (yaml_ && json) {
      throw UsageError("--yaml and -o json exclude each other: give one");
    }
    request_.mutable_plan()->set_text(read_plan_file(file_));
    request_.mutable_plan()->set_file(file_);
    request_.mutable_plan()->set_switch_name(switch_name_);
    request_.set_include_compiled_yaml(yaml_);
    check_fabric();
  }
  int run(Session& s) override {
    auto stub = Tdm::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::CompileScheduleResponse r;
    {
      // A fabric compile searches for up to its time budget per phase: say that it runs.
      Progress progress("compiling " + file_ + (fabric_.empty() ? "" : " for " + fabric_));
      const grpc::Status status = stub->CompileSchedule(&context, request_, &r);
      progress.stop();
      s.connection.check(status);
    }
    print_warnings(r.warnings());
    if (s.format == OutputFormat::kJson) {
      print_json(r);
    } else if (yaml_) {
      std::fputs(r.compiled_yaml().c_str(), stdout);
    } else if (!fabric_.empty()) {
      print_fabric(r);
    } else {
      print_phases(r.phases(), "");
      std::printf(
          "plan '%s': valid on this board (parse %s, compile %s, validate %s), nothing "
          "written\n",
          r.plan().c_str(), ms(r.parse_us()).c_str(), ms(r.compile_us()).c_str(),
          ms(r.validate_us()).c_str());
    }
    return kExitOk;
  }

 private:
  void check_fabric();
  static void print_fabric(const asn::v1::CompileScheduleResponse& r);

  CLI::App* sub_;
  std::string file_, algorithm_, switch_name_, fabric_, budget_;
  bool yaml_ = false;
  uint64_t seed_ = 0;
  CLI::Option* seed_option_ = nullptr;
  asn::v1::CompileScheduleRequest request_;
};

// "500ms", "2s", "1.5 s" as milliseconds; nullopt for anything else.
std::optional<uint32_t> parse_budget(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  if (end == text.c_str() || value < 0 || value > 3600) return std::nullopt;
  if (unit == "ms") return static_cast<uint32_t>(value);
  if (unit == "s") return static_cast<uint32_t>(value * 1000);
  return std::nullopt;
}

void ScheduleCompile::check_fabric() {
  const bool crossbar_name =
      algorithm_.empty() || algorithm_ == "optimal" || algorithm_ == "greedy";
  if (fabric_.empty()) {
    if (!crossbar_name) throw UsageError("--algorithm " + algorithm_ + " needs --fabric TARGET");
    if (!budget_.empty()) throw UsageError("--time-budget needs --fabric TARGET");
    if (seed_option_->count() > 0) throw UsageError("--seed needs --fabric TARGET");
    request_.mutable_plan()->set_algorithm(to_algorithm(algorithm_));
    return;
  }
  if (algorithm_ == "optimal") {
    throw UsageError(
        "--algorithm optimal is the one-switch compiler; with --fabric: default, "
        "greedy, coloring, aapc, combined, level-wise, local-random");
  }
  if (!switch_name_.empty()) throw UsageError("--switch and --fabric exclude each other");
  request_.set_fabric_target(fabric_);
  request_.set_fabric_algorithm(algorithm_);
  if (!budget_.empty()) {
    const auto ms = parse_budget(budget_);
    if (!ms) throw UsageError("--time-budget " + budget_ + ": give it as 500ms or 2s");
    request_.set_time_budget_ms(*ms);
  }
  if (seed_option_->count() > 0 && seed_ == 0) {
    throw UsageError("--seed 0: give a seed of 1 or more (1 is the default)");
  }
  request_.set_seed(seed_);
}

// Per phase: connections, slots, lower bound, gap, what made the schedule, compile time; then
// what changes between phases.
void ScheduleCompile::print_fabric(const asn::v1::CompileScheduleResponse& r) {
  Table table({"PHASE", "CONNECTIONS", "SLOTS", "LOWER BOUND", "GAP", "METHOD", "COMPILE"});
  for (const auto& p : r.fabric_phases()) {
    const double gap = p.lower_bound() == 0 ? 0
                                            : 100.0 * (p.slots() - p.lower_bound()) /
                                                  static_cast<double>(p.lower_bound());
    table.add_row({p.phase(), std::to_string(p.connections()), std::to_string(p.slots()),
                   std::to_string(p.lower_bound()),
                   p.optimal() ? "optimal" : strprintf("%.1f%%", gap), p.method(),
                   ms(p.compile_us())});
  }
  table.print(stdout);
  for (const auto& p : r.fabric_phases()) {
    if (!p.cut_by_time()) continue;
    std::fprintf(stderr,
                 "warning: phase '%s': the time budget cut the search before its effort was "
                 "spent, so this phase may compile to another schedule next time; give "
                 "--time-budget more for a result that does not depend on the machine\n",
                 p.phase().c_str());
  }
  for (const auto& c : r.fabric_reconfigurations()) {
    std::printf("%s -> %s: %u switches change (%llu circuits torn down, %llu set up)\n",
                c.from_phase().c_str(), c.to_phase().c_str(), c.switches(),
                static_cast<unsigned long long>(c.torn_down()),
                static_cast<unsigned long long>(c.set_up()));
  }
  std::printf(
      "plan '%s' for %s: valid on this board, one part per switch (parse %s, compile %s, "
      "validate %s), nothing written\n",
      r.plan().c_str(), r.fabric_target().c_str(), ms(r.parse_us()).c_str(),
      ms(r.compile_us()).c_str(), ms(r.validate_us()).c_str());
}

// The program a bank holds, as the library's diff wants it; empty when nothing is there.
sched::TdmProgram program_of(const asn::v1::Program& p) {
  sched::TdmProgram t;
  if (!p.present()) return t;
  t.plan = p.plan();
  t.phase = p.phase();
  t.policy = sched::parse_policy(p.policy()).value_or(sched::Policy::kFixed);
  t.wormhole = p.wormhole();
  t.slots_in_use = p.slots();
  t.slot_length_cycles = p.slot_length_cycles();
  t.wormhole_length_cycles = p.wormhole_length_cycles();
  t.guard_band_cycles = p.guard_band_cycles();
  t.entries = entries_of(p);
  return t;
}

std::string connections_text(const std::vector<sched::Connection>& list) {
  std::string out;
  for (const auto& c : list) {
    out += (out.empty() ? "" : " ") + std::to_string(c.from) + "->" + std::to_string(c.to);
  }
  return out;
}

// Adds the diff's fields to `out`.
void add_diff(JsonObject& out, const sched::ProgramDiff& diff) {
  std::vector<JsonObject> timing;
  for (const auto& c : diff.timing) {
    timing.push_back(JsonObject()
                         .add("field", c.field)
                         .add("before", c.before)
                         .add("after", c.after)
                         .add("unit", c.unit));
  }
  std::vector<JsonObject> slots;
  for (const auto& d : diff.slots) {
    static constexpr const char* kSides[] = {"both", "before_only", "after_only"};
    slots.push_back(JsonObject()
                        .add("slot", static_cast<double>(d.slot))
                        .add("side", kSides[static_cast<int>(d.side)])
                        .add("removed", connections_text(d.removed))
                        .add("added", connections_text(d.added)));
  }
  out.add("empty", diff.empty()).add("timing", timing).add("slots", slots);
}

class ScheduleDiff final : public Command {
 public:
  explicit ScheduleDiff(CLI::App* sub) {
    sub->add_option("FILE", file_, "The plan file")->type_name("PATH")->required();
    sub->add_option("--phase", phase_, "Its phase (default: the plan's first)")->type_name("PHASE");
    sub->add_option("--switch", switch_name_, "This switch's name in a fabric plan")
        ->type_name("NAME");
    add_algorithm_option(sub, algorithm_);
  }
  void check() override { text_ = read_plan_file(file_); }
  int run(Session& s) override {
    const auto r = get_schedule(s.connection, true);
    sched::Plan plan = sched::parse_plan(text_, file_);
    sched::CompileOptions options;
    options.algorithm =
        algorithm_ == "greedy" ? sched::Algorithm::kGreedy : sched::Algorithm::kOptimal;
    sched::compile_plan(plan, options);
    const std::string phase = phase_.empty() ? plan.phases.front().name : phase_;
    sched::BoardLimits limits;
    limits.ports = r.ports();
    limits.slots = r.max_slots();
    limits.clock_hz = r.clock_hz();
    const sched::TdmProgram after = sched::make_tdm_program(plan, phase, switch_name_, limits);
    const sched::ProgramDiff diff = sched::diff_programs(program_of(r.active()), after);
    if (s.format == OutputFormat::kJson) {
      JsonObject out;
      out.add("active_program_id", std::to_string(r.active().program_id()))
          .add("program_id", std::to_string(after.digest()))
          .add("plan", plan.name)
          .add("phase", phase);
      add_diff(out, diff);
      std::printf("%s\n", out.text().c_str());
      return kExitOk;
    }
    std::printf("--- active: %s\n",
                r.active().present() ? program_name(r.active()).c_str() : "nothing loaded");
    std::printf("+++ %s: plan '%s' phase '%s' (program %s)\n", file_.c_str(), plan.name.c_str(),
                phase.c_str(), hex(after.digest(), 16).c_str());
    std::fputs(diff.empty() ? "no change\n" : sched::format_diff(diff).c_str(), stdout);
    return kExitOk;
  }

 private:
  std::string file_, phase_, switch_name_, algorithm_, text_;
};

class ScheduleList final : public Command {
 public:
  int run(Session& s) override {
    auto stub = Tdm::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ListPlansResponse r;
    s.connection.check(stub->ListPlans(&context, {}, &r));
    if (s.format == OutputFormat::kJson) {
      print_json(r);
      return kExitOk;
    }
    if (r.plans().empty()) {
      std::printf("no plans kept; asnctl load-schedule FILE loads one\n");
      return kExitOk;
    }
    const bool fabric = std::any_of(r.plans().begin(), r.plans().end(),
                                    [](const auto& p) { return !p.switch_name().empty(); });
    std::vector<std::string> header = {"PLAN", "PHASES"};
    if (fabric) header.push_back("SWITCH");
    header.push_back("FILE");
    Table table(header);
    for (const auto& p : r.plans()) {
      std::string phases;
      for (const auto& phase : p.phases()) {
        const bool active = p.active() && phase.phase() == p.active_phase();
        phases += (phases.empty() ? "" : " ") + phase.phase() + (active ? "*" : "");
      }
      std::vector<std::string> row = {p.name(), phases};
      if (fabric) row.push_back(p.switch_name().empty() ? "-" : p.switch_name());
      row.push_back(p.file().empty() ? "-" : p.file());
      table.add_row(row);
    }
    table.print(stdout);
    std::printf("* the active phase; desired state revision %llu\n",
                static_cast<unsigned long long>(r.revision()));
    return kExitOk;
  }
};

class ScheduleActivate final : public Command {
 public:
  explicit ScheduleActivate(CLI::App* sub) {
    sub->add_option("NAME", name_, "A plan asnd keeps (asnctl schedule list)")->required();
    sub->add_option("--phase", phase_, "The phase to load (default: the plan's first)")
        ->type_name("PHASE");
    sub->add_flag("--dry-run", dry_run_, "Check against the board; write nothing");
  }
  int run(Session& s) override {
    asn::v1::ActivatePlanRequest request;
    request.set_name(name_);
    request.set_phase(phase_);
    request.set_validate_only(dry_run_);
    auto stub = Tdm::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::LoadScheduleResponse response;
    grpc::Status status;
    {
      Progress progress((dry_run_ ? "checking plan " : "activating plan ") + name_);
      status = stub->ActivatePlan(&context, request, &response);
    }
    s.connection.check(status);
    return print_load(response, dry_run_, s.format == OutputFormat::kJson);
  }

 private:
  std::string name_, phase_;
  bool dry_run_ = false;
};

const Registrar kSchedule(28, [](CLI::App& app, CommandSet& commands) {
  auto* schedule = app.add_subcommand("schedule", "TDM schedules: the one running, plans kept");
  schedule->require_subcommand(1);
  auto* show = schedule->add_subcommand(
      "show", "The active schedule: sequencer, timing, and the slot x port grid");
  commands.add<ScheduleShow>(show, show);
  auto* compile = schedule->add_subcommand(
      "compile", "Compile and check a plan against the board; write nothing");
  commands.add<ScheduleCompile>(compile, compile);
  auto* diff = schedule->add_subcommand(
      "diff", "What loading a plan's phase would change in the active schedule");
  commands.add<ScheduleDiff>(diff, diff);
  commands.add<ScheduleList>(schedule->add_subcommand("list", "The plans asnd keeps"));
  auto* activate =
      schedule->add_subcommand("activate", "Load a phase of a kept plan, as load-schedule does");
  commands.add<ScheduleActivate>(activate, activate);
});

}  // namespace

}  // namespace asnctl

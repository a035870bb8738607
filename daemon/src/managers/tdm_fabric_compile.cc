// The TDM manager's fabric compile (issue 11 part 6): a plan's patterns, naming terminals of
// a multi-hop fabric, compiled by lib/fabric_schedule into a fabric plan with a part per
// switch, which this board's limits then validate like any plan.
#include <fmt/format.h>

#include "asn/fabric_schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "error.hpp"
#include "managers/tdm_manager.hpp"

namespace asn {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t micros(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

// The phases of a one-switch plan as fabric phases: each pattern's (from, to) are terminals.
std::vector<fabric_schedule::PhaseInput> fabric_phases(const schedule::Plan& plan,
                                                       const std::string& file) {
  if (plan.is_fabric()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{}: is already a fabric plan; a fabric target compiles a one-switch "
                            "plan whose patterns name the fabric's terminals",
                            file));
  }
  std::vector<fabric_schedule::PhaseInput> out;
  for (const schedule::Phase& phase : plan.phases) {
    const schedule::Part& part = phase.parts.front();
    if (!part.has_pattern) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("{}:{}: phase '{}' has explicit slots; a fabric target needs a "
                              "pattern of terminal pairs",
                              file, phase.mark.line, phase.name));
    }
    fabric_schedule::PhaseInput in{phase.name, {}, phase.timing};
    in.conns.reserve(part.pattern.size());
    for (const auto& c : part.pattern) in.conns.push_back({c.from, c.to});
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

CompiledFabric TdmManager::compile_fabric(const FabricCompileSource& source) const {
  CompiledFabric out;
  const std::string file = source.plan.file.empty() ? "<plan>" : source.plan.file;
  try {
    auto start = Clock::now();
    const schedule::Plan plan = schedule::parse_plan(source.plan.text, file);
    out.times.parse_us = micros(start);
    const auto target = fabric_schedule::parse_target(source.target);
    fabric_schedule::Options options;
    const std::string algorithm = source.algorithm.empty() ? "default" : source.algorithm;
    const auto parsed = fabric_schedule::parse_algorithm(algorithm);
    if (!parsed) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("algorithm: '{}'; accepted: default, greedy, coloring, aapc, "
                              "combined, level-wise, local-random",
                              algorithm));
    }
    options.algorithm = *parsed;
    options.time_budget = source.time_budget;
    options.seed = source.seed;
    start = Clock::now();
    const auto inputs = fabric_phases(plan, file);
    out.program = fabric_schedule::compile_program(*target, inputs, options, plan.name);
    out.program.plan.description = plan.description;
    out.program.plan.file = file;
    for (size_t i = 0; i < plan.phases.size(); ++i) {
      out.program.plan.phases[i].description = plan.phases[i].description;
    }
    out.times.compile_us = micros(start);
    start = Clock::now();
    const schedule::ValidationReport report = schedule::validate(out.program.plan, limits());
    report.throw_if_errors();
    out.warnings = report.warnings();
    out.times.validate_us = micros(start);
    out.plan_name = plan.name;
    out.target_name = target->name();
    if (source.with_yaml) out.compiled_yaml = schedule::format_plan(out.program.plan);
  } catch (const schedule::PlanError& e) {
    throw Error(e.kind() == schedule::ErrorKind::kResourceExhausted ? ErrorCode::kResourceExhausted
                                                                    : ErrorCode::kInvalidArgument,
                std::string(e.what()) + "\nnothing was written");
  } catch (const std::invalid_argument& e) {
    throw Error(ErrorCode::kInvalidArgument, e.what());
  }
  return out;
}

}  // namespace asn

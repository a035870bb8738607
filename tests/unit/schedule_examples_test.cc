// Every plan in examples/schedules/ (ASN_EXAMPLES_DIR) loads, compiles to the optimum,
// validates without a problem against the board profile it names (limits from the register
// map, as asnd takes them), turns into a TDM program for every phase and switch, and reads
// back the same after format_plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "asn/regmap/regs.hpp"
#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "asn/schedule/validate.hpp"

namespace asn::schedule {
namespace {

namespace fs = std::filesystem;

std::optional<BoardLimits> limits_of(std::string_view profile_name) {
  for (const auto& profile : regmap::register_map().boards) {
    if (profile.name != profile_name) continue;
    BoardLimits limits;
    limits.board = std::string(profile.name);
    limits.ports = static_cast<uint32_t>(profile.ports.size());
    limits.slots = profile.cap(regmap::Cap::kTdmSlots);
    limits.clock_hz = profile.cap(regmap::Cap::kClockHz);
    return limits;
  }
  return std::nullopt;
}

std::vector<fs::path> examples() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(ASN_EXAMPLES_DIR)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void check(const Plan& plan, const BoardLimits& limits) {
  ValidationReport report = validate(plan, limits);
  for (const auto& problem : report.problems) ADD_FAILURE() << problem.to_string();
  for (const auto& phase : plan.phases) {
    for (const auto& part : phase.parts) {
      TdmProgram program = make_tdm_program(plan, phase.name, part.switch_name, limits);
      EXPECT_EQ(program.slots_in_use, phase.slot_count());
      if (part.has_pattern) {
        EXPECT_TRUE(part.summary->optimal()) << phase.name << " " << part.switch_name;
      }
    }
  }
}

TEST(ScheduleExamples, EveryExampleLoadsCompilesAndValidates) {
  std::vector<fs::path> files = examples();
  EXPECT_GE(files.size(), 5u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    try {
      Plan plan = load_plan_file(file.string());
      ASSERT_FALSE(plan.board.empty()) << "an example names its board profile ('board:')";
      std::optional<BoardLimits> limits = limits_of(plan.board);
      ASSERT_TRUE(limits) << "unknown board profile " << plan.board;
      compile_plan(plan);
      check(plan, *limits);
      Plan again = parse_plan(format_plan(plan), file.string() + " (formatted)");
      compile_plan(again);
      check(again, *limits);
    } catch (const PlanError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// What the examples' comments promise.
TEST(ScheduleExamples, TheirCommentsHold) {
  auto slots_of = [](const std::string& file, const std::string& phase) {
    Plan plan = load_plan_file(std::string(ASN_EXAMPLES_DIR) + "/" + file);
    compile_plan(plan);
    return plan.find_phase(phase)->slot_count();
  };
  EXPECT_EQ(slots_of("mesh-exchange.yaml", "halo"), 4u);  // 000 L740: a 2-D mesh in 4 slots
  EXPECT_EQ(slots_of("all-to-all.yaml", "exchange"), 63u);
  EXPECT_EQ(slots_of("all-to-all.yaml", "exchange-16-double"), 30u);
  EXPECT_EQ(slots_of("netfpga-explicit.yaml", "write-round"), 7u);
  EXPECT_EQ(slots_of("netfpga-explicit.yaml", "write-round-compiled"), 4u);
}

}  // namespace
}  // namespace asn::schedule

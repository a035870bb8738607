// The validator (validate.hpp) catches every violation, naming the phase, slot, port and
// file line; and the TDM program (tdm_program.hpp) is what the registers need.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "asn/schedule/validate.hpp"

namespace asn::schedule {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// A 6-port board with 8 slots at 125 MHz, as a NetFPGA-1G with a small table.
BoardLimits board() {
  BoardLimits limits;
  limits.board = "netfpga-1g";
  limits.ports = 6;
  limits.slots = 8;
  limits.clock_hz = 125'000'000;
  return limits;
}

Plan compiled(const std::string& text) {
  Plan plan = parse_plan(text, "v.yaml");
  compile_plan(plan);
  return plan;
}

// A plan of one phase with the given timing keys and slots (the first slot at line 7).
std::string one_phase(
    const std::string& slots,
    const std::string& timing = "    slot_length: 1 us\n    guard_band: 48 ns\n") {
  return "plan: p\nphases:\n  - name: a\n" + timing + "    slots:\n" + slots;
}

std::vector<Problem> errors_of(const std::string& text, const BoardLimits& limits = board()) {
  return validate(compiled(text), limits).errors();
}

TEST(ScheduleValidate, AcceptsAValidPlan) {
  ValidationReport report = validate(
      compiled(one_phase("      - [0 -> 1, 1 -> 0, 2 -> 3]\n      - [3 -> 2]\n")), board());
  EXPECT_TRUE(report.ok());
  EXPECT_THAT(report.problems, SizeIs(0));
  EXPECT_NO_THROW(report.throw_if_errors());
}

TEST(ScheduleValidate, OutputTakingTwoInputs) {
  auto errors = errors_of(one_phase("      - []\n      - [0 -> 1, 2 -> 1]\n"));
  ASSERT_THAT(errors, SizeIs(1));
  const Problem& p = errors[0];
  EXPECT_EQ(p.phase, "a");
  EXPECT_EQ(p.slot, 1u);
  EXPECT_EQ(p.port, 1u);
  EXPECT_EQ(p.mark.line, 8u);
  EXPECT_EQ(p.to_string(),
            "v.yaml:8:18: phase 'a', slot 1, port 1: output 1 takes input 2 and also input 0 "
            "(line 8): an output takes one input per slot (000 L955)");
}

TEST(ScheduleValidate, InputDrivingTwoOutputs) {
  auto errors = errors_of(one_phase("      - [4 -> 1,\n         4 -> 2]\n"));
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_EQ(errors[0].port, 4u);
  EXPECT_EQ(errors[0].mark.line, 8u);
  EXPECT_THAT(errors[0].message,
              HasSubstr("input 4 sends to output 2 and also to output 1 (line 7)"));
}

TEST(ScheduleValidate, PortsThatDoNotExistAndSelfConnections) {
  auto errors = errors_of(one_phase("      - [0 -> 6, 9 -> 1, 2 -> 2]\n"));
  ASSERT_THAT(errors, SizeIs(2));  // the ports the board lacks are one error
  EXPECT_EQ(errors[0].port, 6u);
  EXPECT_THAT(errors[0].message,
              HasSubstr("ports 6, 9 do not exist; the board (netfpga-1g) has ports 0..5 (2 "
                        "connections in 1 phase use them, the first here: 0 -> 6)"));
  EXPECT_EQ(errors[1].port, 2u);
  EXPECT_THAT(errors[1].message, HasSubstr("connects port 2 to itself"));
  EXPECT_THAT(errors_of(one_phase("      - [0 -> 6]\n")).at(0).message,
              HasSubstr("0 -> 6: port 6 does not exist; the board (netfpga-1g) has ports 0..5"));
  BoardLimits hairpin = board();
  hairpin.self_connections = true;
  EXPECT_THAT(errors_of(one_phase("      - [2 -> 2]\n"), hairpin), SizeIs(0));
}

TEST(ScheduleValidate, MoreSlotsThanTheBoardHas) {
  // 12 connections into output 0: no schedule has fewer than 12 slots; the board has 8.
  Plan plan = compiled(
      "plan: p\nphases:\n  - name: fan-in\n    slot_length: 1 us\n    guard_band: 48 ns\n"
      "    pattern: [1 -> 0 x6, 2 -> 0 x6]\n");
  ValidationReport report = validate(plan, board());
  std::vector<Problem> errors = report.errors();
  ASSERT_THAT(errors, SizeIs(1));
  const Problem& p = errors[0];
  EXPECT_EQ(p.kind, ErrorKind::kResourceExhausted);
  EXPECT_EQ(p.mark, (Mark{6, 14}));
  EXPECT_THAT(p.message, AllOf(HasSubstr("needs 12 slots; the board (netfpga-1g) has 8"),
                               HasSubstr("no schedule of it fits")));
  try {
    report.throw_if_errors();
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kResourceExhausted);
  }
  // The greedy baseline can overflow where the optimum fits: say so.
  BoardLimits three = board();
  three.slots = 2;
  Plan greedy = parse_plan(
      "plan: g\nphases:\n  - {name: a, slot_length: 1 us, guard_band: 0 ns,"
      " pattern: [2 -> 0, 2 -> 1, 0 -> 1, 1 -> 0]}\n");
  CompileOptions options;
  options.algorithm = Algorithm::kGreedy;
  compile_plan(greedy, options);
  EXPECT_THAT(validate(greedy, three).errors().at(0).message,
              AllOf(HasSubstr("needs 3 slots"), HasSubstr("2 would do")));
}

TEST(ScheduleValidate, TimingRules) {
  auto timing_error = [](const std::string& timing) {
    auto errors = errors_of(one_phase("      - [0 -> 1]\n", timing));
    return errors.empty() ? std::string("(none)") : errors[0].message;
  };
  EXPECT_THAT(timing_error("    slot_length: 1 us\n    guard_band: 1 us\n"),
              HasSubstr("guard_band (125 cycles) must be shorter than the slot (125 cycles)"));
  EXPECT_THAT(timing_error("    slot_length: 1 us\n    guard_band: 70000 cycles\n"),
              HasSubstr("the TDM block holds at most 65535"));
  EXPECT_THAT(timing_error("    slot_length: 200 ms\n    guard_band: 0 ns\n"),
              HasSubstr("slot_length is 25000000 cycles at 125 MHz; the TDM block holds at most "
                        "16777215 (134.218 ms)"));
  EXPECT_THAT(timing_error("    slot_length: 1 ns\n    guard_band: 0 ns\n"),
              HasSubstr("slot_length is 0 cycles"));
  EXPECT_THAT(timing_error("    slot_length: 1 us\n    guard_band: 0 ns\n    policy: sla\n"),
              HasSubstr("policy sla needs the wormhole slot"));
  EXPECT_THAT(timing_error("    slot_length: 1 us\n    guard_band: 0 ns\n    policy: preempt\n"),
              HasSubstr("policy preempt needs the wormhole slot"));
  EXPECT_THAT(timing_error("    slot_length: 1 us\n    guard_band: 0 ns\n"
                           "    wormhole: {length: 2 us}\n"),
              HasSubstr("needs policy sla"));
  EXPECT_THAT(timing_error("    slot_length: 2 us\n    guard_band: 1 us\n    policy: sla\n"
                           "    wormhole: {length: 1 us}\n"),
              HasSubstr("must be shorter than the wormhole slot"));
  EXPECT_EQ(timing_error("    slot_length: 1 us\n    guard_band: 48 ns\n    policy: sla\n"
                         "    wormhole: {length: 3 us}\n"),
            "(none)");
  EXPECT_THAT(errors_of("plan: p\nphases:\n  - {name: a, slot_length: 1 us, guard_band: 0 ns, "
                        "slots: []}\n")
                  .at(0)
                  .message,
              HasSubstr("runs nothing"));
  EXPECT_THAT(errors_of("plan: p\nphases:\n  - {name: a, slot_length: 1 us, guard_band: 0 ns, "
                        "policy: ses, slots: [[], []]}\n")
                  .at(0)
                  .message,
              HasSubstr("every slot is empty, policy ses skips them all"));
}

TEST(ScheduleValidate, Warnings) {
  ValidationReport report =
      validate(compiled(one_phase("      - [0 -> 1]\n      - []\n",
                                  "    slot_length: 1.3 us\n    guard_band: 50 ns\n")),
               board());
  EXPECT_TRUE(report.ok());
  auto warnings = report.warnings();
  ASSERT_THAT(warnings, SizeIs(3));
  EXPECT_THAT(warnings[0].message,
              HasSubstr("slot_length 1.3 us is not a whole number of cycles at 125 MHz: using "
                        "163 cycles (1.304 us)"));
  EXPECT_THAT(warnings[1].message, HasSubstr("guard_band 50 ns is not a whole number"));
  EXPECT_THAT(warnings[2].message, HasSubstr("1 of 2 slots are empty; policy fixed"));
  Plan other = compiled("board: emulated-64port\n" + one_phase("      - [0 -> 1]\n"));
  EXPECT_THAT(validate(other, board()).warnings().at(0).message,
              HasSubstr("written for board emulated-64port; this board is netfpga-1g"));
}

TEST(ScheduleValidate, FabricRules) {
  const std::string fabric = R"(plan: f
switches: [x, y]
defaults: {slot_length: 1 us, guard_band: 48 ns}
phases:
  - name: a
    policy: ses
    switches:
      x: {slots: [[0 -> 1], [1 -> 0]]}
      y: {slots: [[0 -> 1, 3 -> 1]]}
)";
  Plan plan = compiled(fabric);
  auto errors = validate(plan, board()).errors();
  ASSERT_THAT(errors, SizeIs(2));
  EXPECT_THAT(errors[0].message, HasSubstr("policy ses skips slots by each switch's own state"));
  EXPECT_EQ(errors[1].switch_name, "y");
  // asnd validates its own part only.
  ValidateOptions only_x;
  only_x.switch_name = "x";
  EXPECT_THAT(validate(plan, board(), only_x).errors(), SizeIs(1));
  ValidateOptions nobody;
  nobody.switch_name = "z";
  EXPECT_THAT(validate(plan, board(), nobody).errors().at(0).message,
              HasSubstr("has no part for switch 'z' (its switches: x, y)"));
  // The phase runs 2 slots on every switch (y idles in its second): capacity counts that.
  BoardLimits one_slot = board();
  one_slot.slots = 1;
  ValidateOptions only_y;
  only_y.switch_name = "y";
  auto y_errors = validate(plan, one_slot, only_y).errors();
  ASSERT_FALSE(y_errors.empty());
  EXPECT_THAT(y_errors[1].message, HasSubstr("another switch's part of this phase has that many"));
}

TEST(ScheduleValidate, UncompiledPatternsAndMissingPhases) {
  Plan plan = parse_plan(
      "plan: p\nphases:\n  - {name: a, slot_length: 1 us, guard_band: 0 ns, pattern: [0 -> 1]}\n");
  EXPECT_THAT(validate(plan, board()).errors().at(0).message, HasSubstr("has not been compiled"));
  ValidateOptions phase;
  phase.phase = "b";
  EXPECT_THAT(
      validate(compiled(one_phase("      - [0 -> 1]\n")), board(), phase).errors().at(0).message,
      HasSubstr("has no phase 'b'"));
  BoardLimits empty;
  EXPECT_THAT(validate(plan, empty).errors().at(0).message,
              HasSubstr("board limits are incomplete"));
}

TEST(ScheduleValidate, CatchesACorruptedSchedule) {
  // The validator does not trust the compiler: move a compiled connection into a slot that
  // already uses its output.
  Plan plan = compiled(
      "plan: p\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns\n"
      "    pattern: [{all_to_all: {ports: 4}}]\n");
  ASSERT_TRUE(validate(plan, board()).ok());
  auto& slots = plan.phases[0].parts[0].slots;
  slots[0].connections.push_back(slots[1].connections.front());
  slots[1].connections.erase(slots[1].connections.begin());
  auto errors = validate(plan, board()).errors();
  ASSERT_THAT(errors, SizeIs(2));  // its output and its input are both taken in slot 0
  EXPECT_EQ(errors[0].slot, 0u);
  EXPECT_EQ(errors[0].mark.line, 6u);  // the generator's line
}

TEST(ScheduleValidate, ProblemsAreCappedButCounted) {
  std::string slots;
  for (int i = 0; i < 100; ++i) slots += "      - [0 -> 2, 1 -> 2]\n";
  ValidationReport report = validate(compiled(one_phase(slots)), board());
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.problems.size(), 50u);
  EXPECT_EQ(report.error_count, 100u + 1);  // an output twice a slot, and too many slots
  EXPECT_EQ(report.omitted, report.error_count - 50);
  try {
    report.throw_if_errors();
    ADD_FAILURE() << "no PlanError";
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("\n(and 96 more)"));  // 5 shown of 101, not of 50
  }
}

// Issue 28, finding 7: warnings past the cap are counted in one more ("and 70 more").
TEST(ScheduleValidate, WarningsPastTheCapAreCounted) {
  std::string text = "plan: p\nphases:\n";
  for (int i = 0; i < 60; ++i) {  // two warnings a phase: 1.3 us and 50 ns are not whole cycles
    text += "  - {name: p" + std::to_string(i) +
            ", slot_length: 1.3 us, guard_band: 50 ns, slots: [[0 -> 1]]}\n";
  }
  ValidationReport report = validate(compiled(text), board());
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(report.omitted_warnings, 70u);
  const auto warnings = report.warnings();
  ASSERT_THAT(warnings, SizeIs(51));
  EXPECT_EQ(warnings.back().to_string(),
            "v.yaml: warning: and 70 more warnings, not listed (a check lists 50 problems at "
            "most)");
}

// Issue 28, finding 7: a plan for a 64-port board on a 6-port one is one error naming the
// ports it lacks and the board the plan is for, not one per connection.
TEST(ScheduleValidate, PortsTheBoardLacksAreOneError) {
  Plan plan = compiled(
      "plan: big\nboard: emulated-64port\nphases:\n"
      "  - {name: a, slot_length: 1 us, guard_band: 48 ns, pattern: [{all_to_all: {ports: 64}}]}\n"
      "  - {name: b, slot_length: 1 us, guard_band: 48 ns, slots: [[0 -> 1, 2 -> 9]]}\n");
  BoardLimits limits = board();
  limits.slots = 64;
  const auto errors = validate(plan, limits).errors();
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_EQ(errors[0].phase, "a");
  EXPECT_THAT(errors[0].message,
              HasSubstr("ports 6..63 do not exist; the board (netfpga-1g) has ports 0..5 ("));
  EXPECT_THAT(errors[0].message, HasSubstr(" connections in 2 phases use them, the first here: "));
  EXPECT_THAT(errors[0].message, HasSubstr("; plan 'big' is for board emulated-64port"));
}

// ---- the TDM program -------------------------------------------------------------------

TEST(ScheduleTdmProgram, EntriesAndTiming) {
  Plan plan = compiled(R"(plan: p
phases:
  - name: a
    policy: sla
    slot_length: 1 us
    guard_band: 50 ns
    wormhole: {length: 1.5 us}
    slots:
      - [0 -> 5, 1 <- 3, 4 -> 0]
      - []
      - [2 -> 1]
)");
  TdmProgram program = make_tdm_program(plan, "a", "", board());
  EXPECT_EQ(program.plan, "p");
  EXPECT_EQ(program.phase, "a");
  EXPECT_EQ(program.policy, Policy::kSla);
  EXPECT_TRUE(program.wormhole);
  EXPECT_EQ(program.slots_in_use, 3u);
  EXPECT_EQ(program.slot_length_cycles, 125u);
  EXPECT_EQ(program.wormhole_length_cycles, 188u);  // 187.5, to the nearest cycle
  EXPECT_EQ(program.guard_band_cycles, 7u);         // 6.25, rounded up
  ASSERT_EQ(program.entries.size(), 3u);
  SlotEntry first{};
  first[5] = kEntryConnected | 0;
  first[1] = kEntryConnected | 3;
  first[0] = kEntryConnected | 4;
  EXPECT_EQ(program.entries[0], first);
  EXPECT_EQ(program.entries[1], SlotEntry{});
  EXPECT_EQ(program.entries[2][1], kEntryConnected | 2);
  auto words = entry_words(program.entries[2]);
  EXPECT_EQ(words[0], uint32_t{0x82} << 8);  // out[1] in bits 15:8 of word 0
  for (size_t w = 1; w < words.size(); ++w) EXPECT_EQ(words[w], 0u);
}

TEST(ScheduleTdmProgram, FabricPartsRunThePhasesSlotCount) {
  Plan plan = compiled(R"(plan: f
switches: [x, y, z]
defaults: {slot_length: 2 us, guard_band: 48 ns, wormhole: on}
phases:
  - name: a
    switches:
      x: {slots: [[0 -> 1], [1 -> 0], [2 -> 3]]}
      y: {pattern: [0 -> 1]}
)");
  for (const char* name : {"x", "y", "z"}) {
    TdmProgram program = make_tdm_program(plan, "a", name, board());
    EXPECT_EQ(program.switch_name, name);
    EXPECT_EQ(program.slots_in_use, 3u) << name;  // frames aligned slot for slot
    EXPECT_EQ(program.entries.size(), 3u);
    EXPECT_EQ(program.wormhole_length_cycles, program.slot_length_cycles);  // not sla
  }
  TdmProgram y = make_tdm_program(plan, "a", "y", board());
  EXPECT_EQ(y.entries[0][1], kEntryConnected | 0);
  EXPECT_EQ(y.entries[1], SlotEntry{});
  TdmProgram z = make_tdm_program(plan, "a", "z", board());
  EXPECT_NE(z.digest(), y.digest());
  EXPECT_EQ(z.digest(), make_tdm_program(plan, "a", "z", board()).digest());
}

TEST(ScheduleTdmProgram, RefusesWhatTheBoardCannotRun) {
  Plan plan = compiled(one_phase("      - [0 -> 1, 2 -> 1]\n"));
  try {
    make_tdm_program(plan, "a", "", board());
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("output 1 takes input 2 and also input 0"));
  }
  Plan good = compiled(one_phase("      - [0 -> 1]\n"));
  EXPECT_THROW(make_tdm_program(good, "b", "", board()), PlanError);
  BoardLimits wide = board();
  wide.ports = 65;
  try {
    make_tdm_program(good, "a", "", wide);
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a TDM slot table entry holds 64"));
  }
}

}  // namespace
}  // namespace asn::schedule

// The plan file (lib/schedule, plan_file.hpp): what it reads, the error for each kind of
// mistake with its line and column, the limits against hostile input, lengths and units,
// and the writer's round trip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "support.hpp"

namespace asn::schedule {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kMinimal[] = R"(plan: p
phases:
  - name: a
    slot_length: 1 us
    guard_band: 48 ns
    pattern: ["0 -> 1"]
)";

// The problem parse_plan reports for `text`; fails the test if it parses.
Problem parse_error(const std::string& text, const ParseLimits& limits = {}) {
  try {
    parse_plan(text, "t.yaml", limits);
  } catch (const PlanError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.problem();
  }
  ADD_FAILURE() << "parsed:\n" << text;
  return {};
}

// A phase body inside a minimal plan, for errors in phase keys (the phase starts at line 3).
std::string with_phase(const std::string& body) { return "plan: p\nphases:\n  - name: a\n" + body; }

TEST(SchedulePlanFile, ReadsEveryKey) {
  Plan plan = parse_plan(R"(version: 1
plan: halo
description: two phases
board: netfpga-1g
defaults:
  policy: ses
  slot_length: 1 us
  guard_band: 48 ns
  wormhole: {length: 2 us}
phases:
  - name: one
    description: explicit
    slots:
      - ["0 -> 1", "2 <- 3"]
      - []
      - ~
  - name: two
    policy: SLA
    slot_length: 250 cycles
    wormhole: off
    pattern:
      - "0 -> 1 x3"
      - 1->0
      - all_to_all: {ports: 3}
)",
                         "halo.yaml");
  EXPECT_EQ(plan.name, "halo");
  EXPECT_EQ(plan.description, "two phases");
  EXPECT_EQ(plan.board, "netfpga-1g");
  EXPECT_EQ(plan.file, "halo.yaml");
  EXPECT_FALSE(plan.is_fabric());
  ASSERT_EQ(plan.phases.size(), 2u);

  const Phase& one = plan.phases[0];
  EXPECT_EQ(one.name, "one");
  EXPECT_EQ(one.description, "explicit");
  EXPECT_EQ(one.mark, (Mark{11, 5}));
  EXPECT_EQ(one.timing.policy, Policy::kSes);  // from the defaults
  EXPECT_EQ(*one.timing.slot_length, (Length{1, 0, LengthUnit::kMicroseconds, {}}));
  EXPECT_TRUE(one.timing.wormhole);  // {length: ...} turns it on
  EXPECT_EQ(*one.timing.wormhole_length, (Length{2, 0, LengthUnit::kMicroseconds, {}}));
  ASSERT_EQ(one.parts.size(), 1u);
  const Part& explicit_part = one.parts[0];
  EXPECT_FALSE(explicit_part.has_pattern);
  ASSERT_EQ(explicit_part.slots.size(), 3u);
  ASSERT_EQ(explicit_part.slots[0].connections.size(), 2u);
  EXPECT_EQ(explicit_part.slots[0].connections[0], (Connection{0, 1, {}}));
  EXPECT_EQ(explicit_part.slots[0].connections[1], (Connection{3, 2, {}}));  // "2 <- 3"
  EXPECT_EQ(explicit_part.slots[0].connections[1].mark, (Mark{14, 20}));
  EXPECT_TRUE(explicit_part.slots[1].connections.empty());
  EXPECT_TRUE(explicit_part.slots[2].connections.empty());

  const Phase& two = plan.phases[1];
  EXPECT_EQ(two.timing.policy, Policy::kSla);
  EXPECT_EQ(*two.timing.slot_length, Length::cycles(250));
  EXPECT_EQ(*two.timing.guard_band, Length::nanoseconds(48));
  EXPECT_FALSE(two.timing.wormhole);
  const Part& pattern_part = two.parts[0];
  ASSERT_TRUE(pattern_part.has_pattern);
  // x3, then 1->0, then the 6 ordered pairs of ports 0..2.
  ASSERT_EQ(pattern_part.pattern.size(), 3u + 1u + 6u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pattern_part.pattern[i], (Connection{0, 1, {}}));
  EXPECT_EQ(pattern_part.pattern[3], (Connection{1, 0, {}}));
  EXPECT_EQ(pattern_part.pattern[4].mark, (Mark{24, 9}));  // the generator's key
}

TEST(SchedulePlanFile, FabricPlanHasAPartPerSwitchInEveryPhase) {
  Plan plan = parse_plan(R"(plan: f
switches: [sw0, sw1, sw2]
defaults: {slot_length: 1 us, guard_band: 48 ns}
phases:
  - name: a
    switches:
      sw2: {slots: [["0 -> 1"]]}
      sw0: {pattern: ["1 -> 0", "1 -> 2"]}
  - name: idle
    wormhole: on
)");
  ASSERT_TRUE(plan.is_fabric());
  EXPECT_EQ(plan.switches, (std::vector<std::string>{"sw0", "sw1", "sw2"}));
  const Phase& a = plan.phases[0];
  ASSERT_EQ(a.parts.size(), 3u);
  EXPECT_EQ(a.parts[0].switch_name, "sw0");
  EXPECT_TRUE(a.parts[0].has_pattern);
  EXPECT_EQ(a.parts[1].switch_name, "sw1");  // not mentioned: idles
  EXPECT_FALSE(a.parts[1].has_pattern);
  EXPECT_TRUE(a.parts[1].slots.empty());
  EXPECT_EQ(a.parts[2].slots.size(), 1u);
  EXPECT_EQ(a.find_part("sw2"), &a.parts[2]);
  EXPECT_EQ(plan.phases[1].parts.size(), 3u);
}

TEST(SchedulePlanFile, GeneratorsExpandToTheirPatterns) {
  auto pattern_of = [](const std::string& generator) {
    return parse_plan(with_phase("    slot_length: 1 us\n    guard_band: 0 ns\n    pattern:\n"
                                 "      - " +
                                 generator + "\n"))
        .phases[0]
        .parts[0]
        .pattern;
  };
  auto pairs = [](const std::vector<Connection>& connections) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const auto& c : connections) out.emplace_back(c.from, c.to);
    std::sort(out.begin(), out.end());
    return out;
  };
  using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(pairs(pattern_of("all_to_all: {ports: [2, 7, 9]}")),
            (Pairs{{2, 7}, {2, 9}, {7, 2}, {7, 9}, {9, 2}, {9, 7}}));
  EXPECT_EQ(pairs(pattern_of("shift: {ports: 4..7, by: -1}")),
            (Pairs{{4, 7}, {5, 4}, {6, 5}, {7, 6}}));
  // 2 x 3 grid row-major -> its 3 x 2 transpose: (r, c) at 3r + c goes to 2c + r.
  EXPECT_EQ(pairs(pattern_of("transpose: {rows: 2, cols: 3}")),
            (Pairs{{1, 2}, {2, 4}, {3, 1}, {4, 3}}));
  // 2 x 2 mesh without wrap: each node has one east/west and one south/north neighbour.
  EXPECT_EQ(pairs(pattern_of("mesh: {rows: 2, cols: 2}")),
            (Pairs{{0, 1}, {0, 2}, {1, 0}, {1, 3}, {2, 0}, {2, 3}, {3, 1}, {3, 2}}));
  EXPECT_EQ(pattern_of("mesh: {rows: 4, cols: 4, wrap: on}").size(), 64u);
  EXPECT_EQ(pattern_of("mesh: {rows: 3, cols: 5}").size(), 2u * (4 * 3 + 2 * 5));
  EXPECT_EQ(pattern_of("mesh: {rows: 1, cols: 3, wrap: on, ports: [10, 20, 30]}").size(), 6u);
}

// ---- errors: each kind of mistake, with its line, column, field and advice ---------------

TEST(SchedulePlanFile, YamlSyntaxErrorHasLineAndColumn) {
  Problem p = parse_error("plan: p\nphases:\n  - name: [a\n");
  EXPECT_EQ(p.file, "t.yaml");
  EXPECT_EQ(p.mark.line, 4u);
  EXPECT_THAT(p.message, HasSubstr("not valid YAML"));
  EXPECT_THAT(p.to_string(), StartsWith("t.yaml:4:"));
}

TEST(SchedulePlanFile, UnknownKeySuggestsTheRightOne) {
  Problem p = parse_error(with_phase("    slot_lenght: 1 us\n"));
  EXPECT_EQ(p.mark, (Mark{4, 5}));
  EXPECT_EQ(p.field, "phases[0].slot_lenght");
  EXPECT_THAT(p.message, HasSubstr("did you mean 'slot_length'"));
  EXPECT_EQ(p.to_string(),
            "t.yaml:4:5: phases[0].slot_lenght: unknown key (did you mean 'slot_length'?)");
  Problem far = parse_error("plan: p\nzzzzzzzz: 1\n");
  EXPECT_THAT(far.message, HasSubstr("one of: version, plan"));
}

TEST(SchedulePlanFile, KeyGivenTwiceNamesTheFirst) {
  Problem p = parse_error(with_phase("    guard_band: 1 ns\n    guard_band: 2 ns\n"));
  EXPECT_EQ(p.mark, (Mark{5, 5}));
  EXPECT_THAT(p.message, HasSubstr("given twice (first at line 4)"));
}

TEST(SchedulePlanFile, WrongKindOfValueSaysWhatWasExpected) {
  Problem p = parse_error(with_phase("    slot_length: [1, 2]\n"));
  EXPECT_EQ(p.mark, (Mark{4, 18}));
  EXPECT_EQ(p.field, "phases[0].slot_length");
  EXPECT_THAT(p.message,
              AllOf(HasSubstr("expected a length such as '1 us'"), HasSubstr("(got a list)")));
  Problem phases = parse_error("plan: p\nphases: {a: 1}\n");
  EXPECT_THAT(phases.message, HasSubstr("expected a list"));
}

TEST(SchedulePlanFile, BadLengthsSayWhy) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"125", "it has no unit"}, Case{"1 uss", "unknown unit 'uss'"},
        Case{"1.5 cycles", "cycles are whole"}, Case{"-1 us", "start with a number"},
        Case{"1. us", "needs digits after it"}, Case{"0.0000000001 ms", "more than 9 decimals"}}) {
    Problem p = parse_error(with_phase(std::string("    guard_band: ") + c.text + "\n"));
    EXPECT_EQ(p.mark, (Mark{4, 17})) << c.text;
    EXPECT_THAT(p.message, AllOf(HasSubstr(c.why), HasSubstr("'250 cycles'"))) << c.text;
  }
}

TEST(SchedulePlanFile, BadConnectionPointsAtTheColumn) {
  // Column of the offending character inside the connection text (quoted: one more).
  Problem arrow = parse_error(with_phase("    pattern: [\"3 => 5\"]\n"));
  EXPECT_EQ(arrow.mark, (Mark{4, 18}));
  EXPECT_EQ(arrow.field, "phases[0].pattern[0]");
  EXPECT_THAT(arrow.message, AllOf(HasSubstr("expected '->' or '<-'"), HasSubstr("'3 -> 5'")));

  Problem port = parse_error(with_phase("    pattern:\n      - 3 -> 70000\n"));
  EXPECT_EQ(port.mark, (Mark{5, 14}));
  EXPECT_THAT(port.message, HasSubstr("a port number is at most 65535"));

  Problem junk = parse_error(with_phase("    pattern: [0 -> 1 please]\n"));
  EXPECT_EQ(junk.mark, (Mark{4, 22}));
  EXPECT_THAT(junk.message, HasSubstr("unexpected text at 'please'"));

  Problem zero = parse_error(with_phase("    pattern: [0 -> 1 x0]\n"));
  EXPECT_THAT(zero.message, HasSubstr("a repeat count is at least 1"));

  Problem in_slot = parse_error(with_phase("    slots: [[0 -> 1 x2]]\n"));
  EXPECT_EQ(in_slot.field, "phases[0].slots[0][0]");
  EXPECT_THAT(in_slot.message, HasSubstr("a repeat count belongs in a pattern"));

  Problem not_a_list = parse_error(with_phase("    slots: [\"0 -> 1\"]\n"));
  EXPECT_THAT(not_a_list.message, HasSubstr("a slot is a list of connections"));

  Problem nested = parse_error(with_phase("    pattern: [[0, 1]]\n"));
  EXPECT_THAT(nested.message, HasSubstr("expected a connection such as '3 -> 5'"));
}

TEST(SchedulePlanFile, BadGeneratorsSayWhatTheyNeed) {
  auto error_of = [](const std::string& generator) {
    return parse_error(with_phase("    pattern:\n      - " + generator + "\n"));
  };
  EXPECT_THAT(error_of("all_to_al: {ports: 4}").message, HasSubstr("did you mean 'all_to_all'"));
  EXPECT_THAT(error_of("{all_to_all: {ports: 4}, mesh: {rows: 2, cols: 2}}").message,
              HasSubstr("a generator is exactly one of"));
  Problem missing = error_of("shift: {ports: 8}");
  EXPECT_EQ(missing.mark, (Mark{5, 9}));
  EXPECT_THAT(missing.message, HasSubstr("needs 'by:'"));
  EXPECT_THAT(error_of("shift: {ports: 8, by: 16}").message,
              HasSubstr("connects every port to itself"));
  EXPECT_THAT(error_of("mesh: {rows: 2, cols: 2, ports: [1, 2, 3]}").message,
              HasSubstr("lists 3 ports for a 2 x 2 grid of 4"));
  EXPECT_THAT(error_of("all_to_all: {ports: [1, 2, 1]}").message,
              HasSubstr("port 1 is listed twice"));
  EXPECT_THAT(error_of("all_to_all: {ports: 9..3}").message, HasSubstr("an empty range"));
  EXPECT_THAT(error_of("all_to_all: {ports: 0}").message, HasSubstr("from 1 to 65536"));
}

// Issue 28, finding 7: every key that is missing at once, not one a try.
TEST(SchedulePlanFile, MissingKeysAreNamedTogether) {
  EXPECT_THAT(parse_error("description: d\n").message,
              HasSubstr("needs 'plan: NAME' (a name such as 'halo') and 'phases:' (a list of "
                        "phases)"));
  const Problem bare = parse_error("plan: p\nphases:\n  - description: d\n");
  EXPECT_EQ(bare.mark.line, 3u);
  EXPECT_THAT(bare.message, HasSubstr("a phase needs 'name:' (a name such as 'halo'), "
                                      "'slot_length:' (in the phase"));
  EXPECT_THAT(bare.message, HasSubstr(", 'guard_band:' (in the phase or under 'defaults:', "
                                      "e.g. 'guard_band: 50 ns') and 'slots:'"));
  // Timing under defaults: counts.
  const Problem no_slots = parse_error(
      "plan: p\ndefaults: {slot_length: 1 us, guard_band: 0 ns}\nphases:\n"
      "  - name: a\n");
  EXPECT_THAT(no_slots.message, HasSubstr("phase 'a' needs 'slots:'"));
  EXPECT_THAT(no_slots.message, ::testing::Not(HasSubstr("slot_length")));
}

TEST(SchedulePlanFile, MissingAndConflictingKeys) {
  EXPECT_THAT(parse_error("").message, HasSubstr("the file is empty"));
  EXPECT_THAT(parse_error("phases: []\n").message, HasSubstr("needs 'plan: NAME'"));
  EXPECT_THAT(parse_error("plan: p\n").message, HasSubstr("needs 'phases:'"));
  EXPECT_THAT(parse_error("plan: p\nphases: []\n").message, HasSubstr("lists no phase"));
  EXPECT_THAT(parse_error("plan: 'a b'\nphases: []\n").message, HasSubstr("is not a name"));
  EXPECT_THAT(parse_error("version: 2\nplan: p\n").message, HasSubstr("from 1 to 1"));

  Problem no_name = parse_error("plan: p\nphases:\n  - slots: []\n");
  EXPECT_THAT(no_name.message, HasSubstr("needs 'name:'"));

  Problem no_length = parse_error(with_phase("    guard_band: 1 ns\n    slots: []\n"));
  EXPECT_EQ(no_length.mark, (Mark{3, 11}));
  EXPECT_THAT(no_length.message,
              HasSubstr("phase 'a' needs 'slot_length:' (in the phase or under 'defaults:', "
                        "e.g. 'slot_length: 1 us')"));

  Problem both = parse_error(
      with_phase("    slot_length: 1 us\n    guard_band: 0 ns\n    slots: []\n    pattern: []\n"));
  EXPECT_EQ(both.mark.line, 7u);
  EXPECT_THAT(both.message, HasSubstr("either 'slots:' (explicit) or 'pattern:'"));
  Problem neither = parse_error(with_phase("    slot_length: 1 us\n    guard_band: 0 ns\n"));
  EXPECT_THAT(neither.message, HasSubstr("needs 'slots:'"));

  Problem twice = parse_error(R"(plan: p
defaults: {slot_length: 1 us, guard_band: 0 ns}
phases:
  - {name: a, slots: []}
  - {name: a, slots: []}
)");
  EXPECT_EQ(twice.mark.line, 5u);
  EXPECT_THAT(twice.message, HasSubstr("a phase named 'a' already exists (line 4)"));

  EXPECT_THAT(parse_error(with_phase("    policy: fast\n")).message,
              HasSubstr("not a policy (fixed, ses, sla or preempt)"));
  EXPECT_THAT(parse_error(with_phase("    wormhole: 2 us\n")).message,
              HasSubstr("write 'wormhole: {length: 2 us}'"));
  EXPECT_THAT(parse_error(with_phase("    wormhole: maybe\n")).message,
              HasSubstr("is not on or off"));
}

TEST(SchedulePlanFile, FabricMistakes) {
  const std::string head =
      "plan: f\nswitches: [sw0, sw1]\ndefaults: {slot_length: 1 us, "
      "guard_band: 0 ns}\nphases:\n  - name: a\n";
  Problem unknown = parse_error(head + "    switches:\n      sw3: {slots: []}\n");
  EXPECT_EQ(unknown.mark, (Mark{7, 7}));
  EXPECT_EQ(unknown.field, "phases[0].switches.sw3");
  EXPECT_THAT(unknown.message, HasSubstr("no switch 'sw3' in the plan's switches (did you mean"));
  Problem flat = parse_error(head + "    slots: []\n");
  EXPECT_THAT(flat.message, HasSubstr("each switch has its own 'slots:'"));
  Problem twice = parse_error("plan: f\nswitches: [a, a]\nphases: []\n");
  EXPECT_THAT(twice.message, HasSubstr("'a' is listed twice"));
  Problem not_fabric = parse_error(with_phase("    switches: {sw0: {slots: []}}\n"));
  EXPECT_THAT(not_fabric.message, HasSubstr("this plan lists no switches"));
}

TEST(SchedulePlanFile, AliasesAndSecondDocumentsAreRefused) {
  Problem alias = parse_error(R"(plan: p
phases:
  - name: a
    slot_length: &l 1 us
    guard_band: *l
    slots: []
)");
  EXPECT_EQ(alias.mark.line, 5u);
  EXPECT_THAT(alias.message, HasSubstr("aliases (*name) are not supported"));
  Problem second = parse_error(std::string(kMinimal) + "---\nplan: q\n");
  EXPECT_EQ(second.mark.line, 7u);
  EXPECT_THAT(second.message, HasSubstr("one YAML document"));
  EXPECT_THAT(parse_error("plan: p\n? [a, b]\n: 1\n").message,
              HasSubstr("a key must be a plain name"));
}

// ---- limits: hostile input fails at once, naming the limit -----------------------------

TEST(SchedulePlanFile, AMillionLinesFailBeforeParsing) {
  std::string text = "plan: p\nphases:\n";
  text.reserve(2'100'000);
  while (text.size() < 2'000'000) text += "#\n";  // a million lines
  text += std::string(kMinimal).substr(8);
  Problem p = parse_error(text);
  EXPECT_EQ(p.mark, (Mark{262145, 1}));
  EXPECT_THAT(p.message, HasSubstr("more than 262144 lines (max_lines)"));
}

TEST(SchedulePlanFile, LimitsOnSizeNodesDepthScalarsAndConnections) {
  ParseLimits small;
  small.max_file_bytes = 100;
  EXPECT_THAT(parse_error(std::string(200, '#'), small).message,
              HasSubstr("larger than the limit of 100 bytes (max_file_bytes)"));

  std::string nul = kMinimal;
  nul[3] = '\0';
  EXPECT_THAT(parse_error(nul).message, HasSubstr("NUL bytes"));

  std::string deep = "plan: p\nphases: ";
  for (int i = 0; i < 1000; ++i) deep += "{a: ";
  Problem depth = parse_error(deep);
  EXPECT_EQ(depth.mark.line, 2u);
  EXPECT_THAT(depth.message, HasSubstr("nested more than 32 levels deep (max_depth)"));

  // (bench/schedule_bench.cc times the default limits against files that reach them)
  ParseLimits nodes;
  nodes.max_nodes = 1000;
  std::string many = "plan: p\nphases:\n  - name: a\n    slots: [[";
  for (int i = 0; i < 2000; ++i) many += "0 -> 1,";
  many += "]]\n";
  Problem node_limit = parse_error(many, nodes);
  EXPECT_EQ(node_limit.mark.line, 4u);
  EXPECT_THAT(node_limit.message, HasSubstr("more than 1000 YAML values (max_nodes)"));

  std::string quoted = "plan: p\ndescription: \"";
  for (int i = 0; i < 700; ++i) quoted += std::string(99, 'x') + "\n";
  Problem scalar = parse_error(quoted + "\"\n");
  EXPECT_EQ(scalar.mark, (Mark{2, 14}));
  EXPECT_THAT(scalar.message,
              HasSubstr("a quoted value longer than the limit of 65536 bytes (max_scalar_bytes)"));
  ParseLimits short_scalars;
  short_scalars.max_scalar_bytes = 12;
  EXPECT_THAT(
      parse_error("plan: p\ndescription: a plain value of some length\n", short_scalars).message,
      HasSubstr("a value of 28 bytes is longer than the limit of 12 bytes"));

  Problem line = parse_error("plan: p\ndescription: " + std::string(70000, 'x') + "\n");
  EXPECT_EQ(line.mark, (Mark{2, 1}));
  EXPECT_THAT(line.message, HasSubstr("a line longer than 65536 bytes (max_line_bytes)"));

  // yaml-cpp reads a whole [...] before reporting its items: the prescan stops it first.
  std::string flow = "plan: p\nphases:\n  - name: a\n    slots: [\n";
  for (int i = 0; i < 30000; ++i) flow += "      [0 -> 1],\n";
  Problem flow_limit = parse_error(flow + "    ]\n");
  EXPECT_EQ(flow_limit.mark, (Mark{4, 12}));
  EXPECT_THAT(flow_limit.message, HasSubstr("longer than 262144 bytes (max_flow_bytes)"));

  Problem huge = parse_error(with_phase("    pattern: [{all_to_all: {ports: 65536}}]\n"));
  EXPECT_EQ(huge.mark, (Mark{4, 16}));
  EXPECT_THAT(huge.message, AllOf(HasSubstr("all_to_all makes 4294901760 connections"),
                                  HasSubstr("limit of 2097152 (max_connections)")));

  ParseLimits few;
  few.max_connections = 5;
  Problem repeat = parse_error(with_phase("    pattern: [0 -> 1 x3, 1 -> 0 x3]\n"), few);
  EXPECT_EQ(repeat.field, "phases[0].pattern[1]");
  EXPECT_THAT(repeat.message, HasSubstr("the connection makes 3 connections; with the 3 before"));

  ParseLimits slots;
  slots.max_slots = 2;
  EXPECT_THAT(parse_error(with_phase("    slots: [[], [], []]\n"), slots).message,
              HasSubstr("3 slots is more than the limit of 2 (max_slots"));
}

TEST(SchedulePlanFile, LoadsFilesAndRefusesWhatIsNotOne) {
  test::TempDir dir;
  test::write_file(dir.file("p.yaml"), kMinimal);
  EXPECT_EQ(load_plan_file(dir.file("p.yaml")).file, dir.file("p.yaml"));
  try {
    load_plan_file(dir.file("missing.yaml"));
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("missing.yaml"), HasSubstr("cannot read")));
  }
  ParseLimits small;
  small.max_file_bytes = 1 << 16;
  try {
    load_plan_file("/dev/zero", small);  // endless: read only up to the limit
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("max_file_bytes"));
  }
}

// ---- lengths ---------------------------------------------------------------------------

TEST(SchedulePlanFile, LengthsConvertWithTheBoardClock) {
  auto parse = [](const char* text) {
    std::string why;
    auto length = parse_length(text, &why);
    EXPECT_TRUE(length) << text << ": " << why;
    return length.value_or(Length{});
  };
  EXPECT_EQ(parse("1.25us").to_string(), "1.25 us");
  EXPECT_EQ(parse("0.050 ms").to_string(), "0.050 ms");
  EXPECT_EQ(parse(" 7 cycle ").to_string(), "7 cycles");
  EXPECT_EQ(parse("1 \xc2\xb5s").to_string(), "1 us");
  EXPECT_EQ(parse("2.00 cycles"), Length::cycles(2));

  auto cycles = [](const Length& l, uint64_t hz, Rounding r) {
    return to_cycles(l, hz, r).value();
  };
  Cycles exact = cycles(parse("1 us"), 125'000'000, Rounding::kNearest);
  EXPECT_EQ(exact.cycles, 125u);
  EXPECT_TRUE(exact.exact);
  Cycles half = cycles(parse("1.3 us"), 125'000'000, Rounding::kNearest);  // 162.5
  EXPECT_EQ(half.cycles, 163u);
  EXPECT_FALSE(half.exact);
  EXPECT_EQ(cycles(parse("1.29 us"), 125'000'000, Rounding::kNearest).cycles, 161u);  // 161.25
  EXPECT_EQ(cycles(parse("50 ns"), 125'000'000, Rounding::kUp).cycles, 7u);  // 6.25: a guard
  EXPECT_EQ(cycles(parse("48 ns"), 125'000'000, Rounding::kUp).cycles, 6u);
  EXPECT_EQ(cycles(parse("300 cycles"), 1, Rounding::kUp).cycles, 300u);  // clock irrelevant
  EXPECT_EQ(cycles(parse("2.5 ms"), 250'000'000, Rounding::kNearest).cycles, 625'000u);
  EXPECT_FALSE(to_cycles(parse("999999999999999999 ms"), 4'000'000'000u, Rounding::kNearest));
}

// ---- writer ----------------------------------------------------------------------------

TEST(SchedulePlanFile, FormatReadsBackToTheSamePlan) {
  Plan plan = parse_plan(R"(plan: w
description: "quotes \" and \\ and a\ttab"
board: emulated-64port
switches: [a, b]
defaults: {slot_length: 1.5 us, guard_band: 12 cycles, policy: sla, wormhole: {length: 3 us}}
phases:
  - name: one
    switches:
      a: {pattern: ["0 -> 1 x2", "1 -> 0", {shift: {ports: 4, by: 1}}]}
      b: {slots: [["0 -> 1", "1 -> 0"], []]}
  - name: two
    wormhole: {enabled: off, length: 3 us}
)");
  for (bool compiled : {false, true}) {
    if (compiled) compile_plan(plan);
    Plan again = parse_plan(format_plan(plan));
    SCOPED_TRACE(format_plan(plan));
    EXPECT_EQ(again.name, plan.name);
    EXPECT_EQ(again.description, plan.description);
    EXPECT_EQ(again.board, plan.board);
    EXPECT_EQ(again.switches, plan.switches);
    ASSERT_EQ(again.phases.size(), plan.phases.size());
    for (size_t i = 0; i < plan.phases.size(); ++i) {
      const Phase& x = plan.phases[i];
      const Phase& y = again.phases[i];
      EXPECT_EQ(y.name, x.name);
      EXPECT_EQ(y.timing.policy, x.timing.policy);
      EXPECT_EQ(y.timing.slot_length, x.timing.slot_length);
      EXPECT_EQ(y.timing.guard_band, x.timing.guard_band);
      EXPECT_EQ(y.timing.wormhole, x.timing.wormhole);
      EXPECT_EQ(y.timing.wormhole_length, x.timing.wormhole_length);
      ASSERT_EQ(y.parts.size(), x.parts.size());
      for (size_t j = 0; j < x.parts.size(); ++j) {
        EXPECT_EQ(y.parts[j].has_pattern, x.parts[j].has_pattern && !compiled);
        EXPECT_EQ(y.parts[j].pattern, compiled ? std::vector<Connection>{} : x.parts[j].pattern);
        ASSERT_EQ(y.parts[j].slots.size(), x.parts[j].slots.size());
        for (size_t s = 0; s < x.parts[j].slots.size(); ++s) {
          EXPECT_EQ(y.parts[j].slots[s].connections, x.parts[j].slots[s].connections);
        }
      }
    }
  }
}

}  // namespace
}  // namespace asn::schedule

// Fabric schedules as TDM fabric plans (lib/fabric_schedule/fabric_plan.hpp): every compiled
// program, on every target, is accepted by lib/schedule's independent validator, one part
// per switch; a conflicting schedule is refused by it; phases report what changes between
// them.
#include "asn/fabric_schedule/fabric_plan.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/validate.hpp"
#include "fabric_patterns.hpp"

namespace asn::fabric_schedule {
namespace {

schedule::Timing timing() {
  schedule::Timing t;
  t.slot_length = schedule::Length::nanoseconds(1000);
  t.guard_band = schedule::Length::nanoseconds(50);
  return t;
}

schedule::BoardLimits board(const Target& t) {
  schedule::BoardLimits b;
  b.board = "test";
  b.ports = t.switch_ports();
  b.slots = 4096;
  b.clock_hz = 125'000'000;
  return b;
}

using test::random_pattern;

TEST(FabricPlanTest, EveryProgramPassesTheValidator) {
  std::vector<std::unique_ptr<Target>> targets;
  targets.push_back(make_torus(4, 4));
  targets.push_back(make_linear_array(8));
  targets.push_back(make_flattened_butterfly(64, 8));
  targets.push_back(make_flattened_butterfly(64, 4));
  targets.push_back(make_fat_tree(3, 3));
  targets.push_back(make_crossbar(12));
  for (const auto& t : targets) {
    const uint32_t n = t->terminals();
    std::vector<PhaseInput> phases{{"sparse", random_pattern(n, n / 2, 1), timing()},
                                   {"dense", random_pattern(n, 3 * n, 2), timing()},
                                   {"again", random_pattern(n, 3 * n, 2), timing()}};
    Options o;
    o.effort = Options{}.effort / 30;  // a short search
    FabricProgram program = compile_program(*t, phases, o, "p");
    ASSERT_EQ(program.plan.switches.size(), t->switches());
    ASSERT_EQ(program.plan.phases.size(), 3u);
    for (size_t p = 0; p < 3; ++p) {
      EXPECT_EQ(program.plan.phases[p].parts.size(), t->switches());
      EXPECT_EQ(program.plan.phases[p].slot_count(), program.phases[p].slots);
      EXPECT_GE(program.phases[p].slots, program.phases[p].lower_bound);
    }
    schedule::ValidationReport report = schedule::validate(program.plan, board(*t));
    EXPECT_TRUE(report.ok()) << t->name() << ": "
                             << (report.errors().empty() ? "" : report.errors()[0].message);
    ASSERT_EQ(program.reconfigure.size(), 2u);
    EXPECT_FALSE(program.reconfigure[0].switches.empty()) << t->name();
    EXPECT_TRUE(program.reconfigure[1].switches.empty()) << t->name();  // same pattern again
  }
}

// The fabric plan as a plan file (what `asnctl schedule compile --fabric --yaml` prints) reads
// back as the same fabric plan and passes the validator again.
TEST(FabricPlanTest, TheFabricPlanRoundTripsThroughItsFile) {
  auto t = make_torus(3, 3);
  std::vector<PhaseInput> phases{{"one", random_pattern(9, 30, 3), timing()},
                                 {"two", random_pattern(9, 12, 4), timing()}};
  FabricProgram program = compile_program(*t, phases, {}, "round-trip");
  const std::string text = schedule::format_plan(program.plan);
  schedule::Plan read = schedule::parse_plan(text, "fabric.yaml");
  EXPECT_EQ(read.switches, program.plan.switches);
  ASSERT_EQ(read.phases.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    ASSERT_EQ(read.phases[p].parts.size(), program.plan.phases[p].parts.size());
    for (size_t sw = 0; sw < read.phases[p].parts.size(); ++sw) {
      const auto& a = read.phases[p].parts[sw].slots;
      const auto& b = program.plan.phases[p].parts[sw].slots;
      ASSERT_EQ(a.size(), b.size());
      for (size_t s = 0; s < a.size(); ++s) EXPECT_EQ(a[s].connections, b[s].connections);
    }
  }
  EXPECT_TRUE(schedule::validate(read, board(*t)).ok());
}

// Two connections sharing a link in one slot: two inputs to one output of switch 1, which
// the validator refuses.
TEST(FabricPlanTest, TheValidatorRefusesAConflict) {
  auto t = make_linear_array(4);
  const std::vector<Conn> conns{{0, 2}, {1, 3}};
  Schedule s;
  s.slots = 1;
  s.slot_of = {0, 0};
  s.path_of = {0, 0};
  schedule::Plan plan;
  plan.name = "bad";
  for (uint32_t sw = 0; sw < t->switches(); ++sw) plan.switches.push_back(t->switch_name(sw));
  plan.phases.push_back(to_phase(*t, conns, s, "a", timing()));
  EXPECT_FALSE(schedule::validate(plan, board(*t)).ok());
  s.slots = 2;
  s.slot_of = {0, 1};
  plan.phases[0] = to_phase(*t, conns, s, "a", timing());
  EXPECT_TRUE(schedule::validate(plan, board(*t)).ok());
}

// The circuits on the path: 0 -> 2 on the linear array enters switch 0 at its terminal port
// and leaves right (port 1), passes switch 1 from left (port 2) to right, and leaves switch 2
// at its terminal port.
TEST(FabricPlanTest, CircuitsFollowThePath) {
  auto t = make_linear_array(3);
  const std::vector<Conn> conns{{0, 2}};
  Schedule s = compile(*t, conns);
  schedule::Phase phase = to_phase(*t, conns, s, "a", timing());
  ASSERT_EQ(phase.parts.size(), 3u);
  EXPECT_EQ(phase.parts[0].slots[0].connections, (std::vector<schedule::Connection>{{0, 1, {}}}));
  EXPECT_EQ(phase.parts[1].slots[0].connections, (std::vector<schedule::Connection>{{2, 1, {}}}));
  EXPECT_EQ(phase.parts[2].slots[0].connections, (std::vector<schedule::Connection>{{2, 0, {}}}));
}

}  // namespace
}  // namespace asn::fabric_schedule

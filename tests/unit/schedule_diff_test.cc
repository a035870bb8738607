// The program diff of `asnctl schedule diff` (diff.hpp): timing fields, connections removed
// and added per slot, slots only one program has, and the unified-diff-like text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asn/schedule/diff.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"

namespace asn::schedule {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

SlotEntry entry(std::initializer_list<std::pair<uint32_t, uint32_t>> connections) {
  SlotEntry e{};
  for (auto [from, to] : connections) e[to] = static_cast<uint8_t>(kEntryConnected | from);
  return e;
}

TdmProgram program(std::vector<SlotEntry> entries) {
  TdmProgram p;
  p.plan = "p";
  p.phase = "a";
  p.slots_in_use = static_cast<uint32_t>(entries.size());
  p.slot_length_cycles = 125;
  p.wormhole_length_cycles = 125;
  p.guard_band_cycles = 6;
  p.entries = std::move(entries);
  return p;
}

Connection c(uint32_t from, uint32_t to) { return Connection{from, to, {}}; }

TEST(ScheduleDiff, EqualProgramsHaveNoDiff) {
  TdmProgram a = program({entry({{0, 1}, {1, 0}}), entry({})});
  TdmProgram b = a;
  b.plan = "other";  // names are not compared
  b.phase = "b";
  b.switch_name = "sw1";
  ProgramDiff diff = diff_programs(a, b);
  EXPECT_TRUE(diff.empty());
  EXPECT_EQ(format_diff(diff), "");
}

TEST(ScheduleDiff, TimingFields) {
  TdmProgram a = program({entry({{0, 1}})});
  TdmProgram b = a;
  b.policy = Policy::kSla;
  b.wormhole = true;
  b.slot_length_cycles = 250;
  b.wormhole_length_cycles = 500;
  b.guard_band_cycles = 7;
  ProgramDiff diff = diff_programs(a, b);
  ASSERT_EQ(diff.timing.size(), 5u);
  EXPECT_EQ(diff.timing[0].field, "policy");
  EXPECT_EQ(diff.timing[0].before, "fixed");
  EXPECT_EQ(diff.timing[0].after, "sla");
  EXPECT_EQ(diff.timing[0].unit, "");
  EXPECT_EQ(diff.timing[2].field, "slot_length");
  EXPECT_EQ(diff.timing[2].before, "125");
  EXPECT_EQ(diff.timing[2].after, "250");
  EXPECT_EQ(diff.timing[2].unit, "cycles");
  EXPECT_THAT(diff.slots, IsEmpty());
  EXPECT_FALSE(diff.empty());
  EXPECT_EQ(format_diff(diff),
            "~ policy: fixed -> sla\n"
            "~ wormhole: off -> on\n"
            "~ slot_length: 125 -> 250 cycles\n"
            "~ wormhole_length: 125 -> 500 cycles\n"
            "~ guard_band: 6 -> 7 cycles\n");
}

TEST(ScheduleDiff, ConnectionsRemovedAndAddedPerSlot) {
  TdmProgram a = program({entry({{0, 1}, {1, 0}}), entry({{1, 4}, {5, 0}}), entry({{2, 3}})});
  TdmProgram b = program({entry({{0, 1}, {1, 0}}), entry({{2, 4}, {5, 0}, {0, 1}}), entry({})});
  ProgramDiff diff = diff_programs(a, b);
  EXPECT_THAT(diff.timing, IsEmpty());
  ASSERT_EQ(diff.slots.size(), 2u);
  EXPECT_EQ(diff.slots[0].slot, 1u);
  EXPECT_EQ(diff.slots[0].side, SlotSide::kBoth);
  EXPECT_THAT(diff.slots[0].removed, ElementsAre(c(1, 4)));
  EXPECT_THAT(diff.slots[0].added, ElementsAre(c(0, 1), c(2, 4)));
  EXPECT_EQ(diff.slots[1].slot, 2u);
  EXPECT_THAT(diff.slots[1].removed, ElementsAre(c(2, 3)));
  EXPECT_THAT(diff.slots[1].added, IsEmpty());
  EXPECT_EQ(format_diff(diff),
            "- slot 1: 1->4\n"
            "+ slot 1: 0->1 2->4\n"
            "- slot 2: 2->3\n");
}

TEST(ScheduleDiff, SlotsOnlyInOneProgram) {
  TdmProgram a = program({entry({{0, 1}}), entry({{1, 0}}), entry({})});
  TdmProgram b = program({entry({{0, 1}})});
  ProgramDiff diff = diff_programs(a, b);
  ASSERT_EQ(diff.timing.size(), 1u);
  EXPECT_EQ(diff.timing[0].field, "slots_in_use");
  ASSERT_EQ(diff.slots.size(), 2u);
  EXPECT_EQ(diff.slots[0].side, SlotSide::kBeforeOnly);
  EXPECT_THAT(diff.slots[0].removed, ElementsAre(c(1, 0)));
  EXPECT_EQ(diff.slots[1].side, SlotSide::kBeforeOnly);  // shown though empty
  EXPECT_THAT(diff.slots[1].removed, IsEmpty());
  EXPECT_EQ(format_diff(diff),
            "~ slots_in_use: 3 -> 1\n"
            "- slot 1 (only before): 1->0\n"
            "- slot 2 (only before): (empty)\n");

  ProgramDiff reverse = diff_programs(b, a);
  ASSERT_EQ(reverse.slots.size(), 2u);
  EXPECT_EQ(reverse.slots[0].side, SlotSide::kAfterOnly);
  EXPECT_THAT(reverse.slots[0].added, ElementsAre(c(1, 0)));
  EXPECT_EQ(format_diff(reverse),
            "~ slots_in_use: 1 -> 3\n"
            "+ slot 1 (only after): 1->0\n"
            "+ slot 2 (only after): (empty)\n");
}

// Two phases of one plan, as `asnctl schedule diff` compares them.
TEST(ScheduleDiff, TwoPhasesOfAPlan) {
  Plan plan = parse_plan(R"(plan: p
defaults: {slot_length: 1 us, guard_band: 48 ns}
phases:
  - name: a
    slots: [[0 -> 1, 1 -> 0], [2 -> 3]]
  - name: b
    slot_length: 2 us
    slots: [[0 -> 1, 1 -> 2], [2 -> 3]]
)",
                         "p.yaml");
  BoardLimits limits;
  limits.ports = 4;
  limits.slots = 8;
  limits.clock_hz = 125'000'000;
  ProgramDiff diff = diff_programs(make_tdm_program(plan, "a", "", limits),
                                   make_tdm_program(plan, "b", "", limits));
  EXPECT_EQ(format_diff(diff),
            "~ slot_length: 125 -> 250 cycles\n"
            "~ wormhole_length: 125 -> 250 cycles\n"
            "- slot 0: 1->0\n"
            "+ slot 0: 1->2\n");
}

}  // namespace
}  // namespace asn::schedule

// The slot grid of `asnctl schedule show` (grid.hpp): the layout, column widths, the cut
// after max_slots, the wormhole line, and one slot as a line of connections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "asn/schedule/grid.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"

namespace asn::schedule {
namespace {

using ::testing::ElementsAre;

// An entry with out[to] = from for each connection.
SlotEntry entry(std::initializer_list<std::pair<uint32_t, uint32_t>> connections) {
  SlotEntry e{};
  for (auto [from, to] : connections) e[to] = static_cast<uint8_t>(kEntryConnected | from);
  return e;
}

TEST(ScheduleGrid, SlotsByOutputPorts) {
  std::vector<SlotEntry> slots = {entry({{1, 0}, {0, 1}, {3, 2}, {2, 3}}), entry({{0, 2}}),
                                  SlotEntry{}};
  EXPECT_EQ(format_grid(slots, 4),
            "slot  0 1 2 3\n"
            "0     1 0 3 2\n"
            "1     . . 0 .\n"
            "2     . . . .\n");
}

TEST(ScheduleGrid, ColumnsAsWideAsTheLargestPort) {
  std::vector<SlotEntry> slots = {entry({{11, 0}, {0, 11}, {5, 7}})};
  EXPECT_EQ(format_grid(slots, 12),
            "slot   0  1  2  3  4  5  6  7  8  9 10 11\n"
            "0     11  .  .  .  .  .  .  5  .  .  .  0\n");
  // An input past the ports shown still fits its column.
  EXPECT_EQ(format_grid(std::vector<SlotEntry>{entry({{42, 1}})}, 3),
            "slot   0  1  2\n"
            "0      . 42  .\n");
}

TEST(ScheduleGrid, CutAfterMaxSlotsAndWormhole) {
  std::vector<SlotEntry> slots(70, entry({{1, 0}, {0, 1}}));
  GridOptions options;
  options.wormhole = true;
  std::string grid = format_grid(slots, 2, options);
  EXPECT_THAT(grid, ::testing::StartsWith("slot  0 1\n0     1 0\n"));
  EXPECT_THAT(grid, ::testing::EndsWith("63    1 0\n"
                                        "... 6 more slots\n"
                                        "W  (wormhole slot: packet switched)\n"));

  options.max_slots = 2;
  options.wormhole = false;
  EXPECT_EQ(format_grid(std::span(slots).first(3), 2, options),
            "slot  0 1\n0     1 0\n1     1 0\n... 1 more slot\n");
}

TEST(ScheduleGrid, LongSlotLabelsWidenTheirColumn) {
  std::vector<SlotEntry> slots(10001, entry({{1, 0}}));
  GridOptions options;
  options.max_slots = UINT32_MAX;
  std::string grid = format_grid(slots, 1, options);
  EXPECT_THAT(grid, ::testing::StartsWith("slot   0\n0      1\n"));
  EXPECT_THAT(grid, ::testing::EndsWith("10000  1\n"));
}

TEST(ScheduleGrid, NoSlotsNoPortsAndTooManyPorts) {
  GridOptions wormhole_only;
  wormhole_only.wormhole = true;
  EXPECT_EQ(format_grid({}, 2, wormhole_only), "slot  0 1\nW  (wormhole slot: packet switched)\n");
  // No trailing blanks without port columns.
  EXPECT_EQ(format_grid(std::vector<SlotEntry>(2), 0), "slot\n0\n1\n");
  // An entry holds 64 outputs: more ports are not shown.
  std::string wide = format_grid(std::vector<SlotEntry>(1), 100);
  EXPECT_THAT(wide, ::testing::HasSubstr(" 63\n"));
  EXPECT_THAT(wide, ::testing::Not(::testing::HasSubstr("64")));
}

TEST(ScheduleGrid, OneSlotAsConnections) {
  SlotEntry e = entry({{3, 0}, {0, 3}, {1, 2}, {63, 63}});
  EXPECT_EQ(format_slot(e), "0->3 1->2 3->0 63->63");
  EXPECT_EQ(format_slot(e, 4), "0->3 1->2 3->0");
  EXPECT_EQ(format_slot(SlotEntry{}), "");
  std::vector<Connection> connections = connections_of(e, 4);
  ASSERT_EQ(connections.size(), 3u);
  EXPECT_EQ(connections[0].from, 0u);
  EXPECT_EQ(connections[0].to, 3u);
  EXPECT_FALSE(connections[0].mark.known());
}

// The grid of a program made from a plan: what `asnctl schedule show` prints.
TEST(ScheduleGrid, FromATdmProgram) {
  Plan plan = parse_plan(R"(plan: p
phases:
  - name: a
    slot_length: 1 us
    guard_band: 48 ns
    wormhole: on
    slots:
      - [0 -> 1, 1 -> 2, 2 -> 0]
      - [3 -> 0]
)",
                         "p.yaml");
  BoardLimits limits;
  limits.ports = 4;
  limits.slots = 8;
  limits.clock_hz = 125'000'000;
  TdmProgram program = make_tdm_program(plan, "a", "", limits);
  GridOptions options;
  options.wormhole = program.wormhole;
  EXPECT_EQ(format_grid(program.entries, limits.ports, options),
            "slot  0 1 2 3\n"
            "0     2 0 1 .\n"
            "1     3 . . .\n"
            "W  (wormhole slot: packet switched)\n");
  EXPECT_THAT(
      std::vector<std::string>({format_slot(program.entries[0]), format_slot(program.entries[1])}),
      ElementsAre("0->1 1->2 2->0", "3->0"));
}

TEST(ScheduleGrid, OnlyTheColumnsAskedForInTheirOrder) {
  // Slot 0: 5 -> 0, 0 -> 3, 12 -> 10; slot 1 connects 3 -> 10 only.
  std::vector<SlotEntry> slots = {entry({{5, 0}, {0, 3}, {12, 10}}), entry({{3, 10}})};
  GridOptions options;
  options.columns = {10, 3};
  EXPECT_EQ(format_grid(slots, 12, options),
            "slot  10  3\n"
            "0     12  0\n"
            "1      3  .\n");
  // Ports the table does not have are left out: the caller says which exist.
  options.columns = {0, 12, 40};
  EXPECT_EQ(format_grid(slots, 12, options), "slot  0\n0     5\n1     .\n");
}

}  // namespace
}  // namespace asn::schedule

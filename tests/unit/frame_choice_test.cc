// The frame of a fabric-wide load (lib/schedule frame_choice): one instant for every switch,
// at least the margin ahead of the latest time any switch reported.
#include "asn/schedule/frame_choice.hpp"

#include <gtest/gtest.h>

namespace asn::schedule {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kHz = 125'000'000;  // 8 ns a cycle

SwitchClock running(std::string name, uint64_t time, uint64_t frame_cycles) {
  SwitchClock c;
  c.name = std::move(name);
  c.running = true;
  c.time = time;
  c.frame_cycles = frame_cycles;
  c.frame = time / frame_cycles;  // a program runs on the grid of its frame length
  c.frame_start = c.frame * frame_cycles;
  c.clock_hz = kHz;
  return c;
}

uint64_t start(const SwitchClock& c, uint64_t frame) {
  return c.frame_start + (frame - c.frame) * c.frame_cycles;
}

TEST(FrameChoice, SwitchesOfOneProgramGetOneFrameAtLeastTheMarginAhead) {
  // Three switches on one 250-cycle program, reporting slightly different times.
  const std::vector<SwitchClock> clocks = {
      running("a", 1'000'000, 250), running("b", 1'000'300, 250), running("c", 999'900, 250)};
  const FrameChoice choice = choose_frame(clocks, 20ms);
  ASSERT_EQ(choice.error, "");
  EXPECT_TRUE(choice.aligned);
  EXPECT_EQ(choice.frames[0], choice.frames[1]);
  EXPECT_EQ(choice.frames[1], choice.frames[2]);
  // 20 ms = 2,500,000 cycles after the latest report (b's), rounded up to a boundary.
  EXPECT_GE(start(clocks[0], choice.frames[0]), 1'000'300u + 2'500'000u);
  EXPECT_LT(start(clocks[0], choice.frames[0]), 1'000'300u + 2'500'000u + 250u);
  EXPECT_EQ(choice.start, start(clocks[0], choice.frames[0]));
}

TEST(FrameChoice, TheAgeOfAReportMovesTheInstant) {
  std::vector<SwitchClock> clocks = {running("a", 1'000'000, 250)};
  const FrameChoice fresh = choose_frame(clocks, 1ms);
  clocks[0].age = 4ms;  // the report is 4 ms old: now is 500,000 cycles later
  const FrameChoice aged = choose_frame(clocks, 1ms);
  EXPECT_EQ(aged.frames[0] - fresh.frames[0], 500'000u / 250u);
}

TEST(FrameChoice, DifferentProgramsMeetAtACommonBoundary) {
  // 250 and 375 cycles a frame: their boundaries meet every 750 cycles.
  const std::vector<SwitchClock> clocks = {running("a", 1'000'000, 250),
                                           running("b", 1'000'000, 375)};
  const FrameChoice choice = choose_frame(clocks, 1ms);
  ASSERT_EQ(choice.error, "");
  EXPECT_TRUE(choice.aligned);
  EXPECT_EQ(start(clocks[0], choice.frames[0]), start(clocks[1], choice.frames[1]));
  EXPECT_EQ(choice.start % 750, 0u);
  EXPECT_NE(choice.frames[0], choice.frames[1]);
}

TEST(FrameChoice, GridsThatNeverMeetSoonSwapWithinAFrame) {
  // Coprime frame lengths with misaligned grids: no common boundary within 10 s.
  SwitchClock a = running("a", 1'000'000'000, 1'000'003);
  SwitchClock b = running("b", 1'000'000'000, 999'983);
  b.frame_start += 7;  // a grid not through 0
  const FrameChoice choice = choose_frame({a, b}, 1ms);
  ASSERT_EQ(choice.error, "");
  EXPECT_FALSE(choice.aligned);
  const uint64_t sa = start(a, choice.frames[0]);
  const uint64_t sb = start(b, choice.frames[1]);
  EXPECT_GE(sa, choice.start);
  EXPECT_GE(sb, choice.start);
  EXPECT_LT(sa - choice.start, a.frame_cycles);
  EXPECT_LT(sb - choice.start, b.frame_cycles);
}

TEST(FrameChoice, StoppedSwitchesSwapAtOnce) {
  SwitchClock stopped;
  stopped.name = "s";
  stopped.time = 5'000'000;
  stopped.clock_hz = kHz;
  const FrameChoice none = choose_frame({stopped}, 20ms);
  EXPECT_EQ(none.error, "");
  EXPECT_EQ(none.frames, std::vector<uint64_t>{0});

  const FrameChoice mixed = choose_frame({stopped, running("r", 5'000'000, 250)}, 20ms);
  EXPECT_EQ(mixed.frames[0], 0u);
  EXPECT_GT(mixed.frames[1], 5'000'000u / 250u);
}

}  // namespace
}  // namespace asn::schedule

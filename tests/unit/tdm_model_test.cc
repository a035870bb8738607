// The TDM sequencer of the emulated board (fpga/model/src/engines/tdm_sequencer): banked
// timing and slot table swapped together at a frame boundary, arm_at_frame, frames on the
// board's time base, and the slot-length policies with the seed's worked examples
// (000 L744-828).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "board_access.hpp"
#include "support.hpp"

namespace asn::model {
namespace {

using namespace asn::test::board_access;
namespace t = regs::tdm;

constexpr uint32_t kFixed = 0, kSes = 1, kSla = 2, kPreempt = 3;

class TdmModelTest : public ::testing::Test {
 protected:
  TdmModelTest() { options_.shm_dir = dir_.path(); }

  std::unique_ptr<EmulatedBoard> open(std::string_view name = "board0") {
    return EmulatedBoard::open(name, *EmulatedBoard::find_profile("netfpga-1g"), options_);
  }

  // Connects output `out` to input `in` in slot `slot` of the shadow slot table.
  static void connect(EmulatedBoard& board, uint32_t slot, uint32_t out, uint32_t in) {
    const uint32_t address = entry(board, t::kSlotTable, slot, out / 4);
    uint32_t word = rd_at(board, address);
    const uint32_t shift = 8 * (out % 4);
    word = (word & ~(0xffu << shift)) | ((0x80u | in) << shift);
    EXPECT_TRUE(board.write32(address, word));
  }

  static uint64_t frame(EmulatedBoard& board) { return rd64(board, t::kFrameCounter); }
  static uint32_t slot(EmulatedBoard& board) { return rd(board, t::kCurrentSlotSlot); }

  static void arm_at(EmulatedBoard& board, uint64_t frame) {
    EXPECT_TRUE(wr(board, t::kArmAtFrameLo, static_cast<uint32_t>(frame)));
    EXPECT_TRUE(wr(board, t::kArmAtFrameHi, static_cast<uint32_t>(frame >> 32)));
    EXPECT_TRUE(wr(board, t::kControlArm, 1));
  }

  test::TempDir dir_;
  OpenOptions options_;
};

TEST_F(TdmModelTest, ArmWhileStoppedSwapsTimingAndSlotsAtOnce) {
  auto board = open();
  board->advance(1000);
  connect(*board, 0, 1, 2);
  write_timing(*board, {.slots = 4, .slot_length = 100});
  EXPECT_TRUE(wr(*board, t::kControlArm, 1));
  EXPECT_EQ(rd(*board, t::kStatusActiveBank), 1u);
  EXPECT_EQ(rd(*board, t::kStatusArmed), 0u);
  EXPECT_EQ(rd(*board, t::kSwapCount), 1u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), 1000u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), regs::id::kIrqStatusTdmSwap.mask());
  EXPECT_EQ(rd_at(*board, entry(*board, t::kSlotTable, 0, 0, true)), 0x8200u);
  EXPECT_EQ(t::kTimingSlots.get(
                std::array<uint32_t, 8>{rd_at(*board, entry(*board, t::kTiming, 0, 0, true)),
                                        rd_at(*board, entry(*board, t::kTiming, 0, 1, true))}),
            4u);
  // Not enabled: not running. Enabling starts it on the time base: 1000 / 400.
  EXPECT_EQ(rd(*board, t::kStatusRunning), 0u);
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  EXPECT_EQ(rd(*board, t::kStatusRunning), 1u);
  EXPECT_EQ(frame(*board), 2u);
  EXPECT_EQ(rd64(*board, t::kFrameStart), 800u);
  EXPECT_EQ(slot(*board), 2u);                 // 200 cycles into the frame
  EXPECT_EQ(rd64(*board, t::kSwapFrame), 2u);  // the first frame the new banks ran
}

TEST_F(TdmModelTest, ArmWhileRunningSwapsBothBanksAtTheBoundary) {
  auto board = open();
  set_timing(*board, {.slots = 4, .slot_length = 100});       // frame: 400 cycles
  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, 0xffffffff));  // acknowledge its swaps
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  board->advance(250);
  EXPECT_EQ(slot(*board), 2u);

  // The next program: 2 slots of 50. Until the boundary the old timing keeps running.
  connect(*board, 1, 0, 3);
  write_timing(*board, {.slots = 2, .slot_length = 50});
  EXPECT_TRUE(wr(*board, t::kControlArm, 1));
  EXPECT_EQ(rd(*board, t::kStatusArmed), 1u);
  board->advance(149);
  EXPECT_EQ(slot(*board), 3u);
  EXPECT_EQ(frame(*board), 0u);
  EXPECT_EQ(rd(*board, t::kStatusActiveBank), 0u);  // set_timing swapped twice
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus) & regs::id::kIrqStatusTdmSwap.mask(), 0u);

  board->advance(1);  // the boundary: the new banks run, on the grid of 100-cycle frames
  EXPECT_EQ(frame(*board), 4u);
  EXPECT_EQ(rd(*board, t::kStatusArmed), 0u);
  EXPECT_EQ(rd(*board, t::kStatusActiveBank), 1u);
  EXPECT_EQ(rd64(*board, t::kSwapFrame), 4u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), 400u);
  EXPECT_EQ(rd_at(*board, entry(*board, t::kSlotTable, 1, 0, true)), 0x83u);
  board->advance(60);
  EXPECT_EQ(slot(*board), 1u);  // slots of 50 now
  board->advance(40);
  EXPECT_EQ(frame(*board), 5u);  // frames of 100

  // Arm, then cancel: nothing happens at the boundary.
  EXPECT_TRUE(wr(*board, t::kControlArm, 1));
  EXPECT_TRUE(wr(*board, t::kControlDisarm, 1));
  board->advance(1000);
  EXPECT_EQ(rd(*board, t::kSwapCount), 3u);
}

TEST_F(TdmModelTest, ArmAtFrameWaitsForThatFrame) {
  auto board = open();
  set_timing(*board, {.slots = 1, .slot_length = 100});
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  write_timing(*board, {.slots = 1, .slot_length = 100});
  arm_at(*board, 7);
  board->advance(699);
  EXPECT_EQ(frame(*board), 6u);
  EXPECT_EQ(rd(*board, t::kStatusArmed), 1u);
  board->advance(1);
  EXPECT_EQ(rd(*board, t::kStatusArmed), 0u);
  EXPECT_EQ(rd64(*board, t::kSwapFrame), 7u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), 700u);

  // A frame already begun: the next boundary. In one advance across many frames.
  arm_at(*board, 3);
  board->advance(250);
  EXPECT_EQ(rd64(*board, t::kSwapFrame), 8u);
  arm_at(*board, 20);
  board->advance(100'000);
  EXPECT_EQ(rd64(*board, t::kSwapFrame), 20u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), 2000u);
  EXPECT_EQ(frame(*board), 9u + 100'000 / 100);

  // A frame that will never come: armed, no overflow, no hang.
  arm_at(*board, UINT64_MAX);
  board->advance(UINT64_MAX / 2);
  EXPECT_EQ(rd(*board, t::kStatusArmed), 1u);
  EXPECT_EQ(rd(*board, t::kSwapCount), 5u);
}

// What a driver may let the board's clock sleep until (EmulatedBoard::cycles_to_next_event):
// the armed swap's boundary, exact across the frames advance() skips by division. Frames
// and slots are no events: they are read from the registers.
TEST_F(TdmModelTest, TheNextEventIsTheArmedSwap) {
  auto board = open();
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);
  set_timing(*board, {.slots = 4, .slot_length = 100});  // frames of 400
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  board->advance(1250);  // frame 3, 50 cycles in
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);

  write_timing(*board, {.slots = 2, .slot_length = 50});
  arm_at(*board, 10);
  EXPECT_EQ(board->cycles_to_next_event(), 4000u - 1250u);
  board->advance(2749);
  EXPECT_EQ(rd(*board, t::kSwapCount), 2u);  // set_timing's two
  EXPECT_EQ(board->cycles_to_next_event(), 1u);
  board->advance(1);
  EXPECT_EQ(rd(*board, t::kSwapCount), 3u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), 4000u);
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);

  // A frame already begun (frames of 100 now): its end.
  board->advance(30);
  write_timing(*board, {.slots = 2, .slot_length = 50});
  arm_at(*board, 0);
  EXPECT_EQ(board->cycles_to_next_event(), 70u);
  // Disarmed, or a frame that never comes: none, and no overflow.
  EXPECT_TRUE(wr(*board, t::kControlDisarm, 1));
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);
  arm_at(*board, UINT64_MAX);
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);
  EXPECT_TRUE(wr(*board, t::kControlDisarm, 1));

  // PREEMPT: the frames after the boundary are as long as the traffic-pending input makes
  // them now. Slots 0 and 1 configured, of 100; only slot 0 has traffic: frames of 100.
  connect(*board, 0, 1, 2);
  connect(*board, 1, 0, 3);
  write_timing(*board, {.slots = 2, .slot_length = 100, .policy = kPreempt});
  board->set_traffic_pending(0, true);
  arm_at(*board, 0);
  board->advance(100);  // the swap: PREEMPT runs from here, frames of 100
  ASSERT_EQ(rd(*board, t::kSwapCount), 4u);
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);
  const uint64_t now = rd64(*board, t::kTime);
  const uint64_t at = frame(*board) + 5;
  write_timing(*board, {.slots = 2, .slot_length = 100, .policy = kPreempt});
  arm_at(*board, at);
  const uint64_t to_boundary = rd64(*board, t::kFrameStart) + 100 - now;
  EXPECT_EQ(board->cycles_to_next_event(), to_boundary + 4 * 100);
  board->set_traffic_pending(1, true);  // frames of 200 from the next boundary
  const uint64_t expected = to_boundary + 4 * 200;
  EXPECT_EQ(board->cycles_to_next_event(), expected);
  board->advance(expected - 1);
  EXPECT_EQ(rd(*board, t::kSwapCount), 4u);
  board->advance(1);
  EXPECT_EQ(rd(*board, t::kSwapCount), 5u);
  EXPECT_EQ(rd64(*board, t::kSwapTime), now + expected);

  // The external reset input is sampled on the clock: at once.
  const int fd = ::open(board->path().c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const uint32_t request = 1;
  ASSERT_EQ(::pwrite(fd, &request, sizeof request, offsetof(MemoryHeader, reset_request)),
            static_cast<ssize_t>(sizeof request));
  ::close(fd);
  EXPECT_EQ(board->cycles_to_next_event(), 0u);
  const uint64_t events = board->events();
  const uint32_t generation = board->generation();
  board->advance(1);
  EXPECT_EQ(board->generation(), generation + 1);
  EXPECT_NE(board->events(), events);
  EXPECT_EQ(board->cycles_to_next_event(), kNoEvent);
}

// Two boards on one time base, started at different times, number their frames alike, and
// an arm for the same frame swaps them at the same instant (issue 8 part 7).
TEST_F(TdmModelTest, BoardsOnOneTimeBaseAgreeOnFrames) {
  auto a = open("a");
  auto b = open("b");
  a->advance_to(1'000'003);
  set_timing(*a, {.slots = 8, .slot_length = 125});
  EXPECT_TRUE(wr(*a, t::kConfigEnable, 1));
  a->advance_to(5'000'017);
  b->advance_to(5'000'017);
  set_timing(*b, {.slots = 8, .slot_length = 125});
  EXPECT_TRUE(wr(*b, t::kConfigEnable, 1));
  EXPECT_EQ(frame(*a), frame(*b));
  EXPECT_EQ(rd64(*a, t::kFrameStart), rd64(*b, t::kFrameStart));
  EXPECT_EQ(slot(*a), slot(*b));

  const uint64_t at = frame(*a) + 40;
  for (EmulatedBoard* board : {a.get(), b.get()}) {
    write_timing(*board, {.slots = 3, .slot_length = 77});
    arm_at(*board, at);
  }
  a->advance_to(6'000'000);
  b->advance_to(5'500'000);
  b->advance_to(6'000'000);
  EXPECT_EQ(rd64(*a, t::kSwapTime), rd64(*b, t::kSwapTime));
  EXPECT_EQ(rd64(*a, t::kSwapTime), at * 1000);
  EXPECT_EQ(rd64(*a, t::kSwapFrame), at * 1000 / 231);  // the new program's grid
  EXPECT_EQ(frame(*a), frame(*b));
  EXPECT_EQ(slot(*a), slot(*b));

  // A board that swaps to the same program at another instant (one frame later on its own
  // grid) runs the same slot at the same time from then on.
  auto c = open("c");
  c->advance_to(5'000'500);
  set_timing(*c, {.slots = 8, .slot_length = 125});
  EXPECT_TRUE(wr(*c, t::kConfigEnable, 1));
  write_timing(*c, {.slots = 3, .slot_length = 77});
  arm_at(*c, at + 1);
  c->advance_to(6'000'000);
  EXPECT_EQ(rd64(*c, t::kSwapTime), (at + 1) * 1000);
  EXPECT_EQ(frame(*c), frame(*a));
  EXPECT_EQ(slot(*c), slot(*a));
  EXPECT_EQ(rd64(*c, t::kFrameStart), rd64(*a, t::kFrameStart));
  // The time base never runs backwards.
  a->advance_to(10);
  EXPECT_EQ(rd64(*a, t::kTime), 6'000'000u);
}

// 000 L744-781, Figure 4.5: B(2) and B(3) hold no configuration; SES skips them and the
// slots run S0, S1, S0, S1, ...
TEST_F(TdmModelTest, SesSkipsEmptySlots) {
  auto board = open();
  for (int bank = 0; bank < 2; ++bank) {
    connect(*board, 0, 0, 1);
    connect(*board, 1, 1, 0);
    write_timing(*board, {.slots = 4, .slot_length = 100, .policy = kSes});
    EXPECT_TRUE(wr(*board, t::kControlArm, 1));
  }
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  std::vector<uint32_t> seen;
  for (int i = 0; i < 6; ++i) {
    seen.push_back(slot(*board));
    board->advance(100);
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(frame(*board), 3u);  // frames of 200 cycles

  // Without SES the empty slots take their time.
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 0));
  set_timing(*board, {.slots = 4, .slot_length = 100, .policy = kFixed});
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  seen.clear();
  for (int i = 0; i < 4; ++i) {
    seen.push_back(slot(*board));
    board->advance(100);
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>{2, 3, 0, 1}));  // started at time 600 = 1.5 frames

  // Nothing configured and no wormhole slot: no frame to run.
  auto empty = open("empty");
  set_timing(*empty, {.slots = 4, .slot_length = 100, .policy = kSes});
  EXPECT_TRUE(wr(*empty, t::kConfigEnable, 1));
  EXPECT_EQ(rd(*empty, t::kStatusRunning), 0u);
}

// The example of 000 L797-814 (Figure 4.7): a slot is one time unit (100 cycles); a
// predictive slot carries one chunk a unit, the wormhole slot two packets a unit; there are
// 4 chunks (2 on each of the two slots' circuits) and 6 packets. The traffic is played
// against the sequencer in 50-cycle steps; returns the time units until all is sent and the
// frames it took. Under PREEMPT a circuit's pending bit is set while its chunks last.
struct Played {
  double units;
  uint64_t frames;
};

Played play_example(EmulatedBoard& board, bool preempt) {
  uint32_t chunk_halves[2] = {4, 4};  // half a chunk per step
  uint32_t packets = 6;               // one packet per step of the wormhole slot
  if (preempt) {
    board.set_traffic_pending(0, true);
    board.set_traffic_pending(1, true);
  }
  const uint64_t start = rd64(board, t::kTime);
  const uint64_t first_frame = rd64(board, t::kFrameCounter);
  for (int step = 0; step < 1000 && (chunk_halves[0] + chunk_halves[1] + packets) != 0; ++step) {
    const uint32_t s = rd(board, t::kCurrentSlotSlot);
    if (s < 2 && chunk_halves[s] > 0) {
      if (--chunk_halves[s] == 0 && preempt) board.set_traffic_pending(s, false);
    } else if (s == 2 && packets > 0) {
      --packets;
    }
    board.advance(50);
  }
  const uint64_t cycles = rd64(board, t::kTime) - start;
  return {static_cast<double>(cycles) / 100.0, rd64(board, t::kFrameCounter) - first_frame};
}

void program_example(EmulatedBoard& board, uint32_t policy, uint32_t wormhole_length) {
  for (int bank = 0; bank < 2; ++bank) {
    // Two predictive circuits, one per slot, and the wormhole slot.
    uint32_t word0 = 0x80u << 8;  // slot 0: output 1 <- input 0
    EXPECT_TRUE(board.write32(entry(board, t::kSlotTable, 0, 0), word0));
    EXPECT_TRUE(board.write32(entry(board, t::kSlotTable, 1, 0), 0x81u));  // out 0 <- in 1
    write_timing(board, {.slots = 2,
                         .slot_length = 100,
                         .policy = policy,
                         .wormhole = true,
                         .wormhole_length = wormhole_length});
    EXPECT_TRUE(wr(board, t::kControlArm, 1));
  }
  EXPECT_TRUE(wr(board, t::kConfigEnable, 1));
}

TEST_F(TdmModelTest, SlaExampleTakesSevenUnitsInsteadOfNine) {
  auto fixed = open("fixed");
  program_example(*fixed, kFixed, 150);  // wormhole_length is SLA's only
  const Played equal = play_example(*fixed, false);
  EXPECT_EQ(equal.units, 9.0);
  EXPECT_EQ(equal.frames, 3u);

  auto sla = open("sla");
  program_example(*sla, kSla, 150);  // the wormhole slot 50% longer: 3 packets a slot
  const Played adjusted = play_example(*sla, false);
  EXPECT_EQ(adjusted.units, 7.0);
  EXPECT_EQ(adjusted.frames, 2u);
}

// 000 L816-824: equal slots; once the predictive traffic is gone its slots go to the
// background and a frame is the wormhole slot alone. "It costs 7 time units totally, which
// is the same as that in SLA." The seed's narrative also speaks of a fourth cycle, which its
// own counts (6 packets, two a wormhole slot) do not leave room for: two full frames carry
// 4 chunks and 4 packets, the third frame (one unit) the last 2 packets. We reproduce the
// total, 7 units, in 3 frames.
TEST_F(TdmModelTest, PreemptExampleTakesSevenUnits) {
  auto board = open();
  program_example(*board, kPreempt, 0);
  const Played played = play_example(*board, true);
  EXPECT_EQ(played.units, 7.0);
  EXPECT_EQ(played.frames, 3u);
  EXPECT_EQ(rd(*board, t::kStatusPreempted), 1u);
  EXPECT_EQ(slot(*board), 2u);  // only the wormhole slot runs
}

TEST_F(TdmModelTest, PreemptWakesThePredictiveSlots) {
  auto board = open();
  program_example(*board, kPreempt, 0);
  EXPECT_EQ(rd(*board, t::kStatusPreempted), 1u);
  board->advance(1000);  // frames of 100: the wormhole slot alone
  EXPECT_EQ(frame(*board), 10u);
  // The input is sampled at the next frame boundary: this frame stays the wormhole slot.
  board->set_traffic_pending(1, true);
  EXPECT_EQ(rd(*board, t::kStatusPreempted), 1u);
  std::vector<uint32_t> seen;
  for (int i = 0; i < 5; ++i) {
    seen.push_back(slot(*board));
    board->advance(100);
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>{2, 1, 2, 1, 2}));
  EXPECT_EQ(rd(*board, t::kStatusPreempted), 0u);
  EXPECT_EQ(frame(*board), 13u);

  // PREEMPT without a wormhole slot and nothing pending has no frame to run; traffic wakes
  // it at once.
  auto quiet = open("quiet");
  for (int bank = 0; bank < 2; ++bank) {
    connect(*quiet, 0, 1, 0);
    write_timing(*quiet, {.slots = 1, .slot_length = 100, .policy = kPreempt});
    EXPECT_TRUE(wr(*quiet, t::kControlArm, 1));
  }
  EXPECT_TRUE(wr(*quiet, t::kConfigEnable, 1));
  EXPECT_EQ(rd(*quiet, t::kStatusRunning), 0u);
  quiet->set_traffic_pending(0, true);
  EXPECT_EQ(rd(*quiet, t::kStatusRunning), 1u);
  EXPECT_THROW(board->set_traffic_pending(1024, true), std::out_of_range);
}

TEST_F(TdmModelTest, TheTimeBaseRunsOnThroughABoardReset) {
  auto board = open();
  board->advance_to(123'456'789);
  set_timing(*board, {.slots = 2, .slot_length = 100});
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  board->board_reset();
  EXPECT_EQ(rd64(*board, t::kTime), 123'456'789u);
  EXPECT_EQ(rd(*board, t::kStatusRunning), 0u);
  EXPECT_EQ(rd(*board, t::kSwapCount), 0u);
}

TEST_F(TdmModelTest, SwappingInAnEmptyTimingStopsTheSequencer) {
  auto board = open();
  set_timing(*board, {.slots = 2, .slot_length = 100});
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  write_timing(*board, {});
  EXPECT_TRUE(wr(*board, t::kControlArm, 1));
  board->advance(250);
  EXPECT_EQ(rd(*board, t::kStatusRunning), 0u);
  EXPECT_EQ(rd(*board, t::kSwapCount), 3u);
  EXPECT_EQ(slot(*board), 0u);
}

TEST_F(TdmModelTest, AdvanceIsConstantTimeAndExact) {
  auto board = open();
  set_timing(
      *board,
      {.slots = 3, .slot_length = 7, .policy = kSla, .wormhole = true, .wormhole_length = 5});
  EXPECT_TRUE(wr(*board, t::kConfigEnable, 1));
  EXPECT_TRUE(wr(*board, t::kControlArm, 1));

  constexpr uint64_t kCycles = 1'000'000'000'000ull;  // frame: 26 cycles
  board->advance(kCycles);                            // whole frames by division: at once

  EXPECT_EQ(frame(*board), kCycles / 26);
  EXPECT_EQ(slot(*board), (kCycles % 26) / 7);
  EXPECT_EQ(rd(*board, t::kSwapCount), 3u);  // one armed swap, however many frames
  board->advance(26 - kCycles % 26 - 1);
  EXPECT_EQ(frame(*board), kCycles / 26);
  board->advance(1);
  EXPECT_EQ(frame(*board), kCycles / 26 + 1);
}

}  // namespace
}  // namespace asn::model

// asnd's emulated backend as a driver of the board's clock: the clock thread sleeps until
// the board next needs time to pass (an armed TDM swap) or an access shows it has news (an
// interrupt raised by a write), and at the longest until the next health check, instead of
// waking every millisecond. The wakes are counted through the bus's test hooks, never timed;
// each test makes the health check an hour away, so that only the wake it is about can
// deliver what it waits for.
#include "bus/emulated_bus.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "board_access.hpp"
#include "support.hpp"

namespace asn {
namespace {

using namespace std::chrono_literals;
using namespace asn::test::board_access;
namespace t = regs::tdm;

class EmulatedBusClockTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmulatedBus> open(std::chrono::milliseconds health_check_every = 1h) {
    EmulatedBusOptions options;
    options.board_name = "clock0";
    options.shm_dir = dir_.path();
    options.run_clock = true;
    options.health_check_every = health_check_every;
    auto bus = std::make_unique<EmulatedBus>(options);
    bus->set_event_handler([this](const BusEvent& event) {
      std::lock_guard lock(mutex_);
      events_.push_back(event);
    });
    return bus;
  }

  size_t count(BusEvent::Kind kind, uint16_t block) {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const BusEvent& e : events_) n += e.kind == kind && e.block_type == block ? 1 : 0;
    return n;
  }

  // The clock thread has made its first pass and gone to sleep.
  static void wait_asleep(EmulatedBus& bus) {
    ASSERT_TRUE(test::wait_until([&] { return bus.planned_sleep() > 0ns; }));
  }

  test::TempDir dir_;
  std::mutex mutex_;
  std::vector<BusEvent> events_;
};

TEST_F(EmulatedBusClockTest, AnIdleBoardsClockSleepsUntilTheHealthCheck) {
  auto bus = open();
  wait_asleep(*bus);
  // Nothing is armed: nothing to wake for before the health check, an hour away.
  EXPECT_GT(bus->planned_sleep(), std::chrono::nanoseconds(30min));
  const uint64_t passes = bus->clock_passes();
  EmulatedBoard& board = bus->board();
  // Accesses that raise nothing wake nothing, TDM registers included (read up to date).
  const uint64_t time = uint64_t{bus->read32(addr(board, t::kTime))} |
                        uint64_t{bus->read32(addr(board, t::kTime) + 4)} << 32;
  EXPECT_GT(time, 0u);
  bus->read32(addr(board, regs::id::kGeneration));
  bus->write32(addr(board, regs::route::kControl), 0);  // no commit
  EXPECT_EQ(bus->clock_passes(), passes);

  // asnd's default: the health check every 250 ms is the longest sleep.
  bus.reset();
  bus = open(std::chrono::milliseconds(250));
  wait_asleep(*bus);
  EXPECT_LE(bus->planned_sleep(), std::chrono::nanoseconds(250ms));
}

TEST_F(EmulatedBusClockTest, AWriteThatRaisesAnInterruptWakesTheClock) {
  auto bus = open();
  wait_asleep(*bus);
  EmulatedBoard& board = bus->board();
  bus->write32(addr(board, regs::route::kControl), regs::route::kControlCommit.mask());
  EXPECT_TRUE(test::wait_until(
      [&] { return count(BusEvent::Kind::kBankSwapped, regs::route::kType) == 1; }));
  const uint32_t control = bus->read32(addr(board, regs::port::kControl, 2));
  bus->write32(addr(board, regs::port::kControl, 2), control ^ regs::port::kControlEnable.mask());
  EXPECT_TRUE(
      test::wait_until([&] { return count(BusEvent::Kind::kLinkChange, regs::port::kType) == 1; }));
  // A reset through the bus: the new generation is noticed.
  bus->write32(addr(board, regs::id::kControl), regs::id::kControlBoardReset.mask());
  EXPECT_TRUE(test::wait_until(
      [&] { return count(BusEvent::Kind::kGenerationChanged, regs::id::kType) == 1; }));
}

TEST_F(EmulatedBusClockTest, AnArmedSwapWakesTheClockAtItsFrame) {
  auto bus = open();
  wait_asleep(*bus);
  EmulatedBoard& board = bus->board();
  // Frames of 1 ms (125 MHz), set up on the board directly; then the bus looks once.
  set_timing(board, {.slots = 1, .slot_length = 125'000});
  EXPECT_TRUE(wr(board, t::kConfigEnable, 1));
  bus->read32(addr(board, regs::id::kGeneration));
  ASSERT_TRUE(test::wait_until([&] { return count(BusEvent::Kind::kBankSwapped, t::kType) == 1; }));
  EXPECT_GT(bus->planned_sleep(), std::chrono::nanoseconds(30min));  // running, nothing armed

  // Armed for a frame 20 ms on: only the clock thread, waking at that frame, can swap the
  // banks and deliver the swap (nothing reads the TDM block meanwhile).
  const uint64_t frame = uint64_t{bus->read32(addr(board, t::kFrameCounter))} |
                         uint64_t{bus->read32(addr(board, t::kFrameCounter) + 4)} << 32;
  write_timing(board, {.slots = 2, .slot_length = 62'500});
  bus->write32(addr(board, t::kArmAtFrameLo), static_cast<uint32_t>(frame + 20));
  bus->write32(addr(board, t::kArmAtFrameHi), static_cast<uint32_t>((frame + 20) >> 32));
  bus->write32(addr(board, t::kControl), t::kControlArm.mask());
  EXPECT_TRUE(test::wait_until([&] { return count(BusEvent::Kind::kBankSwapped, t::kType) == 2; }));
  EXPECT_GE(rd64(board, t::kSwapFrame), frame + 20);
}

}  // namespace
}  // namespace asn

// The emulated board model (fpga/model), through its public API only: layout, register
// semantics, tables and bank swaps, the TDM sequencer, and the board memory that outlives
// the object.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "board_access.hpp"
#include "support.hpp"

namespace asn::model {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char k1g[] = "netfpga-1g";
constexpr char k64[] = "emulated-64port";

const regmap::BoardProfile& profile(std::string_view name) {
  const regmap::BoardProfile* p = EmulatedBoard::find_profile(name);
  if (p == nullptr) throw std::runtime_error("no profile " + std::string(name));
  return *p;
}

// A private shm_dir per test, removed afterwards.
using asn::test::TempDir;
using asn::test::write_file;

using namespace asn::test::board_access;

class ModelTest : public ::testing::Test {
 protected:
  ModelTest() { options_.shm_dir = dir_.path(); }

  std::unique_ptr<EmulatedBoard> open(std::string_view profile_name = k1g,
                                      std::string_view name = "board0",
                                      bool power_on_reset = false) {
    OpenOptions options = options_;
    options.power_on_reset = power_on_reset;
    return EmulatedBoard::open(name, profile(profile_name), options);
  }

  std::string file(std::string_view name = "board0") const { return memory_path(name, options_); }

  // Overwrites bytes of the board memory file (the board must be closed).
  void poke_file(size_t offset, const void* data, size_t size) const {
    const int fd = ::open(file().c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, data, size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
    ::close(fd);
  }

  MemoryHeader read_header() const {
    MemoryHeader header{};
    const int fd = ::open(file().c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::pread(fd, &header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
    ::close(fd);
    return header;
  }

  TempDir dir_;
  OpenOptions options_;
};

uint32_t irq(const regmap::FieldRef& cause) { return cause.mask(); }

// ---- layout -------------------------------------------------------------------------------

class LayoutTest : public ModelTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(LayoutTest, BlockNextChainVisitsEveryBlockInOrder) {
  const regmap::BoardProfile& p = profile(GetParam());
  auto board = open(GetParam());

  std::vector<uint16_t> expected = {regs::id::kType};
  expected.insert(expected.end(), p.ports.size(), regs::port::kType);
  for (uint16_t type :
       {regs::route::kType, regs::tdm::kType, regs::stripe::kType, regs::lock::kType}) {
    expected.push_back(type);
  }

  std::vector<uint16_t> walked;
  std::vector<uint32_t> bases;
  uint32_t offset = 0;
  for (int guard = 0; guard < 1000; ++guard) {
    bases.push_back(offset);
    walked.push_back(static_cast<uint16_t>(rd_at(*board, offset + regs::id::kBlockType.offset)));
    EXPECT_EQ(rd_at(*board, offset + regs::id::kBlockVersion.offset),
              regmap::register_map().block(walked.back())->version);
    const uint32_t next = rd_at(*board, offset + regs::id::kBlockNext.offset);
    if (next == 0) break;
    ASSERT_GT(next, offset);
    offset = next;
  }
  EXPECT_EQ(walked, expected);

  ASSERT_EQ(board->blocks().size(), expected.size());
  uint32_t end = 0;
  for (size_t i = 0; i < board->blocks().size(); ++i) {
    const BlockInstance& block = board->blocks()[i];
    EXPECT_EQ(block.desc->type, expected[i]);
    EXPECT_EQ(block.base, bases[i]);
    EXPECT_EQ(block.base % block.desc->size, 0u) << block.desc->name;
    EXPECT_GE(block.base, end);
    end = block.base + block.desc->size;
  }
  EXPECT_EQ(board->address_space_bytes(), end);

  for (unsigned port = 0; port < p.ports.size(); ++port) {
    EXPECT_EQ(board->find_block(regs::port::kType, port)->index, port);
    EXPECT_EQ(rd(*board, regs::port::kPortInfoIndex, port), port);
  }
}

TEST_P(LayoutTest, IdBlockReportsTheProfile) {
  const regmap::BoardProfile& p = profile(GetParam());
  auto board = open(GetParam());
  EXPECT_EQ(board->blocks()[0].base, 0u);
  EXPECT_EQ(board->blocks()[0].desc->type, regs::id::kType);
  EXPECT_EQ(rd_at(*board, regs::id::kMagic.offset), regs::kMagic);
  EXPECT_EQ(rd(*board, regs::id::kRegmapVersionMajor), regs::kVersionMajor);
  EXPECT_EQ(rd(*board, regs::id::kRegmapVersionMinor), regs::kVersionMinor);
  EXPECT_EQ(rd(*board, regs::id::kBoardKindKind), p.kind);
  EXPECT_EQ(rd(*board, regs::id::kCapPortsValue), p.ports.size());
  EXPECT_EQ(rd(*board, regs::id::kCapCountCount), regmap::register_map().capabilities.size());
  // Every capability the map declares, at its indexed word, without naming any of them.
  for (const regmap::CapabilityDesc& cap : regmap::register_map().capabilities) {
    EXPECT_EQ(cap.offset, regmap::register_map().capabilities[0].offset + 4u * cap.index);
    EXPECT_EQ(rd_at(*board, cap.offset), p.capabilities[cap.index]) << cap.name;
  }
  for (unsigned port = 0; port < p.ports.size(); ++port) {
    EXPECT_EQ(rd(*board, regs::port::kPortInfoMedia, port), p.ports[port].media);
    EXPECT_EQ(rd(*board, regs::port::kSpeedMbpsMbps, port), p.ports[port].speed_mbps);
  }
}

TEST_P(LayoutTest, LayoutIsTheSameForEveryBoardOfTheProfile) {
  auto a = open(GetParam(), "a");
  auto b = open(GetParam(), "b");
  ASSERT_EQ(a->blocks().size(), b->blocks().size());
  for (size_t i = 0; i < a->blocks().size(); ++i) {
    EXPECT_EQ(a->blocks()[i].desc, b->blocks()[i].desc);
    EXPECT_EQ(a->blocks()[i].base, b->blocks()[i].base);
    EXPECT_EQ(a->blocks()[i].index, b->blocks()[i].index);
  }
  EXPECT_EQ(a->address_space_bytes(), b->address_space_bytes());
}

INSTANTIATE_TEST_SUITE_P(Profiles, LayoutTest, ::testing::Values(k1g, k64, "emulated-255port"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST_F(ModelTest, Netfpga1gLayoutOffsets) {
  auto board = open(k1g);
  std::vector<uint32_t> bases;
  for (const BlockInstance& block : board->blocks()) bases.push_back(block.base);
  EXPECT_EQ(bases, (std::vector<uint32_t>{0x0, 0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500,
                                          0x40000, 0x80000, 0xc0000, 0x400000}));
  EXPECT_EQ(board->address_space_bytes(), 0x800000u);
  EXPECT_EQ(rd_at(*board, 0x400000 + regs::lock::kBlockNext.offset), 0u);
}

TEST_F(ModelTest, FindProfile) {
  ASSERT_NE(EmulatedBoard::find_profile(k1g), nullptr);
  EXPECT_EQ(EmulatedBoard::find_profile(k1g)->name, k1g);
  EXPECT_EQ(EmulatedBoard::find_profile(k64)->ports.size(), 64u);
  EXPECT_EQ(EmulatedBoard::find_profile("no-such-board"), nullptr);
}

// ---- reset values and access types ---------------------------------------------------------

TEST_F(ModelTest, ResetValues) {
  auto board = open(k1g);
  EXPECT_EQ(board->generation(), 1u);
  EXPECT_EQ(rd(*board, regs::id::kGeneration), 1u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), 0u);
  EXPECT_FALSE(board->irq_pending());

  const std::array<uint32_t, 6> media = {1, 1, 1, 1, 2, 2};
  const std::array<uint32_t, 6> speed = {1000, 1000, 1000, 1000, 2000, 2000};
  for (unsigned port = 0; port < 6; ++port) {
    EXPECT_EQ(rd(*board, regs::port::kPortInfo, port), port | media[port] << 8);
    EXPECT_EQ(rd(*board, regs::port::kSpeedMbps, port), speed[port]);
    EXPECT_EQ(rd(*board, regs::port::kControl, port), 1u);
    EXPECT_EQ(rd(*board, regs::port::kLink, port), 1u);  // up, no changes
    EXPECT_EQ(rd(*board, regs::port::kAldfbThreshold, port), 8u);
    EXPECT_EQ(rd64(*board, regs::port::kTxPackets, port), 0u);
    for (unsigned vc = 0; vc < regs::port::kVcOccupancy.count; ++vc) {
      EXPECT_EQ(rd(*board, regs::port::kVcOccupancy.at(vc), port), 0u);
    }
  }
  // A reset router has no configuration (k = 0): it routes nothing until one is committed.
  for (bool active : {false, true}) {
    for (uint32_t w = 0; w < regs::route::kConfig.words(); ++w) {
      EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kConfig, 0, w, active)), 0u);
    }
  }
  EXPECT_EQ(rd(*board, regs::route::kStatus), 0u);
  for (bool active : {false, true}) {  // a reset timing bank has a frame of no slots
    for (uint32_t w = 0; w < regs::tdm::kTiming.words(); ++w) {
      EXPECT_EQ(rd_at(*board, entry(*board, regs::tdm::kTiming, 0, w, active)), 0u);
    }
  }
  EXPECT_EQ(rd(*board, regs::tdm::kStatus), 0u);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kDestTable, 15, 3)), 0u);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::lock::kCompletion.window, 255, 15)), 0u);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::lock::kResultData, 393215)), 0u);
}

TEST_F(ModelTest, ReadOnlyWritesAreIgnoredAndCounted) {
  auto board = open(k1g);
  EXPECT_TRUE(wr(*board, regs::id::kMagic, 0));
  EXPECT_EQ(rd(*board, regs::id::kMagic), regs::kMagic);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 1u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), irq(regs::id::kIrqStatusRoWrite));

  // Each word of a 64-bit counter; a status register; the generation.
  EXPECT_TRUE(wr(*board, regs::port::kRxPackets, 7, 2));
  EXPECT_TRUE(board->write32(addr(*board, regs::port::kRxPackets, 2) + 4, 7));
  EXPECT_EQ(rd64(*board, regs::port::kRxPackets, 2), 0u);
  EXPECT_TRUE(wr(*board, regs::route::kStatus, 1));
  EXPECT_EQ(rd(*board, regs::route::kStatus), 0u);
  EXPECT_TRUE(wr(*board, regs::id::kGeneration, 99));
  EXPECT_EQ(rd(*board, regs::id::kGeneration), 1u);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 5u);

  // RO tables and the active window of a double-buffered one.
  EXPECT_TRUE(board->write32(entry(*board, regs::lock::kResultData, 1), 0x1234));
  EXPECT_EQ(rd_at(*board, entry(*board, regs::lock::kResultData, 1)), 0u);
  EXPECT_TRUE(board->write32(entry(*board, regs::stripe::kMemberCounters, 0), 5));
  EXPECT_EQ(rd_at(*board, entry(*board, regs::stripe::kMemberCounters, 0)), 0u);
  EXPECT_TRUE(board->write32(entry(*board, regs::route::kDestTable, 0, 0, true), 1));
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kDestTable, 0, 0, true)), 0u);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 8u);
  EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), 0u);

  // Writable registers are not counted.
  EXPECT_TRUE(wr(*board, regs::id::kScratch, 1));
  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, 0));
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 8u);
}

TEST_F(ModelTest, ReadWriteRegistersStore) {
  auto board = open(k1g);
  EXPECT_TRUE(wr(*board, regs::id::kScratch, 0xdeadbeef));
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0xdeadbeefu);
  EXPECT_TRUE(board->write32(entry(*board, regs::route::kConfig, 0), 0x04030201));
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kConfig, 0)), 0x04030201u);
  EXPECT_TRUE(wr(*board, regs::port::kAldfbThreshold, 20, 3));
  EXPECT_EQ(rd(*board, regs::port::kAldfbThreshold, 3), 20u);
  EXPECT_EQ(rd(*board, regs::port::kAldfbThreshold, 2), 8u);  // per port
  EXPECT_TRUE(board->write32(entry(*board, regs::stripe::kGroupTable, 15, 4), 0xcafe));
  EXPECT_EQ(rd_at(*board, entry(*board, regs::stripe::kGroupTable, 15, 4)), 0xcafeu);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 0u);
}

TEST_F(ModelTest, WriteOnlyRegistersReadZero) {
  auto board = open(k1g);
  EXPECT_EQ(rd(*board, regs::id::kControl), 0u);
  EXPECT_TRUE(wr(*board, regs::id::kControl, 0));  // no reset
  EXPECT_EQ(board->generation(), 1u);
  EXPECT_TRUE(wr(*board, regs::route::kControl, 0xfffffffe));  // commit bit clear
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), 0u);
  EXPECT_TRUE(wr(*board, regs::route::kControl, 1));
  EXPECT_EQ(rd(*board, regs::route::kControl), 0u);
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), 1u);
  EXPECT_TRUE(wr(*board, regs::tdm::kControlArm, 1));
  EXPECT_EQ(rd(*board, regs::tdm::kControl), 0u);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 0u);
}

TEST_F(ModelTest, WriteOneToClearClearsOnlyTheOnes) {
  auto board = open(k1g);
  uint32_t ignored = 0;
  EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 0, 0));  // link_change
  EXPECT_FALSE(board->read32(0x2, ignored));                  // bus_error
  EXPECT_TRUE(wr(*board, regs::id::kMagic, 0));               // ro_write
  const uint32_t all = irq(regs::id::kIrqStatusLinkChange) | irq(regs::id::kIrqStatusBusError) |
                       irq(regs::id::kIrqStatusRoWrite);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), all);

  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, 0));
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), all);
  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, irq(regs::id::kIrqStatusBusError)));
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), all & ~irq(regs::id::kIrqStatusBusError));
  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, 0xffffffff));
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), 0u);
}

TEST_F(ModelTest, ReservedBitsReadZeroAndIgnoreWrites) {
  auto board = open(k1g);
  EXPECT_TRUE(wr(*board, regs::port::kAldfbThreshold, 0xffffffff));
  EXPECT_EQ(rd(*board, regs::port::kAldfbThreshold), 0xffffu);  // packets 15:0
  EXPECT_TRUE(wr(*board, regs::id::kIrqMask, 0xffffffff));
  EXPECT_EQ(rd(*board, regs::id::kIrqMask), 0x3fu);  // six interrupts: lock_completion is bit 5
  EXPECT_TRUE(wr(*board, regs::tdm::kConfig, 0xfffffffe));  // all but enable
  EXPECT_EQ(rd(*board, regs::tdm::kConfig), 0u);
  EXPECT_TRUE(wr(*board, regs::port::kControl, 0xfffffffe, 1));
  EXPECT_EQ(rd(*board, regs::port::kControl, 1), 0u);
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 0u);
}

// ---- bus errors ----------------------------------------------------------------------------

TEST_F(ModelTest, BusErrors) {
  auto board = open(k1g);
  const uint32_t port0 = base_of(*board, regs::port::kType, 0);
  const uint32_t route = base_of(*board, regs::route::kType);
  const std::vector<uint32_t> bad = {
      0x2e,                                                // unaligned
      0x1001,                                              // unaligned in a port block
      regs::id::kRoWriteCount.offset + 4,                  // past the id registers
      regs::id::kCapLockRingEntries.offset + 4,            // past the capabilities
      0xffc,                                               // end of the id block
      port0 + 0x70,                                        // past vc_occupancy[7]
      0x1600,                                              // gap after the last port
      0x3fffc,                                             // gap before route
      route + 0x400,                                       // between registers and tables
      entry(*board, regs::route::kPortMap, 6),             // 6 ports
      entry(*board, regs::route::kPortMap, 6, 0, true),    // in the active window too
      entry(*board, regs::route::kDestTable, 16, 2),       // 16 route entries
      entry(*board, regs::tdm::kSlotTable, 64),            // 64 slots
      entry(*board, regs::stripe::kGroupTable, 16),        // 16 groups
      entry(*board, regs::stripe::kMemberCounters, 6),     // 6 ports
      entry(*board, regs::lock::kCompletion.window, 256),  // 256 lock ring entries
      board->address_space_bytes(),                        // past the end
      0xfffffffc,
  };
  uint32_t count = 0;
  for (uint32_t offset : bad) {
    uint32_t value = 0;
    EXPECT_FALSE(board->read32(offset, value)) << std::hex << offset;
    EXPECT_EQ(value, 0xffffffffu);
    EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), ++count);
    EXPECT_EQ(rd(*board, regs::id::kBusErrorAddr), offset);
    EXPECT_FALSE(board->write32(offset, 0x5a5a5a5a)) << std::hex << offset;
    EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), ++count);
  }
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), irq(regs::id::kIrqStatusBusError));
  EXPECT_EQ(rd(*board, regs::id::kRoWriteCount), 0u);

  // The last implemented entries are fine.
  for (uint32_t offset :
       {entry(*board, regs::route::kPortMap, 5), entry(*board, regs::route::kDestTable, 15, 3),
        entry(*board, regs::tdm::kSlotTable, 63, 15),
        entry(*board, regs::lock::kCompletion.window, 255, 15)}) {
    uint32_t value = 1;
    EXPECT_TRUE(board->read32(offset, value)) << std::hex << offset;
    EXPECT_EQ(value, 0u);
  }
  EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), count);
}

TEST_F(ModelTest, EntryCountFollowsTheProfile) {
  auto board = open(k64);
  uint32_t value = 0;
  EXPECT_TRUE(board->read32(entry(*board, regs::route::kDestTable, 4095, 3), value));
  EXPECT_TRUE(board->read32(entry(*board, regs::route::kPortMap, 63), value));
  EXPECT_TRUE(board->read32(entry(*board, regs::tdm::kSlotTable, 1023, 15, true), value));
  EXPECT_TRUE(board->read32(entry(*board, regs::lock::kCompletion.window, 1023, 15), value));
  EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), 0u);
}

// ---- tables and bank swaps -----------------------------------------------------------------

TEST_F(ModelTest, RouteCommitSwapsShadowAndActive) {
  auto board = open(k1g);
  const uint32_t shadow = entry(*board, regs::route::kDestTable, 3, 1);
  const uint32_t active = entry(*board, regs::route::kDestTable, 3, 1, true);
  const uint32_t map_shadow = entry(*board, regs::route::kPortMap, 2);
  const uint32_t map_active = entry(*board, regs::route::kPortMap, 2, 0, true);

  EXPECT_TRUE(board->write32(shadow, 0x11223344));
  EXPECT_TRUE(board->write32(map_shadow, 0x0102));
  EXPECT_EQ(rd_at(*board, shadow), 0x11223344u);
  EXPECT_EQ(rd_at(*board, active), 0u);  // not before the commit
  EXPECT_EQ(rd_at(*board, map_active), 0u);

  EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));
  EXPECT_EQ(rd(*board, regs::route::kStatusActiveBank), 1u);
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), 1u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), irq(regs::id::kIrqStatusRouteCommit));
  EXPECT_EQ(rd_at(*board, active), 0x11223344u);
  EXPECT_EQ(rd_at(*board, map_active), 0x0102u);
  EXPECT_EQ(rd_at(*board, shadow), 0u);  // the old active bank
  EXPECT_EQ(rd_at(*board, map_shadow), 0u);

  EXPECT_TRUE(board->write32(shadow, 0x55));
  EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));
  EXPECT_EQ(rd(*board, regs::route::kStatusActiveBank), 0u);
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), 2u);
  EXPECT_EQ(rd_at(*board, active), 0x55u);
  EXPECT_EQ(rd_at(*board, shadow), 0x11223344u);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kDestTable, 4, 1, true)), 0u);
}

// The TDM sequencer's behaviour is tdm_model_test.cc's.

// ---- side effects --------------------------------------------------------------------------

TEST_F(ModelTest, PortDisableTakesTheLinkDown) {
  auto board = open(k1g);
  EXPECT_TRUE(wr(*board, regs::id::kIrqMaskLinkChange, 1));
  EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 0, 1));
  EXPECT_EQ(rd(*board, regs::port::kLinkUp, 1), 0u);
  EXPECT_EQ(rd(*board, regs::port::kLinkChanges, 1), 1u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), irq(regs::id::kIrqStatusLinkChange));
  EXPECT_TRUE(board->irq_pending());
  EXPECT_EQ(rd(*board, regs::port::kLink, 0), 1u);  // other ports untouched

  EXPECT_TRUE(wr(*board, regs::id::kIrqStatus, 0xffffffff));
  EXPECT_FALSE(board->irq_pending());
  EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 0, 1));  // no change, no event
  EXPECT_EQ(rd(*board, regs::port::kLinkChanges, 1), 1u);
  EXPECT_EQ(rd(*board, regs::id::kIrqStatus), 0u);

  EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 1, 1));
  EXPECT_EQ(rd(*board, regs::port::kLinkUp, 1), 1u);
  EXPECT_EQ(rd(*board, regs::port::kLinkChanges, 1), 2u);

  // The change counter is 16 bits and wraps.
  for (uint32_t i = 0; i < 0x10000 - 2; ++i) {
    ASSERT_TRUE(wr(*board, regs::port::kControlEnable, i % 2 == 0 ? 0 : 1, 1));
  }
  EXPECT_EQ(rd(*board, regs::port::kLinkChanges, 1), 0u);
  EXPECT_EQ(rd(*board, regs::port::kLinkUp, 1), 1u);
}

TEST_F(ModelTest, IrqPendingNeedsTheMask) {
  auto board = open(k1g);
  EXPECT_TRUE(wr(*board, regs::id::kMagic, 0));
  EXPECT_NE(rd(*board, regs::id::kIrqStatus), 0u);
  EXPECT_FALSE(board->irq_pending());
  EXPECT_TRUE(wr(*board, regs::id::kIrqMaskBusError, 1));
  EXPECT_FALSE(board->irq_pending());
  EXPECT_TRUE(wr(*board, regs::id::kIrqMask, irq(regs::id::kIrqMaskRoWrite)));
  EXPECT_TRUE(board->irq_pending());
}

TEST_F(ModelTest, BoardResetRestoresEverything) {
  auto board = open(k1g);
  const uint32_t dest = entry(*board, regs::route::kDestTable, 7, 2);
  const uint32_t dest_active = entry(*board, regs::route::kDestTable, 7, 2, true);
  const uint32_t slot = entry(*board, regs::tdm::kSlotTable, 5, 5);
  const uint32_t group = entry(*board, regs::stripe::kGroupTable, 2, 1);
  uint32_t ignored = 0;

  EXPECT_TRUE(wr(*board, regs::id::kScratch, 42));
  EXPECT_TRUE(wr(*board, regs::id::kIrqMask, 0x1f));
  EXPECT_TRUE(board->write32(entry(*board, regs::route::kConfig, 0), 0x0101));
  EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 0, 4));
  EXPECT_TRUE(board->write32(dest, 1));
  EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));
  EXPECT_TRUE(board->write32(dest, 2));  // both banks hold data now
  EXPECT_TRUE(board->write32(slot, 3));
  EXPECT_TRUE(board->write32(group, 4));
  set_timing(*board, {.slots = 2, .slot_length = 125});
  EXPECT_TRUE(wr(*board, regs::tdm::kConfigEnable, 1));
  board->advance(1000);
  EXPECT_TRUE(wr(*board, regs::tdm::kControlArm, 1));
  EXPECT_FALSE(board->read32(0x2, ignored));
  EXPECT_TRUE(wr(*board, regs::id::kMagic, 0));
  EXPECT_TRUE(board->irq_pending());

  EXPECT_TRUE(wr(*board, regs::id::kControlBoardReset, 1));
  EXPECT_EQ(board->generation(), 2u);
  EXPECT_EQ(rd(*board, regs::id::kGeneration), 2u);

  EXPECT_FALSE(board->irq_pending());
  for (const regmap::RegRef& ref :
       {regs::id::kScratch, regs::id::kIrqStatus, regs::id::kIrqMask, regs::id::kBusErrorCount,
        regs::id::kBusErrorAddr, regs::id::kRoWriteCount, regs::route::kStatus,
        regs::route::kCommitCount, regs::tdm::kConfig, regs::tdm::kStatus, regs::tdm::kCurrentSlot,
        regs::tdm::kSwapCount}) {
    EXPECT_EQ(rd(*board, ref), 0u) << "block " << ref.block_type << " offset " << ref.offset;
  }
  EXPECT_EQ(rd64(*board, regs::tdm::kFrameCounter), 0u);
  EXPECT_EQ(rd(*board, regs::port::kControl, 4), 1u);
  EXPECT_EQ(rd(*board, regs::port::kLink, 4), 1u);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kConfig, 0)), 0u);
  EXPECT_EQ(rd_at(*board, dest), 0u);
  EXPECT_EQ(rd_at(*board, dest_active), 0u);
  EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));  // the other bank is clear too
  EXPECT_EQ(rd_at(*board, dest), 0u);
  EXPECT_EQ(rd_at(*board, dest_active), 0u);
  EXPECT_EQ(rd_at(*board, slot), 0u);
  EXPECT_EQ(rd_at(*board, group), 0u);
  EXPECT_EQ(rd(*board, regs::id::kMagic), regs::kMagic);
  EXPECT_EQ(rd(*board, regs::id::kCapPortsValue), 6u);
  EXPECT_EQ(rd(*board, regs::id::kBlockNext), 0x1000u);

  board->board_reset();
  EXPECT_EQ(board->generation(), 3u);
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), 0u);
}

// ---- batches and threads -------------------------------------------------------------------

TEST_F(ModelTest, ExecuteRunsABatch) {
  auto board = open(k1g);
  std::vector<EmulatedBoard::Op> ops = {
      {true, addr(*board, regs::id::kScratch), 5, false},
      {false, addr(*board, regs::id::kScratch), 0, false},
      {false, 0x2, 0, false},  // a bus error does not stop the batch
      {true, addr(*board, regs::route::kControl), 1, false},
      {false, addr(*board, regs::route::kStatus), 0, false},
      {true, 0x3fffc, 1, false},
      {false, addr(*board, regs::id::kBusErrorCount), 0, false},
  };
  board->execute(ops);
  EXPECT_TRUE(ops[0].ok);
  EXPECT_TRUE(ops[1].ok);
  EXPECT_EQ(ops[1].value, 5u);
  EXPECT_FALSE(ops[2].ok);
  EXPECT_EQ(ops[2].value, 0xffffffffu);
  EXPECT_TRUE(ops[3].ok);
  EXPECT_TRUE(ops[4].ok);
  EXPECT_EQ(ops[4].value, 1u);
  EXPECT_FALSE(ops[5].ok);
  EXPECT_TRUE(ops[6].ok);
  EXPECT_EQ(ops[6].value, 2u);
}

// A batch decodes a run of consecutive table words once (a burst); it must answer exactly as
// the same accesses one by one: runs past the entries a board implements, into a read-only
// window, and across a register write that swaps the banks.
TEST_F(ModelTest, ABatchAnswersAsSingleAccessesWould) {
  auto batched = open(k1g, "batched");
  auto single = open(k1g, "single");
  const auto& slots = regs::tdm::kSlotTable;
  const uint32_t last_slot = rd(*batched, regs::id::kCapTdmSlotsValue) - 1;
  const uint32_t dest = entry(*batched, regs::route::kDestTable, 3, 0);
  const uint32_t dest_active = entry(*batched, regs::route::kDestTable, 3, 0, true);
  std::vector<EmulatedBoard::Op> ops;
  auto run = [&](bool write, uint32_t from, uint32_t words, uint32_t value) {
    for (uint32_t w = 0; w < words; ++w) ops.push_back({write, from + 4 * w, value + w, false});
  };
  // Past the last implemented slot: the words after it are bus errors.
  run(true, entry(*batched, slots, last_slot, slots.words() - 2), 4, 0x100);
  run(false, entry(*batched, slots, last_slot, slots.words() - 2), 4, 0);
  // The active window is read-only.
  run(true, dest_active, 2, 0x200);
  // A run into the shadow bank, the commit, and the run going on: into the other bank.
  run(true, dest, 1, 0x300);
  ops.push_back({true, addr(*batched, regs::route::kControl), 1, false});
  run(true, dest + 4, 1, 0x301);
  run(false, dest, 2, 0);
  run(false, dest_active, 2, 0);
  ops.push_back({false, addr(*batched, regs::id::kBusErrorCount), 0, false});
  ops.push_back({false, addr(*batched, regs::id::kRoWriteCount), 0, false});

  std::vector<EmulatedBoard::Op> one_by_one = ops;
  batched->execute(ops);
  for (auto& op : one_by_one) {
    op.ok = op.write ? single->write32(op.offset, op.value) : single->read32(op.offset, op.value);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].ok, one_by_one[i].ok) << "operation " << i;
    EXPECT_EQ(ops[i].value, one_by_one[i].value) << "operation " << i;
  }
  EXPECT_EQ(ops.end()[-2].value, 4u);  // bus errors: two writes, two reads
  EXPECT_EQ(ops.end()[-1].value, 2u);  // writes to the read-only window
}

TEST_F(ModelTest, ConcurrentAccessIsSerialised) {
  auto board = open(k1g);
  set_timing(*board, {.slots = 8, .slot_length = 125});
  EXPECT_TRUE(wr(*board, regs::tdm::kConfigEnable, 1));
  constexpr uint32_t kRounds = 20000;
  std::atomic<uint32_t> mismatches{0};

  std::thread clock([&] {
    for (uint32_t i = 0; i < kRounds; ++i) {
      board->advance(997);
      if (i % 10 == 0) board->write32(addr(*board, regs::tdm::kControl), 1);
    }
  });
  std::thread software([&] {
    const uint32_t scratch = addr(*board, regs::id::kScratch);
    const uint32_t commit = addr(*board, regs::route::kControl);
    for (uint32_t i = 0; i < kRounds; ++i) {
      uint32_t value = 0;
      board->write32(scratch, i);
      if (!board->read32(scratch, value) || value != i) ++mismatches;
      std::array<EmulatedBoard::Op, 2> ops = {EmulatedBoard::Op{true, commit, 1, false},
                                              EmulatedBoard::Op{false, scratch, 0, false}};
      board->execute(ops);
      if (!ops[0].ok || !ops[1].ok || ops[1].value != i) ++mismatches;
    }
  });
  clock.join();
  software.join();
  EXPECT_EQ(mismatches.load(), 0u);
  EXPECT_EQ(rd(*board, regs::route::kCommitCount), kRounds);
  EXPECT_EQ(rd64(*board, regs::tdm::kFrameCounter), uint64_t{kRounds} * 997 / (8 * 125));
  EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), 0u);
}

// ---- the board memory ----------------------------------------------------------------------

TEST_F(ModelTest, NewBoardReportsCreated) {
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().created);
  EXPECT_FALSE(board->open_report().reinitialised);
  EXPECT_EQ(board->name(), "board0");
  EXPECT_EQ(board->profile().name, k1g);
  EXPECT_EQ(board->path(), dir_.path() + "/asn-board-board0");
  EXPECT_TRUE(fs::exists(board->path()));
  EXPECT_EQ(fs::file_size(board->path()),
            kMemoryHeaderBytes + board->address_space_bytes() + board->dram_bytes());
}

TEST_F(ModelTest, MemoryOutlivesTheObject) {
  uint32_t bank = 0;
  {
    auto board = open(k1g);
    uint32_t ignored = 0;
    EXPECT_TRUE(wr(*board, regs::id::kScratch, 0x1234));
    EXPECT_TRUE(board->write32(entry(*board, regs::route::kDestTable, 9), 0x77));
    EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));
    EXPECT_TRUE(wr(*board, regs::port::kControlEnable, 0, 2));
    EXPECT_FALSE(board->read32(0x2, ignored));
    set_timing(*board, {.slots = 4, .slot_length = 100});
    EXPECT_TRUE(wr(*board, regs::tdm::kConfigEnable, 1));
    board->advance(350);  // mid-frame
    bank = rd(*board, regs::route::kStatusActiveBank);
  }
  auto board = open(k1g);
  EXPECT_FALSE(board->open_report().created);
  EXPECT_FALSE(board->open_report().reinitialised);
  EXPECT_EQ(board->open_report().reason, "");
  EXPECT_EQ(board->generation(), 1u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0x1234u);
  EXPECT_EQ(rd(*board, regs::route::kStatusActiveBank), bank);
  EXPECT_EQ(rd_at(*board, entry(*board, regs::route::kDestTable, 9, 0, true)), 0x77u);
  EXPECT_EQ(rd(*board, regs::port::kLinkUp, 2), 0u);
  EXPECT_EQ(rd(*board, regs::id::kBusErrorCount), 1u);
  EXPECT_EQ(rd(*board, regs::tdm::kCurrentSlot), 3u);
  board->advance(50);  // the phase was kept: this completes the frame
  EXPECT_EQ(rd64(*board, regs::tdm::kFrameCounter), 1u);
}

TEST_F(ModelTest, SecondOpenIsBusy) {
  auto board = open(k1g);
  try {
    open(k1g);
    FAIL() << "second open succeeded";
  } catch (const BoardError& e) {
    EXPECT_EQ(e.kind(), BoardError::Kind::kBusy);
    EXPECT_THAT(e.what(), HasSubstr("board 'board0' is in use by another process"));
    EXPECT_THAT(e.what(), HasSubstr(board->path()));
  }
  try {
    EmulatedBoard::destroy("board0", options_);
    FAIL() << "destroy of a board in use succeeded";
  } catch (const BoardError& e) {
    EXPECT_EQ(e.kind(), BoardError::Kind::kBusy);
  }
  EXPECT_TRUE(wr(*board, regs::id::kScratch, 3));  // the first one still works
  board.reset();
  EXPECT_EQ(rd(*open(k1g), regs::id::kScratch), 3u);
}

TEST_F(ModelTest, OtherBoardNamesAreIndependent) {
  auto a = open(k1g, "a");
  auto b = open(k64, "b");
  EXPECT_TRUE(wr(*a, regs::id::kScratch, 1));
  EXPECT_TRUE(wr(*b, regs::id::kScratch, 2));
  EXPECT_EQ(rd(*a, regs::id::kScratch), 1u);
  EXPECT_EQ(rd(*b, regs::id::kScratch), 2u);
}

TEST_F(ModelTest, AnotherProfileIsRefused) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  try {
    open(k64);
    FAIL() << "open with another profile succeeded";
  } catch (const BoardError& e) {
    EXPECT_EQ(e.kind(), BoardError::Kind::kProfileMismatch);
    EXPECT_THAT(e.what(), HasSubstr(k1g));
    EXPECT_THAT(e.what(), HasSubstr(k64));
    EXPECT_THAT(e.what(), HasSubstr("--reset-board"));
  }
  // Nothing was touched.
  EXPECT_EQ(rd(*open(k1g), regs::id::kScratch), 9u);

  // A power-on reset turns it into the other board.
  auto board = open(k64, "board0", /*power_on_reset=*/true);
  EXPECT_FALSE(board->open_report().created);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_THAT(board->open_report().reason, HasSubstr("power-on reset"));
  EXPECT_EQ(board->generation(), 2u);
  EXPECT_EQ(rd(*board, regs::id::kCapPortsValue), 64u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
}

TEST_F(ModelTest, PowerOnResetStartsAfresh) {
  {
    auto board = open(k1g);
    EXPECT_TRUE(wr(*board, regs::id::kScratch, 9));
    board->board_reset();
    EXPECT_TRUE(wr(*board, regs::id::kScratch, 10));
  }
  auto board = open(k1g, "board0", /*power_on_reset=*/true);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_EQ(board->generation(), 3u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
}

TEST_F(ModelTest, CorruptHeaderReinitialises) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  poke_file(0, "garbage!", 8);
  auto board = open(k1g);
  EXPECT_FALSE(board->open_report().created);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_THAT(board->open_report().reason, HasSubstr("header is not valid"));
  EXPECT_EQ(board->generation(), 1u);  // the old generation is unknown
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
  EXPECT_EQ(rd(*board, regs::id::kMagic), regs::kMagic);
}

TEST_F(ModelTest, RegisterMapChangeReinitialises) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  MemoryHeader header = read_header();
  EXPECT_EQ(header.regmap_digest, regmap::register_map().digest);
  header.regmap_digest ^= 1;
  poke_file(offsetof(MemoryHeader, regmap_digest), &header.regmap_digest,
            sizeof header.regmap_digest);
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_THAT(board->open_report().reason, HasSubstr("register map changed"));
  EXPECT_EQ(board->generation(), 2u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
}

TEST_F(ModelTest, InterruptedInitialisationReinitialises) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  const uint32_t state = kMemoryStateInitialising;
  poke_file(offsetof(MemoryHeader, state), &state, sizeof state);
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_THAT(board->open_report().reason, HasSubstr("interrupted"));
  EXPECT_EQ(board->generation(), 2u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
  EXPECT_EQ(read_header().state, kMemoryStateReady);
}

TEST_F(ModelTest, WrongFileSizeReinitialises) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  fs::resize_file(file(), kMemoryHeaderBytes + 4096);
  {
    auto board = open(k1g);
    EXPECT_TRUE(board->open_report().reinitialised);
    EXPECT_THAT(board->open_report().reason,
                HasSubstr("board memory file is " + std::to_string(kMemoryHeaderBytes + 4096) +
                          " bytes; header, register space and DRAM take"));
    EXPECT_EQ(board->generation(), 2u);
    EXPECT_EQ(fs::file_size(file()),
              kMemoryHeaderBytes + board->address_space_bytes() + board->dram_bytes());
    EXPECT_EQ(rd(*board, regs::id::kMagic), regs::kMagic);
  }
  fs::resize_file(file(), 100);  // not even a header
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_EQ(board->generation(), 1u);
}

TEST_F(ModelTest, HeaderDescribesTheBoard) {
  uint32_t space = 0;
  {
    auto board = open(k64);
    board->board_reset();
    space = board->address_space_bytes();
  }
  const MemoryHeader header = read_header();
  EXPECT_EQ(std::memcmp(header.magic, kMemoryMagic, sizeof header.magic), 0);
  EXPECT_EQ(header.layout_version, kMemoryLayoutVersion);
  EXPECT_EQ(header.header_bytes, kMemoryHeaderBytes);
  EXPECT_STREQ(header.profile, k64);
  EXPECT_EQ(header.address_space_bytes, space);
  EXPECT_EQ(header.generation, 2u);
  EXPECT_EQ(header.state, kMemoryStateReady);
}

// The image after the header is the BAR, word for word; the two windows of a double-buffered
// table are its physical banks and the shadow window shows the inactive one.
TEST_F(ModelTest, ImageIsTheBarWordForWord) {
  uint32_t shadow = 0;
  uint32_t active = 0;
  {
    auto board = open(k1g);
    EXPECT_TRUE(wr(*board, regs::id::kScratch, 0xa5a5f00d));
    shadow = entry(*board, regs::route::kDestTable, 1);
    active = entry(*board, regs::route::kDestTable, 1, 0, true);
    EXPECT_TRUE(board->write32(shadow, 0x1111));  // active_bank 0: into bank 1
    EXPECT_TRUE(wr(*board, regs::route::kControlCommit, 1));
    EXPECT_TRUE(board->write32(shadow, 0x2222));  // active_bank 1: into bank 0
  }
  auto word_at = [&](uint32_t offset) {
    uint32_t value = 0;
    const int fd = ::open(file().c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::pread(fd, &value, sizeof value, static_cast<off_t>(kMemoryHeaderBytes + offset)),
              static_cast<ssize_t>(sizeof value));
    ::close(fd);
    return value;
  };
  EXPECT_EQ(word_at(regs::id::kScratch.offset), 0xa5a5f00du);
  EXPECT_EQ(word_at(regs::id::kMagic.offset), regs::kMagic);
  EXPECT_EQ(word_at(active), 0x1111u);  // bank 1, now active
  EXPECT_EQ(word_at(shadow), 0x2222u);  // bank 0, the shadow
}

TEST_F(ModelTest, DestroyRemovesTheMemory) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  EmulatedBoard::destroy("board0", options_);
  EXPECT_FALSE(fs::exists(file()));
  EmulatedBoard::destroy("board0", options_);  // already gone: fine
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().created);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
}

TEST_F(ModelTest, BoardNames) {
  for (const std::string& bad :
       {std::string(), std::string(65, 'a'), std::string("a/b"), std::string("../x"),
        std::string("a b"), std::string("a.b"), std::string("ä")}) {
    try {
      open(k1g, bad);
      ADD_FAILURE() << "opened '" << bad << "'";
    } catch (const BoardError& e) {
      EXPECT_EQ(e.kind(), BoardError::Kind::kBadName) << bad;
    }
    EXPECT_THROW(EmulatedBoard::destroy(bad, options_), BoardError);
  }
  EXPECT_NE(open(k1g, std::string(64, 'z')), nullptr);
  EXPECT_NE(open(k1g, "Board_1-a"), nullptr);
  EXPECT_THAT(memory_path("x", {}), StartsWith("/dev/shm/asn/asn-board-x"));
}

TEST_F(ModelTest, MissingDirectoryIsASystemError) {
  OpenOptions options;
  options.shm_dir = dir_.path() + "/missing/deeper";  // asnd creates the last level only
  try {
    EmulatedBoard::open("board0", profile(k1g), options);
    FAIL() << "open succeeded";
  } catch (const BoardError& e) {
    EXPECT_EQ(e.kind(), BoardError::Kind::kSystem);
    EXPECT_THAT(e.what(), HasSubstr(options.shm_dir));
  }
}

TEST_F(ModelTest, ProfilesThatDoNotFitAreRefused) {
  std::vector<regmap::PortProfile> ports(65, regmap::PortProfile{3, 10000});
  regmap::BoardProfile big = profile(k64);
  big.name = "too-many-ports";
  big.ports = ports;  // port_map has 64 entries
  EXPECT_THROW(
      {
        try {
          EmulatedBoard::open("board0", big, options_);
        } catch (const BoardError& e) {
          EXPECT_EQ(e.kind(), BoardError::Kind::kBadProfile);
          throw;
        }
      },
      BoardError);
  regmap::BoardProfile none = profile(k1g);
  none.ports = {};
  EXPECT_THROW(EmulatedBoard::open("board0", none, options_), BoardError);

  // Capabilities beyond what the map's fields hold, or a block version the map lacks.
  std::vector<uint32_t> caps(big.capabilities.begin(), big.capabilities.end());
  regmap::BoardProfile wide = profile(k64);
  caps[regmap::index_of(regmap::Cap::kVcsPerPort)] = 9;
  wide.capabilities = caps;
  EXPECT_THROW(EmulatedBoard::open("board0", wide, options_), BoardError);
  const regmap::BlockVersion future[] = {{regs::route::kType, regs::route::kVersion + 1}};
  regmap::BoardProfile pinned = profile(k1g);
  pinned.block_versions = future;
  EXPECT_THROW(EmulatedBoard::open("board0", pinned, options_), BoardError);
}

// The board copies the profile it is opened with: the caller's may go away.
TEST_F(ModelTest, BoardOwnsItsProfile) {
  std::unique_ptr<EmulatedBoard> board;
  {
    std::string name = "short-lived";
    std::vector<regmap::PortProfile> ports(3, regmap::PortProfile{1, 1000});
    std::vector<uint32_t> caps(profile(k1g).capabilities.begin(), profile(k1g).capabilities.end());
    caps[regmap::index_of(regmap::Cap::kPorts)] = 3;
    regmap::BoardProfile custom = profile(k1g);
    custom.name = name;
    custom.ports = ports;
    custom.capabilities = caps;
    board = EmulatedBoard::open("board0", custom, options_);
    std::fill(name.begin(), name.end(), 'x');
    std::fill(caps.begin(), caps.end(), 0);
  }
  EXPECT_EQ(board->profile().name, "short-lived");
  EXPECT_EQ(board->profile().ports.size(), 3u);
  EXPECT_EQ(board->profile().cap(regmap::Cap::kTdmSlots), profile(k1g).cap(regmap::Cap::kTdmSlots));
  EXPECT_EQ(rd(*board, regs::id::kCapPortsValue), 3u);
}

// ---- hostile and damaged board memory -------------------------------------------------------

TEST_F(ModelTest, AFileOwnedOrWritableByOthersIsRefused) {
  EmulatedBoard::destroy("board0", options_);
  // Writable by others: they could change the board behind asnd's back.
  {
    const int fd = ::open(file().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ::fchmod(fd, 0666);
    ::close(fd);
  }
  try {
    open(k1g);
    FAIL() << "a world-writable board memory was adopted";
  } catch (const BoardError& e) {
    EXPECT_EQ(e.kind(), BoardError::Kind::kSystem);
    EXPECT_THAT(e.what(), HasSubstr("is writable by others (mode 0666)"));
  }
  // Owned by another user (only root may give a file away, so only root can plant one here).
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(file().c_str(), 65534, 65534), 0);
    ::chmod(file().c_str(), 0600);
    try {
      open(k1g);
      FAIL() << "a board memory of another user was adopted";
    } catch (const BoardError& e) {
      EXPECT_THAT(e.what(), HasSubstr("belongs to uid 65534"));
      EXPECT_THAT(e.what(), HasSubstr("Remove it"));
    }
  }
  // A planted symbolic link is never followed.
  fs::remove(file());
  fs::create_symlink(dir_.file("elsewhere"), file());
  EXPECT_THROW(open(k1g), BoardError);
  EXPECT_FALSE(fs::exists(dir_.file("elsewhere")));
}

TEST_F(ModelTest, ADirectoryOthersMayChangeIsRefused) {
  OpenOptions options = options_;
  options.shm_dir = dir_.path() + "/open";
  fs::create_directory(options.shm_dir);
  fs::permissions(options.shm_dir, fs::perms::all);  // 0777, as /dev/shm itself
  try {
    EmulatedBoard::open("board0", profile(k1g), options);
    FAIL() << "a board memory in a world-writable directory was opened";
  } catch (const BoardError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is writable by everyone"));
    EXPECT_THAT(e.what(), HasSubstr("/dev/shm/asn"));
  }
  // A missing directory is created for asnd alone.
  options.shm_dir = dir_.path() + "/mine";
  EXPECT_NE(EmulatedBoard::open("board0", profile(k1g), options), nullptr);
  EXPECT_EQ(fs::status(options.shm_dir).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(memory_path("board0", options)).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
}

// Read-only words that say what the board is are checked on a warm start: damage to them
// (here a capability that would size a table) discards the memory, with the reason.
TEST_F(ModelTest, DamagedIdentityWordsReinitialise) {
  EXPECT_TRUE(wr(*open(k1g), regs::id::kScratch, 9));
  const uint32_t huge = 0xffffff;
  poke_file(kMemoryHeaderBytes + regs::id::kCapRouteEntries.offset, &huge, sizeof huge);
  auto board = open(k1g);
  EXPECT_TRUE(board->open_report().reinitialised);
  EXPECT_THAT(board->open_report().reason,
              HasSubstr("id.cap_route_entries reads 0xffffff in the board memory, where a "
                        "netfpga-1g board has 0x10: the memory is damaged"));
  EXPECT_EQ(rd(*board, regs::id::kCapRouteEntriesValue), 16u);
  EXPECT_EQ(rd(*board, regs::id::kScratch), 0u);
}

TEST_F(ModelTest, ADamagedHeaderIsNamedExactly) {
  open(k1g).reset();
  MemoryHeader header = read_header();
  const uint32_t bad = header.address_space_bytes + 4096;
  poke_file(offsetof(MemoryHeader, address_space_bytes), &bad, sizeof bad);
  auto board = open(k1g);
  EXPECT_THAT(
      board->open_report().reason,
      HasSubstr("header gives an address space of " + std::to_string(bad) +
                " bytes; a netfpga-1g board has " + std::to_string(header.address_space_bytes)));
  board.reset();
  const uint32_t bad_header = 8192;
  poke_file(offsetof(MemoryHeader, header_bytes), &bad_header, sizeof bad_header);
  EXPECT_THAT(open(k1g)->open_report().reason,
              HasSubstr("header says it is 8192 bytes long; it is 4096"));
}

// Someone truncates the memory file under a running board: the next access past the new
// end is caught (no SIGBUS kills the process) and the board says what happened.
TEST_F(ModelTest, AFileTruncatedWhileInUseIsReportedNotACrash) {
  auto board = open(k1g);
  EXPECT_EQ(board->problem(), "");
  const uint32_t lock_entry = entry(*board, regs::lock::kResultData, 100);
  ASSERT_EQ(::truncate(file().c_str(), kMemoryHeaderBytes + 4096), 0);
  uint32_t value = 1;
  board->read32(lock_entry, value);  // past the file's new end: would be SIGBUS
  board->write32(addr(*board, regs::id::kScratch), 5);
  board->advance(1000);
  EXPECT_THAT(board->problem(), HasSubstr("shrank while in use"));
}

TEST_F(ModelTest, AFileRemovedOrReplacedWhileInUseIsReported) {
  auto board = open(k1g);
  ASSERT_EQ(::unlink(file().c_str()), 0);
  EXPECT_THAT(board->problem(), HasSubstr("was removed while in use"));
  write_file(file(), "x");
  EXPECT_THAT(board->problem(), HasSubstr("was replaced by another file"));
}

}  // namespace
}  // namespace asn::model

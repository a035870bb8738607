// The Device layer over the emulated board: the block walk and its refusals, typed access,
// name and offset resolution, and validation that writes nothing when input is wrong.
#include "device/device.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "bus/emulated_bus.hpp"
#include "counting_bus.hpp"
#include "error.hpp"
#include "patched_bus.hpp"
#include "support.hpp"

namespace asn {
namespace {

namespace regs = asn::regs;

using test::PatchedBus;

class DeviceTest : public ::testing::Test {
 protected:
  void open(const std::string& profile = "netfpga-1g") {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("dev");
    options.profile = profile;
    options.shm_dir = dir_.path();
    options.run_clock = false;
    bus_ = std::make_unique<EmulatedBus>(options);
    patched_ = std::make_unique<PatchedBus>(*bus_);
  }
  void SetUp() override { open(); }

  test::TempDir dir_;
  std::unique_ptr<EmulatedBus> bus_;
  std::unique_ptr<PatchedBus> patched_;
};

TEST_F(DeviceTest, WalksTheBlockListOfEachProfile) {
  for (const auto& board : regmap::register_map().boards) {
    open(std::string(board.name));
    Device device(*bus_);
    const auto layout = device.layout();
    EXPECT_EQ(layout->caps.get(regmap::Cap::kPorts), board.ports.size());
    EXPECT_EQ(layout->count(regs::port::kType), board.ports.size());
    EXPECT_EQ(layout->count(regs::route::kType), 1u);
    EXPECT_EQ(layout->count(regs::lock::kType), 1u);
    EXPECT_EQ(layout->blocks.front().name, "id");
    EXPECT_EQ(layout->blocks[1].name, "port[0]");
    EXPECT_EQ(layout->kind, board.kind);
    EXPECT_EQ(layout->major, regs::kVersionMajor);
    // Every capability the map declares, read in one batch, by index and by name.
    ASSERT_EQ(layout->caps.values().size(), regmap::register_map().capabilities.size());
    for (const auto& cap : regmap::register_map().capabilities) {
      EXPECT_EQ(layout->caps.get(cap.index), board.capabilities[cap.index]) << cap.name;
      EXPECT_EQ(layout->caps.find(cap.name), board.capabilities[cap.index]) << cap.name;
    }
  }
}

// A capability the YAML declares and no code names (dram_mib): found by name, valued from
// the profile, with the description the YAML gives it.
TEST_F(DeviceTest, ACapabilityOnlyTheYamlDeclaresIsReported) {
  Device device(*bus_);
  const auto layout = device.layout();
  ASSERT_TRUE(layout->caps.find("dram_mib").has_value());
  EXPECT_EQ(*layout->caps.find("dram_mib"), 64u);  // netfpga-1g: 64 MB of DRAM (004 L1248)
  EXPECT_FALSE(layout->caps.find("no_such_capability").has_value());
}

TEST_F(DeviceTest, RefusesAWrongMagicNamingBothValues) {
  patched_->patches[regs::id::kMagic.offset] = 0xdeadbeef;
  try {
    Device device(*patched_);
    FAIL() << "a board with the wrong magic was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kHardware);
    EXPECT_NE(std::string(e.what()).find("0xdeadbeef"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0x41534e31"), std::string::npos) << e.what();
  }
}

TEST_F(DeviceTest, RefusesAnUnsupportedBlockVersionNamingBoth) {
  Device good(*bus_);
  const auto layout = good.layout();
  const DeviceBlock& route = layout->block(regs::route::kType);
  patched_->patches[route.base + regs::route::kBlockVersion.offset] = 7;
  try {
    Device device(*patched_);
    FAIL() << "an unknown block version was accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("block route"), std::string::npos) << what;
    EXPECT_NE(what.find("has version 7"), std::string::npos) << what;
    EXPECT_NE(what.find("supports versions " + std::to_string(regs::route::kMinVersion) + " to " +
                        std::to_string(regs::route::kVersion)),
              std::string::npos)
        << what;
  }
}

// ROUTE version 2's engine knew only the seed's VC rule, which deadlocks a lossless fabric:
// asnd does not route by it.
TEST_F(DeviceTest, RefusesARouteBlockWithoutTheEscapeVcRule) {
  Device good(*bus_);
  const DeviceBlock& route = good.layout()->block(regs::route::kType);
  patched_->patches[route.base + regs::route::kBlockVersion.offset] = 2;
  try {
    Device device(*patched_);
    FAIL() << "a version-2 ROUTE block was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("block route"), std::string::npos) << what;
    EXPECT_NE(what.find("has version 2"), std::string::npos) << what;
    EXPECT_NE(what.find("supports versions 3 to 3"), std::string::npos) << what;
  }
}

TEST_F(DeviceTest, RefusesANewerRegisterMapMajor) {
  patched_->patches[regs::id::kRegmapVersion.offset] = regs::id::kRegmapVersionMajor.put(0, 9);
  EXPECT_THROW(Device device(*patched_), Error);
}

// Damaged board memory: a capability beyond what the map allows is not a size to trust.
TEST_F(DeviceTest, RefusesACapabilityBeyondTheMap) {
  patched_->patches[regs::id::kCapRouteEntries.offset] = 0xffffff;
  try {
    Device device(*patched_);
    FAIL() << "65535 route entries were believed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kHardware);
    EXPECT_NE(std::string(e.what()).find("id.cap_route_entries reads 16777215; the register "
                                         "map allows at most 65535"),
              std::string::npos)
        << e.what();
  }
  patched_->patches[regs::id::kCapRouteEntries.offset] = 60000;  // fits 16 bits, not the window
  try {
    Device device(*patched_);
    FAIL() << "60000 route entries were believed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("route.dest_table would have 60000 entries; its window "
                                         "holds 4096"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(DeviceTest, RefusesABlockListThatLoops) {
  Device good(*bus_);
  const auto layout = good.layout();
  const DeviceBlock& tdm = layout->block(regs::tdm::kType);
  patched_->patches[tdm.base + regs::tdm::kBlockNext.offset] =
      layout->block(regs::port::kType).base;
  try {
    Device device(*patched_);
    FAIL() << "a looping block list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must move forward"), std::string::npos) << e.what();
  }
}

TEST_F(DeviceTest, SkipsBlockTypesItDoesNotKnow) {
  Device good(*bus_);
  // Make the stripe block look like a future block type: the walk goes past it.
  const DeviceBlock& stripe = good.layout()->block(regs::stripe::kType);
  patched_->patches[stripe.base + regs::stripe::kBlockType.offset] = 0x7777;
  Device device(*patched_);
  EXPECT_EQ(device.layout()->count(regs::stripe::kType), 0u);
  EXPECT_EQ(device.layout()->count(regs::lock::kType), 1u);
}

TEST_F(DeviceTest, TypedFieldWriteKeepsTheOtherFields) {
  Device device(*bus_);
  device.write(regs::id::kIrqMaskBusError, 1);
  device.write(regs::id::kIrqMaskRoWrite, 1);
  device.write(regs::id::kIrqMaskBusError, 0);
  EXPECT_EQ(device.read(regs::id::kIrqMaskBusError), 0u);
  EXPECT_EQ(device.read(regs::id::kIrqMaskRoWrite), 1u);
  device.write(regs::port::kAldfbThresholdPackets, 12, 3);
  EXPECT_EQ(device.read(regs::port::kAldfbThresholdPackets, 3), 12u);
  EXPECT_EQ(device.read(regs::port::kAldfbThresholdPackets, 2), 8u);
}

TEST_F(DeviceTest, ResolvesNamesAndOffsetsToTheSameTarget) {
  Device device(*bus_);
  Target by_name = device.resolve("port[2].control");
  Target by_offset = device.resolve(by_name.offset);
  EXPECT_EQ(by_offset.name, "port[2].control");
  EXPECT_EQ(device.resolve("id.scratch").offset, regs::id::kScratch.offset);
  Target field = device.resolve("port[1].control.enable");
  EXPECT_EQ(field.width_bits, 1);
  const auto layout = device.layout();
  EXPECT_EQ(device.resolve("port[0].vc_occupancy[1]").offset,
            layout->block(regs::port::kType, 0).base + regs::port::kVcOccupancy.at(1).offset);
  Target entry = device.resolve("route.dest_table[3].d1_port_b");
  EXPECT_EQ(entry.offset,
            layout->block(regs::route::kType).base + regs::route::kDestTable.entry_offset(3) + 4);
  EXPECT_EQ(entry.lsb, 24);
  EXPECT_EQ(device.resolve(entry.offset).name, "route.dest_table[3].w1");
  EXPECT_EQ(device.resolve("port[0].rx_packets").width_bits, 64);
  EXPECT_EQ(device.resolve(device.resolve("port[0].rx_packets").offset + 4).name,
            "port[0].rx_packets.hi");
  // Array fields of table entries are indexed like register arrays.
  Target out = device.resolve("tdm.slot_table[1].out[5]");
  const regmap::TableFieldRef element = regs::tdm::kSlotTableOut.at(5);
  EXPECT_EQ(out.offset, layout->block(regs::tdm::kType).base +
                            regs::tdm::kSlotTable.entry_offset(1) + 4u * element.word);
  EXPECT_EQ(out.lsb, element.lsb);
  EXPECT_EQ(out.width_bits, 8);
  EXPECT_EQ(device.resolve("id.cap_ports").name, "id.cap_ports");
}

struct BadName {
  const char* name;
  ErrorCode code;
  const char* message;
};

class DeviceBadNames : public DeviceTest, public ::testing::WithParamInterface<BadName> {};

TEST_P(DeviceBadNames, AreRefusedWithTheReason) {
  Device device(*bus_);
  try {
    device.resolve(GetParam().name);
    FAIL() << GetParam().name << " resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), GetParam().code) << e.what();
    EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Names, DeviceBadNames,
    ::testing::Values(
        BadName{"id.sratch", ErrorCode::kNotFound, "did you mean 'scratch'?"},
        BadName{"idd.scratch", ErrorCode::kNotFound, "no block named 'idd'"},
        BadName{"id.scr\x01tch", ErrorCode::kNotFound, "'id.scr\\x01tch'"},
        BadName{"port.control", ErrorCode::kInvalidArgument, "needs a port number"},
        BadName{"port[6].control", ErrorCode::kNotFound, "the board has 6 ports"},
        BadName{"id[1].scratch", ErrorCode::kInvalidArgument, "there is one id block"},
        BadName{"port[0].control.enabel", ErrorCode::kNotFound, "did you mean 'enable'?"},
        BadName{"route.dest_table[16].valid", ErrorCode::kNotFound, "has 16 entries"},
        BadName{"route.dest_table.valid", ErrorCode::kInvalidArgument, "has entries; name one"},
        BadName{"tdm.slot_table[0].out", ErrorCode::kInvalidArgument, "is an array"},
        BadName{"tdm.slot_table[0].out[64]", ErrorCode::kNotFound, "has 64 elements"},
        BadName{"port[0].vc_occupancy", ErrorCode::kInvalidArgument, "is an array"},
        BadName{"scratch", ErrorCode::kInvalidArgument, "is not a register name"},
        BadName{"port[x].control", ErrorCode::kInvalidArgument, "is not a number"},
        BadName{"port[0].rx_packets.mid", ErrorCode::kNotFound, ".lo and .hi"}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

// A hostile name costs nothing: refused by its length before any lookup or suggestion.
TEST_F(DeviceTest, AHugeNameIsRefusedUpFront) {
  Device device(*bus_);
  const std::string huge(3 << 20, 'x');
  try {
    device.resolve(huge);
    FAIL() << "a 3 MiB name resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("a register name of 3145728 bytes"), std::string::npos)
        << e.what();
    EXPECT_LT(std::string(e.what()).size(), 200u);
  }
  EXPECT_THROW(device.enumerate(huge, false), Error);
}

TEST_F(DeviceTest, RefusesOffsetsOutsideTheMap) {
  Device device(*bus_);
  EXPECT_THROW(device.resolve(0x2eu), Error);        // unaligned
  EXPECT_THROW(device.resolve(0x7ffffff0u), Error);  // past the end
  EXPECT_THROW(device.resolve(0x800u), Error);       // inside id, no register
  try {
    device.resolve(0x7ffffff0u);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the register map"), std::string::npos);
  }
}

TEST_F(DeviceTest, BadWritesWriteNothing) {
  Device device(*patched_);
  patched_->writes = 0;
  auto expect_refused = [&](const char* name, uint64_t value, ErrorCode code, const char* text) {
    Target target = device.resolve(name);
    std::pair<Target, uint64_t> items[] = {{device.resolve("id.scratch"), 0x55}, {target, value}};
    try {
      device.write(items);
      ADD_FAILURE() << name << " = " << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_TRUE(std::string(e.what()).ends_with("; nothing was written")) << e.what();
    }
  };
  expect_refused("id.magic", 1, ErrorCode::kFailedPrecondition, "id.magic is read-only (RO)");
  expect_refused("port[0].aldfb_threshold.packets", 0x10000, ErrorCode::kInvalidArgument,
                 "does not fit port[0].aldfb_threshold.packets (16 bits");
  expect_refused("id.irq_mask", 0x100, ErrorCode::kInvalidArgument, "sets reserved bits");
  expect_refused("route.dest_table_active[0].valid", 1, ErrorCode::kFailedPrecondition,
                 "write route.dest_table[0] (the shadow bank)");
  expect_refused("lock.result_data[0].value", 1, ErrorCode::kFailedPrecondition, "read-only");
  expect_refused("port[0].rx_packets", 1, ErrorCode::kFailedPrecondition, "read-only");
  EXPECT_EQ(patched_->writes.load(), 0u);
  EXPECT_EQ(device.read(regs::id::kScratch), 0u);
}

TEST_F(DeviceTest, BatchOfFieldsOfOneRegisterComposes) {
  Device device(*bus_);
  std::pair<Target, uint64_t> items[] = {{device.resolve("id.irq_mask.link_change"), 1},
                                         {device.resolve("id.irq_mask.route_commit"), 0},
                                         {device.resolve("id.irq_mask.ro_write"), 1}};
  device.write(items);
  EXPECT_EQ(device.read(regs::id::kIrqMask) & 0x15u, 0x11u);
}

TEST_F(DeviceTest, TableWritesGoToTheShadowUntilCommit) {
  Device device(*bus_);
  std::pair<Target, uint64_t> items[] = {{device.resolve("route.dest_table[2].d0_port_a"), 5}};
  device.write(items);
  EXPECT_EQ(device.read(device.resolve("route.dest_table_active[2].d0_port_a")), 0u);
  device.write(regs::route::kControlCommit, 1);
  EXPECT_EQ(device.read(device.resolve("route.dest_table_active[2].d0_port_a")), 5u);
  EXPECT_EQ(device.read(regs::route::kStatusActiveBank), 1u);
}

TEST_F(DeviceTest, EnumerateCoversEveryRegisterAndOnlyImplementedEntries) {
  Device device(*bus_);
  auto id = device.enumerate("id", false);
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(id.front().name, "id.block_type");
  auto ports = device.enumerate("port", false);
  auto port2 = device.enumerate("port[2]", false);
  const auto layout = device.layout();
  EXPECT_EQ(ports.size(), port2.size() * layout->caps.get(regmap::Cap::kPorts));
  auto route = device.enumerate("route", true);
  size_t dest_words = 0;
  for (const auto& t : route) dest_words += t.name.starts_with("route.dest_table[");
  EXPECT_EQ(dest_words, layout->caps.get(regmap::Cap::kRouteEntries) * 4u);
  for (const auto& t : device.enumerate("", false)) EXPECT_NO_THROW(device.read(t)) << t.name;
  EXPECT_THROW(device.enumerate("prot", false), Error);
}

// A 64-bit counter that carries from low to high word between the reads of a high-low-high
// sequence must not come back torn (0x1_ffffffff read as 0x2_ffffffff).
TEST_F(DeviceTest, SixtyFourBitCounterIsReadConsistentlyAcrossACarry) {
  Device device(*patched_);
  uint32_t low = device.resolve("port[1].rx_bytes").offset;
  class CarryingBus final : public RegisterBus {
   public:
    CarryingBus(RegisterBus& inner, uint32_t low) : inner_(inner), low_(low) {}
    std::string describe() const override { return inner_.describe(); }
    BoardIdentity identity() const override { return inner_.identity(); }
    void set_event_handler(std::function<void(const BusEvent&)>) override {}
    uint32_t read32(uint32_t offset) override {
      if (offset == low_ + 4) return high_reads_++ == 0 ? 1 : 2;  // carries after 1st read
      if (offset == low_) return high_reads_ <= 1 ? 0xffffffffu : 0x5u;
      return inner_.read32(offset);
    }
    void write32(uint32_t offset, uint32_t value) override { inner_.write32(offset, value); }
    void execute(std::span<BusOp> ops) override {
      for (auto& op : ops) op.value = read32(op.offset);
    }

   private:
    RegisterBus& inner_;
    uint32_t low_;
    int high_reads_ = 0;
  } carrying(*bus_, low);
  Device over_carry(carrying);
  EXPECT_EQ(over_carry.read(over_carry.resolve("port[1].rx_bytes")), (uint64_t{2} << 32) | 5);
}

TEST_F(DeviceTest, ResetBoardBumpsGenerationAndClears) {
  Device device(*bus_);
  device.write(regs::id::kScratch, 0xabcd);
  uint32_t before = device.read(regs::id::kGeneration);
  EXPECT_EQ(device.reset_board(), before + 1);
  EXPECT_EQ(device.read(regs::id::kScratch), 0u);
}

// Whole entries by TableRef: into the shadow bank, visible in the active one only after the
// swap; never an offset computed by the caller.
TEST_F(DeviceTest, TypedTableAccessWritesTheShadowAndSwaps) {
  Device device(*patched_);
  const auto& dest = regs::route::kDestTable;
  EXPECT_EQ(device.entries(dest), 16u);
  std::vector<uint32_t> words(3 * dest.words(), 0);
  for (uint32_t e = 0; e < 3; ++e) {
    std::span<uint32_t> entry(words.data() + e * dest.words(), dest.words());
    regs::route::kDestTableValid.put(entry, 1);
    regs::route::kDestTableD1PortB.put(entry, 10 + e);
  }
  patched_->writes = 0;
  device.write_entries(dest, 5, words);
  EXPECT_EQ(device.read_entries(dest, 5, 3, Bank::kShadow), words);
  EXPECT_EQ(device.read_entries(dest, 5, 3, Bank::kActive), std::vector<uint32_t>(words.size()));
  const unsigned bank = device.active_bank(dest);
  device.swap_banks(dest);
  EXPECT_EQ(device.active_bank(dest), 1 - bank);
  const auto active = device.read_entries(dest, 5, 3, Bank::kActive);
  EXPECT_EQ(active, words);
  EXPECT_EQ(regs::route::kDestTableD1PortB.get(
                std::span<const uint32_t>(active).subspan(2 * dest.words(), dest.words())),
            12u);
  EXPECT_THROW(device.write_entries(dest, 15, words), Error);  // past the 16 entries
  EXPECT_THROW(device.read_entries(dest, 17, 1), Error);
  // The array field of a slot: element by element.
  std::vector<uint32_t> slot(regs::tdm::kSlotTable.words(), 0);
  regs::tdm::kSlotTableOut.at(5).put(slot, 0x83);
  device.write_entries(regs::tdm::kSlotTable, 2, slot);
  EXPECT_EQ(device.read(device.resolve("tdm.slot_table[2].out[5]")), 0x83u);
}

using test::CountingBus;

TEST_F(DeviceTest, ABatchReadsEverythingInOneTransaction) {
  CountingBus counting(*bus_);
  Device device(counting);
  device.write(regs::port::kAldfbThresholdPackets, 17, 4);
  Device::ReadBatch batch;
  const size_t magic = batch.add(regs::id::kMagicValue);
  const size_t threshold = batch.add(regs::port::kAldfbThresholdPackets, 4);
  const size_t frames = batch.add64(regs::tdm::kFrameCounter);
  counting.transactions = 0;
  device.read(batch);
  EXPECT_EQ(counting.transactions, 1);
  EXPECT_EQ(batch[magic], regs::kMagic);
  EXPECT_EQ(batch[threshold], 17u);
  EXPECT_EQ(batch[frames], 0u);
  // Table entries too, among registers: the words read_entries() returns.
  const auto& dest = regs::route::kDestTable;
  std::vector<uint32_t> words(2 * dest.words(), 0);
  regs::route::kDestTableD1PortB.put(std::span(words).subspan(dest.words()), 9);
  device.write_entries(dest, 6, words);
  Device::ReadBatch mixed;
  const size_t before = mixed.add(regs::id::kMagicValue);
  const size_t entries = mixed.add_entries(dest, 6, 2);
  const size_t after = mixed.add(regs::port::kAldfbThresholdPackets, 4);
  counting.transactions = 0;
  device.read(mixed);
  EXPECT_EQ(counting.transactions, 1);
  EXPECT_EQ(mixed[before], regs::kMagic);
  EXPECT_TRUE(std::ranges::equal(mixed.entries(entries), words));
  EXPECT_EQ(mixed[after], 17u);
  EXPECT_THROW(mixed.entries(before), Error);  // a register, not entries
  // Entries past the table: refused before anything is read.
  Device::ReadBatch past;
  past.add(regs::id::kMagicValue);
  past.add_entries(dest, 15, 2);
  counting.transactions = 0;
  EXPECT_THROW(device.read(past), Error);
  EXPECT_EQ(counting.transactions, 0);
  // Targets too: a whole block's registers in one transaction.
  const auto targets = device.enumerate("port[1]", false);
  counting.transactions = 0;
  const auto values = device.read(targets);
  EXPECT_EQ(counting.transactions, 1);
  ASSERT_EQ(values.size(), targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    EXPECT_EQ(values[i], device.read(targets[i])) << targets[i].name;
  }
}

TEST_F(DeviceTest, AWriteBatchWritesEverythingInOneTransaction) {
  CountingBus counting(*bus_);
  Device device(counting);
  const auto& dest = regs::route::kDestTable;
  std::vector<uint32_t> words(2 * dest.words(), 0);
  regs::route::kDestTableValid.put(std::span(words).first(dest.words()), 1);
  regs::route::kDestTableD1PortB.put(std::span(words).subspan(dest.words()), 9);
  Device::WriteBatch batch;
  batch.add(regs::id::kScratch, 0x5a5a);
  batch.add_entries(dest, 3, words);
  batch.add(regs::port::kAldfbThresholdPackets, 21, 2);  // its register's only RW field
  counting.transactions = 0;
  device.write(batch);
  EXPECT_EQ(counting.transactions, 1);
  EXPECT_EQ(device.read(regs::id::kScratch), 0x5a5au);
  EXPECT_EQ(device.read_entries(dest, 3, 2), words);
  EXPECT_EQ(device.read(regs::port::kAldfbThresholdPackets, 2), 21u);

  // A field that shares its register with another RW field needs a read first: refused,
  // and nothing of the batch is written.
  Device::WriteBatch mixed;
  mixed.add(regs::id::kScratch, 1);
  mixed.add(regs::id::kIrqMaskBusError, 1);
  counting.transactions = 0;
  EXPECT_THROW(device.write(mixed), Error);
  EXPECT_EQ(counting.transactions, 0);
  EXPECT_EQ(device.read(regs::id::kScratch), 0x5a5au);
  // Entries past the table: refused, nothing written.
  Device::WriteBatch past;
  past.add(regs::id::kScratch, 2);
  past.add_entries(dest, 15, words);
  EXPECT_THROW(device.write(past), Error);
  EXPECT_EQ(device.read(regs::id::kScratch), 0x5a5au);
}

// A board reset while other threads read: every reader sees a whole layout, old or new,
// never one being rewritten (ThreadSanitizer runs this in scripts/test.sh).
TEST_F(DeviceTest, ResettingTheBoardWhileOthersReadIsSafe) {
  Device device(*bus_);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  auto reader = [&] {
    while (!stop.load()) {
      const auto layout = device.layout();
      if (layout->caps.get(regmap::Cap::kPorts) != 6 || layout->blocks.size() != 11) ++failures;
      if (device.resolve("port[5].control.enable").width_bits != 1) ++failures;
      if (device.enumerate("port[2]", false).empty()) ++failures;
      if (device.read(regs::id::kMagicValue) != regs::kMagic) ++failures;
    }
  };
  std::thread a(reader);
  std::thread b(reader);
  for (int i = 0; i < 50; ++i) device.reset_board();
  stop = true;
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace asn

// The kernel backend's board discovery (issue 12), against a libpci dump file and a fake
// sysfs tree, never the machine's bus.
#include "bus/pci_discovery.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "error.hpp"

namespace asn {
namespace {

namespace fs = std::filesystem;

const std::string kDump = ASN_PCI_DUMP;

class PciDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("asn-pci-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus/pci/drivers/asn");
    fs::create_directories(root_ / "bus/pci/drivers/vfio-pci");
    bind("0000:03:00.0", "asn");
    bind("0000:04:00.0", "vfio-pci");
    fs::create_directories(root_ / "bus/pci/devices/0000:00:04.0");
  }
  void TearDown() override { fs::remove_all(root_); }

  void bind(const std::string& bdf, const std::string& driver) {
    fs::create_directories(root_ / "bus/pci/devices" / bdf);
    fs::create_directory_symlink("../../../../bus/pci/drivers/" + driver,
                                 root_ / "bus/pci/devices" / bdf / "driver");
  }

  fs::path root_;
};

TEST_F(PciDiscoveryTest, FindsTheBoardsInBusOrderWithTheirDriver) {
  auto boards = discover_pci_boards({kDump, root_.string(), false});
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(boards[0].bdf, "0000:03:00.0");
  EXPECT_EQ(boards[0].vendor, 0x10ee);
  EXPECT_EQ(boards[0].device, 0x7028);
  EXPECT_EQ(boards[0].model, "netfpga-sume");
  EXPECT_TRUE(boards[0].bound_to_asn());
  EXPECT_EQ(boards[1].bdf, "0000:04:00.0");
  EXPECT_EQ(boards[1].model, "netfpga-1g");
  EXPECT_EQ(boards[1].driver, "vfio-pci");
  EXPECT_FALSE(boards[1].bound_to_asn());
}

TEST_F(PciDiscoveryTest, IvshmemOnlyWhenAskedFor) {
  auto boards = discover_pci_boards({kDump, root_.string(), true});
  ASSERT_EQ(boards.size(), 3u);
  EXPECT_EQ(boards[0].bdf, "0000:00:04.0");
  EXPECT_EQ(boards[0].model, "ivshmem (test)");
  EXPECT_EQ(boards[0].driver, "");
}

TEST(PciBoardModel, KnowsEveryBoardOfTheIdTable) {
  EXPECT_EQ(asn_board_model(0xfeed, 0x0001, false), "netfpga-1g");
  EXPECT_EQ(asn_board_model(0x10ee, 0x7028, false), "netfpga-sume");
  EXPECT_EQ(asn_board_model(0x10ee, 0x903f, false), "netfpga-plus");
  EXPECT_EQ(asn_board_model(0x10ee, 0x913f, false), "netfpga-plus");
  EXPECT_EQ(asn_board_model(0x10ee, 0x9038, false), "");
  EXPECT_EQ(asn_board_model(0x1af4, 0x1110, false), "");
}

TEST(PciDiscovery, MissingDumpFileIsAClearError) {
  try {
    discover_pci_boards({"/nonexistent/pci.dump", "/nonexistent", false});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/pci.dump"), std::string::npos);
  }
}

}  // namespace
}  // namespace asn

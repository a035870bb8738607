// asnd with the kernel backend on a host without asn.ko (every CI host): it must stop at
// once with the "no driver" reason and a nonzero exit, never hang or serve without a board.
// The flags that belong to one backend are refused under the other, naming the flag; and
// --list-boards lists the bus without needing the driver. The guest half, with asn.ko
// loaded, is driver/tests/qemu_test.sh (ctest label `kernel`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "support.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

// An empty configuration file in `dir`: the defaults, whatever /etc/asn/asnd.yaml holds.
std::string empty_config(const TempDir& dir) {
  write_file(dir.file("empty.yaml"), "");
  return dir.file("empty.yaml");
}

TEST(AsndKernelBackend, WithoutTheDriverFailsFastSayingSo) {
  if (asn_module_loaded()) GTEST_SKIP() << "asn.ko is loaded on this host";
  TempDir dir;
  const std::string config = empty_config(dir);
  const auto start = std::chrono::steady_clock::now();
  auto r =
      run_command({ASND_PATH, "--config", config, "--backend", "kernel", "--state-dir",
                   dir.file("state"), "--socket", dir.file("asnd.sock"), "--log-level", "warn"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  // "no driver" where generic netlink works; the socket error where it is not allowed.
  EXPECT_TRUE(r.all().find("no driver") != std::string::npos ||
              r.all().find("generic netlink socket") != std::string::npos)
      << r.all();
  EXPECT_THAT(r.all(), HasSubstr("kernel backend"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, test::scaled(std::chrono::seconds(10)));
  EXPECT_FALSE(std::filesystem::exists(dir.file("asnd.sock"))) << "asnd served without a board";
}

TEST(AsndKernelBackend, ConfigFileSelectsIt) {
  if (asn_module_loaded()) GTEST_SKIP() << "asn.ko is loaded on this host";
  TempDir dir;
  write_file(dir.file("asnd.yaml"),
             "backend:\n  kind: kernel\n  kernel:\n    device: 0000:03:00.0\n"
             "state_dir: " +
                 dir.file("state") + "\nlisten:\n  socket: " + dir.file("asnd.sock") + "\n");
  auto check = run_command({ASND_PATH, "--config", dir.file("asnd.yaml"), "--check-config"});
  EXPECT_EQ(check.exit_code, 0) << check.all();
  auto r = run_command({ASND_PATH, "--config", dir.file("asnd.yaml")});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("kernel backend"));
}

TEST(AsndKernelBackend, FlagsOfTheOtherBackendAreRefused) {
  TempDir dir;
  const std::string config = empty_config(dir);
  auto device =
      run_command({ASND_PATH, "--config", config, "--device", "0000:03:00.0", "--check-config"});
  EXPECT_EQ(device.exit_code, 2) << device.all();
  EXPECT_THAT(device.err, HasSubstr("--device: only for the kernel backend"));
  auto board = run_command(
      {ASND_PATH, "--config", config, "--backend", "kernel", "--board", "b1", "--check-config"});
  EXPECT_EQ(board.exit_code, 2) << board.all();
  EXPECT_THAT(board.err, HasSubstr("--board: only for the emulated backend"));
  auto bdf =
      run_command({ASND_PATH, "--config", config, "--backend", "kernel", "--device", "03:00.0"});
  EXPECT_EQ(bdf.exit_code, 2) << bdf.all();
  EXPECT_THAT(bdf.err, HasSubstr("--device: '03:00.0' is not a PCI address"));
}

TEST(AsndKernelBackend, ListBoardsPrintsTheBusAndExits) {
  auto r = run_command({ASND_PATH, "--list-boards"});
  // The container may not expose a PCI bus to libpci; then the reason is printed.
  if (r.exit_code != 0) {
    EXPECT_EQ(r.exit_code, 1) << r.all();
    EXPECT_THAT(r.err, HasSubstr("cannot list the PCI boards"));
    return;
  }
  EXPECT_TRUE(r.out.find("no asn board on the PCI bus") != std::string::npos ||
              r.out.find("BDF") != std::string::npos)
      << r.all();
}

}  // namespace
}  // namespace asn::test

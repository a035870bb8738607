// The kernel backend on a host without asn.ko (every CI host): opening it fails with a
// clear kUnavailable error, never a crash. The guest half, with asn.ko loaded, is
// driver/tests/kernel_bus_smoke.cc in the QEMU kernel test (ctest label `kernel`).
#include "bus/kernel_bus.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "error.hpp"
#include "support.hpp"

namespace asn {
namespace {

using test::asn_module_loaded;

TEST(KernelBus, WithoutTheDriverSaysSo) {
  if (asn_module_loaded()) GTEST_SKIP() << "asn.ko is loaded on this host";
  try {
    KernelBus bus({});
    FAIL() << "opened " << bus.describe();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    std::string what = e.what();
    // "no driver" where generic netlink works; the socket error where it is not allowed.
    EXPECT_TRUE(what.find("no driver") != std::string::npos ||
                what.find("generic netlink socket") != std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace asn

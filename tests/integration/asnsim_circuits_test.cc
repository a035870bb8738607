// `asnsim circuits` (issue 29 item 3), the real binary on a 4x4 torus: the CSV it writes, the
// same numbers for the same seed whatever the threads, and bad input named by its flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

CommandResult run_circuits(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {ASNSIM_PATH, "circuits",   "--size", "4",    "--degree", "8",
                                   "--rates",   "0.004,0.02", "--time", "2000", "--warmup", "500"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_command(argv);
}

TEST(AsnsimCircuits, WritesEveryPointAndRepeatsItsSeed) {
  TempDir one, two;
  const auto a = run_circuits({"--threads", "1", "--out", one.path()});
  ASSERT_EQ(a.exit_code, 0) << a.all();
  const auto b = run_circuits({"--threads", "2", "--out", two.path()});
  ASSERT_EQ(b.exit_code, 0) << b.all();
  const std::string csv = read_file(one.file("circuits.csv"));
  EXPECT_EQ(csv, read_file(two.file("circuits.csv")));
  EXPECT_THAT(read_file(one.file("throughput.svg")), HasSubstr("<polyline"));
  EXPECT_THAT(read_file(one.file("latency.svg")), HasSubstr(">BDO</text>"));
  EXPECT_THAT(csv, HasSubstr("protocol,hold_time,degree,size,rate,throughput,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 6 * 2);  // 6 protocols x 2 rates
  for (const char* p : {"FDC", "FDA", "FDO", "BDC", "BDA", "BDO"}) {
    EXPECT_THAT(a.out, HasSubstr(p));
  }
  const auto other = run_circuits({"--seed", "7", "--out", two.path()});
  ASSERT_EQ(other.exit_code, 0) << other.all();
  EXPECT_NE(csv, read_file(two.file("circuits.csv")));
}

TEST(AsnsimCircuits, HoldingRunsOncePerHoldTime) {
  TempDir dir;
  const auto r =
      run_circuits({"--protocols", "BHO,BDO", "--hold-times", "5,20", "--out", dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const std::string csv = read_file(dir.file("circuits.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + (2 + 1) * 2);
  EXPECT_THAT(csv, HasSubstr("BHO,20,"));
}

TEST(AsnsimCircuits, BadInputNamesTheFlag) {
  const auto protocol = run_circuits({"--protocols", "BDO,FXC"});
  EXPECT_EQ(protocol.exit_code, 2);
  EXPECT_THAT(protocol.err, HasSubstr("--protocols: 'FXC' is not a protocol"));
  const auto degree = run_command({ASNSIM_PATH, "circuits", "--degree", "65"});
  EXPECT_EQ(degree.exit_code, 2);
  EXPECT_THAT(degree.err, HasSubstr("--degree: 65 slots"));
  const auto cset = run_circuits({"--protocols", "BD9"});
  EXPECT_EQ(cset.exit_code, 2);
  EXPECT_THAT(cset.err, HasSubstr("--protocols: a cset of 9 slots; the degree is 8"));
  const auto rate = run_command({ASNSIM_PATH, "circuits", "--rates", "0.01,x"});
  EXPECT_EQ(rate.exit_code, 2);
  EXPECT_THAT(rate.err, HasSubstr("--rates: 'x' is not a number"));
  const auto help = run_command({ASNSIM_PATH, "circuits", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--hold-times"));
  EXPECT_THAT(help.out, HasSubstr("TEXT=10"));  // its default
}

}  // namespace
}  // namespace asn::test

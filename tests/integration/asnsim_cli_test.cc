// asnsim's command line (issue 28, finding 11): every flag with dashes, each also with the
// underscores asnsim took before; `--channels double-rate`, asnctl's word, and `double`. The
// real asnsim, on runs short enough to take well under a second.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

// A short sweep of 4 routers, with `flags` added.
CommandResult run_asnsim(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {ASNSIM_PATH, "--terminals", "16",        "--k", "4",
                                   "--load",    "0.3",         "--threads", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_command(argv);
}

TEST(AsnsimCli, DashesAndUnderscoresAreOneFlag) {
  const auto dashes =
      run_asnsim({"--warmup-cycles", "300", "--sample-cycles", "300", "--min-samples", "2",
                  "--max-samples", "3", "--deadlock-cycles", "400", "--num-vcs", "2",
                  "--vc-buf-size", "8", "--source-queue", "16", "--converge-tolerance", "0.1"});
  ASSERT_EQ(dashes.exit_code, 0) << dashes.all();
  const auto underscores =
      run_asnsim({"--warmup_cycles", "300", "--sample_cycles", "300", "--min_samples", "2",
                  "--max_samples", "3", "--deadlock_cycles", "400", "--num_vcs", "2",
                  "--vc_buf_size", "8", "--source_queue", "16", "--converge_tolerance", "0.1"});
  ASSERT_EQ(underscores.exit_code, 0) << underscores.all();
  EXPECT_EQ(dashes.out, underscores.out);
  EXPECT_FALSE(dashes.out.empty());
}

TEST(AsnsimCli, ChannelsDoubleRateAndDoubleAreOne) {
  const std::vector<std::string> short_run = {"--warmup-cycles", "300", "--sample-cycles", "300",
                                              "--min-samples",   "1",   "--max-samples",   "2"};
  auto with = [&](const std::string& channels) {
    std::vector<std::string> flags = short_run;
    flags.push_back("--channels");
    flags.push_back(channels);
    return run_asnsim(flags);
  };
  const auto rate = with("double-rate");
  ASSERT_EQ(rate.exit_code, 0) << rate.all();
  const auto word = with("double");
  ASSERT_EQ(word.exit_code, 0) << word.all();
  EXPECT_EQ(rate.out, word.out);
  const auto bad = with("triple");
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("unknown channel build 'triple' (dilated, double-rate, plain)"));
  const auto prove = run_command({ASNSIM_PATH, "prove", "--terminals", "16", "--k", "4",
                                  "--channels", "double-rate", "--num-vcs", "2"});
  EXPECT_EQ(prove.exit_code, 0) << prove.all();
}

// Hot spots and combining (issue 29): the flags, the hotspot table, and bad values named.
TEST(AsnsimCli, HotspotAndCombining) {
  const std::vector<std::string> flags = {"--warmup-cycles", "300",     "--sample-cycles", "300",
                                          "--min-samples",   "1",       "--max-samples",   "2",
                                          "--traffic",       "hotspot", "--hot-fraction",  "0.2"};
  auto with = [&](const std::vector<std::string>& more) {
    std::vector<std::string> all = flags;
    all.insert(all.end(), more.begin(), more.end());
    return run_asnsim(all);
  };
  const auto on = with({"--hot-node", "5", "--combining", "on", "--wait-buffer", "8"});
  ASSERT_EQ(on.exit_code, 0) << on.all();
  EXPECT_THAT(on.out, HasSubstr("hotspot:"));
  const auto underscores = with({"--hot_node", "5", "--combining", "on", "--wait_buffer", "8"});
  EXPECT_EQ(on.out, underscores.out);
  const auto bad = with({"--combining", "maybe"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("combining: 'maybe' (on or off)"));
  const auto node = with({"--hot-node", "16"});
  EXPECT_EQ(node.exit_code, 2) << node.all();
  EXPECT_THAT(node.err, HasSubstr("hot_node: a terminal, 0..15"));
}

}  // namespace
}  // namespace asn::test

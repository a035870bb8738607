// asnctl's names (issue 28, finding 11 and item 3): the `lock` group and its alias `locks`,
// did-you-mean over the table, and the spellings kept for old scripts. The real asnctl, and
// the real asnd where a call is made.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Issue 28, finding 11: a misspelt command gets the closest of the table, in its group.
TEST(AsnctlNames, AnUnknownCommandGetsTheClosestOne) {
  auto misspelt = run_command({ASNCTL_PATH, "lock", "lsit"});
  EXPECT_EQ(misspelt.exit_code, 2) << misspelt.all();
  EXPECT_THAT(misspelt.err, HasSubstr("unknown command 'lsit' (did you mean 'asnctl lock list'?)"));
  auto alias = run_command({ASNCTL_PATH, "locks", "stast"});
  EXPECT_EQ(alias.exit_code, 2) << alias.all();
  EXPECT_THAT(alias.err, HasSubstr("unknown command 'stast' (did you mean 'asnctl lock stats'?)"));
  auto word = run_command({ASNCTL_PATH, "stauts"});
  EXPECT_EQ(word.exit_code, 2) << word.all();
  EXPECT_THAT(word.err, HasSubstr("unknown command 'stauts' (did you mean 'asnctl status'?)"));
  auto far = run_command({ASNCTL_PATH, "lock", "everything"});
  EXPECT_EQ(far.exit_code, 2) << far.all();
  EXPECT_THAT(far.err, HasSubstr("unknown command 'everything' (one of: acquire, list, stats, "
                                 "sessions, revoke, release)"));
}

// asnsim's word for a double-rate channel is taken too, and means the same.
TEST(AsnctlNames, ChannelsDoubleIsDoubleRate) {
  auto rate = run_command({ASNCTL_PATH, "topology", "--terminals", "64", "--k", "4", "--channels",
                           "double-rate", "-j"});
  ASSERT_EQ(rate.exit_code, 0) << rate.all();
  auto word = run_command(
      {ASNCTL_PATH, "topology", "--terminals", "64", "--k", "4", "--channels", "double", "-j"});
  ASSERT_EQ(word.exit_code, 0) << word.all();
  EXPECT_EQ(word.out, rate.out);
  auto bad = run_command(
      {ASNCTL_PATH, "topology", "--terminals", "64", "--k", "4", "--channels", "triple"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("--channels"));
}

class AsnctlNamesTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("nm")};

  void SetUp() override {
    ASSERT_TRUE(asnd_.start()) << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
                               << asnd_.log();
  }
};

// `lock` is the group, as `port` and `stripe` are; `locks` (its name for list and stats
// before issue 28) is its alias, for every verb.
TEST_F(AsnctlNamesTest, LockAndLocksAreOneGroup) {
  auto acquired = asnd_.asnctl({"locks", "acquire", "/data/a", "0:4096", "--try", "--hold", "0"});
  EXPECT_EQ(acquired.exit_code, 0) << acquired.all();
  EXPECT_THAT(acquired.out, HasSubstr("granted exclusive lock"));
  for (const char* verb : {"list", "stats", "sessions"}) {
    auto lock = asnd_.asnctl({"lock", verb, "-j"});
    EXPECT_EQ(lock.exit_code, 0) << verb << ": " << lock.all();
    auto locks = asnd_.asnctl({"locks", verb, "-j"});
    EXPECT_EQ(locks.exit_code, 0) << verb << ": " << locks.all();
    if (std::string(verb) != "stats") EXPECT_EQ(lock.out, locks.out) << verb;
  }
  auto help = run_command({ASNCTL_PATH, "--help"});
  EXPECT_THAT(help.out, Not(HasSubstr("\n  locks ")));  // one group in the help
}

}  // namespace
}  // namespace asn::test

// asnctl's names (issue 28, finding 11 and item 3): shell completion written from the command
// table, the `lock` group and its alias `locks`, did-you-mean over the table, and the
// spellings kept for old scripts. The real asnctl, and the real asnd where a call is made.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// What bash offers for `line` (the words typed, the last one being completed) with the
// script of `asnctl completion bash` loaded: COMPREPLY, space-separated.
std::string bash_completes(const std::string& script, const std::vector<std::string>& line) {
  std::string words;
  for (const auto& word : line) words += " '" + word + "'";
  const std::string program = script + "\nCOMP_WORDS=(" + words +
                              ")\nCOMP_CWORD=" + std::to_string(line.size() - 1) +
                              "\n_asnctl\necho \"${COMPREPLY[*]}\"\n";
  auto r = run_command({"bash", "--norc", "--noprofile", "-s"}, program);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

std::string completion(const std::string& shell) {
  auto r = run_command({ASNCTL_PATH, "completion", shell});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  return r.out;
}

// Commands, aliases, subcommands and options all come from the table that parses them.
TEST(AsnctlCompletion, BashCompletesWhatTheCommandTableTakes) {
  const std::string script = completion("bash");
  EXPECT_EQ(bash_completes(script, {"asnctl", "loc"}), "lock locks");
  EXPECT_EQ(bash_completes(script, {"asnctl", "lock", "acq"}), "acquire");
  EXPECT_EQ(bash_completes(script, {"asnctl", "locks", "li"}), "list");
  EXPECT_EQ(bash_completes(script, {"asnctl", "stripe", "s"}), "show stats");
  EXPECT_EQ(bash_completes(script, {"asnctl", "completion", "--"}),
            "--help --socket --address "
            "--tls-ca --tls-cert --tls-key "
            "--output --timeout");
  // An option's value is passed over: after `--socket PATH`, commands again.
  EXPECT_EQ(bash_completes(script, {"asnctl", "--socket", "/run/x.sock", "vers"}), "version");
  // The options of the command given, and asnctl's own, which it takes too.
  const std::string acquire = bash_completes(script, {"asnctl", "lock", "acquire", "--"});
  EXPECT_THAT(acquire, HasSubstr("--shared"));
  EXPECT_THAT(acquire, HasSubstr("--hold"));
  EXPECT_THAT(acquire, HasSubstr("--output"));
  EXPECT_THAT(acquire, Not(HasSubstr("--raid")));
}

// A path (an option of type PATH or FILE, or a positional one) completes to files; another
// value completes to nothing.
TEST(AsnctlCompletion, BashCompletesPathsWhereAPathGoes) {
  TempDir dir;
  write_file(dir.file("plan.yaml"), "");
  const std::string script = completion("bash");
  const std::string prefix = dir.file("pl");
  EXPECT_EQ(bash_completes(script, {"asnctl", "--socket", prefix}), dir.file("plan.yaml"));
  EXPECT_EQ(bash_completes(script, {"asnctl", "load-schedule", prefix}), dir.file("plan.yaml"));
  EXPECT_EQ(bash_completes(script, {"asnctl", "stripe", "read", "1", "--out", prefix}),
            dir.file("plan.yaml"));
  EXPECT_EQ(bash_completes(script, {"asnctl", "--timeout", "s"}), "");
}

// zsh reads the same table through its own driver.
TEST(AsnctlCompletion, ZshScriptIsACompdefOverTheSameTable) {
  const std::string bash = completion("bash");
  const std::string zsh = completion("zsh");
  EXPECT_THAT(zsh, StartsWith("#compdef asnctl\n"));
  const auto table = [](const std::string& script) {
    const auto begin = script.find("_asnctl_words() {");
    const auto end = script.find("\n_asnctl() {");
    return script.substr(begin, end - begin);
  };
  EXPECT_THAT(table(zsh), HasSubstr("'lock'|'locks') printf '%s\\n' 'acquire list stats"));
  EXPECT_EQ(table(zsh), table(bash));
  EXPECT_THAT(zsh, HasSubstr("compadd"));
}

TEST(AsnctlCompletion, AnUnknownShellIsAUsageError) {
  auto r = run_command({ASNCTL_PATH, "completion", "fish"});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("no completion for 'fish'; accepted: bash, zsh"));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

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
  auto rate = run_command(
      {ASNCTL_PATH, "topology", "--terminals", "64", "--k", "4", "--channels", "double-rate"});
  ASSERT_EQ(rate.exit_code, 0) << rate.all();
  auto word = run_command(
      {ASNCTL_PATH, "topology", "--terminals", "64", "--k", "4", "--channels", "double"});
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
    if (std::string(verb) != "stats") {
      EXPECT_EQ(lock.out, locks.out) << verb;  // stats has seconds that run (grace periods)
    }
  }
  auto help = run_command({ASNCTL_PATH, "--help"});
  EXPECT_THAT(help.out, Not(HasSubstr("\n  locks ")));  // one group in the help
}

}  // namespace
}  // namespace asn::test

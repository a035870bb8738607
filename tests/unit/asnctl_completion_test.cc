// asnctl's shell completion (cli/src/completion.hpp) over a small command table of its own,
// run in bash: what the table declares is what is offered, aliases and paths included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "completion.hpp"
#include "support.hpp"

namespace asnctl {
namespace {

using ::testing::HasSubstr;

// A table shaped as asnctl's: global options, a group with an alias, a command taking a
// path, one hidden.
class CompletionTest : public ::testing::Test {
 protected:
  CompletionTest() {
    app_.add_option("--socket", text_)->type_name("PATH");
    app_.add_option("--timeout", number_)->type_name("SECONDS");
    app_.add_flag("-j", flag_);
    auto* lock = app_.add_subcommand("lock", "locks");
    lock->alias("locks");
    auto* acquire = lock->add_subcommand("acquire", "take one");
    acquire->add_option("FILE", text_, "a file id, not a path");
    acquire->add_option("--hold", number_);
    acquire->add_flag("--try", flag_);
    lock->add_subcommand("list", "list them");
    app_.add_subcommand("load", "a plan")->add_option("FILE", text_)->type_name("PATH");
    app_.add_subcommand("secret", "not offered")->group("");
  }

  // COMPREPLY for `line` (its last word the one completed), space-separated.
  std::string complete(const std::vector<std::string>& line) {
    std::string words;
    for (const auto& word : line) words += " '" + word + "'";
    const std::string program = *completion_script(app_, "bash") + "\nCOMP_WORDS=(" + words +
                                ")\nCOMP_CWORD=" + std::to_string(line.size() - 1) +
                                "\n_asnctl\necho \"${COMPREPLY[*]}\"\n";
    auto r = asn::test::run_command({"bash", "--norc", "--noprofile", "-s"}, program);
    EXPECT_EQ(r.exit_code, 0) << r.all();
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }

  CLI::App app_{"a table", "asnctl"};
  std::string text_;
  double number_ = 0;
  bool flag_ = false;
};

TEST_F(CompletionTest, CommandsAndAliasesFromTheTable) {
  EXPECT_EQ(complete({"asnctl", "lo"}), "lock locks load");
  EXPECT_EQ(complete({"asnctl", "locks", ""}), "acquire list --help -h");
  EXPECT_EQ(complete({"asnctl", "lock", "l"}), "list");
  EXPECT_EQ(complete({"asnctl", "se"}), "");  // hidden
}

TEST_F(CompletionTest, OptionsOfTheCommandAndTheGlobalOnes) {
  EXPECT_EQ(complete({"asnctl", "lock", "acquire", "--"}),
            "--help --hold --try --socket --timeout");
  EXPECT_EQ(complete({"asnctl", "lock", "acquire", "-"}),
            "--help -h --hold --try --socket --timeout -j");
  // A value is passed over, a flag is not: both lead back to commands.
  EXPECT_EQ(complete({"asnctl", "--timeout", "5", "-j", "lock", "a"}), "acquire");
  EXPECT_EQ(complete({"asnctl", "--timeout", ""}), "");
}

TEST_F(CompletionTest, PathsWhereThePathTypeIs) {
  asn::test::TempDir dir;
  asn::test::write_file(dir.file("plan.yaml"), "");
  const std::string prefix = dir.file("pl");
  EXPECT_EQ(complete({"asnctl", "--socket", prefix}), dir.file("plan.yaml"));
  EXPECT_EQ(complete({"asnctl", "load", prefix}), dir.file("plan.yaml"));
  EXPECT_EQ(complete({"asnctl", "lock", "acquire", prefix}), "");  // FILE, but no path
}

TEST_F(CompletionTest, ZshReadsTheSameTable) {
  const std::string bash = *completion_script(app_, "bash");
  const std::string zsh = *completion_script(app_, "zsh");
  EXPECT_EQ(zsh.rfind("#compdef asnctl\n", 0), 0u);
  const auto table = [](const std::string& script) {
    const auto begin = script.find("_asnctl_words() {");
    return script.substr(begin, script.find("\n_asnctl() {") - begin);
  };
  EXPECT_THAT(table(bash), HasSubstr("'lock acquire'|'locks acquire') printf"));
  EXPECT_EQ(table(zsh), table(bash));
}

// zsh's driver, run with compadd and _files standing in for zsh's completion system (zsh
// filters by the prefix itself): the words it is given for each line. Needs zsh, which the
// build does not (skipped without it).
TEST_F(CompletionTest, ZshOffersTheTablesWords) {
  if (access("/usr/bin/zsh", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/zsh";
  asn::test::TempDir dir;
  asn::test::write_file(dir.file("_asnctl"), *completion_script(app_, "zsh"));
  const std::string program = R"zsh(
compadd() { shift; print -r -- "${(P)1}"; }
_files() { print -r -- "(files)"; }
source ")zsh" + dir.file("_asnctl") +
                              R"zsh(" >/dev/null 2>&1
t() { words=("$@"); CURRENT=$#; PREFIX=${@[-1]}; _asnctl | tr '\n' ' '; print; }
t asnctl lo
t asnctl locks a
t asnctl --timeout 5 -j lock acquire -
t asnctl --socket pl
t asnctl load pl
)zsh";
  auto r = asn::test::run_command({"/usr/bin/zsh", "-f", "-s"}, program);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out,
            "lock locks load --help -h --socket --timeout -j \n"
            "acquire list --help -h \n"
            "--help -h --hold --try --socket --timeout -j \n"
            "(files) \n"
            "(files) --help -h --socket --timeout -j \n");
}

TEST_F(CompletionTest, OnlyBashAndZsh) {
  EXPECT_EQ(completion_shells(), (std::vector<std::string>{"bash", "zsh"}));
  EXPECT_FALSE(completion_script(app_, "fish"));
  EXPECT_FALSE(completion_script(app_, ""));
}

}  // namespace
}  // namespace asnctl

// TDM schedules end to end, as an operator drives them: the real asnctl loads plans into the
// real asnd on an emulated NetFPGA-1G board (6 ports, 64 slots, 125 MHz), shows the slot
// grid, compiles and diffs plans, refuses what the board cannot run while the schedule
// loaded before keeps running, switches between kept plans, and the schedule survives an
// asnd restart without a swap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kExamples = ASN_EXAMPLES_DIR;

// A plan for one NetFPGA-1G switch with the given phase body (slots or pattern lines).
std::string plan(const std::string& name, const std::string& phase_body) {
  return "plan: " + name +
         "\nboard: netfpga-1g\ndefaults: {slot_length: 1 us, guard_band: 48 ns}\nphases:\n"
         "  - name: main\n" +
         phase_body;
}

// What `schedule show -o json` says identifies the running schedule.
struct Active {
  std::string plan;
  std::string phase;
  uint64_t program_id = 0;
  uint64_t swap_count = 0;
  std::string staged;
};

class TdmTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("tdm")};

  void SetUp() override { start(); }

  void start() {
    ASSERT_TRUE(asnd_.start()) << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
                               << asnd_.log();
  }

  std::string write_plan(const std::string& file, const std::string& text) {
    const std::string path = dir_.file(file);
    write_file(path, text);
    return path;
  }

  CommandResult load(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"load-schedule"};
    argv.insert(argv.end(), args.begin(), args.end());
    return asnd_.asnctl(argv);
  }

  Active active() {
    const auto r = asnd_.asnctl({"-o", "json", "schedule", "show"});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    const std::string active = json_object(r.out, "active");
    return {json_string(active, "plan"), json_string(active, "phase"),
            json_number(active, "program_id").value_or(0),
            json_number(r.out, "swap_count").value_or(0), json_object(r.out, "staged")};
  }
};

TEST_F(TdmTest, LoadsTheNetfpgaExampleAndShowsItsSlots) {
  auto r = asnd_.asnctl({"schedule", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("no schedule loaded"));

  r = load({kExamples + "/netfpga-explicit.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("loaded plan 'storage-rounds' phase 'write-round': active from "
                               "frame "));
  EXPECT_THAT(r.out, HasSubstr("(parse "));
  EXPECT_THAT(squeezed(r.out), HasSubstr("write-round* 16 7 4 "));  // 7 slots written by hand

  r = asnd_.asnctl({"schedule", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("plan 'storage-rounds' phase 'write-round'"));
  EXPECT_THAT(r.out, HasSubstr("875 cycles (7 us)"));  // the frame: 7 slots of 125 cycles
  EXPECT_THAT(r.out, HasSubstr("125 cycles (1 us)"));
  EXPECT_THAT(r.out, HasSubstr("6 cycles (48 ns)"));
  EXPECT_THAT(r.out, HasSubstr("slot  0 1 2 3 4 5\n"
                               "0     . . . . 0 1\n"
                               "1     . . . . 2 3\n"));
  EXPECT_THAT(r.out, HasSubstr("6     1 0 3 2 . .\n"));
  EXPECT_THAT(asnd_.asnctl({"schedule", "show", "--slots", "2"}).out,
              HasSubstr("... 5 more slots"));
  // Issue 28, finding 15: only the output ports asked for, in their order.
  r = asnd_.asnctl({"schedule", "show", "--ports", "5,0-1"});
  EXPECT_THAT(r.out, HasSubstr("slot  5 0 1\n"
                               "0     1 . .\n"));
  EXPECT_THAT(r.out, HasSubstr("6     . 1 0\n"));
  r = asnd_.asnctl({"schedule", "show", "--ports", "2,6"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_EQ(r.out, "");  // nothing printed before the error
  EXPECT_THAT(r.err, HasSubstr("--ports: port 6 is not in the slot table: it has ports 0-5"));
  r = asnd_.asnctl({"schedule", "show", "--ports", "3-1"});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("runs backwards"));

  const Active a = active();
  EXPECT_EQ(a.plan, "storage-rounds");
  EXPECT_EQ(a.phase, "write-round");
  EXPECT_NE(a.program_id, 0u);
  EXPECT_GE(a.swap_count, 1u);
  EXPECT_THAT(a.staged, HasSubstr("\"present\": false"));

  // Loading the same phase again changes nothing.
  r = load({kExamples + "/netfpga-explicit.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("already active"));
  EXPECT_EQ(active().swap_count, a.swap_count);

  // The engine stopped behind asnd's back: status says so.
  EXPECT_THAT(asnd_.asnctl({"status"}).out, HasSubstr("running, all well"));
  ASSERT_EQ(asnd_.asnctl({"regs", "write", "tdm.config.enable=0"}).exit_code, 0);
  r = asnd_.asnctl({"status"});
  EXPECT_THAT(r.out, HasSubstr("tdm state: differs from the board"));
  EXPECT_THAT(r.out, HasSubstr("tdm.config.enable is 0"));
}

// Issue 28, finding 8: without --slots the slot table was not read, and -o json has no
// "entries" then, rather than "entries": [] (which reads as a table with no slots); with
// --slots it has them.
TEST_F(TdmTest, ScheduleShowJsonHasTheEntriesOnlyWhenAskedFor) {
  ASSERT_EQ(load({kExamples + "/netfpga-explicit.yaml"}).exit_code, 0);
  auto r = asnd_.asnctl({"-o", "json", "schedule", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, Not(HasSubstr("\"entries\"")));
  EXPECT_THAT(r.out, Not(::testing::ContainsRegex(",[[:space:]]*}")));  // still JSON
  EXPECT_EQ(json_number(json_object(r.out, "active"), "slots"), 7u);
  EXPECT_THAT(json_object(r.out, "active"), HasSubstr("\"frame_cycles\": \"875\"\n"));

  r = asnd_.asnctl({"-o", "json", "schedule", "show", "--slots", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  // Slot 0: output 4 takes input 0, output 5 input 1 (0x80, 0x81), as the grid shows.
  EXPECT_THAT(r.out, HasSubstr("\"entries\": [\n      \"AAAAAICB"));
}

TEST_F(TdmTest, APatternTakesAsManySlotsAsItsLowerBound) {
  auto r = load({kExamples + "/netfpga-explicit.yaml", "--phase", "write-round-compiled"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("write-round-compiled* 16 4 4 66.7% "));
  EXPECT_EQ(json_number(asnd_.asnctl({"-o", "json", "schedule", "show"}).out, "slots"), 4u);

  // Every ordered pair of the 6 ports: 30 connections, 5 at each port, 5 slots.
  const std::string all =
      write_plan("all.yaml", plan("all", "    pattern: [all_to_all: {ports: 6}]\n"));
  r = asnd_.asnctl({"schedule", "compile", all});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("main 30 5 5 100.0% closed form fixed"));
  EXPECT_THAT(r.out, HasSubstr("nothing written"));
  r = asnd_.asnctl({"schedule", "compile", all, "--yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("slots:"));

  r = load({all, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_number(r.out, "lower_bound"), 5u);
  EXPECT_EQ(json_number(r.out, "slots"), 5u);
  EXPECT_EQ(active().plan, "all");
}

// Issue 11: the pattern names terminals of a fabric; asnd compiles it for the fabric and
// says, per phase, the slots against the lower bound. The seed's linear array (002 L1698):
// greedy needs 3 slots, the default compiler the optimum, 2.
TEST_F(TdmTest, AFabricTargetCompilesThePatternForTheFabric) {
  const std::string file =
      write_plan("array.yaml",
                 plan("array", "    pattern: [\"0 -> 2\", \"1 -> 3\", \"3 -> 4\", \"2 -> 4\"]\n"));
  auto r =
      asnd_.asnctl({"schedule", "compile", file, "--fabric", "linear:5", "--algorithm", "greedy"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("main 4 3 2 50.0% greedy"));
  r = asnd_.asnctl({"schedule", "compile", file, "--fabric", "linear:5", "--time-budget", "200ms"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("main 4 2 2 optimal"));
  EXPECT_THAT(r.out, HasSubstr("for linear array 5: valid on this board"));
  r = asnd_.asnctl({"schedule", "compile", file, "--fabric", "linear:5", "--yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("switches:"));

  r = asnd_.asnctl({"schedule", "compile", file, "--algorithm", "coloring"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("needs --fabric"));
  r = asnd_.asnctl({"schedule", "compile", file, "--fabric", "ring:5"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("torus:XxY"));
}

TEST_F(TdmTest, ADryRunWritesNothing) {
  ASSERT_EQ(load({kExamples + "/netfpga-explicit.yaml"}).exit_code, 0);
  const Active before = active();
  auto r =
      load({kExamples + "/netfpga-explicit.yaml", "--phase", "write-round-compiled", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("plan 'storage-rounds' phase 'write-round-compiled': checked, "
                               "nothing written"));
  const Active after = active();
  EXPECT_EQ(after.phase, "write-round");
  EXPECT_EQ(after.program_id, before.program_id);
  EXPECT_EQ(after.swap_count, before.swap_count);
  EXPECT_THAT(after.staged, HasSubstr("\"present\": false"));
}

TEST_F(TdmTest, ADiffSaysWhatALoadWouldChange) {
  ASSERT_EQ(load({kExamples + "/netfpga-explicit.yaml"}).exit_code, 0);
  auto r = asnd_.asnctl({"schedule", "diff", kExamples + "/netfpga-explicit.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("no change"));

  r = asnd_.asnctl({"schedule", "diff", kExamples + "/netfpga-explicit.yaml", "--phase",
                    "write-round-compiled"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("~ slots_in_use: 7 -> 4"));
  EXPECT_THAT(r.out, HasSubstr("- slot 6 (only before): 0->1 1->0 2->3 3->2"));
  EXPECT_EQ(active().phase, "write-round");  // a diff writes nothing
}

TEST_F(TdmTest, WarningsGoToStderrAndDoNotStopALoad) {
  const std::string path =
      write_plan("warn.yaml",
                 "plan: warn\nboard: emulated-64port\nphases:\n  - name: a\n"
                 "    slot_length: 1.3 us\n    guard_band: 48 ns\n    slots: [[\"0 -> 1\"]]\n");
  const auto r = load({path});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(
      r.err, HasSubstr("warning: " + path + ": plan 'warn' was written for board emulated-64port"));
  EXPECT_THAT(r.err, HasSubstr("warning: " + path +
                               ":5:18: phase 'a': slot_length 1.3 us is not "
                               "a whole number of cycles at 125 MHz: using 163 cycles"));
  EXPECT_THAT(r.out, Not(HasSubstr("warning")));
  EXPECT_EQ(active().plan, "warn");
}

struct Refused {
  const char* name;
  std::string text;
  std::vector<std::string> messages;
};

// Issue 28, finding 9: a fabric compile's plan (here 16 phases of all-to-all on a torus, about
// 5 MB of YAML) came back only with the reply, and a reply over gRPC's default 4 MiB failed
// after the whole compile. The plan is sent only when asked for (--yaml), and then whole.
TEST_F(TdmTest, AFabricPlanOfMegabytesComesBackOnlyWhenAskedAndThenWhole) {
  TempDir dir;
  AsndProcess big(dir, unique_name("tdm64"));
  ASSERT_TRUE(big.start({"--profile", "emulated-64port"})) << big.log();
  std::string text =
      "plan: big\nboard: emulated-64port\ndefaults: {slot_length: 1 us, guard_band: 48 ns}\n"
      "phases:\n";
  for (int i = 0; i < 16; ++i) {
    text += "  - name: p" + std::to_string(i) + "\n    pattern: [all_to_all: {ports: 64}]\n";
  }
  const std::string file = write_plan("big.yaml", text);
  const std::vector<std::string> compile = {"schedule",  "compile",     file,    "--fabric",
                                            "torus:8x8", "--algorithm", "greedy"};
  auto r = big.asnctl(compile);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("p15 4032 115 64"));
  std::vector<std::string> json = {"-o", "json"};
  json.insert(json.end(), compile.begin(), compile.end());
  r = big.asnctl(json);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out.find("compiled_yaml"), std::string::npos) << "the plan came unasked";
  EXPECT_NE(r.out.find("\"p15\""), std::string::npos);
  std::vector<std::string> yaml = compile;
  yaml.push_back("--yaml");
  r = big.asnctl(yaml);
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_GT(r.out.size(), size_t{4} << 20);
  EXPECT_NE(r.out.find("name: p15"), std::string::npos);
}

// Issue 28, finding 9: two compiles of one plan gave different schedules (the search ran
// until a wall-clock deadline). It stops on counted work now: the same plan gives the same
// fabric plan, byte for byte, whatever the time budget that does not cut it.
TEST_F(TdmTest, AFabricCompileGivesOneScheduleWhateverTheTimeBudget) {
  TempDir dir;
  AsndProcess big(dir, unique_name("tdmrep"));
  ASSERT_TRUE(big.start({"--profile", "emulated-64port"})) << big.log();
  // The 6-cube on an 8x8 torus (002 Table 5.6): first-fit and the baselines stay above its
  // lower bound, 6, so the search (tabu) runs.
  std::string pattern;
  for (uint32_t i = 0; i < 64; ++i) {
    for (uint32_t b = 0; b < 6; ++b) {
      pattern += (pattern.empty() ? "\"" : ", \"") + std::to_string(i) + " -> " +
                 std::to_string(i ^ (1u << b)) + "\"";
    }
  }
  const std::string file = write_plan(
      "cube.yaml",
      "plan: cube\nboard: emulated-64port\ndefaults: {slot_length: 1 us, guard_band: 48 ns}\n"
      "phases:\n  - name: main\n    pattern: [" +
          pattern + "]\n");
  // Budgets far above the second of CPU the search takes, so that a busy machine does not
  // cut it (a cut result may differ, and says so): the output must not depend on them.
  std::vector<std::string> compile = {"--timeout", "600",       "schedule",      "compile", file,
                                      "--fabric",  "torus:8x8", "--time-budget", "120s"};
  const CommandResult summary = big.asnctl(compile);
  ASSERT_EQ(summary.exit_code, 0) << summary.all();
  EXPECT_THAT(squeezed(summary.out), ::testing::Not(HasSubstr("first-fit")));
  compile.push_back("--yaml");
  const CommandResult first = big.asnctl(compile);
  ASSERT_EQ(first.exit_code, 0) << first.all();
  compile[8] = "300s";
  const CommandResult second = big.asnctl(compile);
  ASSERT_EQ(second.exit_code, 0) << second.all();
  EXPECT_THAT(first.out, HasSubstr("switches:"));
  EXPECT_TRUE(first.out == second.out) << "two compiles of one plan gave different plans";
  EXPECT_THAT(first.err + second.err, ::testing::Not(HasSubstr("cut the search")));
}

// Issue 28, finding 7: a plan for a 64-port board on the 6-port one is refused with one
// line for the ports it lacks, not one per connection, and says which board it needs and
// how to start asnd with it.
TEST_F(TdmTest, APlanForABiggerBoardSaysWhichBoardAndHowToGetIt) {
  const auto r = load({kExamples + "/all-to-all.yaml"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("ports 6..63 do not exist; the board (netfpga-1g) has ports 0..5"));
  size_t lines = 0;
  for (size_t at = r.err.find("not exist"); at != std::string::npos;
       at = r.err.find("not exist", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("plan 'all-to-all' is for board emulated-64port, and this asnd "
                               "emulates a netfpga-1g: start asnd with --profile "
                               "emulated-64port"));
  EXPECT_THAT(r.err, HasSubstr("nothing was written"));
}

TEST_F(TdmTest, APlanTheBoardCannotRunIsRefusedAndTheActiveOneKeepsRunning) {
  ASSERT_EQ(load({kExamples + "/netfpga-explicit.yaml"}).exit_code, 0);
  const Active before = active();
  const std::vector<Refused> cases = {
      {"twice",
       plan("twice", "    slots: [[\"0 -> 4\", \"1 -> 4\"]]\n"),
       {"INVALID_ARGUMENT", "slot 0", "output 4 takes input 1 and also input 0"}},
      {"unknown",
       plan("unknown", "    slots: [[\"0 -> 9\"]]\n"),
       {"INVALID_ARGUMENT", "port 9 does not exist", "has ports 0..5"}},
      {"self",
       plan("self", "    slots: [[\"2 -> 2\"]]\n"),
       {"INVALID_ARGUMENT", "connects port 2 to itself"}},
      {"big",
       plan("big", "    pattern: [\"0 -> 1 x65\"]\n"),
       {"RESOURCE_EXHAUSTED", "needs 65 slots", "has 64"}},
      {"syntax", "plan: p\nphases:\n  - name: [a\n", {"INVALID_ARGUMENT", "syntax.yaml:4:"}},
      // A million lines (2 MB: within the file size asnctl sends) stops at the line limit.
      {"million",
       [] {
         std::string text = "plan: p\n";
         while (text.size() < 2'000'000) text += "#\n";
         return text;
       }(),
       {"INVALID_ARGUMENT", "more than 262144 lines (max_lines)"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write_plan(std::string(c.name) + ".yaml", c.text);
    const auto r = load({path});
    EXPECT_EQ(r.exit_code, 1) << r.all();
    for (const auto& m : c.messages) EXPECT_THAT(r.err, HasSubstr(m));
    const Active after = active();
    EXPECT_EQ(after.plan, "storage-rounds");
    EXPECT_EQ(after.phase, "write-round");
    EXPECT_EQ(after.program_id, before.program_id);
    EXPECT_EQ(after.swap_count, before.swap_count);
    EXPECT_THAT(after.staged, HasSubstr("\"present\": false"));
  }
  // Not even read: asnd is not asked.
  auto r = load({dir_.file("missing.yaml")});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_THAT(r.err, HasSubstr("cannot read " + dir_.file("missing.yaml")));
}

TEST_F(TdmTest, KeptPlansAreListedAndActivated) {
  ASSERT_EQ(load({kExamples + "/netfpga-explicit.yaml"}).exit_code, 0);
  const uint64_t first = active().program_id;
  const std::string pairs =
      write_plan("pairs.yaml", plan("pairs", "    slots: [[\"0 -> 1\", \"1 -> 0\"]]\n"));
  auto r = load({pairs});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(active().plan, "pairs");

  r = asnd_.asnctl({"schedule", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(squeezed(r.out), HasSubstr("storage-rounds write-round write-round-compiled "));
  EXPECT_THAT(squeezed(r.out), HasSubstr("pairs main* " + pairs));
  r = asnd_.asnctl({"-o", "json", "schedule", "list"});
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"storage-rounds\""));
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"pairs\""));

  r = asnd_.asnctl({"schedule", "activate", "storage-rounds", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("checked, nothing written"));
  EXPECT_EQ(active().plan, "pairs");

  r = asnd_.asnctl({"schedule", "activate", "storage-rounds"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("loaded plan 'storage-rounds' phase 'write-round'"));
  const Active a = active();
  EXPECT_EQ(a.plan, "storage-rounds");
  EXPECT_EQ(a.program_id, first);
  EXPECT_THAT(squeezed(asnd_.asnctl({"schedule", "list"}).out),
              HasSubstr("storage-rounds write-round* write-round-compiled "));

  r = asnd_.asnctl({"schedule", "activate", "nonesuch"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("nonesuch"));
}

TEST_F(TdmTest, TheScheduleSurvivesARestartWithoutASwap) {
  ASSERT_EQ(
      load({kExamples + "/netfpga-explicit.yaml", "--phase", "write-round-compiled"}).exit_code, 0);
  const Active before = active();
  ASSERT_EQ(asnd_.stop(), 0);
  start();
  const Active after = active();
  EXPECT_EQ(after.plan, "storage-rounds");
  EXPECT_EQ(after.phase, "write-round-compiled");
  EXPECT_EQ(after.program_id, before.program_id);
  EXPECT_EQ(after.swap_count, before.swap_count);
  EXPECT_THAT(asnd_.asnctl({"schedule", "list"}).out, HasSubstr("write-round-compiled*"));
  EXPECT_THAT(asnd_.asnctl({"status"}).out, Not(HasSubstr("pending")));
}

}  // namespace
}  // namespace asn::test

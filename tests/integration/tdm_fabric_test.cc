// A fabric-wide TDM load end to end: four real asnd processes, each on its own emulated
// NetFPGA-1G board (the four routers of examples/schedules/fabric-2dfb8.yaml; emulated boards
// of one host share its monotonic clock as their time base), and the real asnctl loading a
// phase on all of them with `load-schedule --fabric`. Every switch swaps at the same frame;
// when one switch cannot stage its part, none is armed, every staged bank is discarded and
// every switch keeps the schedule it ran.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kExample = std::string(ASN_EXAMPLES_DIR) + "/fabric-2dfb8.yaml";
const std::vector<std::string> kSwitches = {"r00", "r01", "r10", "r11"};

CommandResult asnctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ASNCTL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

// What one switch runs, from `schedule show -o json`.
struct Active {
  std::string plan;
  std::string phase;
  uint64_t program_id = 0;
  uint64_t swap_frame = 0;
  uint64_t swap_count = 0;
  std::string staged;
};

class TdmFabricTest : public ::testing::Test {
 protected:
  TempDir dirs_[4];
  TempDir work_;
  std::vector<std::unique_ptr<AsndProcess>> asnd_;

  void SetUp() override {
    for (auto& dir : dirs_) {
      asnd_.push_back(std::make_unique<AsndProcess>(dir, unique_name("tf")));
      ASSERT_TRUE(asnd_.back()->start())
          << "asnd did not start (exit " << asnd_.back()->exit_code() << "):\n"
          << asnd_.back()->log();
    }
  }

  // A fabric file listing the four switches; `dead` names one whose endpoint has no asnd.
  std::string fabric_file(const std::string& dead = "") {
    std::string text = "fabric: test\narm_margin: 200 ms\nswitches:\n";
    for (size_t i = 0; i < kSwitches.size(); ++i) {
      const std::string socket =
          kSwitches[i] == dead ? work_.file("nobody.sock") : asnd_[i]->socket();
      text += "  - {name: " + kSwitches[i] + ", endpoint: \"unix:" + socket + "\"}\n";
    }
    const std::string path = work_.file(dead.empty() ? "fabric.yaml" : "fabric-dead.yaml");
    write_file(path, text);
    return path;
  }

  CommandResult load(const std::string& fabric, const std::string& plan,
                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"load-schedule", "--fabric", fabric, plan};
    args.insert(args.end(), extra.begin(), extra.end());
    return asnctl(args);
  }

  Active active(size_t i) {
    const auto r = asnd_[i]->asnctl({"-o", "json", "schedule", "show"});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    const std::string a = json_object(r.out, "active");
    return {json_string(a, "plan"),
            json_string(a, "phase"),
            json_number(a, "program_id").value_or(0),
            json_number(r.out, "swap_frame").value_or(0),
            json_number(r.out, "swap_count").value_or(0),
            json_object(r.out, "staged")};
  }

  // Loads the example's first phase everywhere (the sequencers start on the shared grid).
  std::vector<Active> load_exchange() {
    const auto r = load(fabric_file(), kExample);
    EXPECT_EQ(r.exit_code, 0) << r.all();
    std::vector<Active> out;
    for (size_t i = 0; i < asnd_.size(); ++i) out.push_back(active(i));
    return out;
  }

  // Every switch still runs what it ran, and has nothing staged.
  void expect_unchanged(const std::vector<Active>& before, size_t skip = SIZE_MAX) {
    for (size_t i = 0; i < asnd_.size(); ++i) {
      if (i == skip) continue;
      SCOPED_TRACE(kSwitches[i]);
      const Active now = active(i);
      EXPECT_EQ(now.phase, before[i].phase);
      EXPECT_EQ(now.program_id, before[i].program_id);
      EXPECT_EQ(now.swap_count, before[i].swap_count);
      EXPECT_THAT(now.staged, HasSubstr("\"present\": false"));
    }
  }
};

TEST_F(TdmFabricTest, EverySwitchSwapsAtTheSameFrame) {
  // Nothing runs yet: each switch swaps at once and starts on the shared time grid.
  auto r = load(fabric_file(), kExample);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("armed 4 switches at once"));
  for (size_t i = 0; i < asnd_.size(); ++i) {
    const Active a = active(i);
    EXPECT_EQ(a.plan, "fabric-neighbour-exchange") << kSwitches[i];
    EXPECT_EQ(a.phase, "exchange") << kSwitches[i];
  }

  // Now they run: the next phase starts at one frame, the same on all four.
  r = load(fabric_file(), kExample, {"--phase", "local", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const auto armed = json_numbers(r.out, "armed_frame");
  ASSERT_EQ(armed.size(), 4u) << r.out;
  EXPECT_GT(armed[0], 0u);
  EXPECT_EQ(armed, std::vector<uint64_t>(4, armed[0]));
  const auto swap_frames = json_numbers(r.out, "swap_frame");
  ASSERT_EQ(swap_frames.size(), 4u) << r.out;
  EXPECT_EQ(swap_frames, std::vector<uint64_t>(4, swap_frames[0]));
  const auto swap_times = json_numbers(r.out, "swap_time");
  EXPECT_EQ(swap_times, std::vector<uint64_t>(4, swap_times[0]));
  EXPECT_EQ(json_number(r.out, "swap_spread_cycles"), 0u);
  for (size_t i = 0; i < asnd_.size(); ++i) {
    const Active a = active(i);
    EXPECT_EQ(a.phase, "local") << kSwitches[i];
    EXPECT_EQ(a.swap_frame, swap_frames[0]) << kSwitches[i];
  }

  // And back, as a table.
  r = load(fabric_file(), kExample, {"--phase", "exchange"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("armed 4 switches for frame "));
  EXPECT_THAT(r.out, HasSubstr("command to armed "));
  EXPECT_THAT(r.out, HasSubstr("swap instants spread 0 cycles (0 ns)"));
  const uint64_t swap_frame = active(0).swap_frame;
  for (size_t i = 1; i < asnd_.size(); ++i) EXPECT_EQ(active(i).swap_frame, swap_frame);

  // A dry run asks every switch to check its part and writes nothing.
  r = load(fabric_file(), kExample, {"--phase", "local", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("checked on 4 switches, nothing written"));
  EXPECT_EQ(active(2).phase, "exchange");
}

TEST_F(TdmFabricTest, AnUnreachableSwitchStopsTheLoadEverywhere) {
  const auto before = load_exchange();
  const auto r = load(fabric_file("r11"), kExample, {"--phase", "local"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("r11 (unix:" + work_.file("nobody.sock") + "): cannot reach asnd"));
  EXPECT_THAT(r.err, HasSubstr("nothing was armed"));
  EXPECT_THAT(r.err, HasSubstr("discarded on r00, r01, r10"));
  EXPECT_THAT(r.out, HasSubstr("staged, discarded"));
  expect_unchanged(before, 3);
}

TEST_F(TdmFabricTest, APartOneSwitchRefusesStopsTheLoadEverywhere) {
  const auto before = load_exchange();
  // r01's part names a port its board lacks; the others' parts are fine.
  const std::string plan = work_.file("bad-r01.yaml");
  write_file(plan,
             "plan: bad-r01\nswitches: [r00, r01, r10, r11]\n"
             "defaults: {policy: fixed, slot_length: 2 us, guard_band: 48 ns}\n"
             "phases:\n"
             "  - name: exchange\n"
             "    switches:\n"
             "      r00: {slots: [[\"0 -> 2\", \"2 -> 0\"]]}\n"
             "      r01: {slots: [[\"0 -> 9\"]]}\n"
             "      r10: {slots: [[\"0 -> 2\", \"2 -> 0\"]]}\n"
             "      r11: {slots: [[\"0 -> 2\", \"2 -> 0\"]]}\n");
  auto r = load(fabric_file(), plan);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("failed: r01 ("));
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("port 9 does not exist"));
  EXPECT_THAT(r.err, Not(HasSubstr("r00 (")));
  expect_unchanged(before);

  // A dry run finds the same, and writes nothing either.
  r = load(fabric_file(), plan, {"--dry-run"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("r01 ("));
  EXPECT_THAT(r.err, HasSubstr("port 9 does not exist"));
  expect_unchanged(before);
}

TEST_F(TdmFabricTest, SwitchesRunningDifferentProgramsSwapAtOneInstant) {
  load_exchange();
  // r10 alone moves to another phase (another frame length): its frames no longer start
  // with the others' but at their common boundaries.
  auto r = asnd_[2]->asnctl({"load-schedule", kExample, "--switch", "r10", "--phase", "local"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  ASSERT_EQ(active(2).phase, "local");

  r = load(fabric_file(), kExample, {"--phase", "exchange", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const auto armed = json_numbers(r.out, "armed_frame");
  ASSERT_EQ(armed.size(), 4u) << r.out;
  EXPECT_EQ(armed[0], armed[1]);
  EXPECT_EQ(armed[0], armed[3]);
  EXPECT_NE(armed[0], armed[2]);  // r10 numbers its frames on a grid of its own
  const auto swap_times = json_numbers(r.out, "swap_time");
  EXPECT_EQ(swap_times, std::vector<uint64_t>(4, swap_times[0]));
  for (size_t i = 0; i < asnd_.size(); ++i) EXPECT_EQ(active(i).phase, "exchange") << kSwitches[i];

  // Back on one program, they share its frames again.
  r = load(fabric_file(), kExample, {"--phase", "local"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("armed 4 switches for frame "));
}

}  // namespace
}  // namespace asn::test

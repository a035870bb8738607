// Schedules switched on every switch of a fabric together through etcd (issue 25 item 5): a
// private 3-member etcd, eight real asnd processes on emulated boards (one host's boards
// share its monotonic clock as their time base, so "one frame" is checked to the cycle),
// and the real asnctl writing the activation. One common frame on all, also with an etcd
// member dead; a switch refusing its part, or stopped, arms nothing anywhere; a second load
// never interleaves with one running; the writes are O(switches).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <string>
#include <vector>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "etcd_client.hpp"
#include "fabric_fixture.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

constexpr int kSwitches = 8;

// What one switch runs, from `schedule show -o json`.
struct Active {
  std::string phase;
  uint64_t program_id = 0;
  uint64_t swap_frame = 0;
  uint64_t swap_count = 0;
  std::string staged;
};

class FabricActivationTest : public FabricFixture {
 protected:
  void SetUp() override {
    FabricFixture::SetUp();
    start_switches(kSwitches);
    const int64_t revision = apply(fabric_file());
    const CommandResult r = wait_in_force(revision);
    ASSERT_EQ(r.exit_code, 0) << r.all();
  }

  // A plan for s00..s07: phase `a` one slot, phase `b` two; `bad` gives switch s03 a port its
  // board lacks.
  std::string plan(bool bad = false) {
    std::string text = "plan: p8\nswitches: [";
    for (int i = 0; i < kSwitches; ++i) text += (i ? ", " : "") + switch_name(i);
    text += "]\ndefaults: {policy: fixed, slot_length: 2 us, guard_band: 48 ns}\nphases:\n";
    for (const std::string phase : {"a", "b"}) {
      text += "  - name: " + phase + "\n    switches:\n";
      for (int i = 0; i < kSwitches; ++i) {
        const std::string slots = bad && i == 3  ? R"([["0 -> 99"]])"
                                  : phase == "a" ? R"([["0 -> 2", "2 -> 0"]])"
                                                 : R"([["0 -> 1", "1 -> 0"], ["0 -> 3"]])";
        text += "      " + switch_name(i) + ": {slots: " + slots + "}\n";
      }
    }
    const std::string path = dir_.file(bad ? "bad.yaml" : "p8.yaml");
    write_file(path, text);
    return path;
  }

  CommandResult load(const std::string& phase, bool bad = false,
                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {ASNCTL_PATH, "load-schedule", "--fabric",
                                     "lab",       plan(bad),       "--phase",
                                     phase,       "--etcd",        etcd_.endpoints()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_command(argv);
  }

  Active active(int i) {
    const auto r = switches_[i]->asnctl({"-o", "json", "schedule", "show"});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    const std::string a = json_object(r.out, "active");
    return {json_string(a, "phase"), json_number(a, "program_id").value_or(0),
            json_number(r.out, "swap_frame").value_or(0),
            json_number(r.out, "swap_count").value_or(0), json_object(r.out, "staged")};
  }
  std::vector<Active> actives() {
    std::vector<Active> out;
    for (int i = 0; i < kSwitches; ++i) out.push_back(active(i));
    return out;
  }

  // Every switch runs what it ran, and has nothing staged.
  void expect_unchanged(const std::vector<Active>& before) {
    for (int i = 0; i < kSwitches; ++i) {
      SCOPED_TRACE(switch_name(i));
      const Active now = active(i);
      EXPECT_EQ(now.phase, before[i].phase);
      EXPECT_EQ(now.program_id, before[i].program_id);
      EXPECT_EQ(now.swap_count, before[i].swap_count);
      EXPECT_THAT(now.staged, HasSubstr("\"present\": false"));
    }
  }

  // How many times each key was written since it was created (etcd's version).
  int64_t version(const std::string& key) {
    etcd::Options options;
    options.endpoints = etcd_.endpoint_list();
    etcd::Client client(options);
    const etcd::Range r = client.get(key);
    return r.kvs.empty() ? 0 : r.kvs[0].version;
  }
  std::string activation() {
    etcd::Options options;
    options.endpoints = etcd_.endpoint_list();
    etcd::Client client(options);
    const etcd::Range r = client.get(fabric::activation_key("/asn", "lab"));
    return r.kvs.empty() ? "" : r.kvs[0].value;
  }
};

TEST_F(FabricActivationTest, EightSwitchesSwapAtOneFrameThroughEtcd) {
  // Nothing runs yet: each swaps at once, on the time grid of the new program.
  auto r = load("a");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("armed 8 switches at once"));
  for (const Active& a : actives()) EXPECT_EQ(a.phase, "a");

  // They run: the next phase starts at one frame on all eight, to the cycle; with the etcd
  // member asnctl and the switches would try first dead (they move to the others).
  etcd_.kill_member(0);
  r = load("b", false, {"-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_string(r.out, "via"), "etcd");
  const auto armed = json_numbers(r.out, "armed_frame");
  ASSERT_EQ(armed.size(), 8u) << r.out;
  EXPECT_GT(armed[0], 0u);
  EXPECT_EQ(armed, std::vector<uint64_t>(8, armed[0]));
  const auto swap_times = json_numbers(r.out, "swap_time");
  ASSERT_EQ(swap_times.size(), 8u) << r.out;
  EXPECT_EQ(swap_times, std::vector<uint64_t>(8, swap_times[0]));
  EXPECT_EQ(json_number(r.out, "swap_spread_cycles"), 0u);
  const auto swap_frames = json_numbers(r.out, "swap_frame");
  for (int i = 0; i < kSwitches; ++i) {
    const Active a = active(i);
    EXPECT_EQ(a.phase, "b") << switch_name(i);
    EXPECT_EQ(a.swap_frame, swap_frames[0]) << switch_name(i);
    EXPECT_THAT(a.staged, HasSubstr("\"present\": false"));
  }

  // Writes per load: asnctl's three of the activation, two reports of each switch.
  EXPECT_EQ(version(fabric::activation_key("/asn", "lab")), 2 * 3);
  for (int i = 0; i < kSwitches; ++i) {
    EXPECT_EQ(version(fabric::activation_report_key("/asn", "lab", switch_name(i))), 2 * 2)
        << switch_name(i);
  }
  EXPECT_THAT(activation(), HasSubstr("\"step\":\"done\""));

  // The same fabric file loads over gRPC with --direct, etcd given or not, and writes
  // nothing to etcd.
  const std::string file = dir_.file("lab.yaml");
  write_file(file, fabric_file());
  r = run_command({ASNCTL_PATH, "load-schedule", "--fabric", file, plan(), "--phase", "a",
                   "--direct", "--etcd", etcd_.endpoints(), "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_string(r.out, "via"), "grpc");
  EXPECT_EQ(version(fabric::activation_key("/asn", "lab")), 2 * 3);
  for (const Active& a : actives()) EXPECT_EQ(a.phase, "a");

  // A fabric etcd does not hold: nothing written, and how to get on.
  r = run_command(
      {ASNCTL_PATH, "load-schedule", "--fabric", "nosuch", plan(), "--etcd", etcd_.endpoints()});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("fabric 'nosuch' is not in etcd"));
  EXPECT_THAT(r.err, HasSubstr("asnctl fabric apply"));

  // `fabric status` still reads the fabric beside the activation keys.
  const CommandResult status = fabric({"status", "lab"});
  EXPECT_EQ(status.exit_code, 0) << status.all();
}

TEST_F(FabricActivationTest, OneSwitchRefusingItsPartArmsNothingAnywhere) {
  ASSERT_EQ(load("a").exit_code, 0);
  const auto before = actives();
  const CommandResult r = load("b", /*bad=*/true);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("failed: s03 ("));
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("port 99"));
  EXPECT_THAT(r.err, HasSubstr("nothing was armed"));
  EXPECT_THAT(r.err, HasSubstr("discarded on s00, s01, s02, s04, s05, s06, s07"));
  expect_unchanged(before);
  EXPECT_THAT(activation(), HasSubstr("\"step\":\"abort\""));

  // The next load is not held up by the aborted one.
  ASSERT_EQ(load("b").exit_code, 0);
  for (const Active& a : actives()) EXPECT_EQ(a.phase, "b");
}

TEST_F(FabricActivationTest, AStoppedSwitchArmsNothingAndASecondLoadWaitsItsTurn) {
  ASSERT_EQ(load("a").exit_code, 0);
  const auto before = actives();
  // s07 still holds its status lease, but answers nothing: the load waits its timeout.
  switches_[7]->signal(SIGSTOP);
  auto first = std::async(std::launch::async, [&] { return load("b"); });
  ASSERT_TRUE(wait_until(
      [&] { return activation().find("\"step\":\"stage\"") != std::string::npos; }, 30s));
  const CommandResult second = load("b");
  EXPECT_EQ(second.exit_code, 1) << second.all();
  EXPECT_THAT(second.err, HasSubstr("another fabric load is running on fabric 'lab'"));
  EXPECT_THAT(second.err, HasSubstr("nothing was written"));

  const CommandResult r = first.get();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("s07 ("));
  EXPECT_THAT(r.err, HasSubstr("did not report its part staged"));
  EXPECT_THAT(r.err, HasSubstr("nothing was armed"));
  // Woken, s07 sees the stage and then the abort: it stages and discards, arms nothing.
  switches_[7]->signal(SIGCONT);
  // Its report key: two writes for phase a, then "staged" and "discarded".
  ASSERT_TRUE(wait_until(
      [&] { return version(fabric::activation_report_key("/asn", "lab", "s07")) >= 4; }, 30s));
  expect_unchanged(before);

  // A switch whose asnd is gone (its status lease ran out): refused before anything is written.
  switches_[7]->signal(SIGKILL);
  ASSERT_TRUE(
      wait_until([&] { return version(fabric::status_key("/asn", "lab", "s07")) == 0; }, 30s));
  const int64_t written = version(fabric::activation_key("/asn", "lab"));
  const CommandResult gone = load("b");
  EXPECT_EQ(gone.exit_code, 1) << gone.all();
  EXPECT_THAT(gone.err, HasSubstr("switch s07 of plan 'p8' has no asnd reporting in fabric 'lab'"));
  EXPECT_THAT(gone.err, HasSubstr("nothing was written"));
  EXPECT_EQ(version(fabric::activation_key("/asn", "lab")), written);
}

}  // namespace
}  // namespace asn::test

// The fabric as one system on etcd (issue 25): a private 3-member etcd cluster on loopback,
// real asnd processes on emulated boards as its members, driven by the real asnctl
// (fabric apply, diff, status). Faults: etcd members killed and all stopped, a switch
// killed and restarted, two applies racing, local changes, bad fabric files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <future>
#include <memory>
#include <set>

#include "fabric_fixture.hpp"

namespace asn::test {
namespace {

using namespace std::chrono_literals;

class FabricEtcdTest : public FabricFixture {};

TEST_F(FabricEtcdTest, SixteenSwitchesComeInForceAndAChangeRewritesOnlyWhatChanged) {
  start_switches(kRouters);
  const int64_t first = apply(fabric_file());
  ASSERT_GT(first, 0);
  const CommandResult status = wait_in_force(first);
  ASSERT_EQ(status.exit_code, 0) << status.all();
  EXPECT_NE(status.out.find("16 of 16 switches in force"), std::string::npos) << status.out;
  for (int i = 0; i < kRouters; ++i) {
    const CommandResult show = switches_[i]->asnctl({"fabric", "show", "-o", "json"});
    EXPECT_EQ(json_number(show.out, "router"), static_cast<uint64_t>(i)) << show.out;
    EXPECT_EQ(json_number(show.out, "terminals"), 64u) << show.out;
    EXPECT_EQ(json_string(switches_[i]->asnctl({"routing", "show", "-o", "json"}).out, "mode"),
              "ALDFB");
  }
  std::vector<uint64_t> before;
  for (int i = 0; i < kRouters; ++i) before.push_back(fabric_revision_of(i));

  // One switch's thresholds change: the diff names it alone, and only its asnd writes.
  const std::string changed =
      fabric_file("{mode: aldfb, enable: true}", 5, "routing: {thresholds: {4: 9}}");
  write_file(dir_.file("changed.yaml"), changed);
  const CommandResult diff = fabric({"diff", dir_.file("changed.yaml")});
  EXPECT_EQ(diff.exit_code, 1) << diff.all();
  EXPECT_NE(diff.out.find("~ /asn/fabrics/lab/switches/s05/desired"), std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("0 to add, 2 to change, 0 to remove, 15 unchanged."), std::string::npos)
      << diff.out;
  const int64_t second = apply(changed);
  ASSERT_EQ(wait_in_force(second).exit_code, 0);
  for (int i = 0; i < kRouters; ++i) {
    EXPECT_EQ(fabric_revision_of(i), before[i] + (i == 5 ? 1 : 0)) << "switch " << i;
  }
  const CommandResult routing = switches_[5]->asnctl({"routing", "show"});
  EXPECT_NE(squeezed(routing.out).find(" 4 9"), std::string::npos) << routing.out;
  // The same file again writes nothing.
  const CommandResult again = fabric({"apply", dir_.file("changed.yaml")});
  EXPECT_EQ(again.exit_code, 0) << again.all();
  EXPECT_NE(again.out.find("nothing to write"), std::string::npos) << again.out;
}

TEST_F(FabricEtcdTest, OfConcurrentAppliesEachWinnerSawTheStateItReplacedAndNoneIsLost) {
  start_switches(2);
  apply(fabric_file());
  // Eight applies of eight different files at once: each either wrote (at its own revision)
  // or failed naming the revision, and etcd holds the file of the last winner.
  std::vector<std::string> files;
  for (int t = 0; t < 8; ++t) {
    files.push_back(dir_.file(fmt::format("race{}.yaml", t)));
    write_file(files.back(),
               fabric_file("{mode: aldfb, enable: true}", 1,
                           fmt::format("routing: {{thresholds: {{4: {}}}}}", 10 + t)));
  }
  std::vector<std::future<CommandResult>> runs;
  for (const std::string& f : files) {
    runs.push_back(std::async(std::launch::async, [&, f] {
      return fabric({"apply", f, "-o", "json"});
    }));
  }
  int64_t last_revision = 0;
  int last_winner = -1, winners = 0;
  std::set<int64_t> revisions;
  for (int t = 0; t < 8; ++t) {
    const CommandResult r = runs[t].get();
    if (r.exit_code == 0) {
      ++winners;
      const int64_t revision = static_cast<int64_t>(json_number(r.out, "revision").value_or(0));
      EXPECT_TRUE(revisions.insert(revision).second) << "two applies claim revision " << revision;
      if (revision > last_revision) last_revision = revision, last_winner = t;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.all();
      EXPECT_NE(r.err.find("another apply came first, and nothing of this one was written"),
                std::string::npos)
          << r.err;
    }
  }
  ASSERT_GE(winners, 1);
  const CommandResult diff = fabric({"diff", files[last_winner]});
  EXPECT_EQ(diff.exit_code, 0) << "etcd does not hold the last winner's file:\n" << diff.all();
  ASSERT_EQ(wait_in_force(last_revision).exit_code, 0);
}

TEST_F(FabricEtcdTest, SwitchesRideOutEtcdFailuresAndCatchUpWhenItReturns) {
  start_switches(3);
  ASSERT_EQ(wait_in_force(apply(fabric_file())).exit_code, 0);

  // One member dead: nothing changes, applies go on.
  etcd_.kill_member(0);
  int64_t revision = apply(fabric_file("{mode: minimal, enable: true}"));
  ASSERT_EQ(wait_in_force(revision).exit_code, 0);

  // Every member dead: the switches serve on what they applied, and say why.
  etcd_.stop_all();
  ASSERT_TRUE(wait_until(
      [&] {
        return switches_[1]->asnctl({"status"}).out.find("etcd unreachable since") !=
               std::string::npos;
      },
      30s))
      << switches_[1]->asnctl({"status"}).out;
  EXPECT_EQ(json_string(switches_[1]->asnctl({"routing", "show", "-o", "json"}).out, "mode"),
            "MINIMAL");
  const CommandResult down = fabric({"status", "lab"});
  EXPECT_EQ(down.exit_code, 3) << down.all();
  EXPECT_NE(down.err.find("etcd cannot be reached"), std::string::npos) << down.err;
  // A switch restarted meanwhile still knows what its board holds, and says so.
  switches_[1]->stop();
  ASSERT_TRUE(start_switch(1)) << switches_[1]->log();
  const std::string restarted = switches_[1]->asnctl({"status"}).out;
  EXPECT_NE(restarted.find("in-force lab/s01: etcd unreachable since"), std::string::npos)
      << restarted;
  EXPECT_EQ(json_string(switches_[1]->asnctl({"routing", "show", "-o", "json"}).out, "mode"),
            "MINIMAL");

  // Back: a change made while they were cut off reaches them.
  for (int i = 0; i < etcd_.size(); ++i) ASSERT_TRUE(etcd_.start_member(i));
  ASSERT_TRUE(etcd_.wait_serving()) << etcd_.logs();
  revision = apply(fabric_file("{mode: ugal, enable: true}"));
  const CommandResult back = wait_in_force(revision);
  ASSERT_EQ(back.exit_code, 0) << back.all();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(json_string(switches_[i]->asnctl({"routing", "show", "-o", "json"}).out, "mode"),
              "UGAL");
  }
}

TEST_F(FabricEtcdTest, AKilledSwitchShowsUnreachableAndComesBackInForceOnItsOwn) {
  start_switches(3);
  const int64_t revision = apply(fabric_file());
  ASSERT_EQ(wait_in_force(revision).exit_code, 0);
  switches_[2]->signal(SIGKILL);
  // Within its lease (3 s) and a renewal: unreachable, with what it said last.
  ASSERT_TRUE(wait_until(
      [&] {
        return fabric({"status", "lab"}).out.find("unreachable: no status within its lease") !=
               std::string::npos;
      },
      20s))
      << fabric({"status", "lab"}).out;
  CommandResult status = fabric({"status", "lab"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(squeezed(status.out)
                .find("s02 2 " + std::to_string(revision) + " " + std::to_string(revision)),
            std::string::npos)
      << status.out;
  // It comes back by itself (a systemd restart): in force at the same revision.
  ASSERT_TRUE(start_switch(2)) << switches_[2]->log();
  status = wait_in_force(revision);
  EXPECT_EQ(status.exit_code, 0) << status.all();
}

// A partition (every etcd member SIGSTOPped: connections stay open, nothing answers): the
// switch keeps serving, and SIGTERM still stops asnd within the 5 s the guide promises
// instead of waiting out etcd timeouts.
TEST_F(FabricEtcdTest, ASilentEtcdNeitherStopsTheSwitchNorHoldsItsShutdown) {
  start_switches(1);
  ASSERT_EQ(wait_in_force(apply(fabric_file())).exit_code, 0);
  for (int i = 0; i < etcd_.size(); ++i) etcd_.kill_member(i, SIGSTOP);
  ASSERT_TRUE(wait_until(
      [&] {
        return switches_[0]->asnctl({"status"}).out.find("etcd unreachable since") !=
               std::string::npos;
      },
      60s))
      << switches_[0]->asnctl({"status"}).out;
  EXPECT_EQ(switches_[0]->asnctl({"fabric", "show"}).exit_code, 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(switches_[0]->stop(), 0) << switches_[0]->log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, scaled(5s));
  for (int i = 0; i < etcd_.size(); ++i) etcd_.kill_member(i, SIGCONT);
}

TEST_F(FabricEtcdTest, LocalChangesOfWhatTheFabricDecidesAreRefusedNamingIt) {
  start_switches(2);
  const int64_t revision = apply(fabric_file());
  ASSERT_EQ(wait_in_force(revision).exit_code, 0);
  const CommandResult set =
      switches_[1]->asnctl({"fabric", "set", "-N", "64", "-k", "4", "-r", "7"});
  EXPECT_EQ(set.exit_code, 1);
  EXPECT_NE(
      set.err.find(fmt::format("set by fabric 'lab' (switch s01, etcd revision {})", revision)),
      std::string::npos)
      << set.err;
  const CommandResult routing = switches_[1]->asnctl({"routing", "set", "--mode", "minimal"});
  EXPECT_EQ(routing.exit_code, 1) << routing.all();
  // A call that changes nothing is no contradiction.
  const CommandResult same =
      switches_[1]->asnctl({"fabric", "set", "-N", "64", "-k", "4", "-r", "1"});
  EXPECT_EQ(same.exit_code, 0) << same.all();
  EXPECT_EQ(fabric_revision_of(1), 1u);

  // Taken out of the fabric (its part deleted), the switch is the operator's again. The apply
  // goes through a context file named by ASN_FABRIC, as an operator's profile would have it.
  write_file(dir_.file("context.yaml"),
             fmt::format("endpoints: '{}'\nprefix: /asn\n", etcd_.endpoints()));
  write_file(dir_.file("one.yaml"), fabric_file().substr(0, fabric_file().rfind("  - {name: s01")));
  const CommandResult shrink =
      run_command({"/usr/bin/env", "ASN_FABRIC=" + dir_.file("context.yaml"), ASNCTL_PATH, "fabric",
                   "apply", dir_.file("one.yaml")});
  ASSERT_EQ(shrink.exit_code, 0) << shrink.all();
  EXPECT_NE(shrink.out.find("- /asn/fabrics/lab/switches/s01/desired"), std::string::npos)
      << shrink.out;
  ASSERT_TRUE(wait_until(
      [&] {
        return switches_[1]
                   ->asnctl({"fabric", "set", "-N", "64", "-k", "4", "-r", "7"})
                   .exit_code == 0;
      },
      30s))
      << switches_[1]->asnctl({"status"}).out;
}

TEST_F(FabricEtcdTest, BadFabricFilesAndStrangeStoresWriteNothing) {
  start_switches(2);
  const std::string bad = dir_.file("bad.yaml");
  write_file(bad, fabric_file("{mode: aldfb, enable: true}", 1, "router: 0"));  // s00 has 0
  const CommandResult r = fabric({"apply", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("router"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was written to etcd"), std::string::npos) << r.err;
  // Nothing of the file reached etcd: its members report, and the fabric gives them no part.
  const CommandResult none = fabric({"status", "lab"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("0 of 2 switches in force"), std::string::npos) << none.all();
  EXPECT_NE(squeezed(none.out).find("s01 - - - - ok 1 not in fabric"), std::string::npos)
      << none.all();
  const CommandResult unknown = fabric({"status", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("etcd has no fabric 'nosuch'"), std::string::npos) << unknown.all();

  // A switch the fabric does not name says so in its status, and in the fabric's.
  TempDir ghost_dir;
  AsndProcess ghost(ghost_dir, unique_name("fab"));
  ASSERT_TRUE(ghost.start({}, member_config("ghost"))) << ghost.log();
  apply(fabric_file());
  ASSERT_TRUE(wait_until(
      [&] {
        const CommandResult status = fabric({"status", "lab"});
        return status.exit_code == 1 &&
               status.out.find("2 of 3 switches in force") != std::string::npos;
      },
      30s))
      << fabric({"status", "lab"}).out;
  const std::string status = squeezed(fabric({"status", "lab"}).out);
  EXPECT_NE(status.find("ghost - - - - ok 1 not in fabric: the fabric has no such switch"),
            std::string::npos)
      << status;
  EXPECT_NE(ghost.asnctl({"status"}).out.find("not-in-fabric lab/ghost"), std::string::npos);

  // An endpoint that is an asnd, not etcd.
  const int port = free_tcp_port();
  TempDir other;
  AsndProcess not_etcd(other, unique_name("fab"));
  ASSERT_TRUE(not_etcd.start({"--tcp", fmt::format("127.0.0.1:{}", port)}));
  const CommandResult wrong = run_command(
      {ASNCTL_PATH, "fabric", "status", "lab", "--etcd", fmt::format("127.0.0.1:{}", port)});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.all();
  EXPECT_NE(wrong.err.find("does not serve etcd's v3 API"), std::string::npos) << wrong.err;
  // No etcd named at all: a usage error before anything is contacted.
  const CommandResult nowhere = run_command({ASNCTL_PATH, "fabric", "status"});
  EXPECT_EQ(nowhere.exit_code, 2) << nowhere.all();
}

}  // namespace
}  // namespace asn::test

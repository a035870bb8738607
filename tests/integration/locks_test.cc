// File locks end to end, as an operator tries them: the real asnctl takes a lock from the real
// asnd and holds it while another asnctl is refused and `locks list` shows it with its owner
// and fencing token; a waiting `lock acquire` is granted when the holder lets go; a lock held
// while asnd is killed with SIGKILL is still held after the restart, and the session that
// holds it re-attaches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

class LocksTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("locks")};

  void SetUp() override { start(); }

  void start() {
    ASSERT_TRUE(asnd_.start({}, "locks:\n  grace_period: 3s\n"))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }

  // `lock acquire` in the background.
  std::future<CommandResult> acquire(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"lock", "acquire"};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::async(std::launch::async, [this, argv] { return asnd_.asnctl(argv); });
  }

  // Waits until `locks list` shows `text`.
  bool listed(const std::string& text, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {"locks", "list"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (int i = 0; i < 200; ++i) {
      if (asnd_.asnctl(argv).out.find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

TEST_F(LocksTest, AHeldLockIsListedAndRefusesOthersUntilReleased) {
  auto holder = acquire({"/data/file-1", "0:4096", "4K:4K", "--hold", "3"});
  ASSERT_TRUE(listed("/data/file-1"));
  const auto list = asnd_.asnctl({"locks", "list"});
  EXPECT_THAT(squeezed(list.out), HasSubstr("/data/file-1 [0, 4096) exclusive"));
  EXPECT_THAT(squeezed(list.out), HasSubstr("[4096, 8192) exclusive"));

  const auto refused = asnd_.asnctl({"lock", "acquire", "/data/file-1", "100:1", "--try"});
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_THAT(refused.err, HasSubstr("FAILED_PRECONDITION"));

  const auto json = asnd_.asnctl({"-o", "json", "locks", "stats"});
  EXPECT_EQ(json_number(json.out, "sessions"), 1u) << json.out;

  const auto held = holder.get();
  ASSERT_EQ(held.exit_code, 0) << held.all();
  EXPECT_THAT(held.out, HasSubstr("fencing token"));
  EXPECT_THAT(held.out, HasSubstr("released"));
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("no locks are held"));
}

TEST_F(LocksTest, AWaitingAcquireIsGrantedWhenTheHolderLetsGo) {
  auto holder = acquire({"f", "0:10", "--hold", "1.5"});
  ASSERT_TRUE(listed("f"));
  const auto waited = asnd_.asnctl(
      {"-o", "json", "lock", "acquire", "f", "5:10", "--shared", "--wait", "20", "--hold", "0.1"});
  ASSERT_EQ(waited.exit_code, 0) << waited.all();
  // The emulated board has the lock engine: first-fit places the file in the switch.
  EXPECT_EQ(json_string(waited.out, "domain"), "switch");
  EXPECT_THAT(waited.out, HasSubstr("\"waited\": true"));
  ASSERT_EQ(holder.get().exit_code, 0);
}

TEST_F(LocksTest, BadRangesAreUsageErrors) {
  const auto bad = asnd_.asnctl({"lock", "acquire", "f", "10"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("OFFSET:LENGTH"));
  const auto empty = asnd_.asnctl({"lock", "acquire", "f", "0:0", "--try"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("INVALID_ARGUMENT"));
}

TEST_F(LocksTest, ALockHeldAcrossAKillDashNineIsStillHeldAndItsSessionReattaches) {
  // A lease of 3 s: asnctl renews it every second while it holds.
  auto holder = acquire({"survivor", "0:100", "--hold", "10", "--ttl", "3"});
  ASSERT_TRUE(listed("survivor"));
  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  start();
  ASSERT_TRUE(listed("survivor"));
  const auto refused = asnd_.asnctl({"lock", "acquire", "survivor", "0:1", "--try"});
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  // Past the grace period of 3 s the lock is still held: the holder's keepalive re-attached
  // its session (one that does not come back is expired then).
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("survivor"));
  EXPECT_THAT(asnd_.log(), HasSubstr("re-attached"));
  const auto held = holder.get();
  EXPECT_EQ(held.exit_code, 0) << held.all();
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("no locks are held"));
}

}  // namespace
}  // namespace asn::test

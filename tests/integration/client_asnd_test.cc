// libasnclient against the real asnd (issue 9, part 6): a session with a scoped lock and its
// fencing token, a conflict seen by another session, a waiting lock granted when the guard
// lets go, and a session that holds a lock while asnd is killed with SIGKILL: the library
// reconnects, re-attaches the session within the grace period, and the lock is still held.
// The test links the client library and no generated gRPC code of its own (one process must
// not hold two copies of it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "asn/client/locks.hpp"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
namespace client = asn::client;

class ClientAsndTest : public ::testing::Test {
 protected:
  void SetUp() override { start(); }
  void start() {
    ASSERT_TRUE(asnd_.start({}, "locks:\n  grace_period: 5s\n"))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }
  client::LockClient connect() {
    client::ClientOptions options;
    options.initial_backoff = 50ms;
    options.max_backoff = 200ms;
    return client::LockClient("unix:" + asnd_.socket(), options);
  }

  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("client")};
};

TEST_F(ClientAsndTest, AGuardHoldsTheLockAndAnotherSessionWaitsForIt) {
  auto lib = connect();
  auto writer = lib.open_session(10s, "writer");
  auto reader = lib.open_session(10s, "reader");
  std::future<client::Grant> waited;
  uint64_t token = 0;
  {
    client::LockGuard guard(writer, "/data/x", {0, 4096}, client::Mode::kExclusive, 5s);
    token = guard.token();
    EXPECT_GT(token, 0u);
    EXPECT_THROW(reader.try_lock("/data/x", {100, 10}, client::Mode::kShared), client::Conflict);
    EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("/data/x"));
    waited = std::async(std::launch::async, [&] {
      return reader.lock("/data/x", {100, 10}, client::Mode::kShared, 10s);
    });
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(waited.wait_for(0s), std::future_status::timeout);
  }  // the guard unlocks
  const client::Grant grant = waited.get();
  EXPECT_TRUE(grant.waited);
  EXPECT_GT(grant.token, token);
}

TEST_F(ClientAsndTest, ASessionHoldingALockComesBackAfterAsndIsKilled) {
  auto lib = connect();
  auto holder = lib.open_session(3s, "holder");
  auto other = lib.open_session(30s, "other");
  client::LockGuard guard(holder, "/data/kept", {0, 100}, client::Mode::kExclusive, 5s);

  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(20ms);
  start();
  // Within the grace period the library re-attaches the session by itself.
  EXPECT_TRUE(test::wait_until([&] { return holder.reattach_count() >= 1; }));
  EXPECT_FALSE(holder.lost());
  // Past the grace period the lock is still held, the other session still refused.
  std::this_thread::sleep_for(5500ms);
  EXPECT_FALSE(holder.lost());
  EXPECT_THROW(other.try_lock("/data/kept", {0, 1}, client::Mode::kShared), client::Conflict);
  guard.unlock();
  const auto grant = other.try_lock("/data/kept", {0, 1}, client::Mode::kShared);
  EXPECT_GT(grant.token, guard.token());
}

// A board reset empties the switch's lock table. The holder's session lives on and takes its
// locks back by itself (new, higher tokens) before anyone else may have those bytes; a
// blocking lock of another client waits the loss grace out.
TEST_F(ClientAsndTest, ABoardResetIsOutlivedByTheHoldersLocks) {
  auto lib = connect();
  auto holder = lib.open_session(3s, "holder");
  std::atomic<int> told{0};
  client::LocksLost report;
  holder.on_locks_lost([&](const client::LocksLost& lost) {
    report = lost;
    ++told;
  });
  const auto exclusive = holder.try_lock("/data/reset", {0, 10}, client::Mode::kExclusive);
  holder.unlock("/data/reset", {5, 5});
  const auto shared = holder.try_lock("/data/reset2", {0, 10}, client::Mode::kShared);
  ASSERT_EQ(exclusive.domain, "switch");
  auto other = lib.open_session(3s, "other");
  const auto reset = asnd_.asnctl({"board", "reset", "--yes"});
  ASSERT_EQ(reset.exit_code, 0) << reset.all();
  // The holder's next call learns of the loss (before its KeepAlive would have): the
  // library reclaims, tells the application, and makes the call again.
  EXPECT_NO_THROW(holder.try_lock("/data/elsewhere", {0, 1}, client::Mode::kExclusive));
  EXPECT_EQ(told.load(), 1);
  // A blocking shared lock on the holder's shared bytes waits out the grace, then shares.
  auto reader = std::async(std::launch::async, [&] {
    return other.lock("/data/reset2", {0, 10}, client::Mode::kShared, 20s);
  });
  // The holder's exclusive bytes are never granted to `other`: withheld (while a session that
  // lost locks has not reclaimed yet), then held again.
  int withheld = 0;
  bool conflict = false;
  for (int i = 0; i < 200 && !conflict; ++i) {
    try {
      other.try_lock("/data/reset", {0, 5}, client::Mode::kExclusive);
      ADD_FAILURE() << "granted the holder's bytes after a board reset";
      break;
    } catch (const client::Conflict&) {
      conflict = true;
    } catch (const client::Error& e) {
      EXPECT_EQ(e.code(), client::StatusCode::kUnavailable) << e.what();
      ++withheld;
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_TRUE(conflict) << withheld << " times withheld";
  EXPECT_EQ(told.load(), 1);
  EXPECT_EQ(report.reclaimed, 2u);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(holder.locks_lost_count(), 1u);
  EXPECT_FALSE(holder.lost());
  const auto read = reader.get();
  EXPECT_GT(read.token, shared.token);
  // The bytes the holder had unlocked before the reset are free; the reclaimed ones are the
  // holder's to unlock.
  EXPECT_NO_THROW(other.try_lock("/data/reset", {5, 5}, client::Mode::kExclusive));
  EXPECT_NO_THROW(holder.unlock("/data/reset", {0, 5}));
  EXPECT_NO_THROW(other.try_lock("/data/reset", {0, 5}, client::Mode::kExclusive));
  EXPECT_THAT(asnd_.log(), HasSubstr("the loss grace ended"));
}

}  // namespace
}  // namespace asn::test

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
  for (int i = 0; i < 100 && holder.reattach_count() == 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_GE(holder.reattach_count(), 1u);
  EXPECT_FALSE(holder.lost());
  // Past the grace period the lock is still held, the other session still refused.
  std::this_thread::sleep_for(5500ms);
  EXPECT_FALSE(holder.lost());
  EXPECT_THROW(other.try_lock("/data/kept", {0, 1}, client::Mode::kShared), client::Conflict);
  guard.unlock();
  const auto grant = other.try_lock("/data/kept", {0, 1}, client::Mode::kShared);
  EXPECT_GT(grant.token, guard.token());
}

// A board reset empties the switch's lock table. The holder's session lives on; the library
// tells the application at its next KeepAlive that the locks are gone and then gives them
// up, and only from then on may another client be granted those bytes.
TEST_F(ClientAsndTest, ABoardResetTellsTheHolderBeforeAnyoneElseGetsItsBytes) {
  auto lib = connect();
  auto holder = lib.open_session(3s, "holder");
  std::atomic<bool> told{false};
  holder.on_locks_lost([&] { told = true; });
  auto grant = holder.try_lock("/data/reset", {0, 10}, client::Mode::kExclusive);
  EXPECT_GT(grant.token, 0u);
  auto other = lib.open_session(3s, "other");
  const auto reset = asnd_.asnctl({"board", "reset", "--yes"});
  ASSERT_EQ(reset.exit_code, 0) << reset.all();
  // Until the holder heard of it, the bytes are withheld (UNAVAILABLE, a retry hint).
  bool granted = false;
  bool granted_before_told = false;
  int withheld = 0;
  for (int i = 0; i < 200 && !granted; ++i) {
    const bool told_before = told.load();
    try {
      other.try_lock("/data/reset", {0, 10}, client::Mode::kExclusive);
      granted = true;
      granted_before_told = !told_before;
    } catch (const client::Error& e) {
      EXPECT_EQ(e.code(), client::StatusCode::kUnavailable) << e.what();
      ++withheld;
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_TRUE(granted);
  EXPECT_FALSE(granted_before_told);
  EXPECT_GT(withheld, 0);
  EXPECT_TRUE(told.load());
  EXPECT_FALSE(holder.lost());
  EXPECT_EQ(holder.locks_lost_count(), 1u);
  // The holder's session goes on: its lost bytes are not its own any more, others are.
  EXPECT_THROW(holder.try_lock("/data/reset", {0, 10}, client::Mode::kExclusive),
               client::Conflict);
  EXPECT_NO_THROW(holder.try_lock("/data/reset", {20, 10}, client::Mode::kExclusive));
  const auto log = asnd_.log();
  EXPECT_THAT(log, HasSubstr("the loss grace ended"));
}

}  // namespace
}  // namespace asn::test

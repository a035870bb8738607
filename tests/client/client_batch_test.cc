// libasnclient in batch mode (ClientOptions::batch) against the real Locks service in process
// (tests/support/lock_stack.hpp on a Unix socket): the sessions' ops go through one Batch
// stream, with the results and exceptions of the unary calls; many threads at once; the
// stream opened again after asnd restarted.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "asn/client/locks.hpp"
#include "real_locks_test.hpp"
#include "support.hpp"

namespace asn::client {
namespace {

using namespace std::chrono_literals;

class ClientBatchTest : public test::RealLocksTest {
 protected:
  ClientBatchTest() : RealLocksTest(/*batch=*/true) {}
};

TEST_F(ClientBatchTest, OpsGiveTheResultsAndExceptionsOfTheUnaryCalls) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  Session b = lc.open_session(30s, "b");
  const Grant first = a.lock("f", {0, 100}, Mode::kExclusive);
  EXPECT_GT(first.token, 0u);
  ASSERT_EQ(first.ranges.size(), 1u);
  EXPECT_EQ(first.ranges[0], (ByteRange{0, 100}));
  EXPECT_EQ(held("f"), 1u);
  EXPECT_THROW(b.try_lock("f", {50, 10}, Mode::kShared), Conflict);
  try {
    b.lock("f", {50, 10}, Mode::kExclusive, 100ms);
    ADD_FAILURE() << "the lock was granted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kDeadlineExceeded) << e.what();
  }
  a.downgrade("f", {0, 100});
  EXPECT_GT(b.try_lock("f", {50, 10}, Mode::kShared).token, first.token);
  EXPECT_EQ(a.unlock("f", {0, 100}).released, 1u);
  try {
    a.unlock("f", {0, 100});  // a double unlock: the call's error, the session is fine
    ADD_FAILURE() << "the double unlock passed";
  } catch (const SessionLost& e) {
    ADD_FAILURE() << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kFailedPrecondition);
  }
  EXPECT_FALSE(a.lost());
  try {
    a.lock("f", {0, 0}, Mode::kExclusive);
    ADD_FAILURE() << "an empty range was granted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  }
  // asnd ends the session: the next op says the session is lost.
  stack_->manager().close_session(a.id());
  EXPECT_THROW(a.lock("g", {0, 1}, Mode::kExclusive), SessionLost);
  EXPECT_TRUE(a.lost());
}

TEST_F(ClientBatchTest, AWaitingLockIsGrantedWhenTheHolderUnlocks) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  Session b = lc.open_session(30s, "b");
  const Grant first = a.lock("f", {0, 10}, Mode::kExclusive);
  std::atomic<bool> granted{false};
  Grant second;
  std::thread waiter([&] {
    second = b.lock("f", {0, 10}, Mode::kExclusive, 10s);
    granted = true;
  });
  test::wait_until([&] { return stack_->manager().stats().waiting_calls > 0; });
  EXPECT_FALSE(granted);
  a.unlock("f", {0, 10});
  waiter.join();
  EXPECT_TRUE(second.waited);
  EXPECT_GT(second.token, first.token);
}

TEST_F(ClientBatchTest, ManyThreadsLockAndUnlockThroughOneStream) {
  auto lc = client();
  constexpr int kThreads = 8, kRounds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> pairs{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session s = lc.open_session(30s, "t" + std::to_string(t));
      const std::string file = "own-" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        s.lock(file, {0, 4096}, Mode::kExclusive);
        s.unlock(file, {0, 4096});
        ++pairs;
      }
      // And one range all of them share, taken in turn.
      LockGuard guard(s, "shared", {0, 1}, Mode::kExclusive, 10s);
      EXPECT_EQ(held("shared"), 1u);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(pairs, kThreads * kRounds);
  EXPECT_EQ(held("shared"), 0u);
}

TEST_F(ClientBatchTest, TheStreamIsOpenedAgainAfterAsndRestarts) {
  auto lc = client();
  Session s = lc.open_session(30s, "s");
  const Grant before = s.lock("f", {0, 10}, Mode::kExclusive);
  stack_.reset();
  start();
  // The first op may still meet the old stream's end (UNAVAILABLE); a later one re-opens it.
  const bool unlocked = test::wait_until([&] {
    try {
      s.unlock("f", {0, 10});
      return true;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), StatusCode::kUnavailable) << e.what();
      return false;
    }
  });
  ASSERT_TRUE(unlocked);
  EXPECT_GT(s.lock("f", {0, 10}, Mode::kExclusive).token, before.token);
}

}  // namespace
}  // namespace asn::client

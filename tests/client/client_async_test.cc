// libasnclient's asynchronous calls (Session::lock_async, ...) against the real Locks service
// in process (tests/support/lock_stack.hpp on a Unix socket): the results and exceptions of
// the blocking calls, delivered to callbacks; waits, deadlines; calls chained from callbacks,
// many sessions at once; a blocking call refused inside a callback; closed sessions and an
// asnd that went away.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "asn/client/locks.hpp"
#include "client_errors.hpp"
#include "real_locks_test.hpp"
#include "support.hpp"

namespace asn::client {
namespace {

using namespace std::chrono_literals;

// A callback and the Result it was called with.
template <class T>
class Await {
 public:
  std::function<void(Result<T>)> callback() {
    return [this](Result<T> result) { promise_.set_value(std::move(result)); };
  }
  bool ready(std::chrono::milliseconds within = 0ms) {
    return future_.wait_for(within) == std::future_status::ready;
  }
  Result<T> get() {
    if (!ready(test::scaled(30s))) throw std::runtime_error("no callback within 30 s (scaled)");
    return future_.get();
  }
  // The code of the Error the call failed with (kOk when it did not fail).
  StatusCode code() {
    Result<T> result = get();
    return result.ok() ? StatusCode::kOk : test::code_of(result.error());
  }

 private:
  std::promise<Result<T>> promise_;
  std::future<Result<T>> future_ = promise_.get_future();
};

using test::what_of;

// Without ClientOptions::batch: the asynchronous calls use the stream anyway.
using ClientAsyncTest = test::RealLocksTest;

TEST_F(ClientAsyncTest, CallsGiveTheResultsAndExceptionsOfTheBlockingOnes) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  Session b = lc.open_session(30s, "b");
  Await<Grant> lock;
  a.lock_async("f", {0, 100}, Mode::kExclusive, Deadline::never(), lock.callback());
  const Grant first = lock.get().value();
  EXPECT_GT(first.token, 0u);
  ASSERT_EQ(first.ranges.size(), 1u);
  EXPECT_EQ(first.ranges[0], (ByteRange{0, 100}));
  EXPECT_EQ(first.domain, "software");
  EXPECT_EQ(held("f"), 1u);

  Await<Grant> conflict;
  b.try_lock_async("f", {50, 10}, Mode::kShared, conflict.callback());
  EXPECT_THROW(conflict.get().value(), Conflict);

  Await<UnlockResult> downgrade;
  a.downgrade_async("f", {0, 100}, downgrade.callback());
  EXPECT_TRUE(downgrade.get().ok());
  Await<Grant> shared;
  b.try_lock_async("f", {50, 10}, Mode::kShared, shared.callback());
  EXPECT_GT(shared.get().value().token, first.token);

  Await<UnlockResult> unlock, twice;
  a.unlock_async("f", {0, 100}, unlock.callback());
  EXPECT_EQ(unlock.get().value().released, 1u);
  a.unlock_async("f", {0, 100}, twice.callback());  // a double unlock: the call's error
  const Result<UnlockResult> double_unlock = twice.get();
  ASSERT_FALSE(double_unlock.ok());
  try {
    std::rethrow_exception(double_unlock.error());
  } catch (const SessionLost& e) {
    ADD_FAILURE() << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kFailedPrecondition) << e.what();
  }
  EXPECT_FALSE(a.lost());

  Await<Grant> empty;
  a.lock_async("f", {0, 0}, Mode::kExclusive, Deadline::never(), empty.callback());
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
}

TEST_F(ClientAsyncTest, AWaitingLockIsGrantedByTheHoldersUnlockOrEndsAtItsDeadline) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  Session b = lc.open_session(30s, "b");
  const Grant held_by_a = a.lock("f", {0, 100}, Mode::kExclusive);

  Await<Grant> timed;
  b.lock_async("f", {10, 10}, Mode::kExclusive, 100ms, timed.callback());
  EXPECT_EQ(timed.code(), StatusCode::kDeadlineExceeded);

  Await<Grant> waiting;
  b.lock_async("f", {10, 10}, Mode::kExclusive, Deadline::never(), waiting.callback());
  EXPECT_FALSE(waiting.ready(200ms)) << "granted while a held the range";
  a.unlock("f", {0, 100});
  const Grant granted = waiting.get().value();
  EXPECT_TRUE(granted.waited);
  EXPECT_GT(granted.token, held_by_a.token);
}

// What BM_LockUnlockAsync does: sessions whose calls are made by the callbacks of the ones
// before; and a blocking call in a callback, refused instead of waiting for itself.
TEST_F(ClientAsyncTest, CallbacksChainCallsAndRefuseBlockingOnes) {
  auto lc = client();
  constexpr int kSessions = 16, kPairs = 100;
  struct Chain {
    Session session;
    std::string file;
    int left = kPairs;
    std::function<void(bool)> finished;
    void next() {
      if (left-- == 0) return finished(true);
      session.lock_async(file, {0, 10}, Mode::kExclusive, 5s, [this](const Result<Grant>& g) {
        if (!g.ok()) return finished(false);
        session.unlock_async(file, {0, 10}, [this](const Result<UnlockResult>& u) {
          if (!u.ok() || u.value().released != 1) return finished(false);
          next();
        });
      });
    }
  };
  std::mutex mutex;
  std::condition_variable all_done;
  int running = kSessions, failed = 0;
  std::vector<std::unique_ptr<Chain>> chains;
  for (int i = 0; i < kSessions; ++i) {
    chains.push_back(std::make_unique<Chain>(
        Chain{lc.open_session(30s, "chain"), "chain-" + std::to_string(i % 4), kPairs, {}}));
    chains.back()->finished = [&](bool ok) {
      std::lock_guard lock(mutex);
      if (!ok) ++failed;
      if (--running == 0) all_done.notify_one();
    };
  }
  for (auto& chain : chains) chain->next();  // 4 sessions on each file: they also wait
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(all_done.wait_for(lock, test::scaled(60s), [&] { return running == 0; }));
  }
  EXPECT_EQ(failed, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(held("chain-" + std::to_string(i)), 0u);

  // In batch mode a blocking call is an op of the stream, which sends nothing while a
  // callback runs: it would wait for itself.
  ClientOptions options;
  options.batch = true;
  LockClient batched(dir_.file("locks.sock"), options);
  Session a = batched.open_session(30s, "a");
  std::promise<StatusCode> refused;
  a.lock_async("g", {0, 10}, Mode::kExclusive, Deadline::never(), [&](const Result<Grant>&) {
    try {
      a.try_lock("g", {100, 10}, Mode::kExclusive);
      refused.set_value(StatusCode::kOk);
    } catch (const Conflict& e) {
      ADD_FAILURE() << "not a conflict: " << e.what();
      refused.set_value(StatusCode::kAborted);
    } catch (const Error& e) {
      refused.set_value(e.code());
    }
  });
  auto code = refused.get_future();
  ASSERT_EQ(code.wait_for(test::scaled(30s)), std::future_status::ready);
  EXPECT_EQ(code.get(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(held("g"), 1u);  // the lock_async itself was granted
}

// Big requests at once: 3 sessions each lock 65,536 ranges (the most a request may have,
// about 0.9 MB each way) from one callback. Together they would not fit one message of the
// stream (this asnd takes 2.5 MiB, for speed; a real one 8 MiB, and a gRPC channel 4 MiB
// by default): they go, and their grants come back, in several messages; each is granted,
// and the stream goes on.
TEST_F(ClientAsyncTest, RequestsTooBigForOneMessageTogetherAreAllGranted) {
  start(5 << 19);
  constexpr int kSessions = 3;
  constexpr std::uint64_t kRanges = 65536;
  std::vector<ByteRange> ranges;
  for (std::uint64_t r = 0; r < kRanges; ++r) ranges.push_back({r * 1'000'000'000, 999'999});
  auto lc = client();
  std::vector<Session> sessions;
  std::vector<std::unique_ptr<Await<Grant>>> grants;
  for (int i = 0; i < kSessions; ++i) {
    sessions.push_back(lc.open_session(30s, "big " + std::to_string(i)));
    grants.push_back(std::make_unique<Await<Grant>>());
  }
  // Submitted from one callback, so that they leave together.
  Await<Grant> first;
  sessions[0].lock_async("first", {0, 10}, Mode::kExclusive, 5s, [&](Result<Grant> grant) {
    for (int i = 0; i < kSessions; ++i) {
      sessions[i].lock_async("big-" + std::to_string(i), ranges, Mode::kExclusive, 30s,
                             grants[i]->callback());
    }
    first.callback()(std::move(grant));
  });
  ASSERT_TRUE(first.get().ok());
  for (int i = 0; i < kSessions; ++i) {
    Result<Grant> grant = grants[i]->get();
    ASSERT_TRUE(grant.ok()) << i << ": " << what_of(grant.error());
    EXPECT_EQ(grant.value().ranges.size(), kRanges);
  }
  // A request larger than asnd takes in one message (a million ranges, about 14 MB) is
  // refused by the library, and only it: the stream goes on.
  std::vector<ByteRange> million;
  for (std::uint64_t r = 0; r < 1'000'000; ++r) million.push_back({r * 1'000'000'000, 999'999});
  Await<Grant> huge;
  sessions[1].lock_async("huge", million, Mode::kExclusive, 5s, huge.callback());
  Result<Grant> refused = huge.get();
  ASSERT_FALSE(refused.ok());
  const std::string why = what_of(refused.error());
  EXPECT_NE(why.find("INVALID_ARGUMENT"), std::string::npos) << why;
  EXPECT_NE(why.find("bytes in one message"), std::string::npos) << why;
  Await<Grant> small;
  sessions[0].lock_async("small", {0, 10}, Mode::kExclusive, 5s, small.callback());
  EXPECT_TRUE(small.get().ok());
}

TEST_F(ClientAsyncTest, AClosedSessionFailsAtOnceOnTheCallingThread) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  a.close();
  bool called = false;
  a.lock_async("f", {0, 10}, Mode::kExclusive, Deadline::never(), [&](const Result<Grant>& g) {
    called = true;
    EXPECT_FALSE(g.ok());
  });
  EXPECT_TRUE(called);  // before lock_async returned
  EXPECT_EQ(held("f"), 0u);
}

TEST_F(ClientAsyncTest, ClosingTheSessionEndsItsWaitingCall) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  a.lock("f", {0, 100}, Mode::kExclusive);
  Await<Grant> waiting;
  {
    auto other = client();
    Session b = other.open_session(30s, "b");
    b.lock_async("f", {0, 10}, Mode::kExclusive, Deadline::never(), waiting.callback());
    EXPECT_FALSE(waiting.ready(100ms));
  }  // b closed, its LockClient gone
  EXPECT_FALSE(waiting.get().ok());
  EXPECT_EQ(held("f"), 1u);
}

TEST_F(ClientAsyncTest, AnAsndThatWentAwayFailsTheCallsWithUnavailable) {
  auto lc = client();
  Session a = lc.open_session(30s, "a");
  Await<Grant> before;
  a.lock_async("f", {0, 10}, Mode::kExclusive, Deadline::never(), before.callback());
  ASSERT_TRUE(before.get().ok());  // the stream is open
  stack_.reset();
  Await<Grant> after;
  a.lock_async("f", {100, 10}, Mode::kExclusive, Deadline::never(), after.callback());
  EXPECT_EQ(after.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace asn::client

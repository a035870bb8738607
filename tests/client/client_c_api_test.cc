// libasnclient's C API as a C programmer uses it (issue 28, finding 14), against the real
// Locks service in process (real_locks_test.hpp): asn_status as the return type of every
// call that fails, ranges to the end of the file (ASN_TO_EOF, as fcntl's l_len = 0), lock
// handles (client_c_handle_check.c, compiled as C99), and asn_lock_cancel from another
// thread.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include "asn/client/asnclient.h"
#include "real_locks_test.hpp"
#include "support.hpp"

extern "C" int asn_client_c_handles(asn_session* a, asn_session* b, char* error,
                                    unsigned long error_len);

namespace asn::test {
namespace {

using namespace std::chrono_literals;

// Every call that returns a status returns the named enum (a C++ caller can switch on it
// with -Wswitch), and storing it in an int still compiles, as before.
static_assert(std::is_same_v<decltype(asn_client_open(nullptr, nullptr, nullptr, nullptr, nullptr)),
                             asn_status>);
static_assert(std::is_same_v<decltype(asn_session_open(nullptr, 0, nullptr, nullptr)), asn_status>);
static_assert(std::is_same_v<decltype(asn_session_close(nullptr)), asn_status>);
static_assert(
    std::is_same_v<decltype(asn_lock(nullptr, nullptr, 0, nullptr, 0, ASN_LOCK_SHARED, 0, nullptr)),
                   asn_status>);
static_assert(std::is_same_v<decltype(asn_lock_strided(nullptr, nullptr, 0, nullptr,
                                                       ASN_LOCK_SHARED, 0, nullptr)),
                             asn_status>);
static_assert(std::is_same_v<decltype(asn_try_lock(nullptr, nullptr, 0, nullptr, 0, ASN_LOCK_SHARED,
                                                   nullptr)),
                             asn_status>);
static_assert(std::is_same_v<decltype(asn_unlock(nullptr, nullptr, 0, nullptr, 0)), asn_status>);
static_assert(std::is_same_v<decltype(asn_downgrade(nullptr, nullptr, 0, nullptr, 0)), asn_status>);
static_assert(std::is_same_v<decltype(asn_lock_cancel(nullptr)), asn_status>);
static_assert(ASN_OK == 0 && ASN_CANCELLED == 1 && ASN_DEADLINE_EXCEEDED == 4 &&
              ASN_UNAVAILABLE == 14 && ASN_SESSION_LOST == 100 && ASN_CONFLICT == 101);

class ClientCApiTest : public RealLocksTest {
 protected:
  ClientCApiTest() {
    const std::string endpoint = dir_.file("locks.sock");
    EXPECT_EQ(asn_client_open(endpoint.c_str(), nullptr, nullptr, nullptr, &client_), ASN_OK)
        << asn_last_error();
    EXPECT_EQ(asn_session_open(client_, 30, "a", &a_), ASN_OK) << asn_last_error();
    EXPECT_EQ(asn_session_open(client_, 30, "b", &b_), ASN_OK) << asn_last_error();
  }
  ~ClientCApiTest() override {
    asn_session_close(a_);
    asn_session_close(b_);
    asn_client_close(client_);
  }

  asn_client* client_ = nullptr;
  asn_session* a_ = nullptr;
  asn_session* b_ = nullptr;
};

TEST_F(ClientCApiTest, AnIntStillTakesTheStatus) {
  asn_range range = {0, 10};
  int rc = asn_unlock(a_, "f", 1, &range, 1);  // nothing held
  EXPECT_EQ(rc, ASN_FAILED_PRECONDITION);
  EXPECT_STREQ(asn_strerror(rc), "FAILED_PRECONDITION");
}

TEST_F(ClientCApiTest, ToEofFromZeroIsTheWholeFileUpToTheLastByte) {
  const asn_range whole = {0, ASN_TO_EOF};
  const asn_range huge = {UINT64_MAX - 4096, 10};
  const asn_range last = {UINT64_MAX, 1};
  uint64_t token = 0;
  ASSERT_EQ(asn_lock(a_, "f", 1, &whole, 1, ASN_LOCK_EXCLUSIVE, 5000, &token), ASN_OK)
      << asn_last_error();
  EXPECT_GT(token, 0u);
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &huge, 1, ASN_LOCK_SHARED, nullptr), ASN_CONFLICT);
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &last, 1, ASN_LOCK_SHARED, nullptr), ASN_CONFLICT);
  EXPECT_EQ(asn_lock(b_, "f", 1, &huge, 1, ASN_LOCK_SHARED, 50, nullptr), ASN_DEADLINE_EXCEEDED);

  ASSERT_EQ(asn_unlock(a_, "f", 1, &whole, 1), ASN_OK) << asn_last_error();
  EXPECT_EQ(held("f"), 0u);
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &huge, 1, ASN_LOCK_EXCLUSIVE, nullptr), ASN_OK);
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &last, 1, ASN_LOCK_EXCLUSIVE, nullptr), ASN_OK);
}

TEST_F(ClientCApiTest, ToEofFromAnOffsetLeavesTheBytesBelowFreeAndDowngrades) {
  const asn_range tail = {1000, ASN_TO_EOF};
  const asn_range below = {0, 1000};
  const asn_range huge = {UINT64_MAX - 1, 2};
  ASSERT_EQ(asn_lock(a_, "f", 1, &tail, 1, ASN_LOCK_EXCLUSIVE, 5000, nullptr), ASN_OK)
      << asn_last_error();
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &below, 1, ASN_LOCK_EXCLUSIVE, nullptr), ASN_OK);
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &huge, 1, ASN_LOCK_SHARED, nullptr), ASN_CONFLICT);
  ASSERT_EQ(asn_downgrade(a_, "f", 1, &tail, 1), ASN_OK) << asn_last_error();
  EXPECT_EQ(asn_try_lock(b_, "f", 1, &huge, 1, ASN_LOCK_SHARED, nullptr), ASN_OK);
}

TEST_F(ClientCApiTest, HandlesRememberFileRangesAndTokenInC99) {
  char error[512] = "";
  EXPECT_EQ(asn_client_c_handles(a_, b_, error, sizeof error), 0) << error;
}

TEST_F(ClientCApiTest, AHandleOutlivesItsSession) {
  const asn_range range = {0, 10};
  asn_lock_handle* handle = nullptr;
  ASSERT_EQ(asn_lock_acquire(a_, "f", 1, &range, 1, ASN_LOCK_EXCLUSIVE, 5000, &handle), ASN_OK);
  EXPECT_EQ(asn_session_close(a_), ASN_OK);
  a_ = nullptr;
  EXPECT_EQ(held("f"), 0u);                      // closing the session released it
  EXPECT_NE(asn_unlock_handle(handle), ASN_OK);  // and the handle says so
  asn_lock_handle_free(handle);
}

TEST_F(ClientCApiTest, CancelEndsAWaitingLockFromAnotherThreadAndLeavesNothing) {
  const asn_range range = {0, 10};
  ASSERT_EQ(asn_lock(a_, "f", 1, &range, 1, ASN_LOCK_EXCLUSIVE, 5000, nullptr), ASN_OK);
  std::atomic<int> waited{-1};
  std::thread waiter([&] {
    asn_lock_handle* handle = nullptr;
    waited = asn_lock_acquire(b_, "f", 1, &range, 1, ASN_LOCK_EXCLUSIVE, -1, &handle);
    asn_lock_handle_free(handle);
  });
  ASSERT_TRUE(wait_until([&] { return stack_->manager().stats().waiting_calls > 0; }));
  EXPECT_EQ(waited, -1);
  EXPECT_EQ(asn_lock_cancel(b_), ASN_OK);
  const bool returned = wait_until([&] { return waited != -1; }, 30s);
  if (!returned) asn_unlock(a_, "f", 1, &range, 1);  // let the waiter go before joining
  waiter.join();
  ASSERT_TRUE(returned);
  EXPECT_EQ(waited, ASN_CANCELLED);
  EXPECT_TRUE(wait_until([&] { return stack_->manager().stats().waiting_calls == 0; }));

  // Nothing of b's is left at asnd: once a unlocks, a third session gets the bytes at once.
  ASSERT_EQ(asn_unlock(a_, "f", 1, &range, 1), ASN_OK);
  asn_session* c = nullptr;
  ASSERT_EQ(asn_session_open(client_, 30, "c", &c), ASN_OK);
  EXPECT_EQ(asn_try_lock(c, "f", 1, &range, 1, ASN_LOCK_EXCLUSIVE, nullptr), ASN_OK)
      << asn_last_error();
  asn_session_close(c);

  // A lock that starts waiting after the cancel is not cancelled by it.
  ASSERT_EQ(asn_lock(a_, "f", 1, &range, 1, ASN_LOCK_EXCLUSIVE, 5000, nullptr), ASN_OK);
  EXPECT_EQ(asn_lock(b_, "f", 1, &range, 1, ASN_LOCK_SHARED, 100, nullptr), ASN_DEADLINE_EXCEEDED);
}

}  // namespace
}  // namespace asn::test

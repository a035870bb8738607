// The fixture of the Locks service tests (lock_service_test.cc, lock_ownership_test.cc): the
// service through a real gRPC server on a Unix socket, over a LockManager with the lock
// domains asnd gives it, per domain configuration (test::LockStack::Kind).
#pragma once

#include <fcntl.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "grpc_trailer.hpp"
#include "lock_stack.hpp"
#include "services/lock_service.hpp"
#include "status_assert.hpp"
#include "support.hpp"

namespace asn {

class LockServiceTest : public ::testing::TestWithParam<test::LockStack::Kind> {
 protected:
  void SetUp() override { start(); }
  // A test that stops with calls in flight (it failed, or never waited for them) cancels
  // them and awaits their callbacks, which run on gRPC's threads, before a Pending (context,
  // promise) is destroyed; without this a failed test raced its own teardown.
  void TearDown() override {
    for (auto& p : pending_) p->context.TryCancel();
    for (auto& p : pending_) {
      if (p->done.valid()) p->done.wait();
    }
  }

  void start(unsigned grace_s = 15) {
    config_.grace_period_s = grace_s;
    stack_ = std::make_unique<test::LockStack>(GetParam(), dir_.path(), config_, profile_);
    stub_ = v1::Locks::NewStub(stack_->channel());
  }
  void restart(unsigned grace_s) {
    stub_.reset();
    stack_.reset();
    start(grace_s);
  }

  // `seconds` times the time scale, rounded up: for a lease or grace a test outlives on
  // purpose, so that a slow machine cannot outlive it first (tests/README.md).
  static uint32_t scaled_s(uint32_t seconds) {
    return static_cast<uint32_t>(std::ceil(seconds * test::time_scale()));
  }

  uint64_t open(uint32_t ttl = 30, const std::string& name = "test") {
    grpc::ClientContext context;
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(ttl);
    request.set_name(name);
    v1::OpenSessionResponse response;
    const grpc::Status status = stub_->OpenSession(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.session();
  }

  static v1::LockRequest request(uint64_t session, const std::string& file, uint64_t offset,
                                 uint64_t length, bool exclusive = true) {
    v1::LockRequest r;
    r.set_session(session);
    r.set_file(file);
    r.set_mode(exclusive ? v1::LOCK_MODE_EXCLUSIVE : v1::LOCK_MODE_SHARED);
    auto* range = r.add_ranges();
    range->set_offset(offset);
    range->set_length(length);
    return r;
  }

  grpc::Status try_lock(const v1::LockRequest& r, v1::LockResponse* out = nullptr) {
    grpc::ClientContext context;
    v1::LockResponse response;
    const grpc::Status status = stub_->TryLock(&context, r, &response);
    if (out) *out = response;
    return status;
  }

  grpc::Status unlock(uint64_t session, const std::string& file, uint64_t offset, uint64_t length) {
    grpc::ClientContext context;
    v1::UnlockRequest r;
    r.set_session(session);
    r.set_file(file);
    auto* range = r.add_ranges();
    range->set_offset(offset);
    range->set_length(length);
    v1::UnlockResponse response;
    return stub_->Unlock(&context, r, &response);
  }

  // A Lock call in flight.
  struct Pending {
    grpc::ClientContext context;
    v1::LockRequest request;
    v1::LockResponse response;
    std::promise<grpc::Status> promise;
    std::future<grpc::Status> done = promise.get_future();
  };

  // `timeout`: the call's deadline, which asnd keeps as the wait's; the default is a backstop
  // for a wait the test ends otherwise (scaled, tests/README.md).
  std::shared_ptr<Pending> lock_async(
      const v1::LockRequest& r,
      std::chrono::milliseconds timeout = test::scaled(std::chrono::seconds(60))) {
    auto p = std::make_shared<Pending>();
    pending_.push_back(p);
    p->request = r;
    p->context.set_deadline(std::chrono::system_clock::now() + timeout);
    Pending* raw = p.get();
    stub_->async()->Lock(&p->context, &p->request, &p->response,
                         [raw](grpc::Status s) { raw->promise.set_value(std::move(s)); });
    return p;
  }

  // Whether the call ends within `within` (scaled).
  static bool finishes(Pending& p, std::chrono::milliseconds within) {
    return p.done.wait_for(test::scaled(within)) == std::future_status::ready;
  }

  // `held`: the tokens of the grants the session holds (KeepAliveRequest.held), if given.
  v1::KeepAliveResponse keep_alive(uint64_t session, bool reclaim_complete = false,
                                   const std::optional<std::vector<uint64_t>>& held = {}) {
    grpc::ClientContext context;
    v1::KeepAliveRequest r;
    r.set_session(session);
    r.set_reclaim_complete(reclaim_complete);
    if (held) {
      auto* named = r.mutable_held();
      for (const uint64_t token : *held) named->add_tokens(token);
    }
    v1::KeepAliveResponse response;
    const grpc::Status status = stub_->KeepAlive(&context, r, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::GetLockStatsResponse stats() {
    grpc::ClientContext context;
    v1::GetLockStatsResponse response;
    EXPECT_TRUE(stub_->GetLockStats(&context, {}, &response).ok());
    return response;
  }

  v1::ListLocksResponse list(const std::string& file = "") {
    grpc::ClientContext context;
    v1::ListLocksRequest r;
    r.set_file(file);
    v1::ListLocksResponse response;
    EXPECT_TRUE(stub_->ListLocks(&context, r, &response).ok());
    return response;
  }

  // Waits until asnd has `n` Lock calls waiting.
  void wait_for_waiting(uint64_t n) {
    test::wait_until([&] { return stats().waiting_calls() == n; });
    ASSERT_EQ(stats().waiting_calls(), n);
  }

  test::TempDir dir_;
  std::vector<std::shared_ptr<Pending>> pending_;  // destroyed after the stack
  std::string profile_ = "emulated-64port";
  LocksConfig config_;
  std::unique_ptr<test::LockStack> stack_;
  std::unique_ptr<v1::Locks::Stub> stub_;
};

// The reason a call failed (trailing metadata asn-lock-reason), "<none>" without one.
inline std::string reason_of(const grpc::ClientContext& context) {
  return test::trailer(context, "asn-lock-reason", "<none>");
}

}  // namespace asn

// The fixture of the Locks service tests against other callers (lock_ownership_test.cc,
// lock_quota_test.cc): the listeners of another uid, of a plain-TCP caller and of the admin
// role, on the same LockManager as the test's own.
#pragma once

#include <memory>
#include <string>

#include "lock_service_fixture.hpp"

namespace asn {

#define EXPECT_OK(call)                                   \
  do {                                                    \
    const grpc::Status status_ = (call);                  \
    EXPECT_TRUE(status_.ok()) << status_.error_message(); \
  } while (0)

// Listeners of other callers on the same manager: another uid on the Unix socket, a plain-TCP
// caller (no principal: only a session's secret says who it is), and the admin role.
class LockOwnershipTest : public LockServiceTest {
 protected:
  void SetUp() override {
    LockServiceTest::SetUp();
    serve_others();
  }
  void serve_others() {
    other_uid_ = v1::Locks::NewStub(stack_->serve(
        "uid1001.sock",
        {"other uid", Role::kLockClient, "", [](const std::string&) { return "uid 1001 (eve)"; },
         [](const std::string&) { return std::string("uid 1001"); }}));
    tcp_ = v1::Locks::NewStub(
        stack_->serve("tcp.sock", {"plain tcp",
                                   Role::kLockClient,
                                   "",
                                   [](const std::string&) { return "10.0.0.9:4711 on tcp"; },
                                   {}}));
    admin_ = v1::Locks::NewStub(stack_->serve(
        "admin.sock", {"admin socket", Role::kAdmin, "", [](const std::string&) { return "root"; },
                       [](const std::string&) { return std::string("uid 0"); }}));
  }

  v1::OpenSessionResponse open_on(v1::Locks::Stub& stub, const std::string& name) {
    grpc::ClientContext context;
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(30);
    request.set_name(name);
    v1::OpenSessionResponse response;
    const grpc::Status status = stub.OpenSession(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  static v1::UnlockRequest unlock_request(uint64_t session, const std::string& secret,
                                          const std::string& file, uint64_t offset,
                                          uint64_t length) {
    v1::UnlockRequest r;
    r.set_session(session);
    r.set_secret(secret);
    r.set_file(file);
    auto* range = r.add_ranges();
    range->set_offset(offset);
    range->set_length(length);
    return r;
  }

  // Every call that names a session, through `stub`, with `secret`: their statuses by name.
  std::vector<std::pair<std::string, grpc::Status>> every_call(v1::Locks::Stub& stub,
                                                               uint64_t session,
                                                               const std::string& secret) {
    std::vector<std::pair<std::string, grpc::Status>> out;
    auto lock = request(session, "f", 0, 10);
    lock.set_secret(secret);
    {
      grpc::ClientContext c;
      v1::KeepAliveRequest r;
      r.set_session(session);
      r.set_secret(secret);
      v1::KeepAliveResponse response;
      out.emplace_back("KeepAlive", stub.KeepAlive(&c, r, &response));
    }
    {
      grpc::ClientContext c;
      v1::LockResponse response;
      out.emplace_back("TryLock", stub.TryLock(&c, lock, &response));
    }
    {
      grpc::ClientContext c;
      c.set_deadline(test::deadline_in(std::chrono::seconds(30)));
      v1::LockResponse response;
      out.emplace_back("Lock", stub.Lock(&c, lock, &response));
    }
    {
      grpc::ClientContext c;
      v1::UnlockResponse response;
      out.emplace_back("Unlock",
                       stub.Unlock(&c, unlock_request(session, secret, "f", 0, 10), &response));
    }
    {
      grpc::ClientContext c;
      v1::UnlockResponse response;
      out.emplace_back("Downgrade",
                       stub.Downgrade(&c, unlock_request(session, secret, "f", 0, 10), &response));
    }
    {
      v1::LockBatch batch;
      auto* op = batch.add_ops();
      op->set_id(1);
      *op->mutable_lock() = lock;
      op->set_timeout_ms(5000);
      op = batch.add_ops();
      op->set_id(2);
      *op->mutable_try_lock() = lock;
      op = batch.add_ops();
      op->set_id(3);
      *op->mutable_unlock() = unlock_request(session, secret, "f", 0, 10);
      op = batch.add_ops();
      op->set_id(4);
      *op->mutable_downgrade() = unlock_request(session, secret, "f", 0, 10);
      op = batch.add_ops();
      op->set_id(5);
      op->mutable_keep_alive()->set_session(session);
      op->mutable_keep_alive()->set_secret(secret);
      grpc::ClientContext c;
      c.set_deadline(test::deadline_in(std::chrono::seconds(60)));
      auto stream = stub.Batch(&c);
      EXPECT_TRUE(stream->Write(batch));
      stream->WritesDone();
      v1::LockBatchReply reply;
      const char* names[] = {"",
                             "Batch lock",
                             "Batch try_lock",
                             "Batch unlock",
                             "Batch downgrade",
                             "Batch keep_alive"};
      while (stream->Read(&reply)) {
        for (const auto& r : reply.results()) {
          out.emplace_back(names[r.id() < 6 ? r.id() : 0],
                           grpc::Status(static_cast<grpc::StatusCode>(r.code()), r.message()));
        }
      }
      EXPECT_OK(stream->Finish());
    }
    {
      grpc::ClientContext c;
      v1::CloseSessionRequest r;
      r.set_session(session);
      r.set_secret(secret);
      v1::CloseSessionResponse response;
      out.emplace_back("CloseSession", stub.CloseSession(&c, r, &response));
    }
    return out;
  }

  // An id no session has (ids are random 64-bit numbers, above 2^32 but once in 4 billion).
  static constexpr uint64_t kNeverIssued = 12345;

  // Every call naming `session` through `stub` is refused exactly as the same call naming a
  // session never opened (code and message byte for byte), naming neither owner nor secret.
  void expect_refused(v1::Locks::Stub& stub, uint64_t session, const std::string& secret,
                      const std::string& who) {
    const auto calls = every_call(stub, session, secret);
    const auto unknown = every_call(stub, kNeverIssued, secret);
    ASSERT_EQ(calls.size(), 11u);
    ASSERT_EQ(unknown.size(), 11u);
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto& [name, status] = calls[i];
      EXPECT_EQ(name, unknown[i].first);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
          << who << " " << name << ": " << status.error_message();
      EXPECT_EQ(status.error_code(), unknown[i].second.error_code()) << who << " " << name;
      EXPECT_EQ(status.error_message(), unknown[i].second.error_message()) << who << " " << name;
      EXPECT_THAT(status.error_message(), ::testing::Not(::testing::HasSubstr("uid 0")));
      EXPECT_THAT(status.error_message(),
                  ::testing::Not(::testing::HasSubstr(std::to_string(session))));
      EXPECT_THAT(status.error_message(), ::testing::HasSubstr("not open to this caller"));
    }
  }

  // The owner's session is as it was: its lock on f [0, 10) held, the session open.
  void expect_unchanged(uint64_t session) {
    const auto held = list("f");
    ASSERT_EQ(held.held_size(), 1);
    EXPECT_EQ(held.held(0).session(), session);
    EXPECT_EQ(held.held(0).mode(), v1::LOCK_MODE_EXCLUSIVE);
    EXPECT_EQ(held.held(0).range().length(), 10u);
    EXPECT_EQ(stats().sessions(), 1u);
  }

  std::unique_ptr<v1::Locks::Stub> other_uid_, tcp_, admin_;
};

}  // namespace asn

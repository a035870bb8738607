// The Locks service against other callers (issue 24): a session is usable only by the
// principal that opened it (certificate subject, uid, or the session's secret on plain TCP),
// the admin's revoke and release, and the quotas per principal and per session.
#include "lock_service_fixture.hpp"

namespace asn {
namespace {

using test::LockStack;
using ::testing::HasSubstr;
using ::testing::Not;

// ---- ownership (issue 24) -------------------------------------------------------------------

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

  // Every call naming `session` through `stub` is refused, naming neither owner nor secret.
  void expect_refused(v1::Locks::Stub& stub, uint64_t session, const std::string& secret,
                      const std::string& who) {
    const auto calls = every_call(stub, session, secret);
    EXPECT_EQ(calls.size(), 11u);
    for (const auto& [name, status] : calls) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
          << who << " " << name << ": " << status.error_message();
      EXPECT_THAT(status.error_message(), Not(HasSubstr("uid 0")));
      EXPECT_THAT(status.error_message(), Not(HasSubstr("belongs to")));
      EXPECT_THAT(status.error_message(), HasSubstr("may not use it"));
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

TEST_P(LockOwnershipTest, SessionIdsAreRandomAndTheSecretIsReturnedOnce) {
  const auto a = open_on(*stub_, "a"), b = open_on(*stub_, "b");
  EXPECT_NE(a.session(), 0u);
  EXPECT_NE(a.session(), b.session());
  // 64 random bits: below 2^32 once in four billion.
  EXPECT_GT(a.session(), uint64_t{1} << 32);
  EXPECT_GT(b.session(), uint64_t{1} << 32);
  EXPECT_EQ(a.secret().size(), kSessionSecretBytes);
  EXPECT_NE(a.secret(), b.secret());
  // Lists name the session by the id the client got.
  grpc::ClientContext c;
  v1::LockResponse granted;
  auto r = request(a.session(), "f", 0, 10);
  ASSERT_OK(stub_->TryLock(&c, r, &granted));
  const auto held = list("f");
  ASSERT_EQ(held.held_size(), 1);
  EXPECT_EQ(held.held(0).session(), a.session());
  bool listed = false;
  const auto st = stats();
  for (const auto& s : st.session_list()) listed |= s.session() == a.session();
  EXPECT_TRUE(listed);
}

TEST_P(LockOwnershipTest, AnotherUidOrAPlainTcpCallerCannotUseASessionItDidNotOpen) {
  const auto mine = open_on(*stub_, "mine");
  ASSERT_OK(try_lock(request(mine.session(), "f", 0, 10)));
  std::string forged(kSessionSecretBytes, '\0');
  forged[0] = 1;
  const auto theirs = open_on(*tcp_, "theirs");  // a secret, but of another session

  expect_refused(*other_uid_, mine.session(), "", "another uid");
  expect_refused(*tcp_, mine.session(), "", "plain TCP without the secret");
  expect_refused(*tcp_, mine.session(), forged, "plain TCP with a forged secret");
  expect_refused(*tcp_, mine.session(), theirs.secret(), "plain TCP with another's secret");
  // Even with the right secret, another uid on the Unix socket is not the owner.
  expect_refused(*other_uid_, mine.session(), mine.secret(), "another uid with the secret");
  // The owner itself with a wrong secret is refused too.
  expect_refused(*stub_, mine.session(), forged, "the owner with a wrong secret");
  {
    grpc::ClientContext c;
    v1::CloseSessionRequest r;
    r.set_session(theirs.session());
    r.set_secret(theirs.secret());
    v1::CloseSessionResponse closed;
    ASSERT_OK(tcp_->CloseSession(&c, r, &closed));
  }
  expect_unchanged(mine.session());

  // A refusal looks the same whoever owns the session: it names neither.
  {
    grpc::ClientContext c;
    v1::KeepAliveRequest r;
    r.set_session(mine.session());
    v1::KeepAliveResponse response;
    const grpc::Status refused = other_uid_->KeepAlive(&c, r, &response);
    EXPECT_THAT(refused.error_message(), Not(HasSubstr("mine")));
    EXPECT_THAT(refused.error_message(), Not(HasSubstr("test")));
  }
}

TEST_P(LockOwnershipTest, TheSecretOpensTheSessionOnPlainTcpAndTheOwnerNeedsNone) {
  const auto s = open_on(*tcp_, "tcp client");
  // Every call of the owner with its secret works over plain TCP...
  for (const auto& [name, status] : every_call(*tcp_, s.session(), s.secret())) {
    if (name == "Lock" || name == "Batch lock") {
      // Locks of bytes it holds already (TryLock took them) are refused as conflicts only.
      EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << name;
    } else if (name.find("nlock") != std::string::npos ||
               name.find("owngrade") != std::string::npos) {
      EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << name;
    } else {
      EXPECT_OK(status);
    }
  }
  // ...and the session is closed by the last of them.
  EXPECT_EQ(stats().sessions(), 0u);

  // A Unix caller of the session's uid needs no secret.
  const auto u = open_on(*stub_, "unix client");
  ASSERT_OK(try_lock(request(u.session(), "g", 0, 10)));
  ASSERT_OK(unlock(u.session(), "g", 0, 10));
}

TEST_P(LockOwnershipTest, ASecretOfTheWrongLengthIsInvalidAndChangesNothing) {
  const auto s = open_on(*stub_, "s");
  ASSERT_OK(try_lock(request(s.session(), "f", 0, 10)));
  for (const std::string& bad : {std::string("x"), std::string(31, 'a'), std::string(33, 'a')}) {
    grpc::ClientContext c;
    v1::UnlockResponse response;
    const grpc::Status status =
        stub_->Unlock(&c, unlock_request(s.session(), bad, "f", 0, 10), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("32 bytes"));
    EXPECT_THAT(status.error_message(), Not(HasSubstr(bad)));
  }
  expect_unchanged(s.session());
}

TEST_P(LockOwnershipTest, AnAdminRevokesASessionItsWaitsEndRevokedItsLocksGoToTheWaiters) {
  const auto holder = open_on(*stub_, "holder"), waiter = open_on(*stub_, "waiter");
  ASSERT_OK(try_lock(request(holder.session(), "f", 0, 10)));
  ASSERT_OK(try_lock(request(waiter.session(), "g", 0, 10)));
  auto holders_wait = lock_async(request(holder.session(), "g", 0, 10));
  auto waiters_wait = lock_async(request(waiter.session(), "f", 0, 10));
  wait_for_waiting(2);

  // Only the admin role may: a lock client may not, and is told so.
  v1::RevokeSessionRequest r;
  r.set_session(holder.session());
  v1::RevokeSessionResponse revoked;
  {
    grpc::ClientContext c;
    const grpc::Status refused = stub_->RevokeSession(&c, r, &revoked);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(refused.error_message(), HasSubstr("RevokeSession"));
  }
  {
    grpc::ClientContext c;
    ASSERT_OK(admin_->RevokeSession(&c, r, &revoked));
  }
  EXPECT_EQ(revoked.released(), 1u);
  EXPECT_EQ(revoked.cancelled(), 1u);
  EXPECT_EQ(revoked.name(), "holder");
  EXPECT_EQ(revoked.owner(), "uid 0 (test)");

  // Its wait ends ABORTED, reason "revoked"; the waiter gets its lock.
  ASSERT_TRUE(finishes(*holders_wait, std::chrono::seconds(30)));
  const grpc::Status aborted = holders_wait->done.get();
  EXPECT_EQ(aborted.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_THAT(aborted.error_message(), HasSubstr("revoked"));
  EXPECT_EQ(reason_of(holders_wait->context), "revoked");
  ASSERT_TRUE(finishes(*waiters_wait, std::chrono::seconds(30)));
  EXPECT_OK(waiters_wait->done.get());

  // Its later calls: the session is gone.
  {
    grpc::ClientContext c;
    v1::KeepAliveRequest k;
    k.set_session(holder.session());
    k.set_secret(holder.secret());
    v1::KeepAliveResponse response;
    EXPECT_EQ(stub_->KeepAlive(&c, k, &response).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason_of(c), "session-gone");
  }
  // Revoking it again, or a session that never was: NOT_FOUND naming it, nothing changed.
  for (uint64_t id : {holder.session(), uint64_t{12345}}) {
    grpc::ClientContext c;
    v1::RevokeSessionRequest again;
    again.set_session(id);
    const grpc::Status missing = admin_->RevokeSession(&c, again, &revoked);
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(missing.error_message(), HasSubstr(std::to_string(id)));
  }
  EXPECT_EQ(stats().sessions(), 1u);
  EXPECT_EQ(list("f").held_size(), 1);
  EXPECT_EQ(list("g").held_size(), 1);
}

TEST_P(LockOwnershipTest, AnAdminReleasesBytesFromEverySessionHoldingThem) {
  const auto a = open_on(*stub_, "a"), b = open_on(*stub_, "b"), c = open_on(*stub_, "c"),
             d = open_on(*stub_, "d");
  ASSERT_OK(try_lock(request(a.session(), "f", 0, 100, false)));
  ASSERT_OK(try_lock(request(b.session(), "f", 50, 100, false)));
  ASSERT_OK(try_lock(request(c.session(), "f", 200, 100)));
  auto waiting = lock_async(request(d.session(), "f", 0, 60));
  wait_for_waiting(1);

  v1::ReleaseLocksRequest r;
  r.set_file("f");
  auto* range = r.add_ranges();
  range->set_offset(0);
  range->set_length(60);
  r.set_dry_run(true);
  v1::ReleaseLocksResponse response;
  {
    grpc::ClientContext ctx;
    ASSERT_OK(admin_->ReleaseLocks(&ctx, r, &response));
  }
  EXPECT_TRUE(response.dry_run());
  ASSERT_EQ(response.released_size(), 2);
  EXPECT_EQ(response.released(0).session(), a.session());
  EXPECT_EQ(response.released(0).range().offset(), 0u);
  EXPECT_EQ(response.released(0).range().length(), 60u);
  EXPECT_EQ(response.released(1).session(), b.session());
  EXPECT_EQ(response.released(1).range().offset(), 50u);
  EXPECT_EQ(response.released(1).range().length(), 10u);
  EXPECT_EQ(list("f").held_size(), 3);  // a dry run changes nothing
  EXPECT_FALSE(finishes(*waiting, std::chrono::milliseconds(100)));

  // A lock client may not; bad ranges are refused with nothing released.
  {
    grpc::ClientContext ctx;
    r.set_dry_run(false);
    EXPECT_EQ(stub_->ReleaseLocks(&ctx, r, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  for (int bad = 0; bad < 3; ++bad) {
    v1::ReleaseLocksRequest wrong = r;
    if (bad == 0) wrong.clear_ranges();
    if (bad == 1) wrong.mutable_ranges(0)->set_length(0);
    if (bad == 2) *wrong.add_ranges() = wrong.ranges(0);  // overlapping
    grpc::ClientContext ctx;
    EXPECT_EQ(admin_->ReleaseLocks(&ctx, wrong, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << bad;
  }
  EXPECT_EQ(list("f").held_size(), 3);

  {
    grpc::ClientContext ctx;
    ASSERT_OK(admin_->ReleaseLocks(&ctx, r, &response));
  }
  EXPECT_EQ(response.released_size(), 2);
  EXPECT_EQ(response.granted(), 1u);
  ASSERT_TRUE(finishes(*waiting, std::chrono::seconds(30)));
  EXPECT_OK(waiting->done.get());
  // What was not named stays: a [60, 100), b [60, 150), c [200, 300); d got [0, 60).
  const auto held = list("f");
  ASSERT_EQ(held.held_size(), 4);
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> by_session;
  for (const auto& h : held.held()) {
    by_session[h.session()] = {h.range().offset(), h.range().length()};
  }
  EXPECT_EQ(by_session[a.session()], std::make_pair(uint64_t{60}, uint64_t{40}));
  EXPECT_EQ(by_session[b.session()], std::make_pair(uint64_t{60}, uint64_t{90}));
  EXPECT_EQ(by_session[c.session()], std::make_pair(uint64_t{200}, uint64_t{100}));
  EXPECT_EQ(by_session[d.session()], std::make_pair(uint64_t{0}, uint64_t{60}));
  // The sessions themselves live on.
  EXPECT_EQ(stats().sessions(), 4u);
}

TEST_P(LockOwnershipTest, ASessionStaysOwnedAcrossARestart) {
  const auto mine = open_on(*stub_, "mine");
  const auto remote = open_on(*tcp_, "remote");
  ASSERT_OK(try_lock(request(mine.session(), "f", 0, 10)));
  restart(/*grace_s=*/15);
  serve_others();
  expect_refused(*other_uid_, mine.session(), "", "another uid after the restart");
  expect_refused(*tcp_, mine.session(), "", "plain TCP after the restart");
  std::string forged = remote.secret();
  forged[5] ^= 1;
  expect_refused(*tcp_, remote.session(), forged, "a forged secret after the restart");
  expect_refused(*tcp_, remote.session(), "", "no secret after the restart");
  expect_refused(*tcp_, mine.session(), remote.secret(), "another's secret after the restart");
  const auto held = list("f");
  ASSERT_EQ(held.held_size(), 1);
  EXPECT_EQ(held.held(0).session(), mine.session());
  // The owners re-attach: by uid, and by the secret.
  for (auto* who : {&mine, &remote}) {
    grpc::ClientContext c;
    v1::KeepAliveRequest k;
    k.set_session(who->session());
    if (who == &remote) k.set_secret(who->secret());
    v1::KeepAliveResponse response;
    ASSERT_OK((who == &remote ? tcp_ : stub_)->KeepAlive(&c, k, &response));
    EXPECT_TRUE(response.reattached());
  }
  ASSERT_OK(unlock(mine.session(), "f", 0, 10));
}

INSTANTIATE_TEST_SUITE_P(Domains, LockOwnershipTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

// ---- quotas (issue 24) ----------------------------------------------------------------------

// Small quotas, so that a test reaches them: one principal at its quota is refused, naming
// the quota, its use and the key, while another principal is served as ever.
class LockQuotaTest : public LockOwnershipTest {
 protected:
  LockQuotaTest() {
    config_.max_sessions_per_principal = 3;
    config_.max_waiting_per_principal = 4;
    config_.max_waiting_per_session = 2;
  }

  std::shared_ptr<Pending> lock_on(v1::Locks::Stub& stub, const v1::LockRequest& r) {
    auto p = std::make_shared<Pending>();
    pending_.push_back(p);
    p->request = r;
    p->context.set_deadline(test::deadline_in(std::chrono::seconds(60)));
    Pending* raw = p.get();
    stub.async()->Lock(&p->context, &p->request, &p->response,
                       [raw](grpc::Status st) { raw->promise.set_value(std::move(st)); });
    return p;
  }

  // The call was refused at once with RESOURCE_EXHAUSTED naming `key`.
  static void expect_over(Pending& p, const std::string& key, const std::string& use) {
    ASSERT_EQ(p.done.wait_for(test::scaled(std::chrono::seconds(30))), std::future_status::ready);
    const grpc::Status st = p.done.get();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
    EXPECT_THAT(st.error_message(), HasSubstr(key));
    EXPECT_THAT(st.error_message(), HasSubstr(use));
  }
};

TEST_P(LockQuotaTest, APrincipalAtItsQuotaIsRefusedAndAnotherIsServed) {
  // Sessions: three for uid 1001, then its fourth is refused; the test's own uid opens more.
  std::vector<uint64_t> eve;
  for (int i = 0; i < 3; ++i) eve.push_back(open_on(*other_uid_, "eve").session());
  {
    grpc::ClientContext context;
    v1::OpenSessionRequest request;
    v1::OpenSessionResponse response;
    const grpc::Status st = other_uid_->OpenSession(&context, request, &response);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(st.error_message(), HasSubstr("locks.max_sessions_per_principal"));
    EXPECT_THAT(st.error_message(), HasSubstr("uid 1001 has 3 lock sessions open"));
  }
  const uint64_t holder = open(), mine = open();
  ASSERT_OK(try_lock(request(holder, "f", 0, 100)));
  // Waits: two per session, four per principal.
  std::vector<std::shared_ptr<Pending>> waiting;
  waiting.push_back(lock_on(*other_uid_, request(eve[0], "f", 0, 1)));
  waiting.push_back(lock_on(*other_uid_, request(eve[0], "f", 1, 1)));
  wait_for_waiting(2);
  expect_over(*lock_on(*other_uid_, request(eve[0], "f", 2, 1)), "locks.max_waiting_per_session",
              "has 2 Lock calls waiting");
  waiting.push_back(lock_on(*other_uid_, request(eve[1], "f", 3, 1)));
  waiting.push_back(lock_on(*other_uid_, request(eve[1], "f", 4, 1)));
  wait_for_waiting(4);
  expect_over(*lock_on(*other_uid_, request(eve[2], "f", 5, 1)), "locks.max_waiting_per_principal",
              "uid 1001 has 4 Lock calls waiting");
  // Another principal waits as ever.
  auto served = lock_async(request(mine, "f", 6, 1));
  wait_for_waiting(5);
  // Waits that end give their room back: after the holder lets go, eve waits again.
  ASSERT_OK(unlock(holder, "f", 0, 100));
  for (auto& p : waiting) {
    ASSERT_TRUE(finishes(*p, std::chrono::seconds(30)));
    ASSERT_OK(p->done.get());
  }
  ASSERT_TRUE(finishes(*served, std::chrono::seconds(30)));
  ASSERT_OK(served->done.get());
  ASSERT_OK(try_lock(request(holder, "g", 0, 1)));
  auto again = lock_on(*other_uid_, request(eve[2], "g", 0, 1));
  wait_for_waiting(1);
  // A closed session gives its room back too.
  grpc::ClientContext context;
  v1::CloseSessionRequest close;
  close.set_session(eve[1]);
  v1::CloseSessionResponse closed;
  ASSERT_OK(other_uid_->CloseSession(&context, close, &closed));
  EXPECT_NE(open_on(*other_uid_, "eve again").session(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Domains, LockQuotaTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

}  // namespace
}  // namespace asn

// The Locks service against other callers (issue 24): a session is usable only by the
// principal that opened it (certificate subject, uid, or the session's secret on plain TCP),
// and the admin's revoke and release.
#include <tuple>
#include <utility>

#include "lock_ownership_fixture.hpp"

namespace asn {
namespace {

using test::LockStack;
using ::testing::HasSubstr;
using ::testing::Not;

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

// A KeepAlive's answer: code, message and reason.
std::tuple<grpc::StatusCode, std::string, std::string> keep_alive_answer(
    v1::Locks::Stub& stub, uint64_t session, const std::string& secret) {
  grpc::ClientContext c;
  v1::KeepAliveRequest r;
  r.set_session(session);
  r.set_secret(secret);
  v1::KeepAliveResponse response;
  const grpc::Status status = stub.KeepAlive(&c, r, &response);
  return {status.error_code(), status.error_message(), reason_of(c)};
}

void close_session(v1::Locks::Stub& stub, const v1::OpenSessionResponse& session) {
  grpc::ClientContext c;
  v1::CloseSessionRequest r;
  r.set_session(session.session());
  r.set_secret(session.secret());
  v1::CloseSessionResponse closed;
  ASSERT_OK(stub.CloseSession(&c, r, &closed));
}

TEST_P(LockOwnershipTest, AStrangerCannotTellALiveSessionFromAnEndedOrUnknownOne) {
  const auto live = open_on(*stub_, "live");
  ASSERT_OK(try_lock(request(live.session(), "f", 0, 10)));
  const auto closed = open_on(*stub_, "closed");
  const auto remote = open_on(*tcp_, "remote");
  close_session(*stub_, closed);
  close_session(*tcp_, remote);
  const std::string forged(kSessionSecretBytes, '\7');
  struct Stranger {
    v1::Locks::Stub* stub;
    std::string secret;
    const char* who;
  };
  const Stranger strangers[] = {
      {other_uid_.get(), "", "another uid"},
      {other_uid_.get(), remote.secret(), "another uid with the secret of a plain-TCP session"},
      {tcp_.get(), "", "plain TCP without a secret"},
      {tcp_.get(), forged, "plain TCP with a forged secret"},
  };
  for (const Stranger& s : strangers) {
    const auto answer = keep_alive_answer(*s.stub, live.session(), s.secret);
    EXPECT_EQ(std::get<0>(answer), grpc::StatusCode::FAILED_PRECONDITION) << s.who;
    EXPECT_EQ(std::get<2>(answer), "session-gone") << s.who;
    for (uint64_t other : {closed.session(), remote.session(), kNeverIssued}) {
      EXPECT_EQ(keep_alive_answer(*s.stub, other, s.secret), answer) << s.who << ", " << other;
    }
  }
  expect_unchanged(live.session());

  // Their owners are told when and how they ended: the id, the time, CloseSession.
  const std::pair<v1::Locks::Stub*, const v1::OpenSessionResponse*> owners[] = {
      {stub_.get(), &closed}, {tcp_.get(), &remote}};
  for (const auto& [stub, session] : owners) {
    const std::string secret = stub == tcp_.get() ? session->secret() : std::string();
    const auto [code, message, reason] = keep_alive_answer(*stub, session->session(), secret);
    EXPECT_EQ(code, grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason, "session-gone");
    EXPECT_THAT(message, HasSubstr("session " + std::to_string(session->session()) + " ended at"));
    EXPECT_THAT(message, HasSubstr("it was closed (CloseSession)"));
  }
  // And so is the owner of a session whose lease ran out.
  grpc::ClientContext c;
  v1::OpenSessionRequest short_lease;
  short_lease.set_ttl_seconds(1);
  v1::OpenSessionResponse lapsed;
  ASSERT_OK(stub_->OpenSession(&c, short_lease, &lapsed));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(scaled_s(30));
  while (stats().sessions() > 1u && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto [code, message, reason] = keep_alive_answer(*stub_, lapsed.session(), "");
  EXPECT_EQ(code, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(message, HasSubstr("its lease expired (no call for 1 s)"));
  EXPECT_EQ(keep_alive_answer(*tcp_, lapsed.session(), ""),
            keep_alive_answer(*tcp_, kNeverIssued, ""));
}

// The domains keep sessions by ids of their own; what a client reads names the ids it knows.
TEST_P(LockOwnershipTest, RefusalsNameSessionsByTheIdsClientsKnow) {
  const auto holder = open_on(*stub_, "holder"), writer = open_on(*stub_, "writer"),
             reader = open_on(*stub_, "reader");
  ASSERT_OK(try_lock(request(holder.session(), "f", 0, 10, /*exclusive=*/false)));
  auto waiting = lock_async(request(writer.session(), "f", 0, 10));
  wait_for_waiting(1);
  const grpc::Status behind_writer = try_lock(request(reader.session(), "f", 5, 1, false));
  EXPECT_EQ(behind_writer.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(behind_writer.error_message(),
              HasSubstr("of session " + std::to_string(writer.session()) + " (exclusive)"));
  const grpc::Status held = try_lock(request(reader.session(), "f", 0, 1));
  EXPECT_THAT(held.error_message(),
              HasSubstr("session " + std::to_string(holder.session()) + "'s shared lock"));
  const grpc::Status not_held = unlock(reader.session(), "f", 0, 10);
  EXPECT_EQ(not_held.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(not_held.error_message(),
              HasSubstr("session " + std::to_string(reader.session()) + " holds no lock"));
  // A file's name is quoted as it is, whatever it says.
  ASSERT_OK(try_lock(request(holder.session(), "session 1", 0, 10)));
  EXPECT_THAT(try_lock(request(reader.session(), "session 1", 0, 10)).error_message(),
              HasSubstr("of file 'session 1' conflicts with session " +
                        std::to_string(holder.session()) + "'s exclusive lock"));
  ASSERT_OK(unlock(holder.session(), "f", 0, 10));
  ASSERT_TRUE(finishes(*waiting, std::chrono::seconds(30)));
  EXPECT_OK(waiting->done.get());
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
    const grpc::Status gone = stub_->KeepAlive(&c, k, &response);
    EXPECT_EQ(gone.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason_of(c), "session-gone");
    EXPECT_THAT(gone.error_message(), HasSubstr("an administrator revoked it"));
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

}  // namespace
}  // namespace asn

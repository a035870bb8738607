// The Locks service across what loses or keeps lock state (issue 24): an asnd restart (locks
// kept, sessions re-attach within the grace, a session names the grants it holds and the
// others are released), a board reset (the loss grace: reclaims, its end, its survival across
// a restart, calls ending during the reset), a damaged switch table, and fencing tokens that
// grow across all of them. Run against each domain configuration (LockStack::Kind).
#include "lock_service_fixture.hpp"

namespace asn {
namespace {

using test::LockStack;
using ::testing::HasSubstr;

class LockRecoveryTest : public LockServiceTest {};

TEST_P(LockRecoveryTest, LocksSurviveARestartAndSessionsReattachWithinTheGracePeriod) {
  // `gone` has a lease as short as the grace period: a longer lease would give it longer.
  const uint32_t grace = scaled_s(2);
  const uint64_t back = open(30, "comes back"), gone = open(grace, "does not"), other = open();
  v1::LockResponse before;
  ASSERT_OK(try_lock(request(back, "f", 0, 10), &before));
  ASSERT_OK(try_lock(request(gone, "g", 0, 10)));
  ASSERT_OK(try_lock(request(other, "h", 0, 10)));
  auto waiting = lock_async(request(other, "f", 0, 10));
  wait_for_waiting(1);

  restart(grace);
  // The call that waited died with the server; its request is withdrawn.
  ASSERT_TRUE(finishes(*waiting, std::chrono::seconds(30)));
  EXPECT_FALSE(waiting->done.get().ok());
  EXPECT_EQ(list("f").waiting_size(), 0);
  // Nothing conflicting is granted while the sessions may still come back.
  EXPECT_EQ(try_lock(request(other, "f", 0, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(try_lock(request(other, "g", 0, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_GT(stats().grace_remaining_seconds(), 0);
  {
    grpc::ClientContext context;
    v1::KeepAliveRequest r;
    r.set_session(back);
    v1::KeepAliveResponse response;
    ASSERT_OK(stub_->KeepAlive(&context, r, &response));
    EXPECT_TRUE(response.reattached());
  }
  // `other` re-attaches by using its session; it held a lock, so it says which it holds
  // before it locks again.
  EXPECT_TRUE(keep_alive(other).confirm_held());
  EXPECT_FALSE(
      keep_alive(other, false, std::vector<uint64_t>{list("h").held(0).token()}).confirm_held());
  ASSERT_OK(try_lock(request(other, "i", 0, 10)));
  // `gone` does not come back: once the grace is over its lock is released, its session ended.
  ASSERT_TRUE(test::wait_until([&] { return try_lock(request(other, "g", 0, 10)).ok(); }));
  EXPECT_EQ(try_lock(request(gone, "x", 0, 1)).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // `back` still holds f, and tokens keep growing across the restart.
  EXPECT_EQ(try_lock(request(other, "f", 0, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(keep_alive(back, false, std::vector<uint64_t>{before.token()}).released_unconfirmed(),
            0u);
  v1::LockResponse after;
  ASSERT_OK(try_lock(request(back, "j", 0, 10), &after));
  EXPECT_GT(after.token(), before.token());
}

// Issue 24: a failed call grants nothing, across a restart too. An asnd killed after a grant
// and before its answer reached the client leaves the grant in its domain, where the next
// asnd cannot tell it from one the client received. So a session that held locks says which
// it holds (KeepAlive `held`) before it may lock again, and asnd releases the others: only
// their own bytes (a named lock of the session on the same bytes keeps them). Raw gRPC, as a
// client without libasnclient makes it.
TEST_P(LockRecoveryTest, AfterARestartASessionNamesItsLocksAndTheGrantsItNeverGotAreReleased) {
  const uint64_t a = open(30, "a"), b = open(30, "b"), idle = open(30, "idle");
  v1::LockResponse received, lost, lost_shared, downgraded;
  ASSERT_OK(try_lock(request(a, "kept", 0, 10), &received));
  ASSERT_OK(try_lock(request(a, "leak", 0, 10), &lost));  // its answer died with asnd
  // Another grant a never got, overlapping `received` (a session's own locks do not conflict).
  ASSERT_OK(try_lock(request(a, "kept", 5, 10, false), &lost_shared));
  // A grant a received and then partly unlocked and downgraded: it keeps its token.
  ASSERT_OK(try_lock(request(a, "split", 0, 30), &downgraded));
  ASSERT_OK(unlock(a, "split", 10, 10));
  {
    grpc::ClientContext context;
    v1::UnlockRequest r;
    r.set_session(a);
    r.set_file("split");
    auto* range = r.add_ranges();
    range->set_offset(20);
    range->set_length(10);
    v1::UnlockResponse response;
    ASSERT_OK(stub_->Downgrade(&context, r, &response));
  }

  restart(15);
  // a may not lock before it says what it holds; its other calls go on.
  {
    grpc::ClientContext context;
    v1::LockResponse response;
    const grpc::Status refused = stub_->TryLock(&context, request(a, "new", 0, 1), &response);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason_of(context), "confirm-held");
    EXPECT_THAT(refused.error_message(), HasSubstr("say which it holds"));
  }
  const v1::KeepAliveResponse asked = keep_alive(a);
  EXPECT_FALSE(asked.reattached());  // the refused TryLock re-attached it
  EXPECT_TRUE(asked.confirm_held());
  EXPECT_EQ(asked.released_unconfirmed(), 0u);
  bool listed = false;
  const v1::GetLockStatsResponse after_restart = stats();
  for (const auto& s : after_restart.session_list()) {
    if (s.session() == a) listed = s.confirm_held();
    if (s.session() == idle || s.session() == b) {
      EXPECT_FALSE(s.confirm_held());
    }
  }
  EXPECT_TRUE(listed);
  // Nothing is released before a says so.
  EXPECT_EQ(try_lock(request(b, "leak", 0, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // A session that held nothing locks at once.
  ASSERT_OK(try_lock(request(idle, "idle", 0, 1)));

  const v1::KeepAliveResponse told =
      keep_alive(a, false, std::vector<uint64_t>{received.token(), downgraded.token()});
  EXPECT_FALSE(told.confirm_held());
  EXPECT_EQ(told.released_unconfirmed(), 2u);
  // The grants a never got are gone, only their own bytes: [10, 15) of "kept".
  ASSERT_OK(try_lock(request(b, "leak", 0, 10)));
  ASSERT_OK(try_lock(request(b, "kept", 10, 5)));
  EXPECT_EQ(try_lock(request(b, "kept", 0, 10, false)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // What a received stays a's: [0, 10) exclusive and [20, 30) shared of "split".
  EXPECT_EQ(try_lock(request(b, "split", 0, 10, false)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_OK(try_lock(request(b, "split", 20, 10, false)));
  EXPECT_EQ(try_lock(request(b, "split", 20, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // a locks again, with tokens above every earlier one.
  v1::LockResponse later;
  ASSERT_OK(try_lock(request(a, "new", 0, 1), &later));
  EXPECT_GT(later.token(), lost_shared.token());
  // Saying it again releases nothing: only the earlier asnd's grants were in question.
  EXPECT_EQ(keep_alive(a, false, std::vector<uint64_t>{}).released_unconfirmed(), 0u);
  ASSERT_OK(unlock(a, "new", 0, 1));
  EXPECT_EQ(try_lock(request(b, "kept", 0, 1)).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

// After a board reset every session opened before it gets a new switch half, labelled with
// its session; one opened after it gets a half whose id the new table (counting from 1 again)
// may have given before the reset to an older session, whose label still names it. A restart
// must not take that half from the newer session: it did, and expired it with its locks.
TEST_P(LockRecoveryTest, ARestartAfterABoardResetKeepsTheSwitchLocksOfSessionsOpenedSince) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open(30, "a"), b = open(30, "b"), c = open(30, "c");
  {
    grpc::ClientContext context;
    v1::CloseSessionRequest r;
    r.set_session(a);
    v1::CloseSessionResponse response;
    ASSERT_OK(stub_->CloseSession(&context, r, &response));
  }
  // b and c get halves 1 and 2 in the new table; c's label still names 3, d's half.
  stack_->device()->write(regs::id::kControlBoardReset, 1);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  EXPECT_FALSE(keep_alive(b, true).locks_lost());
  EXPECT_FALSE(keep_alive(c, true).locks_lost());
  const uint64_t d = open(30, "d");
  v1::LockResponse held;
  ASSERT_OK(try_lock(request(d, "f", 0, 10), &held));
  ASSERT_EQ(held.domain(), "switch");
  restart(15);
  EXPECT_FALSE(keep_alive(d, false, std::vector<uint64_t>{held.token()}).confirm_held());
  EXPECT_EQ(try_lock(request(b, "f", 0, 10)).error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << "d's lock is gone";
  ASSERT_OK(unlock(d, "f", 0, 10));
  ASSERT_OK(try_lock(request(c, "f", 0, 10)));
}

// The same through a Batch stream: the KeepAlive op carries `held`.
TEST_P(LockRecoveryTest, AfterARestartABatchKeepAliveNamesTheLocksHeld) {
  const uint64_t a = open(30, "a"), b = open(30, "b");
  v1::LockResponse received;
  ASSERT_OK(try_lock(request(a, "kept", 0, 10), &received));
  ASSERT_OK(try_lock(request(a, "leak", 0, 10)));
  restart(15);
  grpc::ClientContext context;
  context.set_deadline(test::deadline_in(std::chrono::seconds(30)));
  auto stream = stub_->Batch(&context);
  v1::LockBatch batch;
  auto* op = batch.add_ops();
  op->set_id(1);
  op->mutable_keep_alive()->set_session(a);
  op->mutable_keep_alive()->mutable_held()->add_tokens(received.token());
  ASSERT_TRUE(stream->Write(batch));
  v1::LockBatchReply reply;
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_EQ(reply.results_size(), 1);
  EXPECT_EQ(reply.results(0).code(), 0) << reply.results(0).message();
  EXPECT_FALSE(reply.results(0).keep_alive().confirm_held());
  EXPECT_EQ(reply.results(0).keep_alive().released_unconfirmed(), 1u);
  stream->WritesDone();
  while (stream->Read(&reply)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
  ASSERT_OK(try_lock(request(b, "leak", 0, 10)));
  EXPECT_EQ(try_lock(request(b, "kept", 0, 10)).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// A board reset empties the switch's table while holders may still use what it held (they
// learn at their next KeepAlive). Until they reclaim, or their leases run out, nobody else
// is granted those files; the holders keep their sessions and take their locks again.
TEST_P(LockRecoveryTest, ABoardResetWithholdsTheSwitchsFilesUntilTheirHoldersReclaim) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open(), b = open();
  v1::LockResponse before;
  ASSERT_OK(try_lock(request(a, "f", 0, 10), &before));
  ASSERT_EQ(before.domain(), "switch");
  auto waiting = lock_async(request(b, "f", 0, 10));
  wait_for_waiting(1);
  stack_->device()->write(regs::id::kControlBoardReset, 1);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  // b's wait was in the lost table: it ends, and says to retry.
  ASSERT_TRUE(finishes(*waiting, std::chrono::seconds(30)));
  const grpc::Status ended = waiting->done.get();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE) << ended.error_message();
  EXPECT_EQ(reason_of(waiting->context), "grace");
  // Both sessions live on and learn that their switch locks are gone.
  const v1::KeepAliveResponse lost = keep_alive(a);
  EXPECT_TRUE(lost.locks_lost());
  EXPECT_GT(lost.reclaim_seconds(), 0.0);
  EXPECT_LE(lost.reclaim_seconds(), 30.0);
  const auto st = stats();
  EXPECT_EQ(st.sessions(), 2u);
  EXPECT_EQ(st.reclaiming_sessions(), 2u);
  EXPECT_GT(st.loss_grace_remaining_seconds(), 0.0);
  // Nobody may be granted f while a may believe it holds it: not a new session, not b.
  const uint64_t c = open();
  {
    grpc::ClientContext context;
    v1::LockResponse response;
    const grpc::Status withheld = stub_->TryLock(&context, request(c, "f", 5, 1), &response);
    EXPECT_EQ(withheld.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(withheld.error_message(), HasSubstr("retry in"));
    EXPECT_EQ(reason_of(context), "grace");
  }
  // b lost locks too: until it has reclaimed (or given them up), its calls say so.
  {
    grpc::ClientContext context;
    v1::LockResponse response;
    const grpc::Status told = stub_->TryLock(&context, request(b, "g", 0, 10), &response);
    EXPECT_EQ(told.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason_of(context), "locks-lost");
    EXPECT_EQ(unlock(b, "g", 0, 10).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  auto blocked = lock_async(request(c, "f", 0, 10));
  ASSERT_TRUE(finishes(*blocked, std::chrono::seconds(30)));
  EXPECT_EQ(blocked->done.get().error_code(), grpc::StatusCode::UNAVAILABLE);
  // A file the switch did not hold is granted as ever.
  ASSERT_OK(try_lock(request(c, "other", 0, 10)));
  // a reclaims f: a new, higher token.
  v1::LockRequest reclaim = request(a, "f", 0, 10);
  reclaim.set_reclaim(true);
  v1::LockResponse reclaimed;
  ASSERT_OK(try_lock(reclaim, &reclaimed));
  EXPECT_GT(reclaimed.token(), before.token());
  // c lost nothing: it has nothing to reclaim.
  v1::LockRequest stranger = request(c, "f", 20, 10);
  stranger.set_reclaim(true);
  {
    grpc::ClientContext context;
    v1::LockResponse response;
    EXPECT_EQ(stub_->TryLock(&context, stranger, &response).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(reason_of(context), "no-reclaim");
  }
  // Once both sessions that lost locks are done, f is granted again, as its holder allows.
  EXPECT_FALSE(keep_alive(a, true).locks_lost());
  EXPECT_EQ(stats().reclaiming_sessions(), 1u);
  EXPECT_EQ(try_lock(request(c, "f", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(keep_alive(b, true).locks_lost());
  EXPECT_EQ(stats().loss_grace_remaining_seconds(), 0.0);
  EXPECT_EQ(try_lock(request(c, "f", 0, 10)).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_OK(try_lock(request(c, "f", 10, 10)));
  ASSERT_OK(unlock(a, "f", 0, 10));
  v1::LockResponse after;
  ASSERT_OK(try_lock(request(c, "f", 0, 10), &after));
  EXPECT_EQ(after.domain(), "switch");
  EXPECT_GT(after.token(), reclaimed.token());
  // A reclaim outside the loss grace is refused.
  v1::LockRequest late = request(a, "g", 0, 1);
  late.set_reclaim(true);
  EXPECT_EQ(try_lock(late).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

// A holder that never comes back holds the loss grace open only until its lease runs out.
TEST_P(LockRecoveryTest, TheLossGraceEndsWhenTheLeasesAliveAtTheResetRunOut) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint32_t lease = scaled_s(2);
  const uint64_t gone = open(lease);
  ASSERT_OK(try_lock(request(gone, "f", 0, 10)));
  stack_->device()->write(regs::id::kControlBoardReset, 1);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  const uint64_t c = open();
  EXPECT_EQ(try_lock(request(c, "f", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  // No fixed sleep: f is granted once the lease ran out, and not before.
  const auto reset_at = std::chrono::steady_clock::now();
  grpc::Status granted;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    granted = try_lock(request(c, "f", 0, 10));
  } while (granted.error_code() == grpc::StatusCode::UNAVAILABLE &&
           std::chrono::steady_clock::now() - reset_at < test::scaled(std::chrono::seconds(60)));
  ASSERT_OK(granted);
  EXPECT_GE(std::chrono::steady_clock::now() - reset_at, std::chrono::milliseconds(750 * lease));
}

// The loss grace outlives an asnd restart: the restarted asnd still withholds the files until
// the sessions that lost locks reclaimed them.
TEST_P(LockRecoveryTest, TheLossGraceOutlivesAnAsndRestart) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open(), b = open();
  ASSERT_OK(try_lock(request(a, "f", 0, 10)));
  stack_->device()->write(regs::id::kControlBoardReset, 1);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  EXPECT_FALSE(keep_alive(b, true).locks_lost());  // b lost nothing it wants back
  restart(15);
  const uint64_t c = open();
  EXPECT_EQ(try_lock(request(c, "f", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(stats().reclaiming_sessions(), 1u);
  const v1::KeepAliveResponse told = keep_alive(a);
  EXPECT_TRUE(told.locks_lost());
  v1::LockRequest reclaim = request(a, "f", 0, 10);
  reclaim.set_reclaim(true);
  ASSERT_OK(try_lock(reclaim));
  EXPECT_FALSE(keep_alive(a, true).locks_lost());
  EXPECT_EQ(try_lock(request(c, "f", 0, 10)).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // Nothing of it is left for the next start.
  restart(15);
  EXPECT_FALSE(keep_alive(a).locks_lost());
  EXPECT_EQ(stats().reclaiming_sessions(), 0u);
}

// A board reset reaches asnd while calls are cancelled and time out: the switch cannot be
// reached until the reset is handled, and asnd must neither abort nor leave a grant behind.
TEST_P(LockRecoveryTest, CallsEndingWhileTheBoardIsResetDoNotAbortAsnd) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open(), b = open();
  ASSERT_OK(try_lock(request(a, "f", 0, 30)));
  auto cancelled = lock_async(request(b, "f", 0, 10));
  // Scaled: it must still wait when the board is reset, and time out only after.
  auto timed_out =
      lock_async(request(b, "f", 20, 10), test::scaled(std::chrono::milliseconds(500)));
  wait_for_waiting(2);
  stack_->device()->write(regs::id::kControlBoardReset, 1);  // not handled yet
  cancelled->context.TryCancel();
  ASSERT_TRUE(finishes(*cancelled, std::chrono::seconds(30)));
  EXPECT_EQ(cancelled->done.get().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(finishes(*timed_out, std::chrono::seconds(30)));
  EXPECT_EQ(timed_out->done.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  EXPECT_FALSE(keep_alive(b, true).locks_lost());
  EXPECT_FALSE(keep_alive(a, true).locks_lost());
  const uint64_t c = open();
  ASSERT_OK(try_lock(request(c, "f", 0, 30)));
  EXPECT_EQ(list("f").held_size(), 1);
}

// The switch's table in board DRAM is damaged: asnd starts anyway, places every file in the
// software domain, ends the sessions whose switch locks are lost, says so in its status,
// and takes the switch back after a board reset formats the table.
TEST_P(LockRecoveryTest, ADamagedSwitchTableIsSetAsideUntilABoardReset) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open();
  v1::LockResponse before;
  ASSERT_OK(try_lock(request(a, "f", 0, 10), &before));
  ASSERT_EQ(before.domain(), "switch");
  stub_.reset();
  stack_.reset();
  {
    EmulatedBus bus(LockStack::bus_options(dir_.path(), profile_));
    const std::string path = bus.board().path();
    const off_t dram =
        static_cast<off_t>(model::kMemoryHeaderBytes + bus.board().address_space_bytes());
    std::vector<char> junk(64 << 10, static_cast<char>(0xa5));
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), dram), static_cast<ssize_t>(junk.size()));
    ::close(fd);
  }
  start();
  EXPECT_TRUE(stack_->manager().summary().problem);
  EXPECT_THAT(stack_->manager().summary().status, HasSubstr("damaged"));
  // a's switch lock is gone, and asnd cannot tell which files it held: until a reclaimed,
  // no file outside the software domain is granted to anyone else.
  EXPECT_TRUE(keep_alive(a).locks_lost());
  const uint64_t b = open();
  EXPECT_EQ(try_lock(request(b, "f", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(try_lock(request(b, "h", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  v1::LockRequest reclaim = request(a, "f", 0, 10);
  reclaim.set_reclaim(true);
  v1::LockResponse software;
  ASSERT_OK(try_lock(reclaim, &software));
  EXPECT_EQ(software.domain(), "software");
  EXPECT_GT(software.token(), before.token());
  EXPECT_FALSE(keep_alive(a, true).locks_lost());
  EXPECT_EQ(try_lock(request(b, "f", 0, 10)).error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  stack_->device()->write(regs::id::kControlBoardReset, 1);
  stack_->manager().reconcile(ReconcileCause::kBoardReset);
  EXPECT_FALSE(stack_->manager().summary().problem);
  const uint64_t c = open();
  v1::LockResponse back;
  ASSERT_OK(try_lock(request(c, "h", 0, 10), &back));
  EXPECT_EQ(back.domain(), "switch");
  EXPECT_GT(back.token(), software.token());
}

// A board reset while asnd was down: the new asnd finds an empty switch table, yet tokens
// still grow.
TEST_P(LockRecoveryTest, TokensGrowAcrossABoardResetWhileAsndIsDown) {
  if (stack_->device() == nullptr) GTEST_SKIP() << "no switch domain";
  const uint64_t a = open();
  v1::LockResponse before;
  ASSERT_OK(try_lock(request(a, "f", 0, 10), &before));
  stub_.reset();
  stack_.reset();
  {
    EmulatedBus bus(LockStack::bus_options(dir_.path(), profile_));
    bus.board().board_reset();
  }
  start();
  const uint64_t b = open();
  // a may still be using f: it is withheld until a gives its lost locks up (or its lease
  // runs out).
  EXPECT_EQ(try_lock(request(b, "f", 0, 10)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(keep_alive(a).locks_lost());
  EXPECT_FALSE(keep_alive(a, true).locks_lost());
  v1::LockResponse after;
  ASSERT_OK(try_lock(request(b, "f", 0, 10), &after));
  EXPECT_EQ(after.domain(), "switch");
  EXPECT_GT(after.token(), before.token());
}

INSTANTIATE_TEST_SUITE_P(Domains, LockRecoveryTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

}  // namespace
}  // namespace asn

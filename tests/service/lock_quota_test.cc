// The Locks service's quotas (issue 24): sessions, waiting calls and lock entries per
// principal and per session. One principal at its quota is refused, naming the quota, its use
// and the key, while another is served as ever.
#include "lock_ownership_fixture.hpp"

namespace asn {
namespace {

using test::LockStack;
using ::testing::HasSubstr;

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

// ---- lock entries -----------------------------------------------------------------------------

// Entries are held ranges and the ranges of waiting requests: four a session, six a principal.
class LockEntryQuotaTest : public LockOwnershipTest {
 protected:
  LockEntryQuotaTest() {
    config_.max_entries_per_session = 4;
    config_.max_entries_per_principal = 6;
  }

  // `n` ranges of 10 bytes, 20 bytes apart, from `from`.
  static v1::LockRequest ranges(uint64_t session, const std::string& file, int n,
                                uint64_t from = 0) {
    v1::LockRequest r = request(session, file, from, 10);
    for (int i = 1; i < n; ++i) {
      auto* range = r.add_ranges();
      range->set_offset(from + 20 * static_cast<uint64_t>(i));
      range->set_length(10);
    }
    return r;
  }

  static grpc::Status try_lock_on(v1::Locks::Stub& stub, const v1::LockRequest& r,
                                  v1::LockResponse* out = nullptr) {
    grpc::ClientContext context;
    v1::LockResponse response;
    const grpc::Status status = stub.TryLock(&context, r, &response);
    if (out != nullptr) *out = response;
    return status;
  }

  static void expect_over(const grpc::Status& st, const std::vector<std::string>& says) {
    EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
    for (const auto& s : says) EXPECT_THAT(st.error_message(), HasSubstr(s));
  }
};

TEST_P(LockEntryQuotaTest, ASessionAtItsEntryQuotaIsRefusedUntilItUnlocks) {
  const uint64_t s = open();
  ASSERT_OK(try_lock(ranges(s, "f", 3)));
  expect_over(try_lock(ranges(s, "g", 2)),
              {"locks.max_entries_per_session", "uses 3 lock entries", "needs 2 lock entries"});
  EXPECT_EQ(list("g").held_size(), 0) << "a refused lock granted something";
  ASSERT_OK(try_lock(ranges(s, "g", 1)));  // four: at the quota, not over it
  expect_over(try_lock(ranges(s, "h", 1)), {"uses 4 lock entries"});
  // An unlock gives room back (the count is read again: the bound knows no releases).
  ASSERT_OK(unlock(s, "f", 0, 10));
  ASSERT_OK(try_lock(ranges(s, "h", 1)));
  // Another session of the same principal has room of its own (the principal has 6).
  const uint64_t other = open();
  ASSERT_OK(try_lock(ranges(other, "k", 2)));
}

TEST_P(LockEntryQuotaTest, AnUnlockThatCutsALockInTwoIsRefusedAtTheQuotaAWholeOneIsNot) {
  const uint64_t s = open();
  ASSERT_OK(try_lock(request(s, "f", 0, 100)));
  ASSERT_OK(try_lock(ranges(s, "g", 3)));  // four entries: at the quota
  expect_over(unlock(s, "f", 40, 10),
              {"this unlock, which cuts locks in two,", "locks.max_entries_per_session"});
  const auto f = list("f");
  ASSERT_EQ(f.held_size(), 1) << "a refused unlock changed the locks";
  EXPECT_EQ(f.held(0).range().length(), 100u);
  // Cutting off an end, or unlocking whole locks, adds no entry: never refused.
  ASSERT_OK(unlock(s, "f", 0, 40));
  ASSERT_OK(unlock(s, "f", 40, 10));
  ASSERT_OK(unlock(s, "g", 0, 10));
  // With room again, a cut is fine.
  ASSERT_OK(unlock(s, "f", 70, 10));
}

TEST_P(LockEntryQuotaTest, APrincipalAtItsEntryQuotaIsRefusedAndAnotherIsServed) {
  const auto a = open_on(*other_uid_, "a"), b = open_on(*other_uid_, "b");
  ASSERT_OK(try_lock_on(*other_uid_, ranges(a.session(), "f", 4)));
  ASSERT_OK(try_lock_on(*other_uid_, ranges(b.session(), "g", 2)));
  expect_over(
      try_lock_on(*other_uid_, ranges(b.session(), "h", 1)),
      {"locks.max_entries_per_principal", "uid 1001 uses 6 lock entries over its 2 sessions"});
  const uint64_t mine = open();
  ASSERT_OK(try_lock(ranges(mine, "h", 4)));
  // Closing a session gives its entries back to its principal.
  grpc::ClientContext context;
  v1::CloseSessionRequest close;
  close.set_session(a.session());
  v1::CloseSessionResponse closed;
  ASSERT_OK(other_uid_->CloseSession(&context, close, &closed));
  ASSERT_OK(try_lock_on(*other_uid_, ranges(b.session(), "h2", 2)));
}

TEST_P(LockEntryQuotaTest, TheRangesOfAWaitingRequestCount) {
  const uint64_t holder = open(), s = open();
  ASSERT_OK(try_lock(request(holder, "f", 0, 1000)));
  auto waiting = lock_async(ranges(s, "f", 3));
  wait_for_waiting(1);
  expect_over(try_lock(ranges(s, "g", 2)),
              {"uses 3 lock entries", "locks.max_entries_per_session"});
  ASSERT_OK(unlock(holder, "f", 0, 1000));
  ASSERT_TRUE(finishes(*waiting, std::chrono::seconds(30)));
  ASSERT_OK(waiting->done.get());
  expect_over(try_lock(ranges(s, "g", 2)), {"uses 3 lock entries"});  // now held
  ASSERT_OK(try_lock(ranges(s, "g", 1)));
}

TEST_P(LockEntryQuotaTest, TheCountOutlivesARestart) {
  const uint64_t s = open();
  v1::LockResponse granted;
  ASSERT_OK(try_lock(ranges(s, "f", 4), &granted));
  restart(scaled_s(5));
  keep_alive(s, false, std::vector<uint64_t>{granted.token()});  // it holds what it held
  expect_over(try_lock(ranges(s, "g", 1)), {"uses 4 lock entries"});
  ASSERT_OK(unlock(s, "f", 0, 10));
  ASSERT_OK(try_lock(ranges(s, "g", 1)));
}

INSTANTIATE_TEST_SUITE_P(Domains, LockEntryQuotaTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

// A principal's share of the switch's table: two entries here.
class LockSwitchShareTest : public LockEntryQuotaTest {
 protected:
  LockSwitchShareTest() { config_.max_switch_entries_per_principal = 2; }
};

TEST_P(LockSwitchShareTest, OverItsShareOfTheSwitchTableAPrincipalsNewFilesGoToSoftware) {
  const uint64_t s = open();
  v1::LockResponse r;
  ASSERT_OK(try_lock(request(s, "a", 0, 1), &r));
  EXPECT_EQ(r.domain(), "switch");
  ASSERT_OK(try_lock(request(s, "b", 0, 1), &r));
  EXPECT_EQ(r.domain(), "switch");
  ASSERT_OK(try_lock(request(s, "c", 0, 1), &r));
  EXPECT_EQ(r.domain(), "software") << "a new file over the principal's share stayed in the switch";
  // A file that lives in the switch takes no more of this principal's entries.
  expect_over(try_lock(request(s, "a", 10, 1)),
              {"locks.max_switch_entries_per_principal", "uses 2 entries of the switch"});
  // Another principal has its own share.
  const auto eve = open_on(*other_uid_, "eve");
  ASSERT_OK(try_lock_on(*other_uid_, request(eve.session(), "d", 0, 1), &r));
  EXPECT_EQ(r.domain(), "switch");
  // Unlocking gives the share back.
  ASSERT_OK(unlock(s, "b", 0, 1));
  ASSERT_OK(try_lock(request(s, "a", 10, 1)));
}

// Only a board with a lock engine has a switch table.
INSTANTIATE_TEST_SUITE_P(Switch, LockSwitchShareTest, ::testing::Values(LockStack::Kind::kSwitch),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

}  // namespace
}  // namespace asn

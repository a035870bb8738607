// The lock table (lib/locks lock_table.hpp), granting and waiting: shared and exclusive,
// a session's own locks, try mode, FIFO per conflict, grants in file-offset order (004
// L1226), atomic multi-range and strided requests, fencing tokens, and bad requests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>

#include "asn/locks/lock_table.hpp"

namespace asn::locks {

// Readable failures: "session 1 request 2 exclusive token 3 [0, 10)".
inline void PrintTo(const HeldLock& held, std::ostream* os) {
  *os << "session " << held.session << " request " << held.request << " " << name(held.mode)
      << " token " << held.token << " " << to_string(held.range);
}
inline void PrintTo(const ByteRange& range, std::ostream* os) { *os << to_string(range); }

namespace {

using ::testing::HasSubstr;
using Ranges = std::vector<ByteRange>;

constexpr Mode kS = Mode::kShared;
constexpr Mode kX = Mode::kExclusive;

Request make(SessionId session, Mode mode, RangeSpec ranges, Wait wait = Wait::kBlock,
             std::string file = "f") {
  return Request{session, std::move(file), mode, std::move(ranges), wait};
}

Outcome lock(LockTable& table, SessionId session, Mode mode, Ranges ranges,
             Wait wait = Wait::kBlock) {
  return table.request(make(session, mode, std::move(ranges), wait));
}

std::vector<RequestId> requests(const std::vector<Grant>& grants) {
  std::vector<RequestId> out;
  for (const Grant& g : grants) out.push_back(g.request);
  return out;
}

TEST(LocksTable, SharedLocksShareAndExclusiveExcludes) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  Outcome first = lock(table, a, kS, {{0, 100}});
  ASSERT_EQ(first.status, Status::kGranted);
  EXPECT_EQ(first.grant->ranges, (Ranges{{0, 100}}));
  EXPECT_EQ(lock(table, b, kS, {{50, 100}}).status, Status::kGranted);
  Outcome refused = lock(table, c, kX, {{90, 5}}, Wait::kTry);
  ASSERT_EQ(refused.status, Status::kConflict);
  EXPECT_EQ(refused.request, 0u);
  EXPECT_EQ(refused.error->kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(refused.error->what(),
              HasSubstr("range 0 [90, 95) of file 'f' conflicts with session 1's shared lock "
                        "on [0, 100) (request 1, token 1)"));
  EXPECT_EQ(lock(table, c, kX, {{200, 10}}).status, Status::kGranted);
  EXPECT_EQ(lock(table, c, kS, {{150, 10}}, Wait::kTry).status, Status::kGranted);  // touching
  EXPECT_EQ(lock(table, a, kX, {{205, 1}}).status, Status::kQueued);
  Stats stats = table.stats();
  EXPECT_EQ(stats.held_entries, 4u);
  EXPECT_EQ(stats.waiting_entries, 1u);
  EXPECT_EQ(stats.entries_in_use, 5u);
  EXPECT_EQ(stats.grants, 4u);
  EXPECT_EQ(stats.queued, 1u);
  EXPECT_EQ(stats.conflicts, 1u);
}

TEST(LocksTable, ASessionsOwnLocksDoNotConflictWithIt) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  EXPECT_EQ(lock(table, a, kS, {{10, 10}}).status, Status::kGranted);
  EXPECT_EQ(lock(table, a, kX, {{50, 100}}).status, Status::kGranted);
  // Each grant keeps its own entry and token: nothing is merged or replaced.
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 3u);
  EXPECT_EQ(locks.held[0], (HeldLock{a, 1, kX, 1, {0, 100}}));
  EXPECT_EQ(locks.held[1], (HeldLock{a, 2, kS, 2, {10, 10}}));
  EXPECT_EQ(locks.held[2], (HeldLock{a, 3, kX, 3, {50, 100}}));
  EXPECT_EQ(lock(table, b, kS, {{0, 1}}, Wait::kTry).status, Status::kConflict);
  EXPECT_EQ(lock(table, b, kS, {{150, 1}}, Wait::kTry).status, Status::kGranted);
}

TEST(LocksTable, LaterCompatibleRequestDoesNotOvertakeEarlierConflictingWaiter) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kS, {{0, 10}}).status, Status::kGranted);
  Outcome writer = lock(table, b, kX, {{0, 10}});
  ASSERT_EQ(writer.status, Status::kQueued);
  // A's shared lock alone would let C in, but B asked first and conflicts with C.
  Outcome tried = lock(table, c, kS, {{5, 10}}, Wait::kTry);
  ASSERT_EQ(tried.status, Status::kConflict);
  EXPECT_THAT(tried.error->what(),
              HasSubstr("conflicts with request 2 of session 2 (exclusive), waiting before "
                        "it: a request never overtakes an earlier conflicting waiter"));
  Outcome reader = lock(table, c, kS, {{5, 10}});
  ASSERT_EQ(reader.status, Status::kQueued);

  Change released = table.release(a, "f", Ranges{{0, 10}});
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(requests(released.granted), (std::vector<RequestId>{writer.request}));
  released = table.release(b, "f", Ranges{{0, 10}});
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(requests(released.granted), (std::vector<RequestId>{reader.request}));
}

TEST(LocksTable, FifoIsPerConflict) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 10}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, b, kX, {{0, 10}}).status, Status::kQueued);
  // Bytes nobody waits for are granted at once, waiters elsewhere or not.
  EXPECT_EQ(lock(table, c, kX, {{10, 10}}).status, Status::kGranted);
  // Two shared waiters do not conflict with each other: both wait only for A, then B.
  ASSERT_EQ(lock(table, a, kX, {{100, 10}}).status, Status::kGranted);
  Outcome r1 = lock(table, b, kS, {{100, 10}});
  Outcome r2 = lock(table, c, kS, {{105, 10}});
  ASSERT_EQ(r1.status, Status::kQueued);
  ASSERT_EQ(r2.status, Status::kQueued);
  Change change = table.release(a, "f", Ranges{{100, 10}});
  EXPECT_EQ(requests(change.granted), (std::vector<RequestId>{r1.request, r2.request}));
}

TEST(LocksTable, GrantsAfterAReleaseAreIssuedInFileOffsetOrder) {
  LockTable table;
  SessionId a = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  SessionId d = table.open_session();
  Outcome wb = lock(table, b, kX, {{50, 10}});
  Outcome wc = lock(table, c, kX, {{10, 10}});
  Outcome wd = lock(table, d, kX, {{80, 10}});
  ASSERT_EQ(wd.status, Status::kQueued);
  Change change = table.release(a, "f", Ranges{{0, 100}});
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change.released, 1u);
  EXPECT_EQ(requests(change.granted), (std::vector<RequestId>{wc.request, wb.request, wd.request}));
  ASSERT_EQ(change.granted.size(), 3u);
  EXPECT_EQ(change.granted[0].ranges, (Ranges{{10, 10}}));
  EXPECT_EQ(change.granted[0].session, c);
  EXPECT_EQ(change.granted[0].file, "f");
  EXPECT_LT(change.granted[0].token, change.granted[1].token);  // tokens follow the order
  EXPECT_LT(change.granted[1].token, change.granted[2].token);
}

TEST(LocksTable, MultiRangeRequestIsGrantedWholeOrNotAtAll) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{100, 100}}).status, Status::kGranted);
  // [0, 10) is free but [150, 160) is not: nothing is granted, in try mode or waiting.
  Outcome tried = lock(table, b, kX, {{150, 10}, {0, 10}}, Wait::kTry);
  ASSERT_EQ(tried.status, Status::kConflict);
  EXPECT_EQ(tried.error->index(), 0u);  // named as the client listed it
  EXPECT_EQ(table.list("f").held.size(), 1u);
  Outcome waiting = lock(table, b, kX, {{150, 10}, {0, 10}});
  ASSERT_EQ(waiting.status, Status::kQueued);
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 1u);
  EXPECT_EQ(locks.held[0].session, a);
  ASSERT_EQ(locks.waiting.size(), 1u);
  EXPECT_EQ(locks.waiting[0].ranges, (Ranges{{0, 10}, {150, 10}}));  // offset order

  Change change = table.release(a, "f", Ranges{{100, 100}});
  ASSERT_EQ(change.granted.size(), 1u);
  EXPECT_EQ(change.granted[0].ranges, (Ranges{{0, 10}, {150, 10}}));
  locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 2u);
  EXPECT_EQ(locks.held[0].token, locks.held[1].token);  // one grant, one token
}

TEST(LocksTable, StridedRequestHoldsItsBlocks) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  Outcome strided = table.request(make(a, kX, Strided{0, 10, 100, 4}));
  ASSERT_EQ(strided.status, Status::kGranted);
  EXPECT_EQ(strided.grant->ranges, (Ranges{{0, 10}, {100, 10}, {200, 10}, {300, 10}}));
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 4u);
  for (const HeldLock& held : locks.held) EXPECT_EQ(held.token, strided.grant->token);
  EXPECT_EQ(lock(table, b, kX, {{10, 90}}, Wait::kTry).status, Status::kGranted);  // the gap
  Outcome tried = lock(table, b, kX, {{295, 10}}, Wait::kTry);
  ASSERT_EQ(tried.status, Status::kConflict);
  EXPECT_THAT(tried.error->what(), HasSubstr("exclusive lock on [300, 310)"));
  // Two interleaved strided patterns do not conflict.
  EXPECT_EQ(table.request(make(b, kX, Strided{110, 90, 100, 3}, Wait::kTry)).status,
            Status::kGranted);
  Outcome bad = table.request(make(b, kX, Strided{1000, 10, 5, 3}));
  ASSERT_EQ(bad.status, Status::kInvalid);
  EXPECT_THAT(bad.error->what(), HasSubstr("stride 5 is less than the block length 10"));
}

TEST(LocksTable, FencingTokensIncreasePerFile) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  std::map<std::string, Token> last;
  auto check = [&](const Grant& grant) {
    EXPECT_GT(grant.token, last[grant.file]) << grant.file;
    last[grant.file] = grant.token;
  };
  for (int i = 0; i < 20; ++i) {
    std::string file = i % 3 == 0 ? "g" : "f";
    Outcome out =
        table.request(make(i % 2 ? a : b, kS, Ranges{{uint64_t(i) * 10, 5}}, Wait::kBlock, file));
    ASSERT_EQ(out.status, Status::kGranted);
    check(*out.grant);
  }
  ASSERT_EQ(lock(table, a, kX, {{1000, 10}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, b, kX, {{1000, 10}}).status, Status::kQueued);
  Change change = table.expire(a);
  ASSERT_EQ(change.granted.size(), 1u);
  check(change.granted[0]);
  // A file whose locks are all gone keeps counting up.
  ASSERT_TRUE(table.expire(b).ok());
  SessionId c = table.open_session();
  Outcome again = lock(table, c, kX, {{0, 1}});
  ASSERT_EQ(again.status, Status::kGranted);
  check(*again.grant);
}

TEST(LocksTable, FileIdsAreOpaqueAndBounded) {
  LockTable table;
  SessionId a = table.open_session();
  Outcome empty = table.request(make(a, kS, Ranges{{0, 1}}, Wait::kBlock, ""));
  ASSERT_EQ(empty.status, Status::kInvalid);
  EXPECT_EQ(empty.error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(empty.error->what(), HasSubstr("file id is empty"));
  Outcome long_id = table.request(make(a, kS, Ranges{{0, 1}}, Wait::kBlock, std::string(129, 'x')));
  ASSERT_EQ(long_id.status, Status::kInvalid);
  EXPECT_THAT(long_id.error->what(), HasSubstr("is 129 bytes; at most 128 are accepted"));
  std::string binary("\0\xff/x", 4);
  EXPECT_EQ(table.request(make(a, kS, Ranges{{0, 1}}, Wait::kBlock, binary)).status,
            Status::kGranted);
  EXPECT_EQ(table.request(make(a, kS, Ranges{{0, 1}}, Wait::kBlock, std::string(128, 'x'))).status,
            Status::kGranted);
  EXPECT_EQ(table.list(binary).held.size(), 1u);
  EXPECT_TRUE(table.list("f").held.empty());
  EXPECT_EQ(table.stats().files, 2u);
}

TEST(LocksTable, BadRangesAreRefusedWithNothingGranted) {
  LockTable table;
  SessionId a = table.open_session();
  auto refused = [&](RangeSpec ranges) {
    Outcome out = table.request(make(a, kX, std::move(ranges)));
    EXPECT_EQ(out.status, Status::kInvalid);
    EXPECT_EQ(out.error->kind(), ErrorKind::kInvalidArgument);
    return std::string(out.error->what());
  };
  EXPECT_THAT(refused(Ranges{}), HasSubstr("at least one range"));
  EXPECT_THAT(refused(Ranges{{0, 10}, {20, 0}}), HasSubstr("range 1 at offset 20 is empty"));
  EXPECT_THAT(refused(Ranges{{0, 10}, {5, 10}}), HasSubstr("range 1 [5, 15) overlaps range 0"));
  EXPECT_THAT(refused(Ranges{{~uint64_t{0} - 1, 3}}), HasSubstr("past 2^64"));
  Ranges million(1'000'000);
  for (size_t i = 0; i < million.size(); ++i) million[i] = {i * 2, 1};
  EXPECT_THAT(refused(million), HasSubstr("1000000 ranges in one request; at most 65536"));
  EXPECT_THAT(refused(Strided{0, 1, 2, 1'000'000}), HasSubstr("at most 65536 blocks"));
  EXPECT_EQ(table.stats().entries_in_use, 0u);
  EXPECT_EQ(table.stats().files, 0u);
}

TEST(LocksTable, TableLimitsSetTheMostRangesPerRequest) {
  LockTable table(TableLimits{100, 3});
  SessionId a = table.open_session();
  EXPECT_EQ(lock(table, a, kS, {{0, 1}, {2, 1}, {4, 1}}).status, Status::kGranted);
  Outcome out = lock(table, a, kS, {{10, 1}, {12, 1}, {14, 1}, {16, 1}});
  ASSERT_EQ(out.status, Status::kInvalid);
  EXPECT_THAT(out.error->what(), HasSubstr("4 ranges in one request; at most 3"));
}

TEST(LocksTable, UpgradeIsANewRequestThatWaitsForOtherSharers) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kS, {{0, 10}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, b, kS, {{0, 10}}).status, Status::kGranted);
  Outcome upgrade = lock(table, a, kX, {{0, 10}});
  ASSERT_EQ(upgrade.status, Status::kQueued);  // B shares the bytes
  Change change = table.release(b, "f", Ranges{{0, 10}});
  ASSERT_EQ(requests(change.granted), (std::vector<RequestId>{upgrade.request}));
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 2u);  // A's shared lock and its exclusive one
  EXPECT_EQ(locks.held[0].mode, kS);
  EXPECT_EQ(locks.held[1].mode, kX);
  // One release drops both.
  ASSERT_TRUE(table.release(a, "f", Ranges{{0, 10}}).ok());
  EXPECT_TRUE(table.list("f").held.empty());
}

TEST(LocksTable, ListShowsHeldByOffsetAndWaitersInArrivalOrder) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{500, 10}, {0, 10}}).status, Status::kGranted);
  Outcome w1 = lock(table, b, kS, {{505, 1}});
  Outcome w2 = lock(table, b, kX, {{0, 1}, {600, 1}});
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 2u);
  EXPECT_EQ(locks.held[0].range, (ByteRange{0, 10}));
  EXPECT_EQ(locks.held[1].range, (ByteRange{500, 10}));
  ASSERT_EQ(locks.waiting.size(), 2u);
  EXPECT_EQ(locks.waiting[0].request, w1.request);
  EXPECT_EQ(locks.waiting[1].request, w2.request);
  EXPECT_EQ(locks.waiting[1].mode, kX);
  EXPECT_EQ(locks.waiting[1].ranges, (Ranges{{0, 1}, {600, 1}}));
  EXPECT_EQ(name(Status::kTableFull), "table full");
}

TEST(LocksTable, RangesReachTheLastByte) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  uint64_t max = ~uint64_t{0};
  ASSERT_EQ(lock(table, a, kX, {{max - 9, 10}}).status, Status::kGranted);
  EXPECT_EQ(lock(table, b, kX, {{max, 1}}, Wait::kTry).status, Status::kConflict);
  EXPECT_EQ(lock(table, b, kX, {{0, max - 9}}, Wait::kTry).status, Status::kGranted);
  Change change = table.release(a, "f", Ranges{{max - 4, 5}});
  ASSERT_TRUE(change.ok());
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 2u);
  EXPECT_EQ(locks.held[1].range, (ByteRange{max - 9, 5}));
  EXPECT_EQ(lock(table, b, kX, {{max, 1}}, Wait::kTry).status, Status::kGranted);
}

}  // namespace
}  // namespace asn::locks

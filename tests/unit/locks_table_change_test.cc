// The lock table (lib/locks lock_table.hpp), what frees bytes: partial unlock and its split,
// double unlock, downgrade in place, cancel, session expiry, the fixed capacity (table
// full), and the sizes the table must stay fast at (1,000,000 entries, 10,000 waiters).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
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

Outcome lock(LockTable& table, SessionId session, Mode mode, Ranges ranges,
             std::string file = "f") {
  return table.request(Request{session, std::move(file), mode, std::move(ranges)});
}

std::vector<RequestId> requests(const std::vector<Grant>& grants) {
  std::vector<RequestId> out;
  for (const Grant& g : grants) out.push_back(g.request);
  return out;
}

std::vector<ByteRange> held_ranges(const LockTable& table, const std::string& file = "f") {
  std::vector<ByteRange> out;
  for (const HeldLock& held : table.list(file).held) out.push_back(held.range);
  return out;
}

TEST(LocksTableChange, PartialUnlockSplitsTheLock) {
  LockTable table;
  SessionId a = table.open_session();
  Outcome held = lock(table, a, kX, {{0, 100}});
  ASSERT_EQ(held.status, Status::kGranted);
  Change change = table.release(a, "f", Ranges{{40, 20}});
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change.released, 1u);
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 2u);
  EXPECT_EQ(locks.held[0], (HeldLock{a, held.request, kX, held.grant->token, {0, 40}}));
  EXPECT_EQ(locks.held[1], (HeldLock{a, held.request, kX, held.grant->token, {60, 40}}));
  EXPECT_EQ(table.stats().held_entries, 2u);
  // Unlocking across three locks trims two and drops the one inside; then nothing is left.
  ASSERT_EQ(lock(table, a, kS, {{40, 20}}).status, Status::kGranted);
  Change across = table.release(a, "f", Ranges{{30, 40}});
  ASSERT_TRUE(across.ok());
  EXPECT_EQ(across.released, 3u);
  EXPECT_EQ(held_ranges(table), (Ranges{{0, 30}, {70, 30}}));
  ASSERT_TRUE(table.release(a, "f", Ranges{{70, 30}, {0, 30}}).ok());
  EXPECT_TRUE(table.list("f").held.empty());
  EXPECT_EQ(table.stats().files, 0u);
  EXPECT_EQ(table.stats().releases, 3u);
}

TEST(LocksTableChange, PartialUnlockGrantsOnlyWaitersInsideTheHole) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  Outcome inside = lock(table, b, kX, {{45, 5}});
  Outcome across = lock(table, c, kX, {{30, 20}});
  ASSERT_EQ(across.status, Status::kQueued);
  Change change = table.release(a, "f", Ranges{{40, 20}});
  EXPECT_EQ(requests(change.granted), (std::vector<RequestId>{inside.request}));
  EXPECT_EQ(table.list("f").waiting.size(), 1u);
}

TEST(LocksTableChange, DoubleUnlockIsAnErrorThatChangesNothing) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, b, kS, {{200, 10}}).status, Status::kGranted);
  ASSERT_TRUE(table.release(a, "f", Ranges{{0, 50}}).ok());
  FileLocks before = table.list("f");
  Stats stats_before = table.stats();

  Change again = table.release(a, "f", Ranges{{0, 50}});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error->kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(again.error->what(),
              HasSubstr("session 1 holds no lock on bytes [0, 50) of file 'f' (range 0 [0, "
                        "50)): released already, or never granted; nothing was released"));
  // Partly held: the part not held is named, and the held part stays held.
  Change partly = table.release(a, "f", Ranges{{60, 10}, {90, 20}});
  ASSERT_FALSE(partly.ok());
  EXPECT_EQ(partly.error->index(), 1u);
  EXPECT_THAT(partly.error->what(), HasSubstr("bytes [100, 110)"));
  // Another session's lock is not ours to release.
  Change theirs = table.release(a, "f", Ranges{{200, 10}});
  ASSERT_FALSE(theirs.ok());
  EXPECT_THAT(theirs.error->what(), HasSubstr("bytes [200, 210)"));
  Change unknown = table.release(a, "no-such-file", Ranges{{0, 1}});
  ASSERT_FALSE(unknown.ok());
  Change bad = table.release(a, "f", Ranges{{60, 10}, {65, 10}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error->kind(), ErrorKind::kInvalidArgument);

  FileLocks after = table.list("f");
  EXPECT_EQ(after.held, before.held);
  EXPECT_EQ(table.stats().releases, stats_before.releases);
  EXPECT_EQ(table.stats().entries_in_use, stats_before.entries_in_use);
}

TEST(LocksTableChange, DowngradeInPlaceWakesSharedWaiters) {
  LockTable table;
  SessionId a = table.open_session();
  Outcome held = lock(table, a, kX, {{0, 100}});
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  SessionId d = table.open_session();
  SessionId e = table.open_session();
  Outcome reader_late = lock(table, b, kS, {{50, 10}});
  Outcome writer = lock(table, d, kX, {{20, 10}});
  Outcome reader_early = lock(table, c, kS, {{0, 10}});
  Outcome behind_writer = lock(table, e, kS, {{25, 1}});  // waits for D, not only A
  ASSERT_EQ(behind_writer.status, Status::kQueued);
  Change change = table.downgrade(a, "f", Ranges{{0, 100}});
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(requests(change.granted),
            (std::vector<RequestId>{reader_early.request, reader_late.request}));
  EXPECT_LT(change.granted[0].token, change.granted[1].token);
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 3u);  // C's [0, 10) first (it ends first), then A's, then B's
  EXPECT_EQ(locks.held[0].session, c);
  EXPECT_EQ(locks.held[1], (HeldLock{a, held.request, kS, held.grant->token, {0, 100}}));
  EXPECT_EQ(locks.held[2].session, b);
  ASSERT_EQ(locks.waiting.size(), 2u);
  EXPECT_EQ(locks.waiting[0].request, writer.request);
}

TEST(LocksTableChange, PartialDowngradeSplitsAndSharedIsNotDowngraded) {
  LockTable table;
  SessionId a = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, a, kS, {{200, 10}}).status, Status::kGranted);
  ASSERT_TRUE(table.downgrade(a, "f", Ranges{{20, 10}, {30, 10}}).ok());
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.held.size(), 4u);
  EXPECT_EQ(locks.held[0].range, (ByteRange{0, 20}));
  EXPECT_EQ(locks.held[0].mode, kX);
  EXPECT_EQ(locks.held[1].range, (ByteRange{20, 20}));  // touching pieces are one entry
  EXPECT_EQ(locks.held[1].mode, kS);
  EXPECT_EQ(locks.held[2].range, (ByteRange{40, 60}));
  EXPECT_EQ(locks.held[2].mode, kX);
  Change shared = table.downgrade(a, "f", Ranges{{200, 10}});
  ASSERT_FALSE(shared.ok());
  EXPECT_EQ(shared.error->kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(shared.error->what(), HasSubstr("holds no exclusive lock on bytes [200, 210)"));
  Change again = table.downgrade(a, "f", Ranges{{10, 20}});  // [20, 30) is shared already
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error->what(), HasSubstr("bytes [20, 30)"));
  EXPECT_EQ(table.list("f").held.size(), 4u);
}

TEST(LocksTableChange, CancelLetsTheWaitersBehindThrough) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kS, {{0, 10}}).status, Status::kGranted);
  Outcome writer = lock(table, b, kX, {{0, 10}});
  Outcome reader = lock(table, c, kS, {{0, 10}});
  ASSERT_EQ(reader.status, Status::kQueued);
  Change change = table.cancel(writer.request);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change.cancelled, (std::vector<RequestId>{writer.request}));
  EXPECT_EQ(requests(change.granted), (std::vector<RequestId>{reader.request}));

  Change again = table.cancel(writer.request);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error->kind(), ErrorKind::kFailedPrecondition);
  Change granted = table.cancel(reader.request);
  ASSERT_FALSE(granted.ok());
  EXPECT_THAT(granted.error->what(), HasSubstr("is not waiting"));
  Change unknown = table.cancel(999);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error->kind(), ErrorKind::kNotFound);
  EXPECT_EQ(table.stats().cancelled, 1u);
}

TEST(LocksTableChange, ExpiryReleasesAllAndCancelsTheSessionsWaiters) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, a, kS, {{0, 10}, {20, 10}}, "g").status, Status::kGranted);
  ASSERT_EQ(lock(table, c, kX, {{0, 10}}, "h").status, Status::kGranted);
  Outcome a_waits = lock(table, a, kX, {{5, 1}}, "h");
  Outcome b_waits_f = lock(table, b, kS, {{50, 10}});
  Outcome b_waits_g = lock(table, b, kX, {{0, 30}}, "g");
  ASSERT_EQ(b_waits_g.status, Status::kQueued);

  Change change = table.expire(a);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change.released, 3u);
  EXPECT_EQ(change.cancelled, (std::vector<RequestId>{a_waits.request}));
  // By file id, then offset.
  EXPECT_EQ(requests(change.granted),
            (std::vector<RequestId>{b_waits_f.request, b_waits_g.request}));
  EXPECT_EQ(change.granted[1].file, "g");
  EXPECT_TRUE(table.list("h").waiting.empty());
  EXPECT_EQ(table.stats().sessions, 2u);
  EXPECT_EQ(table.stats().expired, 1u);

  // The session is gone: its requests and unlocks are refused, a second expiry too.
  Outcome late = lock(table, a, kS, {{1000, 1}});
  ASSERT_EQ(late.status, Status::kInvalid);
  EXPECT_EQ(late.error->kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(late.error->what(), HasSubstr("session 1 has ended"));
  EXPECT_FALSE(table.release(a, "f", Ranges{{0, 1}}).ok());
  Change twice = table.expire(a);
  ASSERT_FALSE(twice.ok());
  EXPECT_FALSE(table.expire(12345).ok());
  EXPECT_EQ(table.expire(12345).error->kind(), ErrorKind::kNotFound);
}

TEST(LocksTableChange, WaiterOfAnExpiredSessionIsNeverGranted) {
  LockTable table;
  SessionId c = table.open_session();
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, c, kX, {{0, 10}}).status, Status::kGranted);
  ASSERT_EQ(lock(table, a, kX, {{0, 10}}).status, Status::kQueued);
  Outcome b_waits = lock(table, b, kX, {{0, 10}});
  Change expired = table.expire(a);
  EXPECT_TRUE(expired.granted.empty());  // B still waits for C
  Change released = table.release(c, "f", Ranges{{0, 10}});
  ASSERT_EQ(released.granted.size(), 1u);
  EXPECT_EQ(released.granted[0].request, b_waits.request);
  for (const HeldLock& held : table.list("f").held) EXPECT_NE(held.session, a);
}

TEST(LocksTableChange, FullTableRefusesWithNothingGranted) {
  LockTable table(TableLimits{4, kDefaultMaxRanges});
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 10}, {20, 10}, {40, 10}}).status, Status::kGranted);
  Outcome full = lock(table, b, kX, {{100, 10}, {200, 10}});
  ASSERT_EQ(full.status, Status::kTableFull);
  EXPECT_EQ(full.error->kind(), ErrorKind::kResourceExhausted);
  EXPECT_THAT(full.error->what(),
              HasSubstr("table full: the request needs 2 entries; 1 of 4 are free (3 held, 0 "
                        "waiting)"));
  EXPECT_EQ(table.list("f").held.size(), 3u);
  // A waiting range takes an entry too.
  ASSERT_EQ(lock(table, b, kX, {{0, 1}}).status, Status::kQueued);
  EXPECT_EQ(lock(table, b, kS, {{500, 1}}).status, Status::kTableFull);
  Stats stats = table.stats();
  EXPECT_EQ(stats.entries_in_use, 4u);
  EXPECT_EQ(stats.table_full, 2u);
  // A release that splits a lock needs one more entry: refused, nothing changed.
  ASSERT_TRUE(table.release(a, "f", Ranges{{40, 10}}).ok());  // frees one
  ASSERT_TRUE(table.release(a, "f", Ranges{{22, 2}}).ok());   // takes it back
  Change split = table.release(a, "f", Ranges{{25, 1}});
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.error->kind(), ErrorKind::kResourceExhausted);
  EXPECT_THAT(split.error->what(), HasSubstr("this release splits a lock and needs 1 entry"));
  EXPECT_EQ(held_ranges(table), (Ranges{{0, 10}, {20, 2}, {24, 6}}));
  EXPECT_FALSE(table.downgrade(a, "f", Ranges{{26, 1}}).ok());
  EXPECT_TRUE(table.release(a, "f", Ranges{{24, 6}}).ok());  // no split: fine
}

// The sizes of issue 9: a million held entries and ten thousand waiters.
// Shared requests look only at the exclusive holders and waiters (they cannot conflict with
// shared ones): an exclusive waiter among shared ones still holds back the later ones it
// overlaps, and not its own session's.
TEST(LocksTableChange, SharedWaitersNeverOvertakeAnExclusiveWaiterBetweenThem) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  SessionId d = table.open_session();
  SessionId e = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  Outcome first_reader = lock(table, b, kS, {{0, 10}});
  Outcome writer = lock(table, c, kX, {{5, 10}});
  Outcome behind_writer = lock(table, d, kS, {{0, 10}});
  Outcome apart = lock(table, d, kS, {{50, 10}});
  Outcome writers_own = lock(table, c, kS, {{12, 2}});  // c's own waiter does not block it
  ASSERT_EQ(writers_own.status, Status::kQueued);

  Change release = table.release(a, "f", Ranges{{0, 100}});
  ASSERT_TRUE(release.ok());
  EXPECT_EQ(requests(release.granted),
            (std::vector<RequestId>{first_reader.request, writers_own.request, apart.request}));
  EXPECT_LT(release.granted[0].token, release.granted[1].token);
  EXPECT_LT(release.granted[1].token, release.granted[2].token);
  // Only shared locks are held on [0, 10) now, yet a new shared request there waits behind
  // the exclusive waiter; one beside it is granted at once.
  Outcome tried = table.request(Request{e, "f", kS, Ranges{{8, 1}}, Wait::kTry});
  ASSERT_EQ(tried.status, Status::kConflict);
  EXPECT_THAT(tried.error->what(),
              HasSubstr("request " + std::to_string(writer.request) + " of session " +
                        std::to_string(c) + " (exclusive), waiting before it"));
  EXPECT_EQ(table.request(Request{e, "f", kS, Ranges{{20, 5}}, Wait::kTry}).status,
            Status::kGranted);

  Change first_gone = table.release(b, "f", Ranges{{0, 10}});
  EXPECT_EQ(requests(first_gone.granted), (std::vector<RequestId>{writer.request}));
  Change writer_gone = table.release(c, "f", Ranges{{5, 10}});
  EXPECT_EQ(requests(writer_gone.granted), (std::vector<RequestId>{behind_writer.request}));
}

// A downgrade turns exclusive bytes shared and an upgrade waits as an exclusive request: a
// shared request sees each at once.
TEST(LocksTableChange, DowngradeAndUpgradeChangeWhatSharedRequestsWaitFor) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  SessionId c = table.open_session();
  ASSERT_EQ(lock(table, a, kX, {{0, 100}}).status, Status::kGranted);
  ASSERT_TRUE(table.downgrade(a, "f", Ranges{{0, 50}}).ok());
  EXPECT_EQ(lock(table, b, kS, {{10, 5}}).status, Status::kGranted);
  Outcome reader = lock(table, b, kS, {{60, 5}});
  EXPECT_EQ(reader.status, Status::kQueued);  // [50, 100) is still exclusive

  Outcome upgrade = lock(table, a, kX, {{0, 50}});  // a holds it shared; b shares [10, 15)
  ASSERT_EQ(upgrade.status, Status::kQueued);
  Outcome behind_upgrade = lock(table, c, kS, {{20, 5}});
  EXPECT_EQ(behind_upgrade.status, Status::kQueued);
  Change release = table.release(a, "f", Ranges{{50, 50}});
  EXPECT_EQ(requests(release.granted), (std::vector<RequestId>{reader.request}));
  Change reader_gone = table.release(b, "f", Ranges{{10, 5}});
  EXPECT_EQ(requests(reader_gone.granted), (std::vector<RequestId>{upgrade.request}));
  Change downgraded = table.downgrade(a, "f", Ranges{{0, 50}});
  EXPECT_EQ(requests(downgraded.granted), (std::vector<RequestId>{behind_upgrade.request}));
}

TEST(LocksTableChange, StaysFastAtAMillionEntriesAndTenThousandWaiters) {
  auto start = std::chrono::steady_clock::now();
  LockTable table(TableLimits{1'010'000, kDefaultMaxRanges});
  std::vector<SessionId> holders;
  for (int s = 0; s < 1000; ++s) {  // 1000 sessions x 1000 ranges, 16 bytes apart
    holders.push_back(table.open_session());
    Ranges ranges;
    for (uint64_t j = 0; j < 1000; ++j) ranges.push_back({(uint64_t(s) * 1000 + j) * 16, 8});
    ASSERT_EQ(lock(table, holders.back(), kX, ranges).status, Status::kGranted);
  }
  SessionId waiter = table.open_session();
  for (uint64_t i = 0; i < 10'000; ++i) {  // one every 100 locks: 10 per holder
    ASSERT_EQ(lock(table, waiter, kX, {{i * 1600 + 4, 8}}).status, Status::kQueued);
  }
  EXPECT_EQ(table.stats().entries_in_use, 1'010'000u);
  SessionId other = table.open_session();
  EXPECT_EQ(lock(table, other, kX, {{1, 1}}).status, Status::kTableFull);
  for (uint64_t i = 0; i < 10'000; ++i) {  // try requests among a million entries
    Outcome out = table.request(Request{other, "f", kS, Ranges{{i * 1600 + 1, 2}}, Wait::kTry});
    ASSERT_EQ(out.status, Status::kConflict);
  }
  size_t granted = 0;
  for (int s = 0; s < 500; ++s) granted += table.expire(holders[s]).granted.size();
  EXPECT_EQ(granted, 5000u);
  EXPECT_EQ(table.stats().held_entries, 500'000u + 5000u);
  EXPECT_EQ(table.list("f").held.size(), 505'000u);
  // A shared crowd on one range: 10,000 readers behind one writer, all granted by one
  // release, then one writer behind them all.
  for (int s = 500; s < 1000; ++s) ASSERT_TRUE(table.expire(holders[s]).ok());
  ASSERT_TRUE(table.expire(waiter).ok());
  SessionId writer = table.open_session();
  ASSERT_EQ(lock(table, writer, kX, {{uint64_t{1} << 40, 1000}}, "g").status, Status::kGranted);
  std::vector<SessionId> readers;
  for (int i = 0; i < 10'000; ++i) {
    readers.push_back(table.open_session());
    ASSERT_EQ(lock(table, readers.back(), kS, {{(uint64_t{1} << 40) + 10, 10}}, "g").status,
              Status::kQueued);
  }
  Outcome last = lock(table, other, kX, {{(uint64_t{1} << 40) + 15, 1}}, "g");
  ASSERT_EQ(last.status, Status::kQueued);
  EXPECT_EQ(table.release(writer, "g", Ranges{{uint64_t{1} << 40, 1000}}).granted.size(), 10'000u);
  Change change;
  for (SessionId reader : readers) change = table.expire(reader);
  EXPECT_EQ(requests(change.granted), (std::vector<RequestId>{last.request}));
  // Recorded, not asserted: speed is the benchmarks' (bench/run.sh locks), and a timed
  // assertion failed under ThreadSanitizer on a loaded machine (62 s against 60). A quadratic
  // walk would take hours and end at ctest's timeout.
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
}

}  // namespace
}  // namespace asn::locks

// LockTable::withdraw() (issue 24): many waiting requests withdrawn at once leave the table
// as cancel() of each, latest first, does: the same requests granted, the same locks held
// and waiting, the same counters; its grants get their tokens in file-offset order. Its
// speed is measured in bench/locks_bench.cc (BM_Withdraw*), not here.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "asn/locks/durable.hpp"
#include "asn/locks/lock_table.hpp"
#include "support.hpp"

namespace asn::locks {
namespace {

using Ranges = std::vector<ByteRange>;

const std::vector<std::string> kFiles = {"a", "b", "c"};

// A table with held locks and waiters of several sessions on a few files, overlapping.
LockTable random_table(std::mt19937_64& rng, std::vector<RequestId>& waiting) {
  LockTable table(TableLimits{.capacity = 100000});
  std::vector<SessionId> sessions;
  for (int i = 0; i < 6; ++i) sessions.push_back(table.open_session());
  std::uniform_int_distribution<int> pick(0, 99);
  const int ops = 40 + pick(rng) * 3;
  for (int i = 0; i < ops; ++i) {
    Request r;
    r.session = sessions[rng() % sessions.size()];
    r.file = kFiles[rng() % kFiles.size()];
    r.mode = pick(rng) < 40 ? Mode::kShared : Mode::kExclusive;
    Ranges ranges;
    const int n = 1 + pick(rng) % 3;
    for (int k = 0; k < n; ++k) {
      ranges.push_back(
          {static_cast<uint64_t>(pick(rng)) * 10, 1 + static_cast<uint64_t>(pick(rng) % 40)});
    }
    std::sort(ranges.begin(), ranges.end(),
              [](const ByteRange& x, const ByteRange& y) { return x.offset < y.offset; });
    Ranges disjoint;  // a request's ranges may not overlap each other
    for (const ByteRange& range : ranges) {
      if (disjoint.empty() || disjoint.back().end() <= range.offset) disjoint.push_back(range);
    }
    r.ranges = disjoint;
    Outcome out = table.request(r);
    if (out.status == Status::kQueued) waiting.push_back(out.request);
  }
  return table;
}

// Everything of the table but the tokens of its held locks.
using HeldKey = std::tuple<SessionId, RequestId, Mode, uint64_t, uint64_t>;
struct View {
  std::map<std::string, std::vector<HeldKey>> held;
  std::map<std::string, std::vector<RequestId>> waiting;
  bool operator==(const View&) const = default;
};

View view_of(const LockTable& table) {
  View v;
  for (const std::string& file : kFiles) {
    FileLocks locks = table.list(file);
    auto& held = v.held[file];
    for (const HeldLock& h : locks.held) {
      held.emplace_back(h.session, h.request, h.mode, h.range.offset, h.range.length);
    }
    std::sort(held.begin(), held.end());
    for (const WaitingRequest& w : locks.waiting) v.waiting[file].push_back(w.request);
  }
  return v;
}

std::set<RequestId> granted_ids(const std::vector<Grant>& grants) {
  std::set<RequestId> out;
  for (const Grant& g : grants) out.insert(g.request);
  return out;
}

TEST(LocksWithdraw, EqualsCancellingEachLatestFirstOnRandomTables) {
  std::mt19937_64 rng(24);
  int withdrawals_that_granted = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<RequestId> waiting;
    LockTable bulk = random_table(rng, waiting);
    if (waiting.empty()) continue;
    LockTable one_by_one = LockTable::load(bulk.save(), bulk.limits());
    std::vector<RequestId> chosen;
    for (RequestId id : waiting) {
      if (rng() % 3 != 0) chosen.push_back(id);
    }
    std::shuffle(chosen.begin(), chosen.end(), rng);

    Change change = bulk.withdraw(chosen);
    ASSERT_TRUE(change.ok()) << change.error->what();
    std::vector<Grant> granted;
    std::vector<RequestId> cancelled;
    std::vector<RequestId> latest_first = chosen;
    std::sort(latest_first.rbegin(), latest_first.rend());
    for (RequestId id : latest_first) {
      Change one = one_by_one.cancel(id);
      ASSERT_TRUE(one.ok()) << "round " << round << ": " << one.error->what();
      granted.insert(granted.end(), one.granted.begin(), one.granted.end());
      cancelled.insert(cancelled.end(), one.cancelled.begin(), one.cancelled.end());
    }
    std::sort(cancelled.begin(), cancelled.end());
    EXPECT_EQ(change.cancelled, cancelled) << "round " << round;
    EXPECT_EQ(granted_ids(change.granted), granted_ids(granted)) << "round " << round;
    for (RequestId id : chosen) EXPECT_FALSE(granted_ids(change.granted).contains(id));
    EXPECT_EQ(view_of(bulk), view_of(one_by_one)) << "round " << round;
    const Stats a = bulk.stats();
    const Stats b = one_by_one.stats();
    EXPECT_EQ(a.grants, b.grants);
    EXPECT_EQ(a.cancelled, b.cancelled);
    EXPECT_EQ(a.entries_in_use, b.entries_in_use);
    EXPECT_EQ(a.waiting_requests, b.waiting_requests);
    EXPECT_EQ(a.files, b.files);
    EXPECT_EQ(bulk.next_token(), one_by_one.next_token());
    // The grants of the withdrawal: by file id, then in file-offset order with their tokens.
    for (size_t i = 1; i < change.granted.size(); ++i) {
      const Grant& x = change.granted[i - 1];
      const Grant& y = change.granted[i];
      ASSERT_LE(x.file, y.file);
      if (x.file == y.file) {
        EXPECT_LE(x.ranges.front().offset, y.ranges.front().offset);
      }
      EXPECT_LT(x.token, y.token);
    }
    if (!change.granted.empty()) ++withdrawals_that_granted;
    // And both tables go on alike: the rest withdrawn, every lock released.
    EXPECT_EQ(view_of(LockTable::load(bulk.save(), bulk.limits())), view_of(bulk));
  }
  EXPECT_GT(withdrawals_that_granted, 20);  // the runs did let waiters through
}

TEST(LocksWithdraw, ARequestNotWaitingRefusesTheWholeWithdrawal) {
  LockTable table;
  SessionId a = table.open_session();
  SessionId b = table.open_session();
  Outcome held = table.request({a, "f", Mode::kExclusive, Ranges{{0, 10}}});
  Outcome w1 = table.request({b, "f", Mode::kExclusive, Ranges{{0, 10}}});
  Outcome w2 = table.request({b, "f", Mode::kExclusive, Ranges{{5, 10}}});
  ASSERT_EQ(w2.status, Status::kQueued);
  const std::vector<RequestId> ids = {w1.request, held.request, w2.request};
  Change change = table.withdraw(ids);
  ASSERT_FALSE(change.ok());
  EXPECT_NE(std::string(change.error->what()).find("is not waiting"), std::string::npos);
  EXPECT_EQ(table.stats().waiting_requests, 2u);
  EXPECT_EQ(table.stats().cancelled, 0u);
  // Repeats count once; nothing to withdraw is no change.
  const std::vector<RequestId> twice = {w2.request, w1.request, w2.request};
  Change ok = table.withdraw(twice);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.cancelled, (std::vector<RequestId>{w1.request, w2.request}));
  EXPECT_TRUE(ok.granted.empty());
  EXPECT_EQ(table.stats().cancelled, 2u);
  EXPECT_TRUE(table.withdraw({}).ok());
}

// Many waiters of one range, as a cancelled stream's: withdrawing one session's leaves the
// others' in FIFO order, and the release grants the earliest left (the others wait behind
// it: a session's own requests never conflict, so b and c take turns in the line).
TEST(LocksWithdraw, ManyWaitersOfOneRangeKeepTheirOrder) {
  LockTable table(TableLimits{.capacity = 50000});
  SessionId holder = table.open_session();
  std::vector<SessionId> sessions = {table.open_session(), table.open_session(),
                                     table.open_session()};
  ASSERT_EQ(table.request({holder, "f", Mode::kExclusive, Ranges{{0, 100}}}).status,
            Status::kGranted);
  std::vector<RequestId> of_a;
  std::vector<RequestId> rest;
  for (int i = 0; i < 30000; ++i) {
    Outcome out = table.request({sessions[i % 3], "f", Mode::kExclusive, Ranges{{0, 100}}});
    ASSERT_EQ(out.status, Status::kQueued);
    (i % 3 == 0 ? of_a : rest).push_back(out.request);
  }
  Change change = table.withdraw(of_a);
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change.cancelled.size(), of_a.size());
  EXPECT_TRUE(change.granted.empty());
  FileLocks locks = table.list("f");
  ASSERT_EQ(locks.waiting.size(), rest.size());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(locks.waiting[i].request, rest[i]);
  Change released = table.release(holder, "f", Ranges{{0, 100}});
  ASSERT_EQ(released.granted.size(), 1u);
  EXPECT_EQ(released.granted[0].request, rest.front());
  // b's end withdraws the rest of its waiters in one go and releases its lock: all of c's
  // are granted then (none conflicts with another), in FIFO order of their tokens.
  Change ended = table.expire(sessions[1]);
  EXPECT_EQ(ended.cancelled.size(), rest.size() / 2 - 1);
  ASSERT_EQ(ended.granted.size(), rest.size() / 2);
  EXPECT_EQ(ended.granted[0].request, rest[1]);
  EXPECT_EQ(table.stats().waiting_requests, 0u);
  EXPECT_EQ(table.stats().held_entries, rest.size() / 2);
}

TEST(LocksWithdraw, IsOneJournalRecordThatReplaysToTheSameTable) {
  test::TempDir dir;
  std::vector<uint8_t> saved;
  {
    FileJournal journal(dir.path());
    DurableTable table(journal, TableLimits{});
    SessionId a = table.open_session("a");
    SessionId b = table.open_session("b");
    table.request({a, "f", Mode::kExclusive, Ranges{{0, 100}}});
    std::vector<RequestId> ids;
    for (uint64_t i = 0; i < 50; ++i) {
      ids.push_back(table.request({b, "f", Mode::kShared, Ranges{{i, 10}}}).request);
    }
    table.request({a, "g", Mode::kExclusive, Ranges{{0, 1}}});
    const uint64_t before = table.records_logged();
    std::vector<RequestId> some(ids.begin() + 10, ids.end());
    ASSERT_TRUE(table.withdraw(some).ok());
    EXPECT_EQ(table.records_logged(), before + 1);
    saved = table.table().save();
  }
  FileJournal journal(dir.path());
  DurableTable reopened(journal, TableLimits{});
  EXPECT_EQ(reopened.table().save(), saved);
  EXPECT_EQ(reopened.table().stats().waiting_requests, 10u);
}

}  // namespace
}  // namespace asn::locks

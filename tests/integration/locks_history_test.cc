// The lock torture test's checker (locks_history.hpp) finds what it must: conflicting grants
// alive at once, a lease that ends locks too early, a lost switch lock, a token backwards.
#include "locks_history.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace asn::test {
namespace {

// ---- the checker can fail -------------------------------------------------------------------

Record grant(int client, uint64_t session, const std::string& file, Bytes b, bool exclusive,
             uint64_t token, double sent, double at) {
  Record r;
  r.kind = Kind::kGrant;
  r.client = client;
  r.session = session;
  r.file = file;
  r.ranges = {b};
  r.exclusive = exclusive;
  r.token = token;
  r.sent = sent;
  r.at = at;
  return r;
}

Record release(int client, uint64_t session, const std::string& file, Bytes b, double sent,
               Kind kind = Kind::kRelease) {
  Record r;
  r.kind = kind;
  r.client = client;
  r.session = session;
  r.file = file;
  r.ranges = {b};
  r.sent = sent;
  return r;
}

Record session_end(int client, uint64_t session, double at, double last_touch, double ttl) {
  Record r;
  r.kind = Kind::kSessionEnd;
  r.client = client;
  r.session = session;
  r.at = at;
  r.last_touch = last_touch;
  r.ttl = ttl;
  return r;
}

TEST(LocksTortureChecker, ReportsConflictingGrantsAliveAtOnce) {
  HistoryChecker checker(2.0);
  // Client 0 holds [0, 100) exclusive from 1.0; unlocks [0, 50) at 2.0, the rest at 4.0.
  // Client 1 gets [60, 70) shared at 3.0: a conflict. Client 2 gets [10, 20) at 2.5: none.
  std::vector<std::vector<Record>> history(3);
  history[0] = {grant(0, 1, "f", {0, 100}, true, 1, 0.9, 1.0), release(0, 1, "f", {0, 50}, 2.0),
                release(0, 1, "f", {50, 100}, 4.0), session_end(0, 1, 9, 8, 3)};
  history[1] = {grant(1, 2, "f", {60, 70}, false, 3, 2.9, 3.0), session_end(1, 2, 9, 8, 3)};
  history[2] = {grant(2, 3, "f", {10, 20}, true, 2, 2.4, 2.5), session_end(2, 3, 9, 8, 3)};
  auto found = checker.check(history, {});
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find("conflict on file f"), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("client 1"), std::string::npos) << found[0];

  // A downgrade at 2.8 makes client 1's shared grant fine; client 3's exclusive one at 3.5
  // still conflicts with the (now shared) lock of client 0.
  history[0].insert(history[0].begin() + 2, release(0, 1, "f", {50, 100}, 2.8, Kind::kDowngrade));
  EXPECT_TRUE(checker.check(history, {}).empty())
      << ::testing::PrintToString(checker.check(history, {}));
  history.push_back({grant(3, 4, "f", {99, 120}, true, 4, 3.4, 3.5), session_end(3, 4, 9, 8, 3)});
  found = checker.check(history, {});
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find("client 3"), std::string::npos) << found[0];
}

TEST(LocksTortureChecker, ALeaseEndsLocksOnlyWhenItCouldHaveRunOut) {
  HistoryChecker checker(2.0);
  // Client 0 abandons its session; its last call answered was sent at 1.0, ttl 3: its lock
  // lasts until 4.0 at least. Client 1's grant at 3.5 conflicts; one at 4.1 does not.
  std::vector<std::vector<Record>> history(2);
  history[0] = {grant(0, 1, "f", {0, 10}, true, 1, 0.5, 0.6), session_end(0, 1, kNever, 1.0, 3)};
  history[1] = {grant(1, 2, "f", {5, 6}, true, 2, 3.4, 3.5), session_end(1, 2, 9, 8, 3)};
  EXPECT_EQ(checker.check(history, {}).size(), 1u);
  history[1][0] = grant(1, 2, "f", {5, 6}, true, 2, 4.0, 4.1);
  EXPECT_TRUE(checker.check(history, {}).empty());
  // A kill at 1.2 (grace 2 s): the lease may have ended at 3.2; a grant at 3.5 is fine then.
  history[1][0] = grant(1, 2, "f", {5, 6}, true, 2, 3.4, 3.5);
  EXPECT_TRUE(checker.check(history, {{1.2, 1.5}}).empty());
}

TEST(LocksTortureChecker, ALostSwitchLockEndsWhenItsHolderLearnedOfTheLoss) {
  HistoryChecker checker(2.0);
  // Client 0 holds [0, 10) of f in the switch from 1.0 and learns at 3.0 that the switch lost
  // it. Client 1's grant at 2.5 conflicts; one at 3.1 does not.
  std::vector<std::vector<Record>> history(2);
  Record held = grant(0, 1, "f", {0, 10}, true, 1, 0.9, 1.0);
  held.in_switch = true;
  Record lost;
  lost.kind = Kind::kLocksLost;
  lost.client = 0;
  lost.session = 1;
  lost.at = 3.0;
  history[0] = {held, lost, session_end(0, 1, 9, 8, 3)};
  history[1] = {grant(1, 2, "f", {5, 6}, true, 2, 2.4, 2.5), session_end(1, 2, 9, 8, 3)};
  EXPECT_EQ(checker.check(history, {}).size(), 1u);
  history[1][0] = grant(1, 2, "f", {5, 6}, true, 2, 3.05, 3.1);
  EXPECT_TRUE(checker.check(history, {}).empty());
  // A lock in the software domain is not lost with the switch's table.
  history[0][0].in_switch = false;
  EXPECT_EQ(checker.check(history, {}).size(), 1u);
}

TEST(LocksTortureChecker, ReportsATokenThatWentBackwards) {
  HistoryChecker checker(2.0);
  std::vector<std::vector<Record>> history(2);
  history[0] = {grant(0, 1, "f", {0, 10}, false, 7, 1.0, 1.1), release(0, 1, "f", {0, 10}, 1.2),
                session_end(0, 1, 9, 8, 3)};
  // Sent after client 0 received token 7, granted token 5: backwards. The lower token on
  // file g is no violation: tokens are compared per file.
  history[1] = {grant(1, 2, "f", {0, 10}, true, 5, 1.3, 1.4),
                grant(1, 2, "g", {0, 10}, true, 3, 1.5, 1.6), session_end(1, 2, 9, 8, 3)};
  auto found = checker.check(history, {});
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find("token went backwards on file f"), std::string::npos) << found[0];
  // Concurrent requests (B sent before A was received) may be granted in either order.
  history[1][0] = grant(1, 2, "f", {20, 30}, true, 5, 1.05, 1.4);
  EXPECT_TRUE(checker.check(history, {}).empty());
}

}  // namespace
}  // namespace asn::test

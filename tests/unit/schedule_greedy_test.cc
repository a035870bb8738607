// The real-time greedy scheduler of 000 Ch. 5 (greedy.hpp): the SL array's step as Tables
// 5.1 and 5.2 describe it (read by the B bit), the seed's worked allocation, rotating
// priority, and the offline baseline (Algorithm::kGreedy) against the step model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/greedy.hpp"

namespace asn::schedule {
namespace {

std::set<std::pair<uint32_t, uint32_t>> pairs(const Slot& slot) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  for (const auto& c : slot.connections) out.insert({c.from, c.to});
  return out;
}

using Pairs = std::set<std::pair<uint32_t, uint32_t>>;

Assignment greedy(const std::vector<Connection>& pattern) {
  CompileOptions options;
  options.algorithm = Algorithm::kGreedy;
  return compile_pattern(pattern, options);
}

// 000 L715 (Figure 4.3): PE0's predictable traffic to PE1, PE3, PE4 and PE12 is
// scheduled from slot 0 on, one connection a slot, in that order.
TEST(ScheduleGreedy, SeedExampleFillsSlotsFromSlotZero) {
  RequestMatrix r(16);
  for (uint32_t to : {1u, 3u, 4u, 12u}) r.set(0, to);
  GreedyScheduler scheduler(16, 4);
  for (uint32_t s = 0; s < 4; ++s) {
    GreedyScheduler::StepResult step = scheduler.step(r, s, s, s);
    EXPECT_EQ(step.established, 1u) << "slot " << s;
    EXPECT_EQ(step.blocked, 3u - s) << "slot " << s;  // the rest wait for a later slot
  }
  EXPECT_EQ(pairs(scheduler.slot_connections(0)), (Pairs{{0, 1}}));
  EXPECT_EQ(pairs(scheduler.slot_connections(1)), (Pairs{{0, 3}}));
  EXPECT_EQ(pairs(scheduler.slot_connections(2)), (Pairs{{0, 4}}));
  EXPECT_EQ(pairs(scheduler.slot_connections(3)), (Pairs{{0, 12}}));
  for (uint32_t to : {1u, 3u, 4u, 12u}) EXPECT_TRUE(scheduler.established(0, to));  // B*

  Assignment offline = greedy({{0, 1, {}}, {0, 3, {}}, {0, 4, {}}, {0, 12, {}}});
  EXPECT_EQ(offline.slot_of, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(ScheduleGreedy, RequestRealisedInAnySlotIsNotEstablishedAgain) {
  RequestMatrix r(4);
  r.set(1, 2);
  GreedyScheduler scheduler(4, 2);
  EXPECT_EQ(scheduler.step(r, 0, 0, 0).established, 1u);
  GreedyScheduler::StepResult again = scheduler.step(r, 1, 0, 0);  // B*(1,2) = 1: L = 0
  EXPECT_EQ(again.established, 0u);
  EXPECT_EQ(again.blocked, 0u);
  EXPECT_FALSE(scheduler.connected(1, 1, 2));
}

// Table 5.1 row 2: realised in slot s but no longer requested: released; the output it
// frees is available to the modules after it in the same clock (A propagates).
TEST(ScheduleGreedy, ReleaseFreesThePortsForLaterModules) {
  RequestMatrix r(4);
  r.set(0, 1);
  GreedyScheduler scheduler(4, 1);
  scheduler.step(r, 0, 0, 0);
  ASSERT_TRUE(scheduler.connected(0, 0, 1));
  RequestMatrix next(4);
  next.set(2, 1);  // 0 -> 1 no longer wanted; 2 -> 1 is
  GreedyScheduler::StepResult step = scheduler.step(next, 0, 0, 0);
  EXPECT_EQ(step.released, 1u);
  EXPECT_EQ(step.established, 1u);
  EXPECT_FALSE(scheduler.connected(0, 0, 1));
  EXPECT_TRUE(scheduler.connected(0, 2, 1));
  EXPECT_FALSE(scheduler.established(0, 1));
}

// Table 5.2 as printed would "release" a request whose output and input are both taken
// (L = 1, A = 1, D = 1) although it holds neither; read by the B bit, it is blocked and
// the slot keeps its connections.
TEST(ScheduleGreedy, BlockedRequestIsNotMistakenForARelease) {
  RequestMatrix r(8);
  r.set(0, 5);
  r.set(3, 1);
  GreedyScheduler scheduler(8, 1);
  scheduler.step(r, 0, 0, 0);
  ASSERT_TRUE(scheduler.connected(0, 0, 5));
  ASSERT_TRUE(scheduler.connected(0, 3, 1));
  r.set(0, 1);  // input 0 and output 1 are both in use in slot 0
  GreedyScheduler::StepResult step = scheduler.step(r, 0, 0, 0);
  EXPECT_EQ(step.blocked, 1u);
  EXPECT_EQ(step.released, 0u);
  EXPECT_EQ(step.established, 0u);
  EXPECT_FALSE(scheduler.connected(0, 0, 1));
  EXPECT_EQ(pairs(scheduler.slot_connections(0)), (Pairs{{0, 5}, {3, 1}}));
}

// Two inputs want one output: the row nearer the origin wins (L1000), and rotating the origin
// gives the other its turn.
TEST(ScheduleGreedy, RotatingPriorityDecidesBetweenContenders) {
  RequestMatrix r(4);
  r.set(1, 0);
  r.set(3, 0);
  GreedyScheduler first(4, 1);
  first.step(r, 0, 0, 0);
  EXPECT_TRUE(first.connected(0, 1, 0));
  GreedyScheduler rotated(4, 1);
  rotated.step(r, 0, 2, 0);  // rows 2, 3, 0, 1
  EXPECT_TRUE(rotated.connected(0, 3, 0));
  // Columns rotate likewise: input 2 wants outputs 1 and 3; origin column 2 prefers 3.
  RequestMatrix c(4);
  c.set(2, 1);
  c.set(2, 3);
  GreedyScheduler by_column(4, 1);
  by_column.step(c, 0, 0, 2);
  EXPECT_TRUE(by_column.connected(0, 2, 3));
}

// The baseline is not optimal: here it takes 3 slots where 2 suffice ({0->1, 2->0} and
// {1->0, 2->1}): slot 0 gets 0->1 and 1->0 first, leaving input 2 nothing.
TEST(ScheduleGreedy, BaselineCanNeedMoreThanTheLowerBound) {
  std::vector<Connection> p = {{2, 0, {}}, {2, 1, {}}, {0, 1, {}}, {1, 0, {}}};
  Assignment g = greedy(p);
  EXPECT_EQ(g.summary.method, Method::kGreedy);
  EXPECT_EQ(g.summary.lower_bound, 2u);
  EXPECT_EQ(g.summary.slots, 3u);
  EXPECT_FALSE(g.summary.optimal());
  EXPECT_EQ(compile_pattern(p).summary.slots, 2u);
}

// The offline baseline is the step model run slot after slot with a = b = slot mod N.
TEST(ScheduleGreedy, OfflineBaselineEqualsSteppingTheArray) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const uint32_t n = 2 + rng() % 14;
    RequestMatrix r(n);
    std::vector<Connection> pattern;
    for (uint32_t i = 0; i < n * 3; ++i) {
      uint32_t from = rng() % n, to = rng() % n;
      if (r.get(from, to)) continue;
      r.set(from, to);
      pattern.push_back({from, to, {}});
    }
    Assignment offline = greedy(pattern);
    GreedyScheduler model(n, offline.summary.slots);
    for (uint32_t s = 0; s < offline.summary.slots; ++s) model.step(r, s, s % n, s % n);
    for (size_t i = 0; i < pattern.size(); ++i) {
      EXPECT_TRUE(model.connected(offline.slot_of[i], pattern[i].from, pattern[i].to))
          << "round " << round << " connection " << i;
    }
  }
}

// Each slot of the greedy is a maximal matching of what is left, so it never needs more
// than 2 * lower bound - 1 slots; repeated pairs each get their own slot.
TEST(ScheduleGreedy, StaysWithinTwiceTheLowerBound) {
  std::mt19937 rng(12);
  for (int round = 0; round < 40; ++round) {
    std::vector<Connection> p;
    uint32_t n = 2 + rng() % 30;
    for (uint32_t i = 0; i < 200; ++i) p.push_back({uint32_t(rng() % n), uint32_t(rng() % n), {}});
    Assignment g = greedy(p);
    EXPECT_LE(g.summary.slots, 2 * g.summary.lower_bound - 1);
    EXPECT_GE(g.summary.slots, g.summary.lower_bound);
    std::set<std::pair<uint32_t, uint32_t>> inputs, outputs;
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(inputs.insert({g.slot_of[i], p[i].from}).second);
      EXPECT_TRUE(outputs.insert({g.slot_of[i], p[i].to}).second);
    }
  }
}

}  // namespace
}  // namespace asn::schedule

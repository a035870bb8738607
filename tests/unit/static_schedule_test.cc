// The conflict-free static schedule (004 §2.3.2, lib/topology/schedule.hpp): the rules each
// row obeys, the prose's worked statements, the per-router selection, and conflict freedom
// proved by simulating every packet cycle by cycle: exhaustively for 2-ary 2-D (N = 8) and
// 4-ary 1-D (N = 16), over many random permutations for 4-ary 2-D (N = 64).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "asn/topology/fabric.hpp"
#include "asn/topology/schedule.hpp"

namespace asn::topology {
namespace {

using ::testing::HasSubstr;

// Moves every packet through its rows, two cycles per dimension, and reports the first
// channel (cycle, router, dimension, target digit, lane) two packets use in the same cycle,
// or a packet that ends at the wrong router. The rows come from `row_of`, so a test can also
// try choices other than plan_static_routes'.
template <typename RowOf>
std::optional<std::string> simulate(const Fabric& fabric, const StaticSchedule& schedule,
                                    const std::vector<uint32_t>& destinations, RowOf row_of) {
  const uint32_t k = fabric.k();
  const unsigned dims = fabric.dimensions();
  // A flat bitmap of channels in use: this runs for every one of 40320 permutations.
  std::vector<bool> used(size_t{2} * dims * fabric.routers() * dims * k * 2);
  auto channel = [&](unsigned cycle, uint32_t router, unsigned dim, uint32_t digit, unsigned lane) {
    return (((size_t{cycle} * fabric.routers() + router) * dims + dim) * k + digit) * 2 + lane;
  };
  for (uint32_t source = 0; source < destinations.size(); ++source) {
    if (destinations[source] == kIdle) continue;
    const uint32_t to = fabric.terminal_router(destinations[source]);
    uint32_t at = fabric.terminal_router(source);
    // Digits by hand: fabric.digits() allocates, and this runs 320000 times.
    std::array<uint32_t, 2> want{}, digits{};
    for (unsigned dim = 0; dim < dims; ++dim) {
      want[dim] = to / fabric.weight(dim) % k;
      digits[dim] = at / fabric.weight(dim) % k;
    }
    for (unsigned dim = 0; dim < dims; ++dim) {
      const uint32_t length = (want[dim] + k - digits[dim]) % k;
      if (length == 0) continue;
      const unsigned p = row_of(source, dim);
      const ScheduleRow row =
          dim == 0 ? schedule.initial_row(length, p) : schedule.final_row(length, p);
      for (unsigned cycle = 0; cycle < 2; ++cycle) {
        const ScheduleStep step = row.steps[cycle];
        if (!step.hop()) continue;
        const uint32_t target = (digits[dim] + step.length) % k;
        const size_t c = channel(2 * dim + cycle, at, dim, target, step.lane);
        if (used[c]) {
          return "conflict: terminal " + std::to_string(source) + " in cycle " +
                 std::to_string(2 * dim + cycle) + " at router " + std::to_string(at);
        }
        used[c] = true;
        at = fabric.neighbour(at, dim, target);
        digits[dim] = target;
      }
    }
    if (at != to) return "terminal " + std::to_string(source) + " ends at the wrong router";
  }
  return std::nullopt;
}

std::optional<std::string> simulate_plan(const Fabric& fabric,
                                         const std::vector<uint32_t>& destinations) {
  const std::vector<StaticRoute> plan = plan_static_routes(fabric, destinations);
  return simulate(fabric, StaticSchedule::for_fabric(fabric), destinations,
                  [&](uint32_t source, unsigned dim) {
                    return dim == 0 ? plan[source].initial_row : plan[source].final_row;
                  });
}

uint8_t channel_of(ScheduleStep step) { return static_cast<uint8_t>(step.length * 2 + step.lane); }

TEST(StaticSchedule, RowsObeyTheRules) {
  for (uint32_t k = 2; k <= 4; ++k) {
    const StaticSchedule schedule(k);
    SCOPED_TRACE(testing::Message() << "k=" << k);
    std::map<uint8_t, ScheduleStep> prefix_of;  // second-cycle channel -> its first cycle
    for (unsigned d = 1; d < k; ++d) {
      std::set<uint8_t> first, second;
      for (unsigned p = 0; p < k; ++p) {
        const ScheduleRow& row = schedule.initial_row(d, p);
        // Sums to d (L378); the first two rows are the direct channels S_A^(d), S_B^(d).
        EXPECT_EQ((row.steps[0].length + row.steps[1].length) % k, d);
        if (p < 2) {
          EXPECT_EQ(row, (ScheduleRow{{ScheduleStep{uint8_t(d), uint8_t(p)}, {}}}));
        }
        // The initial-part property (L389).
        if (row.steps[1].hop()) {
          auto [it, fresh] = prefix_of.emplace(channel_of(row.steps[1]), row.steps[0]);
          EXPECT_TRUE(fresh || it->second == row.steps[0]) << "T_" << d << "^(" << p << ")";
        }
        // No channel twice among the k rows of one length (L389).
        if (row.steps[0].hop()) {
          EXPECT_TRUE(first.insert(channel_of(row.steps[0])).second);
        }
        if (row.steps[1].hop()) {
          EXPECT_TRUE(second.insert(channel_of(row.steps[1])).second);
        }
        EXPECT_EQ(schedule.final_row(d, p), row.mirrored());
      }
    }
  }
}

TEST(StaticSchedule, MatchesTheProseOfTheSeed) {
  const StaticSchedule schedule(4);
  const ScheduleStep a1{1, 0}, a2{2, 0}, a3{3, 0};
  // L394: T_1^(3) steps S_A^(2) then S_A^(3) (rows counted from 1 in the seed).
  EXPECT_EQ(schedule.initial_row(1, 2), (ScheduleRow{{a2, a3}}));
  // L396: T_1^(1) and T_3^(3) conflict in S_A^(1); T_1^(1) and T_3^(1) do not.
  EXPECT_EQ(schedule.initial_row(1, 0).steps[0], a1);
  EXPECT_EQ(schedule.initial_row(3, 2).steps[0], a1);
  EXPECT_NE(schedule.initial_row(3, 0).steps[0], a1);
  // L402: F is the mirror image; its first row is (0, S_A^(1)).
  EXPECT_EQ(schedule.final_row(1, 0), (ScheduleRow{{ScheduleStep{}, a1}}));
}

// Every mix of up to k lengths at one router gets rows that share no channel in a cycle.
TEST(StaticSchedule, SelectionServesEveryMixOfRequests) {
  for (uint32_t k = 2; k <= 4; ++k) {
    const StaticSchedule schedule(k);
    std::vector<uint8_t> lengths;
    // All sequences of 0..k lengths, each 0..k-1 (order matters to the selector's ties).
    std::function<void()> visit = [&] {
      const std::vector<uint8_t> rows = schedule.select(lengths);
      ASSERT_EQ(rows.size(), lengths.size());
      std::set<std::pair<unsigned, uint8_t>> used;
      for (size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] == 0) continue;
        const ScheduleRow& row = schedule.initial_row(lengths[i], rows[i]);
        for (unsigned cycle = 0; cycle < 2; ++cycle) {
          if (!row.steps[cycle].hop()) continue;
          ASSERT_TRUE(used.insert({cycle, channel_of(row.steps[cycle])}).second)
              << "k=" << k << " request " << i;
        }
      }
      if (lengths.size() == k) return;
      for (uint8_t d = 0; d < k; ++d) {
        lengths.push_back(d);
        visit();
        lengths.pop_back();
      }
    };
    visit();
  }
  // The seed's example (L396): lengths 1 and 3 must not both start on S_A^(1).
  const StaticSchedule four(4);
  const std::vector<uint8_t> pair = {1, 3};
  const std::vector<uint8_t> rows = four.select(pair);
  EXPECT_NE(four.initial_row(1, rows[0]).steps[0], four.initial_row(3, rows[1]).steps[0]);
}

TEST(StaticSchedule, ExhaustiveTwoAryTwoDimensions) {
  // 8 terminals: every one of the 8! permutations, and 2-terminal partial patterns below.
  const Fabric fabric(8, 2);
  std::vector<uint32_t> destinations(8);
  std::iota(destinations.begin(), destinations.end(), 0u);
  size_t permutations = 0;
  do {
    ASSERT_EQ(simulate_plan(fabric, destinations), std::nullopt);
    ++permutations;
  } while (std::next_permutation(destinations.begin(), destinations.end()));
  EXPECT_EQ(permutations, 40320u);
}

// All k x k matrices of packet counts from router x to router y with every row and column
// summing to k: the traffic of every permutation of a 1-D fabric of k^2 terminals. Which
// terminal sends which packet does not matter: terminal links are not shared, and the rows a
// router picks depend only on the lengths of its requests.
void for_each_traffic_matrix(uint32_t k,
                             const std::function<void(const std::vector<uint32_t>&)>& f) {
  std::vector<uint32_t> m(k * k), column(k);
  std::function<void(uint32_t, uint32_t, uint32_t)> fill = [&](uint32_t x, uint32_t y,
                                                               uint32_t left) {
    if (x == k) return f(m);
    if (y == k - 1) {
      if (column[y] + left > k) return;
      m[x * k + y] = left;
      column[y] += left;
      fill(x + 1, 0, k);
      column[y] -= left;
      return;
    }
    for (uint32_t c = 0; c <= left && column[y] + c <= k; ++c) {
      m[x * k + y] = c;
      column[y] += c;
      fill(x, y + 1, left - c);
      column[y] -= c;
    }
  };
  fill(0, 0, k);
}

std::vector<uint32_t> permutation_of(const std::vector<uint32_t>& matrix, uint32_t k) {
  std::vector<uint32_t> destinations(k * k), next_free(k);
  for (uint32_t x = 0; x < k; ++x) {
    uint32_t terminal = x * k;
    for (uint32_t y = 0; y < k; ++y) {
      for (uint32_t c = 0; c < matrix[x * k + y]; ++c)
        destinations[terminal++] = y * k + next_free[y]++;
    }
  }
  return destinations;
}

TEST(StaticSchedule, ExhaustiveFourAryOneDimension) {
  for (uint32_t k : {3u, 4u}) {
    const Fabric fabric(k * k, k);
    size_t matrices = 0;
    for_each_traffic_matrix(k, [&](const std::vector<uint32_t>& m) {
      ++matrices;
      ASSERT_EQ(simulate_plan(fabric, permutation_of(m, k)), std::nullopt);
    });
    // k x k matrices of non-negative integers with all row and column sums k: 55 and 10147.
    EXPECT_EQ(matrices, k == 3 ? 55u : 10147u);
  }
}

TEST(StaticSchedule, RandomPermutationsFourAryTwoDimensions) {
  const Fabric fabric(64, 4);
  std::mt19937 random(20240607);
  std::vector<uint32_t> destinations(64);
  std::iota(destinations.begin(), destinations.end(), 0u);
  for (int trial = 0; trial < 3000; ++trial) {
    std::shuffle(destinations.begin(), destinations.end(), random);
    // Every fourth trial idles some terminals: partial patterns are schedules too.
    std::vector<uint32_t> pattern = destinations;
    if (trial % 4 == 3) {
      for (size_t t = 0; t < pattern.size(); t += 3) pattern[t] = kIdle;
    }
    ASSERT_EQ(simulate_plan(fabric, pattern), std::nullopt) << "trial " << trial;
  }
  // The 3-ary 2-D fabric as well.
  const Fabric three(27, 3);
  std::vector<uint32_t> small(27);
  std::iota(small.begin(), small.end(), 0u);
  for (int trial = 0; trial < 1000; ++trial) {
    std::shuffle(small.begin(), small.end(), random);
    ASSERT_EQ(simulate_plan(three, small), std::nullopt) << "trial " << trial;
  }
}

TEST(StaticSchedule, AdversarialPatternsFourAryTwoDimensions) {
  const Fabric fabric(64, 4);
  auto router = [&](uint32_t d0, uint32_t d1) { return fabric.router_of({d0, d1}); };
  // All 16 terminals of the line d1 = 0 into the column d0 = 0: they all meet at router
  // (0, 0) before dimension 1, the heaviest load the final part can get.
  std::vector<uint32_t> destinations(64, kIdle);
  for (uint32_t t = 0; t < 16; ++t) {
    destinations[router(t / 4, 0) * 4 + t % 4] = router(0, t / 4) * 4 + t % 4;
  }
  EXPECT_EQ(simulate_plan(fabric, destinations), std::nullopt);
  // Every router sends all its terminals to one other router (L606-610), for every shift.
  for (uint32_t shift = 1; shift < 16; ++shift) {
    for (uint32_t t = 0; t < 64; ++t) destinations[t] = (t + 4 * shift) % 64;
    EXPECT_EQ(simulate_plan(fabric, destinations), std::nullopt) << "shift " << shift;
  }
}

TEST(StaticSchedule, TheSeedsSameRowCompositionConflicts) {
  // Why the final part's row is picked by the destination router: with the seed's
  // T_d^(p) = B_d0^(p) F_d1^(p) (same p, L408-410), routers (0,0) and (2,0) each send one
  // packet to router (1,1), each alone at its router and so each free to pick p = 1 ...
  const Fabric fabric(64, 4);
  std::vector<uint32_t> destinations(64, kIdle);
  destinations[fabric.router_of({0, 0}) * 4] = fabric.router_of({1, 1}) * 4;
  destinations[fabric.router_of({2, 0}) * 4] = fabric.router_of({1, 1}) * 4 + 1;
  const StaticSchedule schedule(4);
  auto same_row = [](uint32_t, unsigned) { return 0u; };
  // ... and both then take F_1^(1) = (0, S_A^(1)) from router (1,0) in the same cycle.
  EXPECT_THAT(simulate(fabric, schedule, destinations, same_row).value_or(""),
              HasSubstr("conflict"));
  EXPECT_EQ(simulate_plan(fabric, destinations), std::nullopt);
}

TEST(StaticSchedule, UnsupportedFabricsSayWhy) {
  auto field_of = [](uint32_t n, uint32_t k) -> std::string {
    try {
      StaticSchedule::for_fabric(Fabric(n, k));
    } catch (const TopologyError& e) {
      return e.field();
    }
    return "supported";
  };
  EXPECT_EQ(field_of(25, 5), "k");
  EXPECT_EQ(field_of(1024, 32), "k");
  EXPECT_EQ(field_of(32, 4), "terminals");    // not a power of k
  EXPECT_EQ(field_of(256, 4), "dimensions");  // 3 dimensions
  EXPECT_EQ(field_of(16, 2), "dimensions");
  EXPECT_EQ(field_of(4, 4), "supported");
  EXPECT_EQ(field_of(9, 3), "supported");
  EXPECT_THAT(StaticSchedule::unsupported(Fabric(25, 5)).value_or(""), HasSubstr("k = 2..4"));
  EXPECT_EQ(StaticSchedule::unsupported(Fabric(64, 4)), std::nullopt);
}

TEST(StaticSchedule, BadRequestsAreRefused) {
  const StaticSchedule schedule(4);
  const std::vector<uint8_t> five = {1, 1, 1, 1, 1}, too_long = {4};
  EXPECT_THROW(schedule.select(five), TopologyError);
  EXPECT_THROW(schedule.select(too_long), TopologyError);
  EXPECT_THROW(schedule.initial_row(0, 0), TopologyError);
  EXPECT_THROW(schedule.initial_row(1, 4), TopologyError);
  EXPECT_THROW(StaticSchedule(5), TopologyError);

  const Fabric fabric(16, 4);
  std::vector<uint32_t> destinations(16, kIdle);
  destinations[0] = destinations[1] = 7;  // one terminal receiving twice
  EXPECT_THROW(plan_static_routes(fabric, destinations), TopologyError);
  destinations[1] = 16;
  EXPECT_THROW(plan_static_routes(fabric, destinations), TopologyError);
  EXPECT_THROW(plan_static_routes(fabric, std::vector<uint32_t>(15, kIdle)), TopologyError);
}

}  // namespace
}  // namespace asn::topology

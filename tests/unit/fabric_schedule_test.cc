// The schedule compiler for multi-hop fabrics (lib/fabric_schedule): the seed's worked
// examples (002 Fig 5.12, 000 L1524-1578), and on random patterns of every target: every
// schedule of every algorithm passes the independent conflict check, the lower bound is at
// most every result, and default is at most every baseline.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <random>
#include <set>

#include "asn/fabric_schedule/compile.hpp"
#include "fabric_patterns.hpp"

namespace asn::fabric_schedule {
namespace {

using Conns = std::vector<Conn>;

Schedule run(const Target& t, const Conns& conns, Algorithm a) {
  Options o;
  o.algorithm = a;
  o.effort = Options{}.effort / 20;  // a short search, the same on any machine
  Schedule s = compile(t, conns, o);
  auto conflict = find_conflict(t, conns, s);
  EXPECT_FALSE(conflict) << to_string(a) << " on " << t.name() << ": " << *conflict;
  EXPECT_GE(s.slots, s.lower_bound) << to_string(a) << " on " << t.name();
  return s;
}

// 002 L1690-1698: {(0,2), (1,3), (3,4), (2,4)} on a linear array: greedy 3 slots, the
// coloring order (0,2), (1,3), (2,4), (3,4) gives 2, the optimum.
TEST(FabricScheduleTest, TheSeedsLinearArrayExample) {
  auto t = make_linear_array(5);
  const Conns conns{{0, 2}, {1, 3}, {3, 4}, {2, 4}};
  Schedule greedy = run(*t, conns, Algorithm::kGreedy);
  EXPECT_EQ(greedy.slots, 3u);
  EXPECT_EQ(greedy.slot_of, (std::vector<uint32_t>{0, 1, 0, 2}));  // the seed's slots 1 2 1 3
  Schedule coloring = run(*t, conns, Algorithm::kColoring);
  EXPECT_EQ(coloring.slots, 2u);
  EXPECT_EQ(coloring.slot_of, (std::vector<uint32_t>{0, 1, 1, 0}));  // (0,2), (2,4) in slot 1
  Schedule best = run(*t, conns, Algorithm::kDefault);
  EXPECT_EQ(best.lower_bound, 2u);
  EXPECT_EQ(best.slots, 2u);
  EXPECT_TRUE(best.optimal());
}

// The conflict check finds what it must: a shared link, a terminal sending twice.
TEST(FabricScheduleTest, TheCheckFindsConflicts) {
  auto t = make_linear_array(5);
  const Conns conns{{0, 2}, {1, 3}};
  Schedule s;
  s.slots = 1;
  s.slot_of = {0, 0};
  s.path_of = {0, 0};
  EXPECT_TRUE(find_conflict(*t, conns, s));
  const Conns twice{{0, 1}, {0, 2}};
  EXPECT_TRUE(find_conflict(*t, twice, s));
  s.slots = 2;
  s.slot_of = {0, 1};
  EXPECT_FALSE(find_conflict(*t, conns, s));
}

using test::all_to_all;

// The torus's AAPC configurations (ring splits multiplied, targets.cc): 8^3 / 8 = 64 for the
// 8x8 torus (002 L1760), and all-to-all in exactly that many slots, the lower bound.
TEST(FabricScheduleTest, TorusAllToAllTakesTheAapcConfigurations) {
  auto t = make_torus(8, 8);
  EXPECT_EQ(t->aapc_phases(), 64u);
  const Conns conns = all_to_all(64);
  Schedule aapc = run(*t, conns, Algorithm::kAapc);
  EXPECT_EQ(aapc.slots, 64u);
  EXPECT_EQ(aapc.lower_bound, 64u);
  EXPECT_EQ(run(*t, conns, Algorithm::kDefault).slots, 64u);
}

// X-Y routing with the odd-even tie-break (002 L775): 0 -> 4 on a ring of 8 goes the positive
// way, 1 -> 5 the negative way.
TEST(FabricScheduleTest, TorusTieBreakIsOddEven) {
  auto t = make_torus(8, 8);
  std::vector<uint32_t> links;
  t->path(0, 4, 0, links);
  EXPECT_EQ(links, (std::vector<uint32_t>{0, 4, 8, 12}));  // +x from nodes 0, 1, 2, 3
  links.clear();
  t->path(1, 5, 0, links);
  EXPECT_EQ(links, (std::vector<uint32_t>{1 * 4 + 1, 0 * 4 + 1, 7 * 4 + 1, 6 * 4 + 1}));
}

// 000 L1524-1578: FT(4, 4), node 3 -> node 95, Ulink(1, 000)[0] taken: ports (0, 1, 0).
// Here a first request, 4 -> 64, takes Ulink(1, 000, 0) at level 1 (its level 0 uses
// Ulink(0, 001, 0)); the seed's request then goes through switches (0,000), (1,000),
// (2,001), (3,010) and down (2,101), (1,110), (0,113).
TEST(FabricScheduleTest, TheSeedsFatTreeExample) {
  auto t = make_fat_tree(4, 4);
  const Conns conns{{4, 64}, {3, 95}};
  Schedule s = run(*t, conns, Algorithm::kLevelWise);
  EXPECT_EQ(s.slot_of, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(s.path_of[1], 0u + 1u * 4 + 0u * 16);  // P_0 = 0, P_1 = 1, P_2 = 0
  std::vector<uint32_t> links;
  t->path(3, 95, s.path_of[1], links);
  ASSERT_EQ(links.size(), 6u);
  // Switch h * 64 + tau; tau in base 4 as the seed writes it.
  const std::vector<uint32_t> through{0, 64 + 0, 128 + 1, 192 + 4, 128 + 17, 64 + 20, 0 + 23};
  for (size_t i = 0; i < links.size(); ++i) {
    LinkEnds e = t->link_ends(links[i]);
    EXPECT_EQ(e.from.sw, through[i]) << "link " << i;
    EXPECT_EQ(e.to.sw, through[i + 1]) << "link " << i;
  }
  EXPECT_EQ(t->link_ends(links[1]).from.port, 4u + 1u);  // up port P_1 = 1 of switch (1, 000)
}

using test::random_pattern;

// Random patterns on every target: every algorithm valid, default <= every baseline.
TEST(FabricScheduleTest, DefaultIsAtMostEveryBaseline) {
  std::vector<std::unique_ptr<Target>> targets;
  targets.push_back(make_torus(8, 8));
  targets.push_back(make_torus(4, 6));
  targets.push_back(make_linear_array(12));
  targets.push_back(make_flattened_butterfly(64, 4));
  targets.push_back(make_flattened_butterfly(64, 8));
  targets.push_back(make_fat_tree(3, 4));
  targets.push_back(make_crossbar(16));
  std::mt19937 random(11);
  for (const auto& t : targets) {
    const uint32_t n = t->terminals();
    for (size_t count : {size_t{n / 2}, size_t{2 * n}, size_t{n * (n - 1) / 3}}) {
      const Conns conns = random_pattern(n, count, random);
      Schedule best = run(*t, conns, Algorithm::kDefault);
      for (Algorithm a : {Algorithm::kGreedy, Algorithm::kColoring, Algorithm::kAapc,
                          Algorithm::kCombined, Algorithm::kLevelWise, Algorithm::kLocalRandom}) {
        if (a == Algorithm::kAapc && t->aapc_phases() == 0) continue;
        if ((a == Algorithm::kLevelWise || a == Algorithm::kLocalRandom) &&
            t->fat_tree_width() == 0) {
          continue;
        }
        EXPECT_LE(best.slots, run(*t, conns, a).slots)
            << t->name() << ", " << count << " connections, " << to_string(a);
      }
    }
  }
}

// One crossbar: lib/schedule's exact edge colouring, the lower bound.
TEST(FabricScheduleTest, CrossbarIsOptimal) {
  auto t = make_crossbar(32);
  std::mt19937 random(5);
  const Conns conns = random_pattern(32, 500, random);
  Schedule s = run(*t, conns, Algorithm::kDefault);
  EXPECT_TRUE(s.optimal());
}

// The 2DFB is nonblocking (004): a random permutation fits in one slot through the lanes.
TEST(FabricScheduleTest, FlattenedButterflyPermutationsTakeOneSlot) {
  for (auto [n, k] : {std::pair<uint64_t, uint32_t>{64, 4}, {64, 8}, {256, 16}}) {
    auto t = make_flattened_butterfly(n, k);
    std::vector<uint32_t> dst(n);
    std::iota(dst.begin(), dst.end(), 0u);
    std::mt19937 random(static_cast<uint32_t>(n + k));
    std::shuffle(dst.begin(), dst.end(), random);
    Conns conns;
    for (uint32_t s = 0; s < n; ++s) {
      if (dst[s] != s) conns.push_back({s, dst[s]});
    }
    Schedule s = run(*t, conns, Algorithm::kDefault);
    EXPECT_EQ(s.slots, 1u) << t->name();
  }
}

// Every candidate path of every target runs from the source's switch through adjoining
// links to the destination's switch, and the minimal ones come first and are shortest.
TEST(FabricScheduleTest, PathsChainThroughTheWiring) {
  std::vector<std::unique_ptr<Target>> targets;
  targets.push_back(make_torus(5, 4));
  targets.push_back(make_linear_array(6));
  targets.push_back(make_flattened_butterfly(64, 4));
  targets.push_back(make_flattened_butterfly(48, 4));  // N not a power of k: a widened dimension
  targets.push_back(make_flattened_butterfly(64, 8));
  targets.push_back(make_fat_tree(3, 3));
  for (const auto& t : targets) {
    const uint32_t n = t->terminals();
    for (uint32_t s = 0; s < n; s += 3) {
      for (uint32_t d = 0; d < n; d += 5) {
        if (s == d) continue;
        size_t shortest = SIZE_MAX;
        for (uint32_t p = 0; p < t->path_count(s, d); ++p) {
          std::vector<uint32_t> links;
          t->path(s, d, p, links);
          uint32_t at = t->terminal_attach(s).sw;
          std::set<uint32_t> distinct(links.begin(), links.end());
          ASSERT_EQ(distinct.size(), links.size()) << t->name() << " " << s << "->" << d;
          for (uint32_t l : links) {
            ASSERT_LT(l, t->links());
            LinkEnds e = t->link_ends(l);
            ASSERT_EQ(e.from.sw, at) << t->name() << " " << s << "->" << d << " path " << p;
            at = e.to.sw;
          }
          ASSERT_EQ(at, t->terminal_attach(d).sw) << t->name() << " " << s << "->" << d;
          if (p < t->minimal_paths(s, d)) {
            shortest = std::min(shortest, links.size());
            EXPECT_EQ(links.size(), shortest) << t->name();
          } else {
            EXPECT_GT(links.size(), shortest) << t->name();
          }
        }
      }
    }
  }
}

TEST(FabricScheduleTest, TargetsParseFromText) {
  EXPECT_EQ(parse_target("torus:8x8")->name(), "torus 8x8");
  EXPECT_EQ(parse_target("2dfb:1024:32")->name(), "2dfb N=1024 k=32");
  EXPECT_EQ(parse_target("2dfb:64:8:minimal")->path_count(0, 63), 2u);  // lanes A and B
  EXPECT_GT(parse_target("2dfb:64:8")->path_count(0, 63), 2u);          // and the detours
  EXPECT_EQ(parse_target("fat-tree:4:4")->terminals(), 256u);
  EXPECT_EQ(parse_target("crossbar:64")->terminals(), 64u);
  EXPECT_EQ(parse_target("linear:5")->links(), 8u);
  for (const char* bad : {"torus:8", "torus:8x", "ring:8", "2dfb:64:8:fast", "crossbar:x", "",
                          "fat-tree:4:1", "2dfb:100:8"}) {
    EXPECT_THROW(parse_target(bad), std::invalid_argument) << bad;
  }
}

TEST(FabricScheduleTest, BadConnectionsAreRefused) {
  auto t = make_torus(4, 4);
  EXPECT_THROW(compile(*t, Conns{{3, 3}}), std::invalid_argument);
  EXPECT_THROW(compile(*t, Conns{{0, 16}}), std::invalid_argument);
  Options o;
  o.algorithm = Algorithm::kLevelWise;
  EXPECT_THROW(compile(*t, Conns{{0, 1}}, o), std::invalid_argument);
  EXPECT_THROW(compile(*make_linear_array(4), Conns{{0, 1}}, Options{Algorithm::kAapc}),
               std::invalid_argument);
  EXPECT_EQ(parse_algorithm("coloring"), Algorithm::kColoring);
  EXPECT_FALSE(parse_algorithm("best"));
}

}  // namespace
}  // namespace asn::fabric_schedule

// The crossbar compiler (compile.hpp): every schedule it makes is checked here by code of the
// test's own (every slot a crossbar configuration, every connection in exactly one slot) and
// must use exactly the lower bound, the largest number of connections at one port (König),
// on many random multigraphs of every shape; on tiny ones a brute-force search confirms that
// no schedule has fewer slots. Regular patterns must be laid out in closed form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"

namespace asn::schedule {
namespace {

using Pattern = std::vector<Connection>;

uint32_t max_degree(const Pattern& pattern) {
  std::vector<uint32_t> in, out;
  uint32_t most = 0;
  for (const auto& c : pattern) {
    in.resize(std::max<size_t>(in.size(), c.from + 1));
    out.resize(std::max<size_t>(out.size(), c.to + 1));
    most = std::max({most, ++in[c.from], ++out[c.to]});
  }
  return most;
}

// Every connection in one slot below the slot count, no slot with an input or an output
// twice: (slot, port) keys sorted, no two alike.
void expect_valid(const Pattern& pattern, const Assignment& a) {
  ASSERT_EQ(a.slot_of.size(), pattern.size());
  std::vector<uint64_t> inputs, outputs;
  for (size_t i = 0; i < pattern.size(); ++i) {
    ASSERT_LT(a.slot_of[i], a.summary.slots) << "connection " << i;
    inputs.push_back(uint64_t{a.slot_of[i]} << 32 | pattern[i].from);
    outputs.push_back(uint64_t{a.slot_of[i]} << 32 | pattern[i].to);
  }
  for (auto* keys : {&inputs, &outputs}) {
    std::sort(keys->begin(), keys->end());
    auto twice = std::adjacent_find(keys->begin(), keys->end());
    ASSERT_EQ(twice, keys->end()) << (keys == &inputs ? "input " : "output ")
                                  << (*twice & 0xffffffff) << " twice in slot " << (*twice >> 32);
  }
}

// `method`: how it must have been compiled; nullopt: either way.
void expect_optimal(const Pattern& pattern, std::optional<Method> method = Method::kColouring) {
  Assignment a = compile_pattern(pattern);
  expect_valid(pattern, a);
  EXPECT_EQ(a.summary.lower_bound, max_degree(pattern));
  EXPECT_EQ(a.summary.slots, a.summary.lower_bound);
  EXPECT_TRUE(a.summary.optimal());
  EXPECT_EQ(a.summary.connections, pattern.size());
  if (!pattern.empty() && method) {
    EXPECT_EQ(a.summary.method, *method);
  }
}

// Random endpoints on `inputs` x `outputs` ports.
Pattern uniform(std::mt19937& rng, uint32_t inputs, uint32_t outputs, size_t connections) {
  std::uniform_int_distribution<uint32_t> in(0, inputs - 1), out(0, outputs - 1);
  Pattern p;
  for (size_t i = 0; i < connections; ++i) p.push_back({in(rng), out(rng), {}});
  return p;
}

// d random permutations of n ports, then `drop` connections removed: nearly d-regular.
Pattern near_regular(std::mt19937& rng, uint32_t n, uint32_t d, size_t drop) {
  Pattern p;
  std::vector<uint32_t> perm(n);
  for (uint32_t k = 0; k < d; ++k) {
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (uint32_t i = 0; i < n; ++i) p.push_back({i, perm[i], {}});
  }
  std::shuffle(p.begin(), p.end(), rng);
  p.resize(p.size() - std::min(drop, p.size()));
  return p;
}

// A few hub ports and many ports with one or two connections (the compiler packs those).
Pattern skewed(std::mt19937& rng, uint32_t ports, size_t connections) {
  std::discrete_distribution<uint32_t> pick({40, 20, 10, 5, 1});
  std::uniform_int_distribution<uint32_t> any(5, ports - 1);
  Pattern p;
  for (size_t i = 0; i < connections; ++i) {
    uint32_t a = rng() % 3 == 0 ? pick(rng) : any(rng);
    uint32_t b = rng() % 3 == 0 ? pick(rng) : any(rng);
    p.push_back({a, b, {}});
  }
  return p;
}

TEST(ScheduleCompile, OptimalOnManySmallRandomMultigraphs) {
  std::mt19937 rng(1);
  for (int round = 0; round < 300; ++round) {
    uint32_t inputs = 1 + rng() % 12;
    uint32_t outputs = 1 + rng() % 12;
    Pattern p = uniform(rng, inputs, outputs, 1 + rng() % 60);
    SCOPED_TRACE(testing::Message() << "round " << round);
    expect_optimal(p, std::nullopt);
  }
}

TEST(ScheduleCompile, OptimalOnEveryDegreeParity) {
  std::mt19937 rng(2);
  // Odd degrees need a perfect matching at every odd level of the recursion (255: eight of
  // them); powers of two none.
  for (uint32_t d : {2u, 3u, 5u, 7u, 8u, 31u, 64u, 100u, 127u, 255u}) {
    SCOPED_TRACE(testing::Message() << "degree " << d);
    expect_optimal(near_regular(rng, 40, d, 0));
    expect_optimal(near_regular(rng, 33, d, d * 5));
  }
}

TEST(ScheduleCompile, OptimalOnSkewedAndHeavilyRepeatedPatterns) {
  std::mt19937 rng(3);
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(testing::Message() << "round " << round);
    expect_optimal(skewed(rng, 3000, 4000));                    // hubs and packed ports
    expect_optimal(uniform(rng, 3, 4, 500), std::nullopt);      // every pair repeated
    expect_optimal(uniform(rng, 2000, 5, 3000), std::nullopt);  // fan-in to a few outputs
  }
  Pattern one_pair(777, Connection{4, 9, {}});  // one pair, 777 times: 777 slots
  expect_optimal(one_pair);
  Pattern star;  // one input to 500 outputs
  for (uint32_t o = 0; o < 500; ++o) star.push_back({0, o + 1, {}});
  expect_optimal(star, Method::kClosedForm);  // 500 classes of (to - from): one a slot
}

TEST(ScheduleCompile, OptimalOnALargeGraph) {
  // Odd degree (a perfect matching first), then 520 x 254 = 132,080 edges to split: past
  // the size where the cycle walks run interleaved.
  std::mt19937 rng(4);
  expect_optimal(near_regular(rng, 520, 255, 0));
}

// The fewest slots by exhaustive search: try k = 1, 2, ... colours with backtracking.
uint32_t brute_force_slots(const Pattern& p) {
  for (uint32_t k = 1;; ++k) {
    std::vector<uint32_t> colour(p.size());
    std::function<bool(size_t)> place = [&](size_t i) {
      if (i == p.size()) return true;
      for (uint32_t c = 0; c < k; ++c) {
        bool clash = false;
        for (size_t j = 0; j < i && !clash; ++j) {
          clash = colour[j] == c && (p[j].from == p[i].from || p[j].to == p[i].to);
        }
        if (clash) continue;
        colour[i] = c;
        if (place(i + 1)) return true;
      }
      return false;
    };
    if (place(0)) return k;
  }
}

TEST(ScheduleCompile, NoScheduleHasFewerSlotsThanTheCompilers) {
  std::mt19937 rng(5);
  for (int round = 0; round < 100; ++round) {
    Pattern p = uniform(rng, 1 + rng() % 4, 1 + rng() % 4, 1 + rng() % 8);
    EXPECT_EQ(compile_pattern(p).summary.slots, brute_force_slots(p)) << "round " << round;
  }
}

TEST(ScheduleCompile, RegularPatternsAreLaidOutInClosedForm) {
  auto pattern = [](const std::string& generators) {
    return parse_plan(
               "plan: p\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns"
               "\n    pattern: " +
               generators + "\n")
        .phases[0]
        .parts[0]
        .pattern;
  };
  // All-to-all: slot s is one shift, every input i sending to i + k (mod 64) for one k.
  Pattern all = pattern("[{all_to_all: {ports: 64}}]");
  Assignment a = compile_pattern(all);
  expect_optimal(all, Method::kClosedForm);
  std::vector<std::set<uint32_t>> shifts(a.summary.slots);
  for (size_t i = 0; i < all.size(); ++i)
    shifts[a.slot_of[i]].insert((all[i].to + 64 - all[i].from) % 64);
  for (const auto& s : shifts) EXPECT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(a.summary.utilisation, 1.0);

  expect_optimal(pattern("[{all_to_all: {ports: 8..15}}]"), Method::kClosedForm);  // 7 slots
  expect_optimal(pattern("[{shift: {ports: 16, by: 1}}, {shift: {ports: 16, by: 5}}]"),
                 Method::kClosedForm);
  expect_optimal(pattern("[{mesh: {rows: 8, cols: 8}}]"), Method::kClosedForm);        // 4 slots
  expect_optimal(pattern("[{transpose: {rows: 4, cols: 16}}]"), Method::kClosedForm);  // 1 slot
  expect_optimal(pattern("[{shift: {ports: [3, 9, 27, 40], by: 1}}]"), Method::kClosedForm);
  // Not of that form: a torus's wrap-around links fall in other classes, and repeated pairs
  // break the classes; both go to the edge colouring, still at the lower bound.
  expect_optimal(pattern("[{mesh: {rows: 4, cols: 4, wrap: on}}]"), Method::kColouring);
  expect_optimal(pattern("[{shift: {ports: 16, by: 1}}, {shift: {ports: 16, by: 1}}]"),
                 Method::kColouring);
  EXPECT_EQ(compile_pattern(pattern("[{mesh: {rows: 8, cols: 8}}]")).summary.slots, 4u);
}

TEST(ScheduleCompile, SummaryAndLayout) {
  Pattern p = {{0, 1, {3, 4}}, {0, 2, {5, 6}}, {1, 2, {7, 8}}};
  Assignment a = compile_pattern(p);
  EXPECT_EQ(a.summary.connections, 3u);
  EXPECT_EQ(a.summary.slots, 2u);
  EXPECT_EQ(a.summary.lower_bound, 2u);
  EXPECT_EQ(a.summary.ports_in_use, 2u);  // inputs {0, 1}, outputs {1, 2}
  EXPECT_DOUBLE_EQ(a.summary.utilisation, 3.0 / (2 * 2));
  std::vector<Slot> slots = layout_slots(p, a);
  ASSERT_EQ(slots.size(), 2u);
  size_t total = 0;
  for (uint32_t s = 0; s < 2; ++s) {
    for (const auto& c : slots[s].connections) {
      auto it = std::find(p.begin(), p.end(), c);
      ASSERT_NE(it, p.end());
      EXPECT_EQ(a.slot_of[it - p.begin()], s);
      EXPECT_EQ(c.mark, it->mark);  // marks survive, for the validator's messages
      ++total;
    }
  }
  EXPECT_EQ(total, 3u);

  a.summary.elapsed = std::chrono::microseconds(1500);
  EXPECT_EQ(describe(a.summary),
            "3 connections in 2 slots (lower bound 2: optimal), 2 ports, utilisation 75.0%, "
            "closed form, 1.50 ms");

  CompileSummary explicit_summary = summarize(slots);
  EXPECT_EQ(explicit_summary.method, Method::kExplicit);
  EXPECT_EQ(explicit_summary.slots, 2u);
  EXPECT_EQ(explicit_summary.lower_bound, 2u);
  slots.emplace_back();  // an empty slot more: the same connections, less used
  explicit_summary = summarize(slots);
  EXPECT_EQ(describe(explicit_summary),
            "3 connections in 3 slots (lower bound 2), 2 ports, utilisation 50.0%, explicit");

  Assignment empty = compile_pattern({});
  EXPECT_EQ(empty.summary.slots, 0u);
  EXPECT_EQ(empty.summary.utilisation, 0.0);
}

TEST(ScheduleCompile, SameInputSameSchedule) {
  std::mt19937 rng(6);
  Pattern p = near_regular(rng, 100, 37, 50);
  EXPECT_EQ(compile_pattern(p).slot_of, compile_pattern(p).slot_of);
}

TEST(ScheduleCompile, PlanPartsGetSlotsAndSummaries) {
  Plan plan = parse_plan(R"(plan: p
defaults: {slot_length: 1 us, guard_band: 0 ns}
phases:
  - {name: a, pattern: ["0 -> 1 x2", "1 -> 0"]}
  - {name: b, slots: [["0 -> 1"], []]}
)");
  compile_plan(plan);
  const Part& a = plan.phases[0].parts[0];
  ASSERT_TRUE(a.summary);
  EXPECT_EQ(a.slots.size(), 2u);
  EXPECT_EQ(a.summary->slots, 2u);
  const Part& b = plan.phases[1].parts[0];
  ASSERT_TRUE(b.summary);
  EXPECT_EQ(b.summary->method, Method::kExplicit);
  EXPECT_EQ(b.summary->slots, 2u);
  EXPECT_EQ(b.summary->lower_bound, 1u);
  EXPECT_FALSE(b.summary->optimal());
}

TEST(ScheduleCompile, RefusesWhatItCannotModel) {
  EXPECT_THROW(compile_pattern(Pattern{{0, 1u << 21, {}}}), std::length_error);
  CompileOptions greedy;
  greedy.algorithm = Algorithm::kGreedy;
  EXPECT_THROW(compile_pattern(Pattern{{0, 9000, {}}}, greedy), std::length_error);
  Plan plan = parse_plan(
      "plan: p\nphases:\n  - {name: a, slot_length: 1 us, guard_band: 0 ns, pattern: [0 -> "
      "9000]}\n",
      "big.yaml");
  try {
    compile_plan(plan, greedy);
    ADD_FAILURE();
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), testing::StartsWith("big.yaml:3:61: phase 'a': the greedy baseline"));
  }
}

}  // namespace
}  // namespace asn::schedule

// The deadlock prover (asn/sim/prove.hpp): the escape VC rule the board runs is proven
// deadlock-free, the seed's rule is refuted with a cycle of channels, and bad requests are
// refused by name. The sweep over every fabric a board can run is prove_sweep_test (label
// proof: too long for the sanitizer builds).
#include "asn/sim/prove.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

namespace asn::sim {
namespace {

using ::testing::HasSubstr;
using topology::RoutingMode;
using topology::VcPolicy;

constexpr RoutingMode kAdaptive[] = {RoutingMode::kAldfb, RoutingMode::kUgal,
                                     RoutingMode::kMinimal};

ProveRequest request(uint32_t terminals, uint32_t k, RoutingMode mode) {
  ProveRequest q;
  q.terminals = terminals;
  q.k = k;
  q.mode = mode;
  return q;
}

TEST(Prove, TheEscapeRuleIsDeadlockFreeOnTheSeedsFabric) {
  for (Channels channels : {Channels::kDilated, Channels::kDoubleRate}) {
    for (uint32_t vcs : {2u, 4u, 8u}) {
      for (RoutingMode mode : kAdaptive) {
        ProveRequest q = request(64, 4, mode);
        q.channels = channels;
        q.num_vcs = vcs;
        const Proof p = prove(q);
        EXPECT_TRUE(p.deadlock_free) << p.text;
        EXPECT_TRUE(p.cycle.empty());
        // 16 routers, 6 peers each: one escape channel per lane.
        EXPECT_EQ(p.channels, 16u * 6 * (channels == Channels::kDilated ? 2 : 1));
        EXPECT_GT(p.edges, 0u);
        EXPECT_TRUE(p.states_exhaustive);
        EXPECT_GT(p.states, 16u * 15);
        EXPECT_THAT(p.text, HasSubstr("acyclic"));
        EXPECT_THAT(p.text, HasSubstr("every state has an escape"));
      }
    }
  }
}

// One VC: no adaptive VC is left, every hop is an escape hop (dimension order): still
// deadlock-free.
TEST(Prove, OneVcIsDimensionOrderAndDeadlockFree) {
  ProveRequest q = request(64, 4, RoutingMode::kAldfb);
  q.num_vcs = 1;
  EXPECT_TRUE(prove(q).deadlock_free);
}

TEST(Prove, FabricsOfEveryShapeAreDeadlockFree) {
  // 1-D, 2-D, 3-D, 4-D; N not a power of k (a widened last dimension); k = 2.
  const std::pair<uint32_t, uint32_t> fabrics[] = {{16, 4},  {48, 4},   {1024, 8}, {32, 2},
                                                   {128, 4}, {243, 3},  {1536, 8}, {4096, 8}};
  for (auto [n, k] : fabrics) {
    for (RoutingMode mode : kAdaptive) {
      ProveRequest q = request(n, k, mode);
      q.state_budget = 20'000;
      const Proof p = prove(q);
      EXPECT_TRUE(p.deadlock_free) << "N=" << n << " k=" << k << ": " << p.text;
    }
  }
}

// The seed's rule (004 L893-935) is not deadlock-free: the prover names a cycle, and every
// link of it is a channel of the fabric, written router:port/VC.
TEST(Prove, TheSeedsRuleHasACycle) {
  for (RoutingMode mode : {RoutingMode::kAldfb, RoutingMode::kUgal}) {
    ProveRequest q = request(64, 4, mode);
    q.vc_policy = VcPolicy::kSeed;
    const Proof p = prove(q);
    ASSERT_FALSE(p.deadlock_free) << p.text;
    ASSERT_GE(p.cycle.size(), 2u);
    const std::regex channel("r([0-9]+):p([0-9]+)/vc([01])");
    std::set<std::string> distinct(p.cycle.begin(), p.cycle.end());
    EXPECT_EQ(distinct.size(), p.cycle.size()) << "a simple cycle";
    for (const std::string& c : p.cycle) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(c, m, channel)) << c;
      EXPECT_LT(std::stoul(m[1]), 16u);
      EXPECT_GE(std::stoul(m[2]), 4u);  // a channel port, not a terminal
      EXPECT_LT(std::stoul(m[2]), 16u);
    }
    EXPECT_THAT(p.text, HasSubstr("NOT deadlock-free"));
    EXPECT_THAT(p.text, HasSubstr(p.cycle.front() + " -> "));
  }
}

TEST(Prove, BadRequestsNameTheField) {
  auto error_of = [](const ProveRequest& q) {
    try {
      prove(q);
    } catch (const SimError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of(request(64, 4, RoutingMode::kStatic)), HasSubstr("mode: static"));
  ProveRequest q = request(64, 4, RoutingMode::kAldfb);
  q.num_vcs = 9;
  EXPECT_THAT(error_of(q), HasSubstr("num_vcs: 1 to 8"));
  q.num_vcs = 0;
  EXPECT_THAT(error_of(q), HasSubstr("num_vcs: 1 to 8"));
  EXPECT_THAT(error_of(request(63, 4, RoutingMode::kAldfb)), HasSubstr("terminals"));
  EXPECT_THAT(error_of(request(64, 1, RoutingMode::kAldfb)), HasSubstr("k"));
}

TEST(Prove, TheBoardsFabricsAreListedOnceEachInRouterOrder) {
  const std::vector<FabricShape> shapes = board_fabrics(255, 64, Channels::kDilated);
  ASSERT_FALSE(shapes.empty());
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_TRUE(seen.emplace(shapes[i].terminals, shapes[i].k).second);
    EXPECT_LE(shapes[i].routers, 64u);
    if (i > 0) {
      EXPECT_LE(shapes[i - 1].routers, shapes[i].routers);
    }
  }
  EXPECT_TRUE(seen.count({64, 4}));
  EXPECT_TRUE(seen.count({16, 2}));
  // Double-rate channels take fewer ports: more fabrics fit 255 ports.
  EXPECT_GT(board_fabrics(255, 64, Channels::kDoubleRate).size(), shapes.size());
}

}  // namespace
}  // namespace asn::sim

// The routing engine of the emulated board (asn/model/engines/routing_engine.hpp),
// through a fake RouterView holding tables from lib/topology and crafted queue states: every
// branch of ALDFB's Algorithms 3 and 4 (004 L910-952), the VC by link numbers (L888, L906),
// minimal adaptive, UGAL and static routing, bad register contents, and walks of packets hop
// by hop through whole fabrics of engines (routing_engine_walk_test.cc).
#include "asn/model/engines/routing_engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "asn/topology/schedule.hpp"
#include "fake_router.hpp"

namespace asn::model::engines {
namespace {

using topology::ChannelMode;
using topology::Fabric;
using topology::RoutingMode;

using test::FakeRouter;
using test::kThreshold;

// A 4-ary 2-D fabric (N = 64, as in 004 §4.3), seen from router (1, 2).
class EngineTest : public ::testing::Test {
 protected:
  EngineTest() : fabric(64, 4), own(fabric.router_of({1, 2})) {}

  FakeRouter make(RoutingMode mode, ChannelMode channels = ChannelMode::kDilated) {
    return FakeRouter(fabric, own, channels, mode);
  }
  unsigned port(unsigned dim, uint32_t digit, unsigned lane = 0) const {
    return fabric.channel_port(own, dim, digit, lane, ChannelMode::kDilated);
  }
  // Terminal `index` of the router with digits (d0, d1).
  uint32_t terminal(uint32_t d0, uint32_t d1, uint32_t index = 1) const {
    return fabric.router_of({d0, d1}) * 4 + index;
  }
  PacketHeader from_terminal(uint32_t dest) const { return {.dest_terminal = dest, .in_port = 2}; }
  // Arrived over dimension `dim` from the router whose digit there is `digit`.
  PacketHeader from_channel(uint32_t dest, unsigned dim, uint32_t digit, bool h1) const {
    return {.dest_terminal = dest, .in_port = static_cast<uint16_t>(port(dim, digit)), .h1 = h1};
  }

  const Fabric fabric;
  const uint32_t own;
};

// --- ALDFB, Algorithm 3 (minimal phase) -----------------------------------------------------

TEST_F(EngineTest, AldfbDeliversAtTheDestinationRouter) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const RouteDecision d = route_packet(r, from_channel(terminal(1, 2, 3), 0, 0, true), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_TRUE(d.local);
  EXPECT_EQ(d.port, 3);  // terminal ports come first
  EXPECT_FALSE(d.header.h1);
}

TEST_F(EngineTest, AldfbTakesAFreeDirectPortPreferringTheHigherDimension) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(3, 0);  // differs in both digits
  RouteDecision d = route_packet(r, from_terminal(dest), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_EQ(d.port, port(1, 0, 0));  // dimension 1, lane A (L846)
  EXPECT_TRUE(d.minimal);
  EXPECT_FALSE(d.header.h1);

  r.congest(port(1, 0, 0));
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 1));  // lane B
  r.congest(port(1, 0, 1));
  d = route_packet(r, from_terminal(dest), 0);
  EXPECT_EQ(d.port, port(0, 3, 0));  // the lower dimension's direct link
  EXPECT_TRUE(d.minimal);
}

TEST_F(EngineTest, AldfbDirectHopClearsH1) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const RouteDecision d = route_packet(r, from_channel(terminal(3, 0), 1, 3, true), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_EQ(d.port, port(1, 0, 0));
  EXPECT_FALSE(d.header.h1);
}

TEST_F(EngineTest, AldfbWithH1AndNoFreeDirectPortTakesTheDetouredDimensionsLink) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(3, 0);
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.congest(port(1, 0, lane));
    r.congest(port(0, 3, lane));
  }
  r.fill(port(1, 0, 0), 20);  // lane B the less occupied
  // Came over dimension 1 on a detour (h1): Algorithm 3 line 13, the higher-dimension link.
  RouteDecision d = route_packet(r, from_channel(dest, 1, 3, true), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_EQ(d.port, port(1, 0, 1));
  EXPECT_TRUE(d.minimal);
  EXPECT_FALSE(d.header.h1);

  // The mandatory minimal hop corrects the detoured dimension even when the other
  // dimension's direct link is free: otherwise the packet could detour in dimension 1 again.
  r.fill(port(0, 3, 0), 0);
  d = route_packet(r, from_channel(dest, 1, 3, true), 0);
  EXPECT_EQ(fabric.port_info(own, d.port, ChannelMode::kDilated).dimension, 1u);
  EXPECT_TRUE(d.minimal);
  // Without h1 the free lower-dimension link is taken.
  EXPECT_EQ(route_packet(r, from_channel(dest, 1, 3, false), 0).port, port(0, 3, 0));
}

// --- ALDFB, Algorithm 4 (non-minimal phase) -------------------------------------------------

TEST_F(EngineTest, AldfbWithoutH1GoesNonMinimalAndSetsH1) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(3, 0);
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.congest(port(1, 0, lane));
    r.congest(port(0, 3, lane));
  }
  RouteDecision d = route_packet(r, from_terminal(dest), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  // The first usable port of Dr by priority: dimension 1, the lowest port not to digit 0.
  EXPECT_EQ(d.port, port(1, 1, 0));
  EXPECT_FALSE(d.minimal);
  EXPECT_TRUE(d.header.h1);

  // Dimension 1's detours busy too: a detour in dimension 0.
  for (uint32_t digit : {1u, 3u}) {
    for (unsigned lane = 0; lane < 2; ++lane) r.congest(port(1, digit, lane));
  }
  d = route_packet(r, from_terminal(dest), 0);
  EXPECT_EQ(d.port, port(0, 0, 0));
  EXPECT_FALSE(d.minimal);
  EXPECT_TRUE(d.header.h1);
}

TEST_F(EngineTest, AldfbDetoursOnlyInDimensionsStillToCorrect) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(3, 2);  // only digit 0 differs
  r.congest(port(0, 3, 0));
  r.congest(port(0, 3, 1));
  const RouteDecision d = route_packet(r, from_terminal(dest), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_EQ(d.port, port(0, 0, 0));  // dimension 1's free ports are not in Dr
  EXPECT_TRUE(d.header.h1);
}

TEST_F(EngineTest, AldfbWithNothingUnderThresholdWaitsOnTheHigherDimensionsDirectLink) {
  FakeRouter r = make(RoutingMode::kAldfb);
  for (unsigned p = 4; p < r.port_count(); ++p) r.congest(p);
  r.fill(port(1, 0, 0), 30);
  const RouteDecision d = route_packet(r, from_terminal(terminal(3, 0)), 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_EQ(d.port, port(1, 0, 1));
  EXPECT_TRUE(d.minimal);
  EXPECT_FALSE(d.header.h1);
}

TEST_F(EngineTest, ThePortsWholeQueueAgainstTheThresholdAndTheVcsRoomDecideUsable) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(1, 0);  // only dimension 1: direct ports (1, 0, A/B)
  const unsigned a = port(1, 0, 0);
  r.queues[a * 2 + 1] = kThreshold - 1;  // the adaptive VC
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, a);
  // One bit per port (004 L846): the escape VC's packet counts too, T_h packets in all.
  r.queues[a * 2 + 0] = 1;
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 1));
  // A threshold beyond the queue depth: a VC with no room still does not count as usable.
  r.thresholds[a] = 1000;
  r.queues[a * 2 + 1] = r.depth;
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 1));
  r.queues[a * 2 + 1] = r.depth - 1;
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, a);
}

// --- VCs: the escape policy (the default) -------------------------------------------------

TEST_F(EngineTest, AdaptiveHopsUseTheVcsAboveTheEscapeVc) {
  FakeRouter r = make(RoutingMode::kAldfb);
  r.vcs = 4;
  r.queues.assign(r.port_count() * 4, 0);
  const unsigned a = port(1, 0, 0);
  r.queues[a * 4 + 1] = 2;
  r.queues[a * 4 + 2] = 1;
  r.queues[a * 4 + 3] = 3;
  const RouteDecision d = route_packet(r, from_terminal(terminal(3, 0)), 0);
  EXPECT_EQ(d.port, a);
  EXPECT_EQ(d.vc, 2);  // the least occupied adaptive VC; VC 0 is never adaptive
  EXPECT_EQ(d.vc_class, VcClass::kAdaptive);
  EXPECT_FALSE(d.header.escaped);
}

TEST_F(EngineTest, APacketWhoseAdaptiveVcHasNoRoomTakesTheEscapeHop) {
  for (RoutingMode mode : {RoutingMode::kAldfb, RoutingMode::kMinimal, RoutingMode::kUgal}) {
    FakeRouter r = make(mode);
    // Every adaptive VC full; the escape VCs hold a little.
    for (unsigned p = 4; p < r.port_count(); ++p) {
      r.queues[p * 2 + 1] = r.depth;
      r.queues[p * 2 + 0] = 5;
    }
    r.queues[port(1, 0, 0) * 2 + 0] = 6;  // lane B's escape VC the less occupied
    const uint32_t dest = terminal(3, 0);
    for (const PacketHeader& h :
         {from_terminal(dest), from_channel(dest, 0, 0, true), from_channel(dest, 0, 0, false)}) {
      const RouteDecision d = route_packet(r, h, fabric.router_of({2, 3}));
      ASSERT_EQ(d.status, RouteStatus::kOk);
      // The dimension-ordered minimal hop: the highest dimension still to correct, even
      // when the packet's last hop was a detour in dimension 0 (h1).
      EXPECT_EQ(d.port, port(1, 0, 1)) << static_cast<int>(mode);
      EXPECT_EQ(d.vc, 0);
      EXPECT_EQ(d.vc_class, VcClass::kEscape);
      EXPECT_TRUE(d.minimal);
      EXPECT_TRUE(d.header.escaped);
      EXPECT_FALSE(d.header.h1);
      EXPECT_FALSE(d.header.to_intermediate);
    }
  }
}

TEST_F(EngineTest, AnEscapedPacketRoutesMinimallyOnTheAdaptiveVcs) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(3, 0);
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.congest(port(1, 0, lane));
    r.congest(port(0, 3, lane));
  }
  PacketHeader h = from_channel(dest, 0, 0, false);
  ASSERT_TRUE(route_packet(r, h, 0).header.h1);  // not escaped: a detour
  h.escaped = true;
  const RouteDecision d = route_packet(r, h, 0);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_TRUE(d.minimal);  // no detour once escaped
  EXPECT_EQ(d.vc, 1);      // back on an adaptive VC (Duato allows it)
  EXPECT_TRUE(d.header.escaped);
}

// --- VCs: the seed's rule, by link numbers (L888, L906), kept for comparison -----------------

TEST_F(EngineTest, SeedRuleVirtualChannelFollowsTheLinkNumbers) {
  FakeRouter r = make(RoutingMode::kAldfb);
  r.route_mode.vc_policy = topology::VcPolicy::kSeed;
  const uint32_t prev = fabric.router_of({0, 2});  // arrives over dimension 0 from digit 0
  for (uint32_t dest_router = 0; dest_router < fabric.routers(); ++dest_router) {
    if (dest_router == own) continue;
    const RouteDecision d = route_packet(r, from_channel(dest_router * 4, 0, 0, false), 0);
    ASSERT_EQ(d.status, RouteStatus::kOk);
    const uint32_t next = fabric.peer(own, d.port, ChannelMode::kDilated).router;
    const bool forward = fabric.link_number(prev, own) < fabric.link_number(own, next);
    EXPECT_EQ(d.vc_class, forward ? VcClass::kForward : VcClass::kReverse) << dest_router;
    EXPECT_EQ(d.vc, forward ? 0 : 1);
  }
  // Both classes occur here: to (1, 0) the link number drops, to (3, 2) it rises.
  EXPECT_EQ(route_packet(r, from_channel(terminal(1, 0), 0, 0, false), 0).vc_class,
            VcClass::kReverse);
  EXPECT_EQ(route_packet(r, from_channel(terminal(3, 2), 0, 0, false), 0).vc_class,
            VcClass::kForward);
  // From a terminal there is no input link: forward.
  EXPECT_EQ(route_packet(r, from_terminal(terminal(1, 0)), 0).vc_class, VcClass::kForward);
  // Four VCs: two per class, the less occupied of the class is taken.
  r.vcs = 4;
  r.queues.assign(r.port_count() * 4, 0);
  r.queues[port(1, 0, 0) * 4 + 2] = 3;
  const RouteDecision d = route_packet(r, from_channel(terminal(1, 0), 0, 0, false), 0);
  EXPECT_EQ(d.port, port(1, 0, 0));
  EXPECT_EQ(d.vc, 3);
}

// --- The routing relation the prover reads ------------------------------------------------

TEST_F(EngineTest, EveryDecisionIsOneOfTheRouteOptions) {
  std::mt19937 rng(7);
  std::vector<RouteOption> options;
  for (topology::VcPolicy policy : {topology::VcPolicy::kEscape, topology::VcPolicy::kSeed}) {
    for (RoutingMode mode : {RoutingMode::kAldfb, RoutingMode::kMinimal, RoutingMode::kUgal}) {
      FakeRouter r = make(mode);
      r.route_mode.vc_policy = policy;
      r.depth = 6;
      for (int trial = 0; trial < 400; ++trial) {
        for (uint32_t& q : r.queues) q = rng() % 7;
        const uint32_t dest = static_cast<uint32_t>(rng() % 64);
        PacketHeader h = rng() % 2 ? from_terminal(dest)
                                   : from_channel(dest, rng() % 2, rng() % 2 == 0 ? 0 : 3,
                                                  rng() % 2 == 0);
        h.escaped = policy == topology::VcPolicy::kEscape && rng() % 4 == 0;
        const RouteDecision d = route_packet(r, h, static_cast<uint32_t>(rng()));
        ASSERT_EQ(d.status, RouteStatus::kOk);
        ASSERT_EQ(route_options(r, h, options), RouteStatus::kOk);
        const RouteOption chosen{d.port, d.vc, d.vc_class, d.local, d.header};
        EXPECT_THAT(options, ::testing::Contains(chosen))
            << "mode " << static_cast<int>(mode) << " dest " << dest;
        for (const RouteOption& o : options) {
          // Under the escape policy VC 0 of a channel carries escape hops only.
          if (policy == topology::VcPolicy::kEscape && !o.local) {
            EXPECT_EQ(o.vc == 0, o.vc_class == VcClass::kEscape);
          }
        }
      }
    }
  }
}

TEST_F(EngineTest, EscapePortsAreTheHighestDimensionsLanes) {
  FakeRouter r = make(RoutingMode::kAldfb);
  std::vector<uint16_t> ports;
  ASSERT_EQ(escape_ports(r, from_terminal(terminal(3, 0)), ports), RouteStatus::kOk);
  EXPECT_THAT(ports, ::testing::ElementsAre(port(1, 0, 0), port(1, 0, 1)));
  ASSERT_EQ(escape_ports(r, from_terminal(terminal(3, 2)), ports), RouteStatus::kOk);
  EXPECT_THAT(ports, ::testing::ElementsAre(port(0, 3, 0), port(0, 3, 1)));
  ASSERT_EQ(escape_ports(r, from_terminal(terminal(1, 2)), ports), RouteStatus::kOk);
  EXPECT_TRUE(ports.empty());  // the destination router
}

// --- Minimal adaptive and UGAL --------------------------------------------------------------

TEST_F(EngineTest, MinimalAdaptiveNeverDetours) {
  FakeRouter r = make(RoutingMode::kMinimal);
  const uint32_t dest = terminal(3, 0);
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 0));
  r.congest(port(1, 0, 0));
  r.congest(port(1, 0, 1));
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(0, 3, 0));
  for (unsigned p = 4; p < r.port_count(); ++p) r.fill(p, 40);
  r.fill(port(0, 3, 1), 39);
  const RouteDecision d = route_packet(r, from_terminal(dest), 0);
  EXPECT_EQ(d.port, port(0, 3, 1));  // the least occupied direct queue
  EXPECT_TRUE(d.minimal);
  EXPECT_FALSE(d.header.h1);
}

TEST_F(EngineTest, UgalDecidesByHopsTimesQueue) {
  FakeRouter r = make(RoutingMode::kUgal);
  const uint32_t dest = terminal(3, 0);  // 2 hops minimally
  const uint32_t intermediate = fabric.router_of({2, 3});  // 2 + 2 hops through it
  RouteDecision d = route_packet(r, from_terminal(dest), intermediate);
  EXPECT_EQ(d.port, port(1, 0, 0));
  EXPECT_FALSE(d.header.to_intermediate);
  // Every minimal first hop queues 10 packets (2 x 10 = 20), the way to (2, 3) 3 (4 x 3 = 12,
  // plus the minimal port's T_h, 8: 20): a tie stays minimal; one more packet on the minimal
  // ports and UGAL goes through (2, 3).
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.queues[port(1, 0, lane) * 2 + 1] = 10;
    r.queues[port(0, 3, lane) * 2 + 1] = 10;
    r.queues[port(1, 3, lane) * 2 + 1] = 3;
    r.queues[port(0, 2, lane) * 2 + 1] = 3;
  }
  d = route_packet(r, from_terminal(dest), intermediate);
  EXPECT_FALSE(d.header.to_intermediate);
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.queues[port(1, 0, lane) * 2 + 1] = 11;
    r.queues[port(0, 3, lane) * 2 + 1] = 11;
  }
  d = route_packet(r, from_terminal(dest), intermediate);
  EXPECT_TRUE(d.header.to_intermediate);
  EXPECT_EQ(d.header.intermediate, intermediate);
}

TEST_F(EngineTest, UgalPicksTheRandomIntermediateWhenTheMinimalQueuesAreFull) {
  FakeRouter r = make(RoutingMode::kUgal);
  const uint32_t dest = terminal(3, 0);
  for (unsigned lane = 0; lane < 2; ++lane) {
    r.congest(port(1, 0, lane));
    r.congest(port(0, 3, lane));
  }
  const uint32_t intermediate = fabric.router_of({2, 3});
  const uint32_t random = 7 * fabric.routers() + intermediate;
  const RouteDecision d = route_packet(r, from_terminal(dest), random);
  ASSERT_EQ(d.status, RouteStatus::kOk);
  EXPECT_TRUE(d.header.to_intermediate);
  EXPECT_EQ(d.header.intermediate, intermediate);
  // Minimally towards (2, 3): dimension 1 first.
  EXPECT_EQ(d.port, port(1, 3, 0));
  EXPECT_FALSE(d.minimal);
  EXPECT_EQ(route_packet(r, from_terminal(dest), random), d);  // same draw, same decision

  // Drawing this router or the destination router: minimal after all.
  const RouteDecision self = route_packet(r, from_terminal(dest), own);
  EXPECT_FALSE(self.header.to_intermediate);
  EXPECT_TRUE(self.minimal);

  // At the intermediate router the detour ends: on to the destination.
  FakeRouter there(fabric, intermediate, ChannelMode::kDilated, RoutingMode::kUgal);
  PacketHeader h = d.header;
  h.in_port =
      static_cast<uint16_t>(fabric.channel_port(intermediate, 0, 1, 0, ChannelMode::kDilated));
  const RouteDecision on = route_packet(there, h, 0);
  ASSERT_EQ(on.status, RouteStatus::kOk);
  EXPECT_FALSE(on.header.to_intermediate);
  EXPECT_TRUE(on.minimal);
}

// --- Bad register contents and headers ------------------------------------------------------

TEST_F(EngineTest, BadInputsGiveAStatusNotACrash) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const PacketHeader good = from_terminal(terminal(3, 0));
  r.route_mode.enable = false;
  EXPECT_EQ(route_packet(r, good, 0).status, RouteStatus::kDisabled);
  r.route_mode.enable = true;

  PacketHeader h = good;
  h.dest_terminal = 64;
  EXPECT_EQ(route_packet(r, h, 0).status, RouteStatus::kBadDestination);
  h = good;
  h.in_port = static_cast<uint16_t>(r.port_count());
  EXPECT_EQ(route_packet(r, h, 0).status, RouteStatus::kBadInputPort);
  const RouteDecision failed = route_packet(r, h, 0);
  EXPECT_EQ(failed.header, h);
  EXPECT_FALSE(to_string(failed.status).empty());

  r.tables.dest_table[fabric.router_of({3, 0})].valid = false;
  EXPECT_EQ(route_packet(r, good, 0).status, RouteStatus::kBadDestination);
  r.tables.dest_table[fabric.router_of({3, 0})].valid = true;
  r.tables.dest_table[fabric.router_of({3, 0})].dims[1].port_a = 2;  // a terminal port
  EXPECT_EQ(route_packet(r, good, 0).status, RouteStatus::kNoPort);
  r.tables.dest_table[fabric.router_of({3, 0})].dims[1].port_a = 250;  // past the map
  EXPECT_EQ(route_packet(r, good, 0).status, RouteStatus::kNoPort);

  FakeRouter c = make(RoutingMode::kMinimal);
  c.tables.registers.k = 1;
  EXPECT_EQ(route_packet(c, good, 0).status, RouteStatus::kBadConfig);
  c.tables.registers.k = 4;
  c.tables.registers.own_digits[0] = 4;
  EXPECT_EQ(route_packet(c, good, 0).status, RouteStatus::kBadConfig);
  c.tables.registers.own_digits[0] = 1;
  c.tables.port_map[2].role = topology::PortRole::kUnused;
  h = good;
  EXPECT_EQ(route_packet(c, h, 0).status, RouteStatus::kBadInputPort);
}

TEST_F(EngineTest, StaticWithoutAScheduleOrWithABadRowIsRefused) {
  FakeRouter r = make(RoutingMode::kStatic);
  PacketHeader h = from_terminal(terminal(3, 0));
  h.initial_row = 4;
  EXPECT_EQ(route_packet(r, h, 0).status, RouteStatus::kBadHeader);
  // Arrived over dimension 0 from digit 0, a hop of length 1, but T_3^(1) = (S_A^(3), 0)
  // starts with length 3: the row does not match the way the packet came.
  PacketHeader mid = from_channel(terminal(3, 0), 0, 0, false);
  EXPECT_EQ(route_packet(r, mid, 0).status, RouteStatus::kBadHeader);
  mid.initial_row = 2;  // T_3^(3) = (S_A^(1), S_A^(2)): it did take S_A^(1), next S_A^(2)
  EXPECT_EQ(route_packet(r, mid, 0).port, port(0, 3, 0));
  r.tables.schedule.clear();
  h.initial_row = 0;
  EXPECT_EQ(route_packet(r, h, 0).status, RouteStatus::kNoSchedule);

  const Fabric big(1024, 32);  // k = 32: no static schedule exists
  FakeRouter b(big, 3, ChannelMode::kDilated, RoutingMode::kStatic);
  EXPECT_EQ(route_packet(b, {.dest_terminal = 700, .in_port = 0}, 0).status,
            RouteStatus::kNoSchedule);
}

}  // namespace
}  // namespace asn::model::engines

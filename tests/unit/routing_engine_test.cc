// The routing engine of the emulated board (fpga/model/src/engines/routing_engine.hpp),
// through a fake RouterView holding tables from lib/topology and crafted queue states: every
// branch of ALDFB's Algorithms 3 and 4 (004 L945-1000), the VC by link numbers (L899-935),
// minimal adaptive, UGAL and static routing, bad register contents, and walks of packets hop
// by hop through whole fabrics of engines under adversarial queue states.
#include "engines/routing_engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "asn/topology/schedule.hpp"

namespace asn::model::engines {
namespace {

using topology::ChannelMode;
using topology::Fabric;
using topology::RoutingMode;

constexpr uint32_t kThreshold = 8;

// One switch: the tables compute_route_tables() gives, thresholds, queues. Reads past a
// table throw (std::out_of_range), so an engine reading out of bounds fails the test.
class FakeRouter : public RouterView {
 public:
  FakeRouter(const Fabric& fabric, uint32_t router, ChannelMode channels, RoutingMode mode)
      : tables(topology::compute_route_tables(fabric, router, channels)),
        route_mode{mode, true},
        thresholds(tables.port_map.size(), kThreshold),
        queues(tables.port_map.size() * vcs) {}

  topology::RouteRegisters registers() const override { return tables.registers; }
  topology::RouteMode mode() const override { return route_mode; }
  unsigned port_count() const override { return static_cast<unsigned>(tables.port_map.size()); }
  topology::PortMapEntry port_map(unsigned port) const override { return tables.port_map.at(port); }
  uint32_t dest_entries() const override { return static_cast<uint32_t>(tables.dest_table.size()); }
  topology::DestEntry dest_entry(uint32_t router) const override {
    return tables.dest_table.at(router);
  }
  unsigned schedule_entries() const override {
    return static_cast<unsigned>(tables.schedule.size());
  }
  topology::ScheduleEntry schedule_entry(unsigned index) const override {
    return tables.schedule.at(index);
  }
  uint32_t threshold(unsigned port) const override { return thresholds.at(port); }
  unsigned vcs_per_port() const override { return vcs; }
  uint32_t queue_depth() const override { return depth; }
  uint32_t occupancy(unsigned port, unsigned vc) const override {
    return queues.at(port * vcs + vc);
  }

  // Every VC of `port` holds `packets`.
  void fill(unsigned port, uint32_t packets) {
    for (unsigned vc = 0; vc < vcs; ++vc) queues.at(port * vcs + vc) = packets;
  }
  void congest(unsigned port) { fill(port, kThreshold); }

  topology::RouteTables tables;
  topology::RouteMode route_mode;
  std::vector<uint32_t> thresholds;
  unsigned vcs = 2;
  uint32_t depth = 64;
  std::vector<uint32_t> queues;
};

// A 4-ary 2-D fabric (N = 64, 004 L1000-1025), seen from router (1, 2).
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
  EXPECT_EQ(d.port, port(1, 0, 0));  // dimension 1, lane A (L858)
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

TEST_F(EngineTest, ThresholdAndQueueDepthDecideUsable) {
  FakeRouter r = make(RoutingMode::kAldfb);
  const uint32_t dest = terminal(1, 0);  // only dimension 1: direct ports (1, 0, A/B)
  r.fill(port(1, 0, 0), kThreshold - 1);
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 0));
  r.fill(port(1, 0, 0), kThreshold);  // T_h packets: no longer "fewer than the threshold"
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 1));
  // A threshold beyond the queue depth: a full queue still does not count as usable.
  r.thresholds[port(1, 0, 0)] = 1000;
  r.fill(port(1, 0, 0), r.depth);
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 1));
  r.fill(port(1, 0, 0), r.depth - 1);
  EXPECT_EQ(route_packet(r, from_terminal(dest), 0).port, port(1, 0, 0));
}

// --- VCs by link numbers (L899-935) ---------------------------------------------------------

TEST_F(EngineTest, VirtualChannelFollowsTheLinkNumbers) {
  FakeRouter r = make(RoutingMode::kAldfb);
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
}

TEST_F(EngineTest, VcOccupancyIsTheOneThePacketWouldUse) {
  FakeRouter r = make(RoutingMode::kAldfb);
  // Arrived from (0, 2): to (1, 0) is a reverse-VC hop, so only VC 1's queue counts.
  const PacketHeader h = from_channel(terminal(1, 0), 0, 0, false);
  r.queues[port(1, 0, 0) * 2 + 0] = 50;  // the forward VC: irrelevant here
  EXPECT_EQ(route_packet(r, h, 0).port, port(1, 0, 0));
  r.queues[port(1, 0, 0) * 2 + 1] = kThreshold;
  EXPECT_EQ(route_packet(r, h, 0).port, port(1, 0, 1));
  // Four VCs: two per class, the less occupied of the class is taken.
  r.vcs = 4;
  r.queues.assign(r.port_count() * 4, 0);
  r.queues[port(1, 0, 0) * 4 + 2] = 3;
  const RouteDecision d = route_packet(r, h, 0);
  EXPECT_EQ(d.port, port(1, 0, 0));
  EXPECT_EQ(d.vc, 3);
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

TEST_F(EngineTest, UgalGoesMinimalWhileADirectQueueIsUnderThreshold) {
  FakeRouter r = make(RoutingMode::kUgal);
  const RouteDecision d = route_packet(r, from_terminal(terminal(3, 0)), 12345);
  EXPECT_EQ(d.port, port(1, 0, 0));
  EXPECT_FALSE(d.header.to_intermediate);
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
  r.tables.schedule.clear();
  h.initial_row = 0;
  EXPECT_EQ(route_packet(r, h, 0).status, RouteStatus::kNoSchedule);

  const Fabric big(1024, 32);  // k = 32: no static schedule exists
  FakeRouter b(big, 3, ChannelMode::kDilated, RoutingMode::kStatic);
  EXPECT_EQ(route_packet(b, {.dest_terminal = 700, .in_port = 0}, 0).status,
            RouteStatus::kNoSchedule);
}

// --- Whole fabrics of engines -----------------------------------------------------------------

// One engine per router; packets are walked from port to port.
class FabricOfEngines {
 public:
  FabricOfEngines(const Fabric& fabric, ChannelMode channels, RoutingMode mode)
      : fabric_(fabric), channels_(channels) {
    for (uint32_t router = 0; router < fabric.routers(); ++router) {
      routers_.emplace_back(fabric, router, channels, mode);
    }
  }

  struct Hop {
    uint32_t router;
    RouteDecision decision;
  };

  // Walks a packet from terminal `source` to `dest`; `before` may set the queues of the
  // router about to decide. Stops after `limit` hops.
  template <typename Before>
  std::vector<Hop> walk(uint32_t source, PacketHeader header, Before before, std::mt19937& random,
                        unsigned limit = 64) {
    std::vector<Hop> hops;
    uint32_t at = fabric_.terminal_router(source);
    header.in_port = static_cast<uint16_t>(source % fabric_.k());
    while (hops.size() < limit) {
      FakeRouter& r = routers_[at];
      before(r, at, header);
      const RouteDecision d = route_packet(r, header, static_cast<uint32_t>(random()));
      hops.push_back({at, d});
      if (d.status != RouteStatus::kOk || d.local) break;
      const topology::PortEnd far = fabric_.peer(at, d.port, channels_);
      header = d.header;
      header.in_port = static_cast<uint16_t>(far.port);
      at = far.router;
    }
    return hops;
  }

  const Fabric& fabric_;
  ChannelMode channels_;
  std::vector<FakeRouter> routers_;
};

// Checks a finished walk: delivered at the right port, minimal flags true to the digits, at
// most one non-minimal hop per dimension and so at most the worst-case hop count.
void check_walk(const Fabric& fabric, ChannelMode channels, uint32_t source, uint32_t dest,
                const std::vector<FabricOfEngines::Hop>& hops, unsigned& detours) {
  ASSERT_FALSE(hops.empty());
  const FabricOfEngines::Hop& last = hops.back();
  ASSERT_EQ(last.decision.status, RouteStatus::kOk) << to_string(last.decision.status);
  ASSERT_TRUE(last.decision.local) << "no delivery after " << hops.size() << " hops";
  ASSERT_EQ(last.router, fabric.terminal_router(dest));
  ASSERT_EQ(last.decision.port, dest % fabric.k());
  const std::vector<uint32_t> want = fabric.digits(fabric.terminal_router(dest));
  std::vector<unsigned> non_minimal(fabric.dimensions());
  for (size_t i = 0; i + 1 < hops.size(); ++i) {
    const auto& hop = hops[i];
    const topology::PortInfo info = fabric.port_info(hop.router, hop.decision.port, channels);
    const uint32_t next = fabric.peer(hop.router, hop.decision.port, channels).router;
    const bool minimal = fabric.digits(next)[info.dimension] == want[info.dimension];
    ASSERT_EQ(hop.decision.minimal, minimal) << "hop " << i;
    if (!minimal) {
      ++detours;
      ASSERT_LE(++non_minimal[info.dimension], 1u)
          << "terminal " << source << " -> " << dest << ": a second detour in dimension "
          << info.dimension;
    }
  }
  ASSERT_LE(hops.size() - 1, fabric.worst_case_hops());
}

// Queues drawn at random before every decision, the direct queues towards the destination
// usually over their threshold: detours, forced minimal hops and fallbacks all occur.
void adversarial_queues(std::mt19937& random, FakeRouter& r, const PacketHeader& header) {
  for (unsigned p = 0; p < r.port_count(); ++p) {
    for (unsigned vc = 0; vc < r.vcs; ++vc) {
      r.queues[p * r.vcs + vc] = static_cast<uint32_t>(random() % (3 * kThreshold / 2));
    }
  }
  if (random() % 4 == 0) return;
  const topology::DestEntry& entry = r.tables.dest_table[header.dest_terminal / r.registers().k];
  for (const auto& direct : entry.dims) {
    for (uint8_t p : {direct.port_a, direct.port_b}) {
      if (p != topology::kNoPort) r.fill(p, kThreshold + static_cast<uint32_t>(random() % 4));
    }
  }
  // Sometimes everything over threshold but one random port.
  if (random() % 3 == 0 && r.port_count() > r.registers().k) {
    for (unsigned p = r.registers().k; p < r.port_count(); ++p) r.fill(p, kThreshold);
    r.fill(r.registers().k + static_cast<unsigned>(random() % (r.port_count() - r.registers().k)),
           0);
  }
}

const std::pair<uint32_t, uint32_t> kWalkFabrics[] = {{64, 4},  {256, 4}, {32, 4}, {81, 3},
                                                      {512, 8}, {8, 2},   {48, 4}};

TEST(EngineWalk, AldfbNeverDetoursTwiceInOneDimension) {
  std::mt19937 random(7);
  for (ChannelMode channels : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
    for (auto [n, k] : kWalkFabrics) {
      const Fabric fabric(n, k);
      FabricOfEngines engines(fabric, channels, RoutingMode::kAldfb);
      unsigned detours = 0;
      for (int packet = 0; packet < 600; ++packet) {
        const uint32_t source = static_cast<uint32_t>(random() % n);
        const uint32_t dest = static_cast<uint32_t>(random() % n);
        const auto hops = engines.walk(
            source, {.dest_terminal = dest},
            [&](FakeRouter& r, uint32_t, const PacketHeader& h) {
              adversarial_queues(random, r, h);
            },
            random);
        check_walk(fabric, channels, source, dest, hops, detours);
        if (HasFatalFailure()) return;
      }
      // The adversary did force detours (where a dimension has more than two routers).
      if (k > 2) {
        EXPECT_GT(detours, 50u) << "N=" << n << " k=" << k;
      }
    }
  }
}

TEST(EngineWalk, AldfbAfterADetourCorrectsThatDimensionNext) {
  // The adversary of the literal Algorithm 3: after a detour in the higher dimension, only
  // the other dimension's direct link is free; then only detours are free.
  const Fabric fabric(64, 4);
  FabricOfEngines engines(fabric, ChannelMode::kDilated, RoutingMode::kAldfb);
  std::mt19937 random(3);
  const uint32_t source = fabric.router_of({0, 0}) * 4, dest = fabric.router_of({3, 3}) * 4;
  const auto hops = engines.walk(
      source, {.dest_terminal = dest},
      [&](FakeRouter& r, uint32_t at, const PacketHeader& h) {
        std::fill(r.queues.begin(), r.queues.end(), 0);
        const topology::DestEntry& e = r.tables.dest_table[dest / 4];
        for (unsigned dim = 0; dim < 2; ++dim) {
          const bool block = !(h.h1 && dim == 0) || at == fabric.router_of({0, 0});
          if (!block || e.dims[dim].port_a == topology::kNoPort) continue;
          r.congest(e.dims[dim].port_a);
          r.congest(e.dims[dim].port_b);
        }
      },
      random);
  unsigned detours = 0;
  check_walk(fabric, ChannelMode::kDilated, source, dest, hops, detours);
  EXPECT_EQ(detours, 2u);  // one per dimension, never two in one
  EXPECT_EQ(hops.size(), 5u);
}

TEST(EngineWalk, MinimalAndUgalReachTheDestination) {
  std::mt19937 random(11);
  for (auto [n, k] : kWalkFabrics) {
    const Fabric fabric(n, k);
    for (RoutingMode mode : {RoutingMode::kMinimal, RoutingMode::kUgal}) {
      FabricOfEngines engines(fabric, ChannelMode::kDilated, mode);
      unsigned detours = 0, detour_packets = 0;
      for (int packet = 0; packet < 300; ++packet) {
        const uint32_t source = static_cast<uint32_t>(random() % n);
        const uint32_t dest = static_cast<uint32_t>(random() % n);
        const auto hops = engines.walk(
            source, {.dest_terminal = dest},
            [&](FakeRouter& r, uint32_t, const PacketHeader& h) {
              adversarial_queues(random, r, h);
            },
            random);
        ASSERT_TRUE(hops.back().decision.local);
        ASSERT_EQ(hops.back().router, fabric.terminal_router(dest));
        const auto from = fabric.digits(fabric.terminal_router(source));
        const auto to = fabric.digits(fabric.terminal_router(dest));
        size_t differing = 0;
        for (size_t i = 0; i < from.size(); ++i) differing += from[i] != to[i];
        if (mode == RoutingMode::kMinimal) {
          ASSERT_EQ(hops.size() - 1, differing);
        } else {
          // Minimal to the intermediate and minimal from it: at most 2 r hops.
          ASSERT_LE(hops.size() - 1, 2 * fabric.dimensions());
          unsigned packet_detours = 0;
          for (const auto& hop : hops) packet_detours += !hop.decision.minimal;
          detours += packet_detours;
          detour_packets += packet_detours > 0;
        }
      }
      if (mode == RoutingMode::kUgal && k > 2) {
        EXPECT_GT(detour_packets, 20u) << n;
      }
    }
  }
}

TEST(EngineWalk, StaticFollowsThePlannedSchedule) {
  std::mt19937 random(5);
  for (ChannelMode channels : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
    for (auto [n, k] :
         std::vector<std::pair<uint32_t, uint32_t>>{{64, 4}, {16, 4}, {8, 2}, {27, 3}, {4, 4}}) {
      const Fabric fabric(n, k);
      const topology::StaticSchedule schedule = topology::StaticSchedule::for_fabric(fabric);
      FabricOfEngines engines(fabric, channels, RoutingMode::kStatic);
      std::vector<uint32_t> destinations(n);
      for (int trial = 0; trial < 20; ++trial) {
        std::iota(destinations.begin(), destinations.end(), 0u);
        std::shuffle(destinations.begin(), destinations.end(), random);
        const auto plan = topology::plan_static_routes(fabric, destinations);
        for (uint32_t source = 0; source < n; ++source) {
          const uint32_t dest = destinations[source];
          PacketHeader h{.dest_terminal = dest};
          h.initial_row = plan[source].initial_row;
          h.final_row = plan[source].final_row;
          const auto hops = engines.walk(
              source, h,
              [&](FakeRouter& r, uint32_t, const PacketHeader& hh) {
                adversarial_queues(random, r, hh);  // static ignores the queues
              },
              random);
          // The expected channels, step by step, from the schedule's rows.
          std::vector<unsigned> expected;
          uint32_t at = fabric.terminal_router(source);
          const auto want = fabric.digits(fabric.terminal_router(dest));
          for (unsigned dim = 0; dim < fabric.dimensions(); ++dim) {
            const uint32_t length = (want[dim] + k - fabric.digits(at)[dim]) % k;
            if (length == 0) continue;
            const topology::ScheduleRow row = dim == 0 ? schedule.initial_row(length, h.initial_row)
                                                       : schedule.final_row(length, h.final_row);
            for (const topology::ScheduleStep& step : row.steps) {
              if (!step.hop()) continue;
              const uint32_t digit = (fabric.digits(at)[dim] + step.length) % k;
              const unsigned lane = std::min<unsigned>(step.lane, fabric.lanes(dim, channels) - 1);
              expected.push_back(fabric.channel_port(at, dim, digit, lane, channels));
              at = fabric.neighbour(at, dim, digit);
            }
          }
          ASSERT_EQ(hops.size(), expected.size() + 1) << "N=" << n << " terminal " << source;
          for (size_t i = 0; i < expected.size(); ++i) {
            ASSERT_EQ(hops[i].decision.status, RouteStatus::kOk);
            ASSERT_EQ(hops[i].decision.port, expected[i]) << "hop " << i;
          }
          ASSERT_TRUE(hops.back().decision.local);
          ASSERT_EQ(hops.back().router, fabric.terminal_router(dest));
        }
      }
    }
  }
}

}  // namespace
}  // namespace asn::model::engines

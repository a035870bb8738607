// The routing engine in whole fabrics: one engine per router, packets walked hop by hop
// from terminal to terminal under adversarial queue states. ALDFB never detours twice in one
// dimension (004 L834, L848) and so stays within the worst-case hop count; minimal adaptive
// and UGAL arrive; static routing takes exactly the channels of the planned schedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "asn/model/engines/routing_engine.hpp"
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
      unsigned detour_packets = 0;
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

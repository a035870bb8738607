// One switch's ROUTE tables (lib/topology/route_tables.hpp): every field checked against the
// fabric's wiring, the limits of the ROUTE block, and the schedule table.
#include "asn/topology/route_tables.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "asn/topology/fabric.hpp"
#include "asn/topology/schedule.hpp"

namespace asn::topology {
namespace {

using ::testing::HasSubstr;

// The router every port of a dest-table entry leads to must carry the destination's digit.
void check_tables(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  SCOPED_TRACE(testing::Message() << "N=" << fabric.terminals() << " k=" << fabric.k() << " router "
                                  << router);
  const RouteTables tables = compute_route_tables(fabric, router, mode);
  const std::vector<uint32_t> own = fabric.digits(router);

  const RouteRegisters& regs = tables.registers;
  ASSERT_EQ(regs.k, fabric.k());
  ASSERT_EQ(regs.r, fabric.dimensions());
  for (unsigned dim = 0; dim < kMaxDimensions; ++dim) {
    EXPECT_EQ(regs.own_digits[dim], dim < own.size() ? own[dim] : 0u);
  }
  EXPECT_EQ(regs.lanes, mode == ChannelMode::kDilated ? 2 : 1);
  if (fabric.dimensions() > 0) {
    const unsigned last = fabric.dimensions() - 1;
    EXPECT_EQ(regs.last_radix, fabric.dimension_radix(last));
    EXPECT_EQ(regs.last_lanes, fabric.lanes(last, mode));
  }

  ASSERT_EQ(tables.port_map.size(), fabric.radix(mode));
  for (unsigned port = 0; port < tables.port_map.size(); ++port) {
    const PortInfo info = fabric.port_info(router, port, mode);
    const PortMapEntry& entry = tables.port_map[port];
    EXPECT_EQ(entry.role, info.role);
    EXPECT_EQ(entry.dimension, info.role == PortRole::kChannel ? info.dimension : 0u);
    EXPECT_EQ(entry.digit, info.digit);
    EXPECT_EQ(entry.lane, info.lane);
  }

  ASSERT_EQ(tables.dest_table.size(), fabric.routers());
  for (uint32_t dest = 0; dest < fabric.routers(); ++dest) {
    const DestEntry& entry = tables.dest_table[dest];
    const std::vector<uint32_t> digits = fabric.digits(dest);
    ASSERT_TRUE(entry.valid);
    ASSERT_EQ(entry.local, dest == router);
    for (unsigned dim = 0; dim < kMaxDimensions; ++dim) {
      const DirectPorts& ports = entry.dims[dim];
      if (dim >= fabric.dimensions() || digits[dim] == own[dim]) {
        ASSERT_EQ(ports.port_a, kNoPort) << "dest " << dest << " dim " << dim;
        ASSERT_EQ(ports.port_b, kNoPort);
        continue;
      }
      const unsigned lanes = fabric.lanes(dim, mode);
      ASSERT_NE(ports.port_a, kNoPort);
      ASSERT_EQ(ports.port_b == kNoPort, lanes == 1);
      for (unsigned lane = 0; lane < lanes; ++lane) {
        const unsigned port = lane == 0 ? ports.port_a : ports.port_b + lane - 1;
        const PortMapEntry& direct = tables.port_map.at(port);
        ASSERT_EQ(direct.role, PortRole::kChannel);
        ASSERT_EQ(direct.dimension, dim);
        ASSERT_EQ(direct.digit, digits[dim]);
        ASSERT_EQ(direct.lane, lane);
        ASSERT_EQ(fabric.digits(fabric.peer(router, port, mode).router)[dim], digits[dim]);
      }
    }
  }
}

TEST(RouteTables, EveryRouterOfSmallFabrics) {
  for (auto [n, k] : std::vector<std::pair<uint32_t, uint32_t>>{
           {4, 4}, {8, 2}, {16, 4}, {64, 4}, {32, 4}, {48, 4}, {54, 3}, {256, 32}}) {
    const Fabric fabric(n, k);
    for (ChannelMode mode : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
      for (uint32_t router = 0; router < fabric.routers(); ++router) {
        check_tables(fabric, router, mode);
      }
    }
  }
}

TEST(RouteTables, TheIssueBenchmarkSwitches) {
  // Issue 7: radix 94 (63 double-rate) at N = 1024, 156 at N = 32768 (1024 routers).
  const Fabric small(1024, 32), big(32768, 32);
  EXPECT_EQ(compute_route_tables(small, 5, ChannelMode::kDilated).port_map.size(), 94u);
  EXPECT_EQ(compute_route_tables(small, 5, ChannelMode::kDoubleRate).port_map.size(), 63u);
  check_tables(big, 0, ChannelMode::kDilated);
  check_tables(big, 777, ChannelMode::kDilated);
  check_tables(big, 1023, ChannelMode::kDoubleRate);
}

TEST(RouteTables, RefusesWhatTheRouteBlockCannotHold) {
  auto error_of = [](uint64_t n, uint32_t k, uint32_t router) -> std::string {
    try {
      compute_route_tables(Fabric(n, k), router, ChannelMode::kDilated);
    } catch (const TopologyError& e) {
      return e.field() + " | " + e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(error_of(1024, 32, 32), HasSubstr("router | router: router 32 is outside the "
                                                "fabric: 0..31"));
  // 2-ary, 64 terminals: 5 dimensions.
  EXPECT_THAT(error_of(64, 2, 0), HasSubstr("dimensions | dimensions: 5 dimensions; the ROUTE "
                                            "block holds up to 4"));
  EXPECT_EQ(error_of(32, 2, 0), "accepted");  // 4 dimensions
  // 64-ary, 64^3 terminals: radix 64 + 2 * 63 * 2 = 316.
  EXPECT_THAT(error_of(64 * 64 * 64, 64, 0), HasSubstr("radix | radix: radix 316; "));
  EXPECT_THAT(error_of(256, 256, 0), HasSubstr("k | k: k = 256;"));
}

TEST(RouteTables, ScheduleTableOnlyWhereAStaticScheduleExists) {
  const RouteTables four = compute_route_tables(Fabric(64, 4), 3, ChannelMode::kDilated);
  ASSERT_EQ(four.schedule.size(), 12u);  // (k - 1) * k rows
  const StaticSchedule schedule(4);
  for (unsigned d = 1; d < 4; ++d) {
    for (unsigned p = 0; p < 4; ++p) {
      const ScheduleRow& row = schedule.initial_row(d, p);
      const ScheduleEntry& entry = four.schedule[(d - 1) * 4 + p];
      EXPECT_EQ(entry.first_length, row.steps[0].length);
      EXPECT_EQ(entry.first_lane, row.steps[0].lane);
      EXPECT_EQ(entry.second_length, row.steps[1].length);
      EXPECT_EQ(entry.second_lane, row.steps[1].lane);
    }
  }
  EXPECT_TRUE(compute_route_tables(Fabric(1024, 32), 0, ChannelMode::kDilated).schedule.empty());
  EXPECT_TRUE(compute_route_tables(Fabric(32, 4), 0, ChannelMode::kDilated).schedule.empty());
}

}  // namespace
}  // namespace asn::topology

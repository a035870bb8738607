// The 2DFB fabric and the comparison topologies (lib/topology): the seed's tables cell by
// cell (004 Table 1 L456-463, Table 3 L569-575), Eq 1 and Eq 4-9, the wiring and the port
// numbering, link numbers, and the refusal of impossible fabrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "asn/topology/compare.hpp"
#include "asn/topology/fabric.hpp"

namespace asn::topology {
namespace {

using ::testing::HasSubstr;

// One column of Table 1 / Table 3: a 32-ary fabric of N terminals.
struct TableColumn {
  uint32_t terminals;
  // Table 1: radix r, ary k, diameter d per topology.
  std::array<uint32_t, 3> dfb, clos, dbhc_row, cube;
  // Table 3: double-bandwidth links l and routers n (hypercube not in Table 3).
  std::array<uint64_t, 2> dfb_ln, clos_ln, dbhc_ln;
};

// 004 L456-463 and L569-575, as printed.
const TableColumn kTables[] = {
    {256, {88, 32, 1}, {88, 44, 3}, {88, 17, 4}, {9, 1, 8}, {112, 8}, {128, 12}, {256, 16}},
    {1024, {94, 32, 1}, {94, 47, 3}, {94, 11, 7}, {11, 1, 10}, {496, 32}, {512, 44}, {1792, 94}},
    {16384,
     {154, 32, 2},
     {154, 77, 5},
     {154, 12, 11},
     {15, 1, 14},
     {15616, 512},
     {16384, 639},
     {45056, 1366}},
    {32768,
     {156, 32, 2},
     {156, 78, 5},
     {156, 12, 12},
     {16, 1, 15},
     {31744, 1024},
     {32768, 1263},
     {98304, 2731}},
};

void expect_table1(const TopologyFigures& f, const std::array<uint32_t, 3>& row, uint32_t n) {
  EXPECT_EQ(f.radix, row[0]) << f.name << " N=" << n;
  EXPECT_EQ(f.ary, row[1]) << f.name << " N=" << n;
  EXPECT_EQ(f.diameter, row[2]) << f.name << " N=" << n;
}

void expect_table3(const TopologyFigures& f, const std::array<uint64_t, 2>& ln, uint32_t n) {
  ASSERT_TRUE(f.double_rate_links.has_value()) << f.name;
  EXPECT_EQ(*f.double_rate_links, ln[0]) << f.name << " N=" << n;
  EXPECT_EQ(f.switching_elements, ln[1]) << f.name << " N=" << n;
}

TEST(TopologyTables, Table1EveryCell) {
  for (const TableColumn& column : kTables) {
    const auto rows = compare(Fabric(column.terminals, 32));
    EXPECT_EQ(rows[0].name, "2DFB");
    expect_table1(rows[0], column.dfb, column.terminals);
    expect_table1(rows[1], column.clos, column.terminals);
    expect_table1(rows[2], column.dbhc_row, column.terminals);
    expect_table1(rows[3], column.cube, column.terminals);
  }
}

TEST(TopologyTables, Table3EveryCell) {
  for (const TableColumn& column : kTables) {
    const auto rows = compare(Fabric(column.terminals, 32));
    expect_table3(rows[0], column.dfb_ln, column.terminals);
    expect_table3(rows[1], column.clos_ln, column.terminals);
    expect_table3(rows[2], column.dbhc_ln, column.terminals);
    // Table 3's 'b', the router bandwidth, is the radix of Table 1.
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(rows[i].radix, column.dfb[0]);
    EXPECT_FALSE(rows[3].double_rate_links.has_value());
  }
}

TEST(TopologyFabric, PowerOfKFollowsTheClosedForms) {
  // 004 L341 (radix), Eq 17 (diameter), Eq 20 (routers), Eq 22 (links), L521 (hops).
  for (auto [n, k] : std::vector<std::pair<uint32_t, uint32_t>>{
           {16, 4}, {64, 4}, {256, 4}, {1024, 32}, {32768, 32}, {4096, 16}, {27, 3}}) {
    const Fabric fabric(n, k);
    const unsigned log_k = static_cast<unsigned>(std::lround(std::log(n) / std::log(k)));
    SCOPED_TRACE(testing::Message() << "N=" << n << " k=" << k);
    EXPECT_TRUE(fabric.power_of_k());
    EXPECT_EQ(fabric.dimensions(), log_k - 1);
    EXPECT_EQ(fabric.radix(), k + 2 * (k - 1) * (log_k - 1));
    EXPECT_EQ(fabric.radix(ChannelMode::kDoubleRate), k + (k - 1) * (log_k - 1));
    EXPECT_EQ(fabric.diameter(), log_k - 1);
    EXPECT_EQ(fabric.switching_elements(), n / k);
    EXPECT_EQ(fabric.links(), uint64_t{n} / k * (k - 1) * (log_k - 1));
    EXPECT_EQ(fabric.double_rate_links(), fabric.links() / 2);
    EXPECT_EQ(fabric.worst_case_hops(), 2 * (log_k - 1));
    EXPECT_DOUBLE_EQ(fabric.last_dilation(), 2.0);
  }
}

TEST(TopologyFabric, TwoAryHopsAreLog2OfHalfN) {
  // L523: for k = 2 the worst case is log2(N/2) hops (no detour with one peer).
  const Fabric fabric(8, 2);  // the prototype of chapter 3
  EXPECT_EQ(fabric.dimensions(), 2u);
  EXPECT_EQ(fabric.radix(), 6u);
  // Double-rate: 2 Ethernet + 2 SATA ports per NetFPGA (L781).
  EXPECT_EQ(fabric.radix(ChannelMode::kDoubleRate), 4u);
  EXPECT_EQ(fabric.worst_case_hops(), 2u);
  EXPECT_EQ(Fabric(64, 2).worst_case_hops(), 5u);
}

TEST(TopologyFabric, NotAPowerOfKDilatesTheLastDimension) {
  // L374: 4-ary, N = 32: DF_d = 4 and 4 ports in the second dimension.
  const Fabric small(32, 4);
  EXPECT_FALSE(small.power_of_k());
  EXPECT_EQ(small.subsystems(), 2u);
  EXPECT_EQ(small.dimensions(), 2u);
  EXPECT_DOUBLE_EQ(small.last_dilation(), 4.0);
  EXPECT_EQ(small.dimension_ports(1, ChannelMode::kDilated), 4u);
  EXPECT_EQ(small.dimension_ports(0, ChannelMode::kDilated), 6u);
  EXPECT_EQ(small.lanes(1, ChannelMode::kDoubleRate), 2u);
  EXPECT_EQ(small.worst_case_hops(), 3u);  // no detour in a dimension of two routers

  // Eq 4-9 at N = 16384, k = 32: N_s = 16, DF_d = 4, ports (16 - 1) * 4 = 60.
  const Fabric big(16384, 32);
  EXPECT_EQ(big.subsystems(), 16u);
  EXPECT_DOUBLE_EQ(big.last_dilation(), 2.0 * std::pow(32.0, 3) / 16384);
  EXPECT_EQ(big.dimension_ports(1, ChannelMode::kDilated), 60u);
  EXPECT_EQ(big.dimension_radix(1), 16u);

  // A dilation that is not a whole number is rounded up (Eq 9): 4-ary, N = 48, DF = 8/3.
  const Fabric odd(48, 4);
  EXPECT_EQ(odd.lanes(1, ChannelMode::kDilated), 3u);
  EXPECT_EQ(odd.lanes(1, ChannelMode::kDoubleRate), 2u);
  EXPECT_EQ(odd.dimension_ports(1, ChannelMode::kDilated), 6u);
}

TEST(TopologyFabric, RefusesImpossibleFabricsNamingTheField) {
  auto field_of = [](uint64_t n, uint32_t k) -> std::string {
    try {
      Fabric fabric(n, k);
    } catch (const TopologyError& e) {
      return e.field() + " | " + e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(field_of(16, 1), HasSubstr("k | k: k = 1"));
  EXPECT_THAT(field_of(16, 0), HasSubstr("k | "));
  EXPECT_THAT(field_of(3, 4), HasSubstr("terminals | terminals: N = 3 is below k = 4"));
  // 48 = 1.5 * 32: not a multiple of 32^floor(log_32 48) = 32.
  EXPECT_THAT(field_of(48, 32), HasSubstr("not a multiple of k^floor(log_k N) = 32"));
  EXPECT_THAT(field_of(100, 4), HasSubstr("not a multiple of k^floor(log_k N) = 64"));
  EXPECT_THAT(field_of(kMaxTerminals + 1, 2), HasSubstr("terminals | terminals: N = "));
  EXPECT_EQ(field_of(4, 4), "accepted");  // one router, no dimensions
  EXPECT_EQ(field_of(kMaxTerminals, 2), "accepted");
}

TEST(TopologyFabric, OneRouterHasNoDimensions) {
  const Fabric fabric(4, 4);
  EXPECT_EQ(fabric.dimensions(), 0u);
  EXPECT_EQ(fabric.routers(), 1u);
  EXPECT_EQ(fabric.radix(), 4u);
  EXPECT_EQ(fabric.links(), 0u);
  EXPECT_EQ(fabric.worst_case_hops(), 0u);
  EXPECT_THROW(fabric.dimension_radix(0), TopologyError);
}

// Small fabrics of every shape: power of k, not, 2-ary, 1-3 dimensions.
const std::pair<uint32_t, uint32_t> kShapes[] = {{8, 2},  {16, 4}, {64, 4}, {32, 4},
                                                 {48, 4}, {27, 3}, {54, 3}, {256, 32}};

TEST(TopologyWiring, DigitsAndEquation1) {
  for (auto [n, k] : kShapes) {
    const Fabric fabric(n, k);
    SCOPED_TRACE(testing::Message() << "N=" << n << " k=" << k);
    for (uint32_t router = 0; router < fabric.routers(); ++router) {
      const std::vector<uint32_t> digits = fabric.digits(router);
      ASSERT_EQ(fabric.router_of(digits), router);
      for (unsigned dim = 0; dim < fabric.dimensions(); ++dim) {
        ASSERT_LT(digits[dim], fabric.dimension_radix(dim));
        for (uint32_t m = 0; m < fabric.dimension_radix(dim); ++m) {
          // Eq 1 moves exactly digit `dim` to m.
          std::vector<uint32_t> expected = digits;
          expected[dim] = m;
          ASSERT_EQ(fabric.neighbour(router, dim, m), fabric.router_of(expected));
        }
      }
    }
  }
}

TEST(TopologyWiring, PortsReachExactlyTheRoutersOneDigitAway) {
  for (ChannelMode mode : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
    for (auto [n, k] : kShapes) {
      const Fabric fabric(n, k);
      SCOPED_TRACE(testing::Message() << "N=" << n << " k=" << k);
      for (uint32_t a = 0; a < fabric.routers(); ++a) {
        // Channels to each peer, counted per port.
        std::vector<unsigned> channels(fabric.routers());
        unsigned terminals = 0;
        for (unsigned port = 0; port < fabric.radix(mode); ++port) {
          const PortInfo info = fabric.port_info(a, port, mode);
          if (info.role == PortRole::kTerminal) {
            EXPECT_EQ(info.digit, terminals++);
            continue;
          }
          ASSERT_EQ(info.role, PortRole::kChannel);
          ++channels[fabric.peer(a, port, mode).router];
        }
        EXPECT_EQ(terminals, k);
        const std::vector<uint32_t> da = fabric.digits(a);
        for (uint32_t b = 0; b < fabric.routers(); ++b) {
          const std::vector<uint32_t> db = fabric.digits(b);
          unsigned differing = 0, dim = 0;
          for (unsigned i = 0; i < da.size(); ++i) {
            if (da[i] != db[i]) {
              ++differing;
              dim = i;
            }
          }
          const unsigned expected = differing == 1 ? fabric.lanes(dim, mode) : 0;
          ASSERT_EQ(channels[b], expected) << "router " << a << " -> " << b;
        }
      }
    }
  }
}

TEST(TopologyWiring, EveryChannelHasItsMatchingPortBack) {
  for (ChannelMode mode : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
    for (auto [n, k] : kShapes) {
      const Fabric fabric(n, k);
      for (uint32_t a = 0; a < fabric.routers(); ++a) {
        for (unsigned p = k; p < fabric.radix(mode); ++p) {
          const PortEnd far = fabric.peer(a, p, mode);
          const PortEnd back = fabric.peer(far.router, far.port, mode);
          ASSERT_EQ(back.router, a) << "N=" << n << " router " << a << " port " << p;
          ASSERT_EQ(back.port, p);
          const PortInfo here = fabric.port_info(a, p, mode);
          const PortInfo there = fabric.port_info(far.router, far.port, mode);
          EXPECT_EQ(here.dimension, there.dimension);
          EXPECT_EQ(here.lane, there.lane);
          EXPECT_EQ(there.digit, fabric.digits(a)[here.dimension]);
        }
      }
    }
  }
}

TEST(TopologyWiring, PortCountsAddUpToTheRadix) {
  for (auto [n, k] : kShapes) {
    const Fabric fabric(n, k);
    for (ChannelMode mode : {ChannelMode::kDilated, ChannelMode::kDoubleRate}) {
      std::vector<unsigned> per_dimension(fabric.dimensions());
      for (unsigned p = k; p < fabric.radix(mode); ++p) {
        ++per_dimension[fabric.port_info(0, p, mode).dimension];
      }
      for (unsigned dim = 0; dim < fabric.dimensions(); ++dim) {
        EXPECT_EQ(per_dimension[dim], fabric.dimension_ports(dim, mode));
        EXPECT_EQ(fabric.dimension_base(dim, mode),
                  fabric.channel_port(0, dim, 1, 0, mode));  // digit 0 is router 0's own
      }
      EXPECT_THROW(fabric.port_info(0, fabric.radix(mode), mode), TopologyError);
    }
  }
}

TEST(TopologyWiring, LinkNumbersFollowTheWorkedExample) {
  // 004 L906, 4-ary 2-D: R_00 -> R_02 on L_0200 (a detour), then R_02 -> R_01 on L_0102,
  // "a lower link number compared to the input link", hence the reverse VC.
  const Fabric fabric(64, 4);
  auto r = [&](uint32_t high, uint32_t low) { return fabric.router_of({low, high}); };
  EXPECT_LT(fabric.link_number(r(0, 2), r(0, 1)), fabric.link_number(r(0, 0), r(0, 2)));
  // ... and the 2r digits of a link: the starting router in the low r digits (L888).
  const uint64_t link = fabric.link_number(r(1, 2), r(3, 0));
  EXPECT_EQ(link % 16, r(1, 2));
  EXPECT_EQ(link / 16, r(3, 0));
  // Every directed link has its own number.
  std::set<uint64_t> numbers;
  for (uint32_t a = 0; a < fabric.routers(); ++a) {
    for (unsigned p = 4; p < fabric.radix(ChannelMode::kDoubleRate); ++p) {
      numbers.insert(fabric.link_number(a, fabric.peer(a, p, ChannelMode::kDoubleRate).router));
    }
  }
  EXPECT_EQ(numbers.size(), fabric.routers() * 6u);
}

TEST(TopologyWiring, BadNumbersAreRefused) {
  const Fabric fabric(64, 4);
  EXPECT_THROW(fabric.digits(16), TopologyError);
  EXPECT_THROW(fabric.neighbour(0, 0, 4), TopologyError);
  EXPECT_THROW(fabric.neighbour(0, 2, 0), TopologyError);
  EXPECT_THROW(fabric.router_of({1, 2, 3}), TopologyError);
  EXPECT_THROW(fabric.router_of({4, 0}), TopologyError);
  EXPECT_THROW(fabric.channel_port(5, 0, 1, 0, ChannelMode::kDilated), TopologyError);  // own
  EXPECT_THROW(fabric.channel_port(5, 0, 2, 2, ChannelMode::kDilated), TopologyError);  // lane
  EXPECT_THROW(fabric.peer(5, 3, ChannelMode::kDilated), TopologyError);  // a terminal port
  EXPECT_THROW(fabric.terminal_router(64), TopologyError);
  try {
    fabric.link_number(0, 16);
    FAIL() << "accepted router 16";
  } catch (const TopologyError& e) {
    EXPECT_EQ(e.field(), "router");
    EXPECT_THAT(e.what(), HasSubstr("0..15"));
  }
}

TEST(TopologyCompare, OtherTopologiesRefuseBadInput) {
  EXPECT_THROW(folded_clos(1024, 3), TopologyError);
  EXPECT_THROW(folded_clos(1, 94), TopologyError);
  EXPECT_THROW(dbhc(256, 8), TopologyError);  // k = 1 needs 1 + 8 ports
  EXPECT_EQ(dbhc(256, 9).ary, 1u);
  EXPECT_THROW(hypercube(0), TopologyError);
  EXPECT_EQ(hypercube(1024).radix, 11u);
}

}  // namespace
}  // namespace asn::topology

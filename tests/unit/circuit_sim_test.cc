// asnsim circuits' model (lib/circuit/src/sim.cc): deterministic per seed, carries the offered
// load when light, and refuses bad settings by name. Small runs: the numbers of 002's figures
// come from asnsim itself (docs/asnsim.md), not from a test.
#include <gtest/gtest.h>

#include <string>

#include "asn/circuit/error.hpp"
#include "asn/circuit/sim.hpp"

namespace {

using namespace asn::circuit;

SimSettings small(const std::string& protocol) {
  SimSettings s;
  s.side = 4;
  s.degree = 8;
  s.rate = 0.002;
  s.time = 6000;
  s.warmup = 1000;
  s.protocol = parse_protocol(protocol, "protocol");
  s.protocol.hold_time = 10;
  return s;
}

TEST(CircuitSim, SameSeedSameNumbers) {
  const SimResult a = simulate(small("BDO"));
  const SimResult b = simulate(small("BDO"));
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.events, b.events);
  EXPECT_DOUBLE_EQ(a.latency, b.latency);
  SimSettings other = small("BDO");
  other.seed = 2;
  EXPECT_NE(simulate(other).events, a.events);
}

TEST(CircuitSim, LightLoadIsCarriedByEveryProtocol) {
  for (const std::string p : {"FDC", "FDA", "FDO", "BDC", "BDA", "BDO", "FHO", "BHA"}) {
    const SimResult r = simulate(small(p));
    const double offered = 0.002 * 16;
    EXPECT_NEAR(r.throughput, offered, offered * 0.25) << p;
    // A reservation at least crosses the path and back: 2 time units a hop, 1 hop or more.
    EXPECT_GT(r.latency, 4.0) << p;
    EXPECT_DOUBLE_EQ(r.latency_total, r.latency + 8.0 * 8) << p;
  }
}

TEST(CircuitSim, XyRouteTakesTheShorterWayRound) {
  EXPECT_EQ(xy_ports(16, 0, 3), (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(xy_ports(16, 0, 15), (std::vector<uint32_t>{1}));
  EXPECT_EQ(xy_ports(16, 0, 16 * 15 + 1), (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(xy_ports(4, 0, 2), (std::vector<uint32_t>{0, 0}));  // a tie goes +
}

TEST(CircuitSim, BadSettingsNameTheFlag) {
  const auto field = [](SimSettings s) -> std::string {
    try {
      simulate(s);
    } catch (const CircuitError& e) {
      return e.field();
    }
    return "no error";
  };
  SimSettings s = small("BDO");
  s.rate = 0;
  EXPECT_EQ(field(s), "rates");
  s = small("BDO");
  s.side = 1;
  EXPECT_EQ(field(s), "size");
  s = small("BDO");
  s.degree = 65;
  EXPECT_EQ(field(s), "degree");
  s = small("BD9");  // a cset of 9 slots on links of 8
  EXPECT_EQ(field(s), "protocols");
  s = small("FHC");
  s.protocol.hold_time = 0;
  EXPECT_EQ(field(s), "hold-times");
  s = small("BDO");
  s.warmup = s.time;
  EXPECT_EQ(field(s), "warmup");
}

}  // namespace

// The prover over every fabric an emulated-255port board can run with up to 256 routers (both
// channel kinds, every adaptive mode: about 10,000 fabrics), and over the largest ones (4096
// routers). Label proof: a minute of CPU, so it runs in the main build only, not under the
// sanitizers. `asnsim prove --sweep` runs the same over all 4096 routers (docs/asnsim.md).
#include <gtest/gtest.h>

#include "asn/sim/prove.hpp"

namespace asn::sim {
namespace {

using topology::RoutingMode;

constexpr RoutingMode kAdaptive[] = {RoutingMode::kAldfb, RoutingMode::kUgal,
                                     RoutingMode::kMinimal};

TEST(ProveSweep, EveryFabricOfUpTo256RoutersIsDeadlockFree) {
  size_t proved = 0;
  for (Channels channels : {Channels::kDilated, Channels::kDoubleRate}) {
    for (const FabricShape& shape : board_fabrics(255, 256, channels)) {
      for (RoutingMode mode : kAdaptive) {
        ProveRequest q;
        q.terminals = shape.terminals;
        q.k = shape.k;
        q.channels = channels;
        q.mode = mode;
        q.state_budget = 1'000;
        const Proof p = prove(q);
        ASSERT_TRUE(p.deadlock_free) << "N=" << shape.terminals << " k=" << shape.k << " "
                                     << to_string(channels) << " " << to_string(mode) << ": "
                                     << p.text;
        ++proved;
      }
    }
  }
  EXPECT_GT(proved, 3u * 10'000);
}

TEST(ProveSweep, TheLargestFabricsAreDeadlockFree) {
  // 4096 routers: k = 8 in 4 dimensions, k = 16 in 3.
  for (auto [n, k] : {std::pair<uint32_t, uint32_t>{32768, 8}, {65536, 16}}) {
    for (Channels channels : {Channels::kDilated, Channels::kDoubleRate}) {
      ProveRequest q;
      q.terminals = n;
      q.k = k;
      q.channels = channels;
      q.mode = RoutingMode::kAldfb;
      q.state_budget = 100'000;
      const Proof p = prove(q);
      EXPECT_TRUE(p.deadlock_free) << "N=" << n << " k=" << k << ": " << p.text;
    }
  }
}

}  // namespace
}  // namespace asn::sim

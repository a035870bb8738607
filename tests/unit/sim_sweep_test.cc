// asnsim's sweep (lib/sim/src/sweep.cc): its threads and seeds change nothing of the results.
// Apart from tests/unit/sim_test.cc because it is the one simulator test that starts threads
// (the rest run under every sanitizer but ThreadSanitizer: tests/README.md).
#include <gtest/gtest.h>

#include "asn/sim/report.hpp"
#include "asn/sim/settings.hpp"
#include "asn/sim/sweep.hpp"

namespace asn::sim {
namespace {

using topology::RoutingMode;

TEST(SimDeterminism, SameSeedSameResults) {
  Settings s;  // 4 routers, short runs: the sweep's threads and seeds are what is tested
  s.terminals = 16;
  s.k = 4;
  s.warmup_cycles = 300;
  s.sample_cycles = 300;
  s.min_samples = 2;
  s.max_samples = 4;
  s.deadlock_cycles = 400;
  s.pattern = Pattern::kUniform;
  s.modes = {RoutingMode::kAldfb, RoutingMode::kUgal};
  s.loads = {0.3, 0.6};
  s.threads = 2;
  const Results a = run_sweep(s);
  const Results b = run_sweep(s);
  EXPECT_EQ(csv(a), csv(b));
  s.seed = 2;
  EXPECT_NE(csv(a), csv(run_sweep(s)));
}

}  // namespace
}  // namespace asn::sim

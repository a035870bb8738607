// Issue 14's speed targets for asnsim (lib/sim): simulated router-cycles per second,
// single-threaded, for N = 64 (4-ary, 16 routers) at offered load 0.1 and at saturation, and
// for N = 1024 (k = 32, 32 routers) and N = 4096 (k = 16, 256 routers) at load 0.1 and at
// saturation. Target: >= 200,000 router-cycles/s for N = 64 at load 0.1. The reference of the
// same run is BM_RouterDigits (topology_bench's: one router's digits), so ratios compare
// across runs on this shared machine. Saturation uses adversarial traffic under ALDFB, which
// saturates without deadlocking (uniform traffic at full load deadlocks the engine's 2-VC
// rule, see docs/asnsim.md).
//   build/bench/sim_bench  (or: bench/run.sh sim)
#include <benchmark/benchmark.h>

#include "asn/sim/network.hpp"
#include "asn/sim/settings.hpp"
#include "asn/topology/fabric.hpp"
#include "router_digits_reference.hpp"

namespace {

using namespace asn;

// Args: terminals, k, load in percent, cycles, internal_speedup (1: input-queued, 2: output
// queues). One iteration builds a fresh network (programming every router's tables) and runs
// it `cycles` cycles from empty; the build is part of the time.
void BM_Simulate(benchmark::State& state) {
  sim::Settings s;
  s.terminals = static_cast<uint32_t>(state.range(0));
  s.k = static_cast<uint32_t>(state.range(1));
  const double load = static_cast<double>(state.range(2)) / 100;
  const bool saturated = state.range(2) >= 100;
  s.pattern = saturated ? sim::Pattern::kAdversarial : sim::Pattern::kUniform;
  const uint64_t cycles = static_cast<uint64_t>(state.range(3));
  s.internal_speedup = static_cast<uint32_t>(state.range(4));
  const uint32_t routers = s.terminals / s.k;
  uint64_t delivered = 0;
  for (auto _ : state) {
    delivered += sim::simulate_cycles(s, topology::RoutingMode::kAldfb, load, 1, cycles);
  }
  state.counters["router_cycles_per_s"] = benchmark::Counter(
      static_cast<double>(routers) * cycles * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["cycles_per_s"] = benchmark::Counter(
      static_cast<double>(cycles) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["packets"] = static_cast<double>(delivered) / state.iterations();
  state.SetLabel(std::to_string(s.terminals) + " terminals, load " + std::to_string(load) +
                 (s.internal_speedup > 1 ? ", output queues" : ""));
}
BENCHMARK(BM_Simulate)
    ->Args({64, 4, 10, 20000, 1})
    ->Args({64, 4, 100, 20000, 1})
    ->Args({64, 4, 100, 20000, 2})
    ->Args({1024, 32, 10, 2000, 1})
    ->Args({1024, 32, 100, 2000, 1})
    ->Args({4096, 16, 10, 1000, 1})
    ->Args({4096, 16, 100, 1000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

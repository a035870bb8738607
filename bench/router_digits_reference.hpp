// The reference the topology and simulator benchmarks divide by: a 2DFB router's digits, a
// few nanoseconds of arithmetic on this machine, measured in the same run (bench/table.py).
// Include it in exactly one source file of a benchmark program.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

#include "asn/topology/fabric.hpp"

namespace asn::bench {

inline void BM_RouterDigits(benchmark::State& state) {
  const topology::Fabric fabric(32768, 32);
  uint32_t router = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fabric.digits(router));
    router = (router + 1) & 1023;
  }
}
BENCHMARK(BM_RouterDigits);

}  // namespace asn::bench

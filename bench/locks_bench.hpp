// What the two halves of locks_bench share: locks_bench.cc (the Locks API end to end, and
// main) and locks_bench_core.cc (the lock table in core, and the memory of a million locks).
#pragma once

#include <cstdint>

namespace asn::bench {

constexpr int kRanges = 16;        // ranges of a multi-range request
constexpr uint64_t kBlock = 4096;  // bytes of a range; ranges kStride apart
constexpr uint64_t kStride = 65536;

// Registers BM_Memory* and then BM_Table, BM_DurableRegion, BM_DurableFile (in that order:
// the memory figures want a fresh heap).
void register_core_benchmarks();

}  // namespace asn::bench

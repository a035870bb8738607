// Issue 10's parity path (004 L1131: the switch splits a client's file into stripe units and
// computes the parity on the fly): asn::stripe::compute_parity throughput over the data bytes
// of one stripe of 64 KiB units, RAID 5 at 3+1 and 8+1 and RAID 6 at 3+2 and 8+2, against
//  - BM_Memcpy: a plain memcpy of the same data bytes, the ceiling (the reference);
//  - BM_NaiveParity: a byte loop (P by XOR, Q by Horner with a multiply by 2 per byte), the
//    floor.
// Each parity case also times memcpy of its own data bytes in the same run, right after its
// loop: counter of_memcpy = parity bytes/s / memcpy bytes/s in CPU time (target: 0.8 or
// better).
// BM_Check: a scrub's verdict on a clean stripe (issue 27 item 4: its parity recomputed from
// the data and compared, asn::stripe::check_stripe), in member bytes (data and parity) per
// CPU second; the whole scrub through asnd, with the members' reads, is bench/stripe_io's.
// BM_ClientBytes: the bytes a client sends per 1 MiB of file with in-switch parity (the data
// only) and with client-side parity (data and parity), and the share saved (the seed: 25%
// less for 3+1).
//   build/bench/stripe_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <vector>

#include "asn/stripe/parity.hpp"

namespace {

using asn::stripe::Geometry;
using asn::stripe::Raid;

constexpr uint32_t kUnit = 64 * 1024;

struct Free {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, Free>;

Buffer buffer(size_t len) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (len + 63) / 64 * 64));
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(p);
}

// The data units of one stripe (random bytes) and its P and Q.
struct Stripe {
  explicit Stripe(unsigned data_units) {
    std::mt19937 rng(data_units);
    for (unsigned i = 0; i < data_units; ++i) {
      data.push_back(buffer(kUnit));
      for (uint32_t b = 0; b < kUnit; ++b) data.back().get()[b] = static_cast<uint8_t>(rng());
      ptrs.push_back(data.back().get());
    }
    p = buffer(kUnit);
    q = buffer(kUnit);
  }
  std::vector<Buffer> data;
  std::vector<const uint8_t*> ptrs;
  Buffer p, q;
};

Geometry geometry(Raid raid, unsigned data_units) {
  return Geometry{raid, data_units, raid == Raid::k6 ? 2u : 1u, kUnit};
}

// memcpy of `units` units into one contiguous destination.
void copy_units(const Stripe& s, uint8_t* dst) {
  for (size_t i = 0; i < s.ptrs.size(); ++i) std::memcpy(dst + i * kUnit, s.ptrs[i], kUnit);
}

void BM_Memcpy(benchmark::State& state) {
  const auto d = static_cast<unsigned>(state.range(0));
  Stripe s(d);
  Buffer dst = buffer(size_t{d} * kUnit);
  for (auto _ : state) {
    copy_units(s, dst.get());
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * d * kUnit);
  state.counters["GB_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * d * kUnit / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Memcpy)->Arg(3)->Arg(8);

// CPU time of this thread: the ratio holds on a busy machine, where wall-clock ratios swing
// 0.4-3.5x (issue 27).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void BM_Parity(benchmark::State& state) {
  const auto raid = static_cast<Raid>(state.range(0));
  const auto d = static_cast<unsigned>(state.range(1));
  const Geometry g = geometry(raid, d);
  Stripe s(d);
  for (auto _ : state) {
    asn::stripe::compute_parity(g, s.ptrs, s.p.get(), raid == Raid::k6 ? s.q.get() : nullptr,
                                kUnit);
    benchmark::DoNotOptimize(s.p.get());
    benchmark::ClobberMemory();
  }
  const double bytes = static_cast<double>(state.iterations()) * d * kUnit;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["GB_s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);

  // The ceiling on the same data bytes, in the same run: parity per second of memcpy's.
  const double parity_start = thread_cpu_seconds();
  const int64_t n = std::max<int64_t>(200, std::min<int64_t>(state.iterations(), 5000));
  for (int64_t i = 0; i < n; ++i) {
    asn::stripe::compute_parity(g, s.ptrs, s.p.get(), raid == Raid::k6 ? s.q.get() : nullptr,
                                kUnit);
    benchmark::ClobberMemory();
  }
  const double copy_start = thread_cpu_seconds();
  Buffer dst = buffer(size_t{d} * kUnit);
  for (int64_t i = 0; i < n; ++i) {
    copy_units(s, dst.get());
    benchmark::DoNotOptimize(dst.get());
    benchmark::ClobberMemory();
  }
  const double end = thread_cpu_seconds();
  const double parity_s = copy_start - parity_start;
  const double copy_s = end - copy_start;
  state.counters["of_memcpy"] = copy_s / parity_s;
}
BENCHMARK(BM_Parity)
    ->ArgNames({"raid", "data"})
    ->Args({5, 3})
    ->Args({5, 8})
    ->Args({6, 3})
    ->Args({6, 8});

void BM_Check(benchmark::State& state) {
  const auto raid = static_cast<Raid>(state.range(0));
  const auto d = static_cast<unsigned>(state.range(1));
  const Geometry g = geometry(raid, d);
  Stripe s(d);
  asn::stripe::compute_parity(g, s.ptrs, s.p.get(), s.q.get(), kUnit);
  std::vector<uint8_t*> units;
  for (const Buffer& b : s.data) units.push_back(b.get());
  units.push_back(s.p.get());
  units.push_back(s.q.get());
  Buffer p2 = buffer(kUnit);
  Buffer q2 = buffer(kUnit);
  const std::vector<uint8_t*> scratch{p2.get(), q2.get()};
  for (auto _ : state) {
    const auto check = asn::stripe::check_stripe(g, units, {}, scratch, kUnit);
    if (check.mismatch != asn::stripe::Mismatch::kNone) state.SkipWithError("a clean stripe");
    benchmark::ClobberMemory();
  }
  const double bytes = static_cast<double>(state.iterations()) * g.members() * kUnit;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["GB_s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Check)->ArgNames({"raid", "data"})->Args({5, 3})->Args({6, 4})->Args({6, 8});

// The floor: one byte at a time.
void BM_NaiveParity(benchmark::State& state) {
  const auto raid = static_cast<Raid>(state.range(0));
  const auto d = static_cast<unsigned>(state.range(1));
  Stripe s(d);
  uint8_t* p = s.p.get();
  uint8_t* q = s.q.get();
  for (auto _ : state) {
    for (uint32_t b = 0; b < kUnit; ++b) {
      uint8_t pv = 0;
      uint8_t qv = 0;
      for (unsigned i = d; i-- > 0;) {
        const uint8_t v = s.ptrs[i][b];
        pv ^= v;
        if (raid == Raid::k6) qv = static_cast<uint8_t>((qv << 1) ^ ((qv & 0x80) ? 0x1D : 0) ^ v);
      }
      p[b] = pv;
      q[b] = qv;
    }
    benchmark::DoNotOptimize(p);
    benchmark::DoNotOptimize(q);
    benchmark::ClobberMemory();
  }
  const double bytes = static_cast<double>(state.iterations()) * d * kUnit;
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["GB_s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NaiveParity)
    ->ArgNames({"raid", "data"})
    ->Args({5, 3})
    ->Args({5, 8})
    ->Args({6, 3})
    ->Args({6, 8});

// Client bytes per 1 MiB of file, 64 KiB units. With client-side parity the client sends
// every stripe's parity too: parity_members units per whole stripe, and for a last, partial
// stripe parity as long as its longest data unit (min(unit, bytes left)). In the switch the
// parity is added at the last hop (004 L1131), so the client sends the data only.
void BM_ClientBytes(benchmark::State& state) {
  const auto d = static_cast<unsigned>(state.range(0));
  const auto parity = static_cast<unsigned>(state.range(1));
  const uint64_t file = uint64_t{1} << 20;
  uint64_t client_side = 0;
  for (auto _ : state) {
    const uint64_t stripe = uint64_t{d} * kUnit;
    const uint64_t whole = file / stripe;
    const uint64_t rest = file % stripe;
    client_side = file + parity * (whole * kUnit + std::min<uint64_t>(rest, kUnit));
    benchmark::DoNotOptimize(client_side);
  }
  state.counters["in_switch_KiB"] = static_cast<double>(file) / 1024;
  state.counters["client_parity_KiB"] = static_cast<double>(client_side) / 1024;
  state.counters["saved_pct"] =
      100.0 * static_cast<double>(client_side - file) / static_cast<double>(client_side);
  state.counters["saved_pct_whole_stripes"] = 100.0 * parity / (d + parity);
}
BENCHMARK(BM_ClientBytes)->ArgNames({"data", "parity"})->Args({3, 1})->Args({8, 2});

}  // namespace

BENCHMARK_MAIN();

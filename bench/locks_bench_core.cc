// locks_bench's in-core half (locks_bench.cc's header comment describes every figure): the
// lock table without gRPC (BM_Table, BM_DurableRegion, BM_DurableFile) and the memory of a
// million granted locks (BM_Memory*).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "asn/locks/durable.hpp"
#include "asn/locks/lock_table.hpp"
#include "locks_bench.hpp"
#include "support.hpp"

namespace asn::bench {

namespace {

using Clock = std::chrono::steady_clock;

// ---- the table in core -----------------------------------------------------------------

locks::Request table_request(locks::SessionId session, int ranges) {
  locks::Request request;
  request.session = session;
  request.file = "bench-file";
  request.mode = locks::Mode::kExclusive;
  request.wait = locks::Wait::kTry;
  std::vector<locks::ByteRange> list;
  for (int i = 0; i < ranges; ++i) list.push_back({static_cast<uint64_t>(i) * kStride, kBlock});
  request.ranges = std::move(list);
  return request;
}

template <typename Table>
void lock_release_loop(benchmark::State& state, Table& table, int ranges) {
  const locks::SessionId session = table.open_session("bench");
  const locks::Request request = table_request(session, ranges);
  for (auto _ : state) {
    const locks::Outcome outcome = table.request(request);
    const locks::Change change = table.release(session, request.file, request.ranges);
    if (outcome.status != locks::Status::kGranted || !change.ok()) {
      state.SkipWithError("not granted, or not released");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Table(benchmark::State& state, int ranges) {
  locks::LockTable table;
  lock_release_loop(state, table, ranges);
}

void BM_DurableRegion(benchmark::State& state, int ranges) {
  std::vector<std::byte> region(locks::RegionJournal::bytes_for(locks::kDefaultCapacity));
  locks::RegionJournal journal(region);
  locks::DurableTable table(journal, locks::TableLimits{});
  lock_release_loop(state, table, ranges);
  state.counters["checkpoints"] = static_cast<double>(table.checkpoints_written());
}

void BM_DurableFile(benchmark::State& state, int ranges) {
  test::TempDir dir;
  locks::FileJournal journal(dir.path());
  locks::DurableTable table(journal, locks::TableLimits{});
  lock_release_loop(state, table, ranges);
  state.counters["checkpoints"] = static_cast<double>(table.checkpoints_written());
}

// ---- memory ----------------------------------------------------------------------------

constexpr size_t kMillion = 1000000;
constexpr size_t kSessions = 16;

// The resident set; the heap's free pages are given back first, so that a table does not
// grow the heap into pages an earlier benchmark left resident.
double rss_bytes() {
  malloc_trim(0);
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double heap_bytes() { return static_cast<double>(mallinfo2().uordblks); }

// Fills `table` with a million held locks: on `files` files, a million / files ranges each.
template <typename Table>
bool fill(Table& table, size_t files) {
  std::vector<locks::SessionId> sessions;
  for (size_t s = 0; s < kSessions; ++s) sessions.push_back(table.open_session("bench"));
  locks::Request request;
  request.mode = locks::Mode::kExclusive;
  request.wait = locks::Wait::kTry;
  char name[32];
  for (size_t i = 0; i < kMillion; ++i) {
    std::snprintf(name, sizeof name, "file-%07zu", i % files);
    request.session = sessions[i % kSessions];
    request.file = name;
    request.ranges = std::vector<locks::ByteRange>{{(i / files) * kStride, kBlock}};
    if (table.request(request).status != locks::Status::kGranted) return false;
  }
  return true;
}

const locks::TableLimits kMillionLimits{1u << 20, locks::kDefaultMaxRanges};

void BM_MemoryTable(benchmark::State& state, size_t files) {
  for (auto _ : state) {
    const double rss0 = rss_bytes(), heap0 = heap_bytes();
    const auto start = Clock::now();
    locks::LockTable table(kMillionLimits);
    if (!fill(table, files)) {
      state.SkipWithError("a lock was not granted");
      return;
    }
    const double fill_s = std::chrono::duration<double>(Clock::now() - start).count();
    const double rss = rss_bytes() - rss0, heap = heap_bytes() - heap0;
    state.counters["rss_MB"] = rss / 1e6;
    state.counters["heap_MB"] = heap / 1e6;
    state.counters["B_per_lock"] = heap / kMillion;
    state.counters["checkpoint_MB"] = static_cast<double>(table.save().size()) / 1e6;
    state.counters["fill_s"] = fill_s;
    state.counters["held"] = static_cast<double>(table.stats().held_entries);
  }
}

void BM_MemoryDurableFile(benchmark::State& state, size_t files) {
  for (auto _ : state) {
    test::TempDir dir;
    const double rss0 = rss_bytes(), heap0 = heap_bytes();
    const auto start = Clock::now();
    locks::FileJournal journal(dir.path());
    locks::DurableTable table(journal, kMillionLimits);
    if (!fill(table, files)) {
      state.SkipWithError("a lock was not granted");
      return;
    }
    const double fill_s = std::chrono::duration<double>(Clock::now() - start).count();
    const double rss = rss_bytes() - rss0, heap = heap_bytes() - heap0;
    table.checkpoint();
    state.counters["rss_MB"] = rss / 1e6;
    state.counters["heap_MB"] = heap / 1e6;
    state.counters["B_per_lock"] = heap / kMillion;
    state.counters["checkpoint_MB"] =
        static_cast<double>(std::filesystem::file_size(dir.file("checkpoint"))) / 1e6;
    state.counters["fill_s"] = fill_s;
    state.counters["held"] = static_cast<double>(table.table().stats().held_entries);
  }
}

}  // namespace

void register_core_benchmarks() {
  using benchmark::RegisterBenchmark;
  for (size_t files : {kMillion, size_t{1000}}) {
    const std::string tail = "/1M-locks/" + std::to_string(files) + "-files";
    RegisterBenchmark(("BM_MemoryTable" + tail).c_str(), BM_MemoryTable, files)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark(("BM_MemoryDurableFile" + tail).c_str(), BM_MemoryDurableFile, files)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  for (int ranges : {1, kRanges}) {
    const std::string tail = "/ranges:" + std::to_string(ranges);
    RegisterBenchmark(("BM_Table" + tail).c_str(), BM_Table, ranges)->MinTime(0.3);
    RegisterBenchmark(("BM_DurableRegion" + tail).c_str(), BM_DurableRegion, ranges)->MinTime(0.3);
    RegisterBenchmark(("BM_DurableFile" + tail).c_str(), BM_DurableFile, ranges)->MinTime(0.3);
  }
}

}  // namespace asn::bench

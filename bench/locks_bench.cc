// Issue 9's lock targets: the Locks gRPC API end to end, the lock table in core, and the
// memory of a million granted locks.
//
// End to end: the Locks service over a LockManager with no switch (every file in the
// software domain: a DurableTable over a FileJournal in $TMPDIR, each operation write()n to
// its log before the answer), served on a Unix socket in this process
// (tests/support/lock_stack.hpp, what asnd serves its lock clients); the clients are threads
// of the same process, each with its own channel (its own connection to the socket) and its
// own session (TTL 3600 s). So client and server share the machine's cores.
//  - BM_LockUnlock/threads:N: each client loops Lock (blocking call, exclusive, one range of
//    its own file: never a conflict) then Unlock; items/s = lock+unlock pairs/s of all the
//    clients together (issue 9's target: >= 50,000 with 16 clients; etcd: about 2,500).
//  - BM_LockUnlock16/threads:N: the same with 16 ranges in each request (one Lock for all 16,
//    granted together or not at all, then one Unlock of the 16); items/s = such pairs/s.
//  - BM_LockUnlockBatched/threads:N: BM_LockUnlock through libasnclient with
//    ClientOptions::batch: the N threads share ONE LockClient (one Batch stream; the ops
//    ready at once go in one message), each with its own Session and file. So N clients here
//    are N threads of one client node sharing one library instance, not N connections as in
//    BM_LockUnlock.
//  - BM_LockUnlockAsync/clients:N/ranges:R: N sessions of ONE LockClient, each a client
//    locking and unlocking R ranges of its own file in turn as BM_LockUnlock's (R = 16: one
//    atomic 16-range request, as BM_LockUnlock16's), but driven by the callbacks of the
//    asynchronous calls (Session::lock_async, ...) instead of a thread each: every client has
//    its one pair in flight, and the ops ready together share a message of the Batch stream.
//    items/s = pairs/s of all the clients together.
//  - BM_Handoff/threads:16: 16 clients on ONE range of one file, each looping Lock (blocking)
//    then Unlock at once. The handoff latency is, for each grant that waited (the response's
//    `waited`), the time from the start of the holder's Unlock call (the holder stores
//    steady_clock before it calls Unlock) to the waiter's Lock response received: the lock
//    moving from one client to the next through the server. The hold itself is 0 (Unlock
//    follows the grant at once), so it is not in the figure. p50_us/p99_us/max_us over all
//    the handoffs of the run; items/s = grants/s.
//  - BM_HandoffAsync: BM_Handoff with 16 sessions of ONE LockClient driven by the callbacks of
//    the asynchronous calls, as BM_LockUnlockAsync: the handoff is from the holder's
//    unlock_async to the waiter's grant callback (the grant usually comes back in the same
//    reply as the unlock's result).
// In core (no gRPC, no threads):
//  - BM_Table*: a plain locks::LockTable (capacity 16,384, as a switch's table); one session
//    locks (try mode, exclusive) and releases one range, or 16 ranges in one request, of one
//    file. Targets: >= 1,000,000 single-range pairs/s, >= 100,000 16-range requests/s.
//  - BM_DurableRegion*: the same on a locks::DurableTable over a locks::RegionJournal in a
//    std::vector<std::byte> (RegionJournal::bytes_for(16,384)): every operation logged into
//    the region first, and the region checkpointed when its log fills.
//  - BM_DurableFile*: the same on a DurableTable over a FileJournal (the software domain's
//    medium): a write() a record.
// Memory (BM_Memory*, one iteration each, run first so that the heap is still fresh): a
// table with 1,000,000 held single-range locks, of 16 sessions, on 1,000,000 files (one lock
// a file, ids "file-NNNNNNN": the worst case of the layout) or on 1,000 files (1,000 disjoint
// ranges each); the table's capacity 2^20 (LocksConfig's software_entries). rss_MB is the
// resident set's growth (/proc/self/statm) from before the table is made to after it is
// filled; heap_MB is the heap's growth (mallinfo2: bytes in use), B_per_lock the latter per
// lock; checkpoint_MB the checkpoint's size (LockTable::save(), or the FileJournal's
// checkpoint file after DurableTable::checkpoint()). For the DurableTable the log file lives
// in the page cache, not in the RSS.
//
// ASN_BENCH_LOCKS=unix:/path/asnd.sock runs the end-to-end benchmarks against that asnd
// instead (its lock domains as configured).
//
// ASN_BENCH_FABRIC=unix:/a.sock,unix:/b.sock,... adds BM_FabricLockUnlock/threads:16
// (issue 25): 16 threads, each a FabricSession of one FabricLockClient on those switches,
// Lock then Unlock of its own 8 files in turn, each file at the switch that owns its slot
// (the first call of a slot redirected, the rest straight to the owner). One endpoint of an
// asnd outside any fabric is its single-switch reference (bench/fabric_locks_bench.sh).
//
// The reference every ratio is divided by is a GetLockStats round trip (no sessions listed
// beyond the benchmark's) over the same socket: the cost of a small gRPC call here.
//   build/bench/locks_bench  (or: python3 bench/table.py <json> BM_GetLockStats)
#include "locks_bench.hpp"

#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "asn/client/fabric.hpp"
#include "asn/client/locks.hpp"
#include "asn/locks/durable.hpp"
#include "asn/locks/lock_table.hpp"
#include "asn/v1/locks.grpc.pb.h"
#include "client_errors.hpp"
#include "lock_stack.hpp"
#include "support.hpp"

namespace {

using namespace asn;
using namespace asn::bench;
using Clock = std::chrono::steady_clock;

// CPU time of the whole process (client and server threads), in seconds.
double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// ---- the service -----------------------------------------------------------------------

// The Locks service in this process, or with ASN_BENCH_LOCKS=unix:/path a running asnd (its
// own process, as issue 9 words it: "client and asnd on the same 2 cores").
struct Server {
  test::TempDir dir;
  std::unique_ptr<test::LockStack> stack;
  std::string target;
  std::unique_ptr<v1::Locks::Stub> stub;

  Server() {
    if (const char* external = std::getenv("ASN_BENCH_LOCKS"); external && *external) {
      target = external;
    } else {
      stack = std::make_unique<test::LockStack>(test::LockStack::Kind::kSoftware, dir.path(),
                                                LocksConfig{});
      target = "unix:" + dir.path() + "/locks.sock";
    }
    stub = client(-1);
  }

  // A client of its own: a channel whose distinct argument keeps gRPC from sharing its
  // connection with the other clients'.
  std::unique_ptr<v1::Locks::Stub> client(int index) const {
    grpc::ChannelArguments args;
    args.SetInt("asn.bench.client", index);
    return v1::Locks::NewStub(
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }
};

Server& server() {
  static Server s;
  return s;
}

// A client thread's session; closed when it goes.
struct Client {
  std::unique_ptr<v1::Locks::Stub> stub;
  uint64_t session = 0;

  explicit Client(int index) : stub(server().client(index)) {
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(3600);
    request.set_name("locks_bench " + std::to_string(index));
    v1::OpenSessionResponse response;
    grpc::ClientContext context;
    if (const grpc::Status status = stub->OpenSession(&context, request, &response); status.ok()) {
      session = response.session();
    }
  }
  ~Client() {
    if (session == 0) return;
    v1::CloseSessionRequest request;
    request.set_session(session);
    v1::CloseSessionResponse response;
    grpc::ClientContext context;
    (void)stub->CloseSession(&context, request, &response);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  grpc::Status lock(const v1::LockRequest& request, v1::LockResponse& response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return stub->Lock(&context, request, &response);
  }
  grpc::Status unlock(const v1::UnlockRequest& request) {
    v1::UnlockResponse response;
    grpc::ClientContext context;
    return stub->Unlock(&context, request, &response);
  }
};

template <typename Message>
void add_ranges(Message& message, int count) {
  for (int i = 0; i < count; ++i) {
    v1::ByteRange* range = message.add_ranges();
    range->set_offset(static_cast<uint64_t>(i) * kStride);
    range->set_length(kBlock);
  }
}

void BM_GetLockStats(benchmark::State& state) {
  auto& s = server();
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    v1::GetLockStatsResponse response;
    grpc::ClientContext context;
    const grpc::Status status = s.stub->GetLockStats(&context, {}, &response);
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      break;
    }
  }
  state.counters["cpu_us"] =
      (process_cpu_s() - cpu0) * 1e6 / static_cast<double>(state.iterations());
}

// Lock then Unlock of `ranges` ranges of the client's own file.
void BM_LockUnlock(benchmark::State& state, int ranges) {
  server();
  Client client(state.thread_index());
  if (client.session == 0) {
    state.SkipWithError("OpenSession failed");
    return;
  }
  v1::LockRequest lock;
  lock.set_session(client.session);
  lock.set_file("bench-own-" + std::to_string(state.thread_index()));
  lock.set_mode(v1::LOCK_MODE_EXCLUSIVE);
  add_ranges(lock, ranges);
  v1::UnlockRequest unlock;
  unlock.set_session(client.session);
  unlock.set_file(lock.file());
  add_ranges(unlock, ranges);
  v1::LockResponse response;
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    response.Clear();
    grpc::Status status = client.lock(lock, response);
    if (status.ok()) status = client.unlock(unlock);
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  // The process's CPU (clients and server) per pair; thread 0 leaves the loop after every
  // thread finished its iterations (its end is a barrier). Counters are summed over the
  // threads: only thread 0 sets it.
  if (state.thread_index() == 0) {
    state.counters["cpu_us_per_pair"] =
        (process_cpu_s() - cpu0) * 1e6 / static_cast<double>(state.iterations() * state.threads());
  }
}

// The endpoints of ASN_BENCH_FABRIC, comma-separated.
std::vector<std::string> fabric_endpoints() {
  std::vector<std::string> out;
  const char* list = std::getenv("ASN_BENCH_FABRIC");
  std::string rest = list == nullptr ? "" : list;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    out.push_back(rest.substr(0, comma));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return out;
}

// BM_LockUnlock through FabricSession on the switches of ASN_BENCH_FABRIC: pairs/s of all
// threads together.
void BM_FabricLockUnlock(benchmark::State& state) {
  static client::FabricLockClient fabric(fabric_endpoints());
  client::FabricSession session =
      fabric.open_session(std::chrono::seconds(5));  // kept alive by the library
  constexpr int kFiles = 8;
  std::vector<std::string> files;
  for (int i = 0; i < kFiles; ++i) {
    files.push_back("bench-fabric-" + std::to_string(state.thread_index()) + "-" +
                    std::to_string(i));
  }
  const client::Ranges range(0, kBlock);
  size_t next = 0;
  try {
    for (auto _ : state) {
      const std::string& file = files[next++ % kFiles];
      session.lock(file, range, client::Mode::kExclusive, std::chrono::seconds(10));
      session.unlock(file, range);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  state.SetItemsProcessed(state.iterations());
}

// The LockClient every thread of BM_LockUnlockBatched shares: libasnclient in batch mode, as
// one PFS client node's processes would share it.
client::LockClient& batched_client() {
  static client::LockClient shared = [] {
    client::ClientOptions options;
    options.batch = true;
    return client::LockClient(server().target, options);
  }();
  return shared;
}

// BM_LockUnlock through libasnclient's Batch stream: each thread its own Session and file,
// one LockClient for all (so 16 threads are one client node's 16 users of one library, not
// 16 connections); items/s = lock+unlock pairs/s of all the threads together.
void BM_LockUnlockBatched(benchmark::State& state) {
  client::LockClient& lc = batched_client();
  std::optional<client::Session> session;
  try {
    session.emplace(lc.open_session(std::chrono::seconds(3600),
                                    "locks_bench batched " + std::to_string(state.thread_index())));
  } catch (const client::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const std::string file = "bench-batched-" + std::to_string(state.thread_index());
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    try {
      session->lock(file, {0, kBlock}, client::Mode::kExclusive);
      session->unlock(file, {0, kBlock});
    } catch (const client::Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    state.counters["cpu_us_per_pair"] =
        (process_cpu_s() - cpu0) * 1e6 / static_cast<double>(state.iterations() * state.threads());
  }
}

using test::what_of;  // the message of an asynchronous call's error

// One client of BM_LockUnlockAsync: its own session and file; `pairs` lock+unlock pairs, one
// after the other, each call started by the callback of the one before.
struct AsyncClient {
  client::Session session;
  std::string file;
  std::vector<client::ByteRange> ranges;  // 1 or kRanges, as add_ranges()
  int left = 0;
  std::function<void(const std::string& error)> finished;  // "" when all went well

  void next() {
    if (left == 0) {
      finished("");
      return;
    }
    --left;
    session.lock_async(file, ranges, client::Mode::kExclusive, client::Deadline::never(),
                       [this](const client::Result<client::Grant>& grant) {
                         if (!grant.ok()) return failed(grant.error());
                         session.unlock_async(
                             file, ranges,
                             [this](const client::Result<client::UnlockResult>& unlocked) {
                               if (!unlocked.ok()) return failed(unlocked.error());
                               next();
                             });
                       });
  }

  void failed(const std::exception_ptr& error) { finished(what_of(error)); }
};

// Issue 9's "16 clients" as one PFS client node would run them: state.range(0) sessions of
// one LockClient, each a client locking (exclusive, one range of its own file) and unlocking
// in turn, driven by the callbacks of the asynchronous calls (Session::lock_async, ...), not by
// a thread each; so N pairs are in flight at once and the ops ready together share a message
// of the Batch stream. An iteration is kAsyncPairs pairs of each client; items/s = pairs/s of
// all the clients together.
void BM_LockUnlockAsync(benchmark::State& state) {
  constexpr int kAsyncPairs = 64;
  const auto clients = static_cast<int>(state.range(0));
  client::LockClient& lc = batched_client();
  std::vector<std::unique_ptr<AsyncClient>> all;
  std::mutex mutex;
  std::condition_variable done;
  int running = 0;
  std::string error;
  try {
    for (int i = 0; i < clients; ++i) {
      std::vector<client::ByteRange> ranges;
      for (int r = 0; r < state.range(1); ++r) {
        ranges.push_back({static_cast<uint64_t>(r) * kStride, kBlock});
      }
      auto c = std::make_unique<AsyncClient>(AsyncClient{
          lc.open_session(std::chrono::seconds(3600), "locks_bench async " + std::to_string(i)),
          "bench-async-" + std::to_string(i),
          std::move(ranges),
          0,
          {}});
      c->finished = [&](const std::string& why) {
        std::lock_guard lock(mutex);
        if (!why.empty()) error = why;
        if (--running == 0) done.notify_one();
      };
      all.push_back(std::move(c));
    }
  } catch (const client::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    running = clients;
    for (auto& c : all) {
      c->left = kAsyncPairs;
      c->next();
    }
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return running == 0; });
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * clients * kAsyncPairs);
  state.counters["cpu_us_per_pair"] =
      (process_cpu_s() - cpu0) * 1e6 /
      static_cast<double>(state.iterations() * clients * kAsyncPairs);
}

// The handoffs of one run of BM_Handoff, gathered from its threads.
struct HandoffRun {
  std::atomic<int64_t> unlock_started{0};  // steady_clock ns: the last holder's Unlock call
  std::mutex mutex;
  std::vector<double> us;  // every handoff of the run
  int finished = 0;
};
HandoffRun* handoff_run = nullptr;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// p50/p90/p99/max of the handoffs in microseconds, and their count.
void report_handoffs(benchmark::State& state, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us.empty() ? 0.0 : us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))];
  };
  state.counters["p50_us"] = at(0.50);
  state.counters["p90_us"] = at(0.90);
  state.counters["p99_us"] = at(0.99);
  state.counters["max_us"] = us.empty() ? 0.0 : us.back();
  state.counters["handoffs"] = static_cast<double>(us.size());
}

void BM_Handoff(benchmark::State& state) {
  server();
  if (state.thread_index() == 0) handoff_run = new HandoffRun;
  Client client(state.thread_index());
  // Thread 0 made the run's record before the loop's start barrier, which every thread
  // passes before it reads it.
  std::vector<double> samples;
  uint64_t waited = 0;
  v1::LockRequest lock;
  lock.set_session(client.session);
  lock.set_file("bench-shared");
  lock.set_mode(v1::LOCK_MODE_EXCLUSIVE);
  add_ranges(lock, 1);
  v1::UnlockRequest unlock;
  unlock.set_session(client.session);
  unlock.set_file(lock.file());
  add_ranges(unlock, 1);
  v1::LockResponse response;
  bool failed = client.session == 0;
  for (auto _ : state) {
    if (failed) continue;  // every thread runs its iterations, so the end barrier is met
    response.Clear();
    grpc::Status status = client.lock(lock, response);
    if (status.ok() && response.waited()) {
      const int64_t start = handoff_run->unlock_started.load(std::memory_order_acquire);
      samples.push_back(static_cast<double>(now_ns() - start) / 1e3);
      ++waited;
    }
    if (status.ok()) {
      handoff_run->unlock_started.store(now_ns(), std::memory_order_release);
      status = client.unlock(unlock);
    }
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      failed = true;
    }
  }
  state.SetItemsProcessed(state.iterations());
  HandoffRun& run = *handoff_run;
  {
    std::lock_guard lock_guard(run.mutex);
    run.us.insert(run.us.end(), samples.begin(), samples.end());
    ++run.finished;
  }
  if (state.thread_index() != 0) return;
  // Every thread has left the loop (its end is a barrier); wait for their samples.
  for (;;) {
    std::lock_guard lock_guard(run.mutex);
    if (run.finished == state.threads()) break;
  }
  // Counters are summed over the threads: only thread 0 sets them.
  report_handoffs(state, run.us);
  delete handoff_run;
  handoff_run = nullptr;
}

// One client of BM_HandoffAsync: its own session on the one shared range; each grant starts
// its unlock, whose result starts its next lock.
struct AsyncHandoffClient {
  struct Run {
    std::atomic<int64_t> unlock_started{0};  // steady_clock ns: the last holder's unlock_async
    std::mutex mutex;                        // guards the members below
    std::condition_variable done;
    std::vector<double> us;  // every handoff of the run
    int running = 0;
    std::string error;
  };
  client::Session session;
  Run* run = nullptr;
  int left = 0;

  static constexpr const char* kFile = "bench-shared-async";

  void next() {
    if (left == 0) return finished("");
    --left;
    session.lock_async(
        kFile, {0, kBlock}, client::Mode::kExclusive, client::Deadline::never(),
        [this](const client::Result<client::Grant>& grant) {
          if (!grant.ok()) return failed(grant.error());
          if (grant.value().waited) {
            const int64_t start = run->unlock_started.load(std::memory_order_acquire);
            std::lock_guard lock(run->mutex);
            run->us.push_back(static_cast<double>(now_ns() - start) / 1e3);
          }
          run->unlock_started.store(now_ns(), std::memory_order_release);
          session.unlock_async(kFile, {0, kBlock},
                               [this](const client::Result<client::UnlockResult>& unlocked) {
                                 if (!unlocked.ok()) return failed(unlocked.error());
                                 next();
                               });
        });
  }
  void failed(const std::exception_ptr& error) { finished(what_of(error)); }
  void finished(const std::string& why) {
    std::lock_guard lock(run->mutex);
    if (!why.empty()) run->error = why;
    if (--run->running == 0) run->done.notify_one();
  }
};

// BM_Handoff with the asynchronous calls: 16 sessions of ONE LockClient on one range, each
// taking the lock, releasing it at once (unlock_async from the grant's callback), and asking
// again. The handoff is, for each grant that waited, the time from the holder's unlock_async
// to the waiter's grant callback. An iteration is 16 grants of each client; items/s = grants/s.
void BM_HandoffAsync(benchmark::State& state) {
  constexpr int kClients = 16, kGrants = 16;
  client::LockClient& lc = batched_client();
  AsyncHandoffClient::Run run;
  std::vector<std::unique_ptr<AsyncHandoffClient>> all;
  try {
    for (int i = 0; i < kClients; ++i) {
      all.push_back(std::make_unique<AsyncHandoffClient>(
          AsyncHandoffClient{lc.open_session(std::chrono::seconds(3600),
                                             "locks_bench handoff async " + std::to_string(i)),
                             &run, 0}));
    }
  } catch (const client::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    run.running = kClients;
    for (auto& c : all) {
      c->left = kGrants;
      c->next();
    }
    std::unique_lock lock(run.mutex);
    run.done.wait(lock, [&] { return run.running == 0; });
    if (!run.error.empty()) {
      state.SkipWithError(run.error.c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kClients * kGrants);
  report_handoffs(state, run.us);
}

void register_all() {
  using benchmark::RegisterBenchmark;
  // Memory first, while the heap holds little that a table could reuse; then the table in
  // core (locks_bench_core.cc).
  register_core_benchmarks();
  RegisterBenchmark("BM_GetLockStats", BM_GetLockStats)->Unit(benchmark::kMicrosecond);
  for (int ranges : {1, kRanges}) {
    const std::string name = ranges == 1 ? "BM_LockUnlock" : "BM_LockUnlock16";
    RegisterBenchmark(name.c_str(), BM_LockUnlock, ranges)
        ->Threads(1)
        ->Threads(16)
        ->UseRealTime()
        ->MinTime(1.0)
        ->Unit(benchmark::kMicrosecond);
  }
  RegisterBenchmark("BM_LockUnlockBatched", BM_LockUnlockBatched)
      ->Threads(1)
      ->Threads(16)
      ->UseRealTime()
      ->MinTime(1.0)
      ->Unit(benchmark::kMicrosecond);
  RegisterBenchmark("BM_LockUnlockAsync", BM_LockUnlockAsync)
      ->ArgNames({"clients", "ranges"})
      ->Args({1, 1})
      ->Args({16, 1})
      ->Args({16, kRanges})
      ->UseRealTime()
      ->MinTime(1.0)
      ->Unit(benchmark::kMicrosecond);
  if (!fabric_endpoints().empty()) {
    RegisterBenchmark("BM_FabricLockUnlock", BM_FabricLockUnlock)
        ->Threads(16)
        ->UseRealTime()
        ->MinTime(2.0)
        ->Unit(benchmark::kMicrosecond);
  }
  RegisterBenchmark("BM_Handoff", BM_Handoff)
      ->Threads(16)
      ->UseRealTime()
      ->MinTime(2.0)
      ->Unit(benchmark::kMicrosecond);
  RegisterBenchmark("BM_HandoffAsync", BM_HandoffAsync)
      ->UseRealTime()
      ->MinTime(2.0)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

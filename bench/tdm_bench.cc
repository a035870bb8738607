// Issue 8's load target, end to end: a 1024-slot plan on the 64-port emulated board
// (profile emulated-64port, 1024 slot-table entries, 250 MHz), through the Tdm gRPC API
// (LoadSchedule over asnd's Unix socket, the request asnctl load-schedule sends: the file's
// text and name), from the call to the answer that comes once the board swapped; on an
// in-process asnd (tests/support/daemon_stack.hpp) whose emulated board runs its clock, so
// that the TDM sequencer runs and swaps at frame boundaries. Three plans, each of one phase
// that fills the table (1024 slots, every slot a full permutation of the 64 ports):
//  - explicit: 1024 slots written out, slot s the shift of the ports by s % 63 + 1 (0.7 MB
//    of YAML: the largest explicit phase the board takes);
//  - pattern/random: a random 64-port multigraph, every port of degree 1024 (the sum of 1024
//    random derangements), written as 'IN -> OUT xK' (about 4000 lines, 65,536 connections),
//    compiled by edge colouring to 1024 slots (= the lower bound);
//  - pattern/generators: 16 x all_to_all over 64 ports plus 16 shifts (20 lines of
//    generators), 65,536 connections: a union of shifts, but with every pair repeated, which
//    the closed form does not take (it needs each pair once: 64 ports give at most 63
//    shifts), so it too goes to the edge colouring; what it saves is the parse.
// Every iteration loads the other of two variants of its plan (same plan and phase name,
// other slots), so that every load writes the board: the manager writes nothing when the
// board already runs the program. Before the timed loads, one untimed load starts the
// sequencer, so every timed load swaps a running schedule at a frame boundary.
//
// The benchmark's time is the client's wall clock around LoadSchedule (end to end). The
// counters are the server's LoadTimes averaged over the iterations: parse_ms, compile_ms,
// validate_ms (and the program's words encoded), write_ms (the inactive slot-table and
// timing banks), readback_ms (read back and compared), arm_ms (as the manager times it: only
// the active timing bank read for the frame length), wait_ms (from the arm to the swap
// seen), total_ms (the manager's whole call). store_ms is what total_ms holds beyond those
// phases: mostly the desired state saved twice (the intent before the first write, done
// after the swap: each an fsync of the file and its directory, in $TMPDIR), plus the
// documents compared, the sequencer read and the three register writes that arm the swap,
// which the manager times in no phase (tdm.proto says arm_us holds the store and the arm).
// grpc_ms is the rest of the end-to-end time (the request's bytes through the socket,
// (de)serialised, the response). max_ms is the slowest load, frame_ms the old schedule's
// frame.
//
// wait_ms is not the board's cost: the swap happens at the next boundary of the OLD
// schedule's frame (1024 slots of 1 us here: up to 1.024 ms, about half of it on average),
// and is seen at the manager's next poll of the swap counter (every 200 us) after the
// emulated board's clock thread, which sleeps until the armed boundary, swapped: up to about
// 1.3 ms, whatever the plan (about 0.6 ms on average).
//
// The reference every ratio is divided by is a GetSchedule round trip (no slot entries) over
// the same socket, measured in the same run: the cost of a small gRPC call on this machine.
//   build/bench/tdm_bench  (or: python3 bench/table.py <json> BM_GetSchedule)
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "asn/v1/tdm.grpc.pb.h"
#include "daemon_stack.hpp"
#include "managers/tdm_manager.hpp"
#include "services/tdm_service.hpp"
#include "support.hpp"

namespace {

using namespace asn;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kPorts = 64;
constexpr uint32_t kSlots = 1024;

// ---- the plans -------------------------------------------------------------------------

// slot_length 1 us: a frame of 1024 slots is 1.024 ms, which bounds the wait for the swap.
std::string plan_head() {
  return "plan: bench\n"
         "board: emulated-64port\n"
         "defaults: {slot_length: 1 us, guard_band: 48 ns}\n"
         "phases:\n"
         "  - name: load\n";
}

// 1024 explicit slots, slot s every port i to (i + s % 63 + 1 + offset) mod 64 (never to
// itself: the shift stays within 1..63).
std::string explicit_plan(uint32_t offset) {
  std::string text = plan_head() + "    slots:\n";
  for (uint32_t s = 0; s < kSlots; ++s) {
    const uint32_t by = (s + offset) % (kPorts - 1) + 1;
    text += "      - [";
    for (uint32_t i = 0; i < kPorts; ++i) {
      text += (i == 0 ? "\"" : ", \"") + std::to_string(i) + " -> " +
              std::to_string((i + by) % kPorts) + "\"";
    }
    text += "]\n";
  }
  return text;
}

// The sum of 1024 random derangements of the 64 ports: a multigraph in which every input and
// every output has degree 1024 and no port connects to itself; one 'IN -> OUT xK' a pair.
std::string random_pattern_plan(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::array<uint32_t, kPorts>> count(kPorts);
  for (auto& row : count) row.fill(0);
  std::array<uint32_t, kPorts> to{};
  for (uint32_t k = 0; k < kSlots; ++k) {
    bool deranged = false;
    while (!deranged) {
      std::iota(to.begin(), to.end(), 0u);
      std::shuffle(to.begin(), to.end(), rng);
      deranged = true;
      for (uint32_t i = 0; i < kPorts; ++i) deranged = deranged && to[i] != i;
    }
    for (uint32_t i = 0; i < kPorts; ++i) ++count[i][to[i]];
  }
  std::string text = plan_head() + "    pattern:\n";
  for (uint32_t i = 0; i < kPorts; ++i) {
    for (uint32_t j = 0; j < kPorts; ++j) {
      if (count[i][j] == 0) continue;
      text += "      - \"" + std::to_string(i) + " -> " + std::to_string(j) + " x" +
              std::to_string(count[i][j]) + "\"\n";
    }
  }
  return text;
}

// 16 x all_to_all (63 connections a port each) and 16 more shifts: degree 16 x 63 + 16 =
// 1024, a union of shifts.
std::string generator_plan(uint32_t first_shift) {
  std::string text = plan_head() + "    pattern:\n";
  for (int i = 0; i < 16; ++i) text += "      - all_to_all: {ports: 64}\n";
  for (uint32_t by = first_shift; by < first_shift + 16; ++by) {
    text += "      - shift: {ports: 64, by: " + std::to_string(by) + "}\n";
  }
  return text;
}

// Two variants of each plan: same names, other slots.
const std::array<std::string, 2>& plans(const std::string& kind) {
  static std::map<std::string, std::array<std::string, 2>> cache;
  auto& p = cache[kind];
  if (p[0].empty()) {
    if (kind == "explicit") p = {explicit_plan(0), explicit_plan(7)};
    if (kind == "pattern/random") p = {random_pattern_plan(1), random_pattern_plan(2)};
    if (kind == "pattern/generators") p = {generator_plan(1), generator_plan(17)};
  }
  return p;
}

// ---- asnd ------------------------------------------------------------------------------

// asnd on one emulated-64port board with its clock running: the board memory, the
// desired-state store and the socket in a temporary directory (removed at exit), the Tdm
// service on an admin socket. Kept for the whole run.
struct Server {
  test::TempDir dir;
  std::unique_ptr<test::DaemonStack> stack;
  std::unique_ptr<v1::Tdm::Stub> stub;

  Server() {
    test::DaemonStackOptions options;
    options.profile = "emulated-64port";
    options.board_name = test::unique_name("tbench");
    options.dir = dir.path();
    options.run_clock = true;
    stack = std::make_unique<test::DaemonStack>(options);
    auto& tdm = stack->add_manager<TdmManager>();
    stack->start();
    stub = v1::Tdm::NewStub(stack->serve<TdmService>("admin.sock", Role::kAdmin, tdm));
  }
};

Server& server() {
  static Server s;
  return s;
}

grpc::Status load(const std::string& text, v1::LoadScheduleResponse& response) {
  v1::LoadScheduleRequest request;
  request.mutable_plan()->set_text(text);
  request.mutable_plan()->set_file("bench.yaml");
  grpc::ClientContext context;
  return server().stub->LoadSchedule(&context, request, &response);
}

// ---- benchmarks ------------------------------------------------------------------------

void BM_GetSchedule(benchmark::State& state) {
  auto& s = server();
  for (auto _ : state) {
    v1::GetScheduleResponse response;
    grpc::ClientContext context;
    const auto start = Clock::now();
    const grpc::Status status = s.stub->GetSchedule(&context, {}, &response);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      break;
    }
  }
}

void BM_LoadSchedule(benchmark::State& state, const std::string& kind) {
  const auto& texts = plans(kind);
  // Untimed: the sequencer runs a program of this plan, so the first timed load swaps.
  v1::LoadScheduleResponse warm;
  if (const grpc::Status status = load(texts[1], warm); !status.ok()) {
    state.SkipWithError(status.error_message().c_str());
    return;
  }
  double parse = 0, compile = 0, validate = 0, write = 0, readback = 0, arm = 0, wait = 0,
         total = 0, e2e = 0, worst = 0;
  size_t next = 0;
  v1::LoadScheduleResponse response;
  for (auto _ : state) {
    response.Clear();
    const auto start = Clock::now();
    const grpc::Status status = load(texts[next], response);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    state.SetIterationTime(seconds);
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      return;
    }
    if (!response.changed()) {
      state.SkipWithError("nothing was written (the board ran the program)");
      return;
    }
    next ^= 1;
    const auto& t = response.times();
    parse += static_cast<double>(t.parse_us()) / 1e3;
    compile += static_cast<double>(t.compile_us()) / 1e3;
    validate += static_cast<double>(t.validate_us()) / 1e3;
    write += static_cast<double>(t.write_us()) / 1e3;
    readback += static_cast<double>(t.readback_us()) / 1e3;
    arm += static_cast<double>(t.arm_us()) / 1e3;
    wait += static_cast<double>(t.wait_us()) / 1e3;
    total += static_cast<double>(t.total_us()) / 1e3;
    e2e += seconds * 1e3;
    worst = std::max(worst, seconds * 1e3);
  }
  const auto avg = benchmark::Counter::kAvgIterations;
  state.counters["parse_ms"] = benchmark::Counter(parse, avg);
  state.counters["compile_ms"] = benchmark::Counter(compile, avg);
  state.counters["validate_ms"] = benchmark::Counter(validate, avg);
  state.counters["write_ms"] = benchmark::Counter(write, avg);
  state.counters["readback_ms"] = benchmark::Counter(readback, avg);
  state.counters["arm_ms"] = benchmark::Counter(arm, avg);
  state.counters["wait_ms"] = benchmark::Counter(wait, avg);
  state.counters["total_ms"] = benchmark::Counter(total, avg);
  state.counters["store_ms"] =
      benchmark::Counter(total - (parse + compile + validate + write + readback + arm + wait), avg);
  state.counters["grpc_ms"] = benchmark::Counter(e2e - total, avg);
  state.counters["max_ms"] = worst;
  if (response.phases_size() > 0) {
    const v1::PhaseSummary& phase = response.phases(0);
    state.counters["slots"] = phase.slots();
    state.counters["lower_bound"] = phase.lower_bound();
    state.counters["connections"] = static_cast<double>(phase.connections());
    // emulated-64port runs at 250 MHz: 250,000 cycles a millisecond.
    state.counters["frame_ms"] = static_cast<double>(phase.frame_cycles()) / 250e3;
    state.SetLabel(phase.method());
    if (phase.slots() != kSlots || phase.slots() != phase.lower_bound()) {
      state.SkipWithError("the phase does not compile to 1024 slots (= the lower bound)");
    }
  }
  state.counters["plan_KB"] = static_cast<double>(texts[0].size()) / 1024;
}

void register_all() {
  // Google Benchmark's default of 0.5 s a case: some 30 to 100 loads each.
  benchmark::RegisterBenchmark("BM_GetSchedule", BM_GetSchedule)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  for (const char* kind : {"explicit", "pattern/random", "pattern/generators"}) {
    benchmark::RegisterBenchmark((std::string("BM_LoadSchedule/1024-slots/") + kind).c_str(),
                                 BM_LoadSchedule, std::string(kind))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // asnd logs one line per load; to a terminal that would time the terminal.
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

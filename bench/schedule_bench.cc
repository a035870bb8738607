// The crossbar compiler against issue 8's targets, each with a reference measured in the same
// run on the same connections (std::sort of the connections by input and output, and a plain
// pass over them counting port degrees), so that ratios stay meaningful on a busy machine:
//  - a random bipartite multigraph of 1,000,000 connections, maximum degree 1024 (< 200 ms);
//  - all-to-all on one 1024-port crossbar, 1,047,552 connections, and other regular patterns
//    (shifts, transpose) recognised and laid out in closed form (< 20 ms);
//  - the greedy baseline, the validator, and parsing, for scale;
//  - hostile plan files: the time to the error and the memory it took.
// Counters: slots and lower_bound (they must be equal for the optimal compiler), peak_MB (the
// most heap the call held beyond what was live before it), x_sort and x_pass (time / the
// reference's time on the same connections).
//   build/bench/schedule_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/validate.hpp"
#include "heap_peak.hpp"

namespace {

using namespace asn::schedule;
using Pattern = std::vector<Connection>;
using Clock = std::chrono::steady_clock;

using asn::bench::peak_mb;

// ---- patterns --------------------------------------------------------------------------

// `count` connections with uniformly random ends on ports x ports, drawn again whenever an
// end already has `max_degree`: a random multigraph of that maximum degree.
Pattern random_multigraph(uint32_t ports, size_t count, uint32_t max_degree, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> in(ports, 0), out(ports, 0);
  Pattern p;
  p.reserve(count);
  while (p.size() < count) {
    auto from = static_cast<uint32_t>(rng() % ports);
    auto to = static_cast<uint32_t>(rng() % ports);
    if (in[from] == max_degree || out[to] == max_degree) continue;
    ++in[from];
    ++out[to];
    p.push_back({from, to, {}});
  }
  return p;
}

Pattern generated(const std::string& generators) {
  ParseLimits limits;
  limits.max_connections = size_t{1} << 22;
  return parse_plan(
             "plan: b\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns\n"
             "    pattern: " +
                 generators + "\n",
             "bench", limits)
      .phases[0]
      .parts[0]
      .pattern;
}

const Pattern& pattern(const std::string& name) {
  static std::map<std::string, Pattern> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  Pattern p;
  if (name == "random-1M-d1024") p = random_multigraph(1024, 1'000'000, 1024, 1);
  if (name == "random-1M-d1023") p = random_multigraph(1024, 1'000'000, 1023, 2);
  if (name == "random-1M-d1000") p = random_multigraph(1024, 1'000'000, 1000, 3);
  if (name == "random-100k-d100") p = random_multigraph(1024, 100'000, 100, 4);
  if (name == "all-to-all-1024") p = generated("[{all_to_all: {ports: 1024}}]");
  if (name == "shifts-1024x512") {
    std::string shifts = "[";
    for (int by = 1; by <= 512; ++by)
      shifts += "{shift: {ports: 1024, by: " + std::to_string(by) + "}},";
    p = generated(shifts + "]");
  }
  if (name == "transpose-32x32") p = generated("[{transpose: {rows: 32, cols: 32}}]");
  if (name == "mesh-32x32") p = generated("[{mesh: {rows: 32, cols: 32}}]");
  return cache.emplace(name, std::move(p)).first->second;
}

// ---- references, measured on the same connections --------------------------------------

double median_seconds(const std::function<void()>& f, int runs = 5) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct References {
  double sort;  // std::sort of a copy by (input, output)
  double pass;  // one pass counting the degree of every port
};

const References& references(const std::string& name) {
  static std::map<std::string, References> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const Pattern& p = pattern(name);
  References r;
  r.sort = median_seconds([&] {
    Pattern copy = p;
    std::sort(copy.begin(), copy.end(), [](const Connection& a, const Connection& b) {
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    benchmark::DoNotOptimize(copy.data());
  });
  r.pass = median_seconds([&] {
    std::vector<uint32_t> in(1 << 16, 0), out(1 << 16, 0);
    for (const auto& c : p) {
      ++in[c.from];
      ++out[c.to];
    }
    benchmark::DoNotOptimize(in.data());
    benchmark::DoNotOptimize(out.data());
  });
  return cache.emplace(name, r).first->second;
}

// Times `work` per iteration by hand and reports it against the references.
template <typename Work>
void run_against_references(benchmark::State& state, const std::string& name, Work&& work) {
  const References& ref = references(name);
  double total = 0;
  double peak = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    peak = std::max(peak, peak_mb(work));
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    state.SetIterationTime(seconds);
    total += seconds;
  }
  double mean = total / static_cast<double>(state.iterations());
  state.counters["peak_MB"] = peak;
  state.counters["x_sort"] = mean / ref.sort;
  state.counters["x_pass"] = mean / ref.pass;
  state.counters["ref_sort_ms"] = ref.sort * 1e3;
  state.counters["connections"] = static_cast<double>(pattern(name).size());
}

void BM_SortConnections(benchmark::State& state, const std::string& name) {
  const Pattern& p = pattern(name);
  for (auto _ : state) {
    Pattern copy = p;
    std::sort(copy.begin(), copy.end(), [](const Connection& a, const Connection& b) {
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    benchmark::DoNotOptimize(copy.data());
  }
}

void BM_Compile(benchmark::State& state, const std::string& name, Algorithm algorithm) {
  const Pattern& p = pattern(name);
  CompileOptions options;
  options.algorithm = algorithm;
  Assignment result;
  run_against_references(state, name, [&] { result = compile_pattern(p, options); });
  state.counters["slots"] = result.summary.slots;
  state.counters["lower_bound"] = result.summary.lower_bound;
  state.counters["closed_form"] = result.summary.method == Method::kClosedForm ? 1 : 0;
  if (algorithm == Algorithm::kOptimal && result.summary.slots != result.summary.lower_bound) {
    state.SkipWithError("slots differ from the lower bound");
  }
}

// Compile, lay out and validate, as a load would: what the 1024-slot checks cost.
void BM_CompileLayoutValidate(benchmark::State& state, const std::string& name) {
  const Pattern& p = pattern(name);
  BoardLimits limits;
  limits.ports = 1024;
  limits.slots = 1024;
  limits.clock_hz = 250'000'000;
  double validate_seconds = 0;
  run_against_references(state, name, [&] {
    Plan plan;
    plan.name = "b";
    Phase phase;
    phase.name = "a";
    phase.timing.slot_length = Length::cycles(250);
    phase.timing.guard_band = Length::cycles(12);
    Part part;
    part.has_pattern = true;
    part.pattern = p;
    phase.parts.push_back(std::move(part));
    plan.phases.push_back(std::move(phase));
    compile_plan(plan);
    auto start = Clock::now();
    ValidationReport report = validate(plan, limits);
    validate_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    if (!report.ok()) std::abort();
  });
  state.counters["validate_ms"] = validate_seconds * 1e3 / static_cast<double>(state.iterations());
}

// ---- parsing and hostile files ---------------------------------------------------------

std::string explicit_plan(size_t connections) {
  std::string text =
      "plan: b\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns\n"
      "    pattern:\n";
  std::mt19937 rng(5);
  for (size_t i = 0; i < connections; ++i) {
    text += "      - " + std::to_string(rng() % 64) + " -> " + std::to_string(rng() % 64) + "\n";
  }
  return text;
}

void BM_ParseExplicitPlan(benchmark::State& state) {
  std::string text = explicit_plan(static_cast<size_t>(state.range(0)));
  double peak = 0;
  for (auto _ : state) {
    peak = std::max(peak, peak_mb([&] { benchmark::DoNotOptimize(parse_plan(text)); }));
  }
  state.counters["peak_MB"] = peak;
  state.counters["file_MB"] = static_cast<double>(text.size()) / (1 << 20);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// All-to-all on 1024 ports written out, one connection a line (12 MB, over a million lines:
// past the default limits, which a caller may raise), parsed and compiled.
void BM_ParseAndCompileExplicitAllToAll(benchmark::State& state) {
  std::string text =
      "plan: b\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns\n"
      "    pattern:\n";
  for (int i = 0; i < 1024; ++i) {
    for (int j = 0; j < 1024; ++j) {
      if (i != j) text += "      - " + std::to_string(i) + " -> " + std::to_string(j) + "\n";
    }
  }
  ParseLimits raised;
  raised.max_file_bytes = size_t{64} << 20;
  raised.max_lines = size_t{4} << 20;
  raised.max_nodes = size_t{4} << 20;
  double parse_seconds = 0;
  double peak = 0;
  Assignment result;
  for (auto _ : state) {
    peak = std::max(peak, peak_mb([&] {
                      auto start = Clock::now();
                      Plan plan = parse_plan(text, "all-to-all.yaml", raised);
                      parse_seconds += std::chrono::duration<double>(Clock::now() - start).count();
                      result = compile_pattern(plan.phases[0].parts[0].pattern);
                    }));
  }
  state.counters["parse_ms"] = parse_seconds * 1e3 / static_cast<double>(state.iterations());
  state.counters["slots"] = result.summary.slots;
  state.counters["lower_bound"] = result.summary.lower_bound;
  state.counters["closed_form"] = result.summary.method == Method::kClosedForm ? 1 : 0;
  state.counters["peak_MB"] = peak;
  state.counters["file_MB"] = static_cast<double>(text.size()) / (1 << 20);
}

void BM_ParseAllToAllGenerator(benchmark::State& state) {
  std::string text =
      "plan: b\nphases:\n  - name: a\n    slot_length: 1 us\n    guard_band: 0 ns\n"
      "    pattern: [{all_to_all: {ports: 1024}}]\n";
  for (auto _ : state) benchmark::DoNotOptimize(parse_plan(text));
}

// Hostile input against the default limits: time to the error, and the heap it took.
void BM_Hostile(benchmark::State& state, const std::string& kind) {
  std::string text;
  if (kind == "million-lines") {
    text = "plan: b\nphases:\n";
    while (text.size() < 4'000'000) text += "#\n#\n";  // 2 million lines
  } else if (kind == "node-limit") {  // lines and [...] within their limits: max_nodes stops it
    text = "plan: b\nphases:\n  - name: a\n    slots:\n";
    std::string slot = "      - [";
    for (int i = 0; i < 60; ++i) slot += "1 -> 2, ";
    slot += "]\n";
    while (text.size() + slot.size() < (size_t{4} << 20)) text += slot;
  } else if (kind == "comments-within-limits") {  // no limit stops it: yaml-cpp reads all
    text = "plan: b\nphases: [] # ";
    while (text.size() < (size_t{4} << 20) - 64) text += std::string(15, 'c') + "\n#";
    text += "\n";
  } else if (kind == "deep-nesting") {
    text = "plan: b\nphases: ";
    for (int i = 0; i < 1'000'000; ++i) text += "{a:\n";
  } else if (kind == "generator-bomb") {
    text = "plan: b\nphases:\n  - name: a\n    pattern: [{all_to_all: {ports: 65536}}]\n";
  } else {  // oversized
    text.assign((size_t{4} << 20) + 1, '#');
  }
  double peak = 0;
  std::string error;
  for (auto _ : state) {
    peak = std::max(peak, peak_mb([&] {
                      try {
                        parse_plan(text);
                      } catch (const PlanError& e) {
                        error = e.problem().message.substr(0, 40);
                      }
                    }));
  }
  if (error.empty()) state.SkipWithError("no error");
  state.counters["peak_MB"] = peak;
  state.counters["file_MB"] = static_cast<double>(text.size()) / (1 << 20);
  state.SetLabel(error);
}

// ---- registrations ---------------------------------------------------------------------

void register_all() {
  for (const char* name : {"random-1M-d1024", "all-to-all-1024"}) {
    benchmark::RegisterBenchmark((std::string("BM_SortConnections/") + name).c_str(),
                                 BM_SortConnections, std::string(name))
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* name :
       {"random-1M-d1024", "random-1M-d1023", "random-1M-d1000", "random-100k-d100",
        "all-to-all-1024", "shifts-1024x512", "transpose-32x32", "mesh-32x32"}) {
    benchmark::RegisterBenchmark((std::string("BM_CompileOptimal/") + name).c_str(), BM_Compile,
                                 std::string(name), Algorithm::kOptimal)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const char* name : {"random-100k-d100", "random-1M-d1024", "all-to-all-1024"}) {
    benchmark::RegisterBenchmark((std::string("BM_CompileGreedy/") + name).c_str(), BM_Compile,
                                 std::string(name), Algorithm::kGreedy)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  benchmark::RegisterBenchmark("BM_CompileLayoutValidate/all-to-all-1024", BM_CompileLayoutValidate,
                               std::string("all-to-all-1024"))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ParseExplicitPlan", BM_ParseExplicitPlan)
      ->Arg(65536)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ParseAllToAllGenerator/1024", BM_ParseAllToAllGenerator)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ParseAndCompileExplicitAllToAll/1024",
                               BM_ParseAndCompileExplicitAllToAll)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  for (const char* kind : {"million-lines", "node-limit", "comments-within-limits", "deep-nesting",
                           "generator-bomb", "oversized"}) {
    benchmark::RegisterBenchmark((std::string("BM_Hostile/") + kind).c_str(), BM_Hostile,
                                 std::string(kind))
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The crossbar compiler. Why this algorithm (issue 8 asks for the fastest correct one):
//  - Alternating-path colouring (König's proof, as the published exact codes do) walks an
//    a/b path for nearly every edge; on a dense multigraph of a million connections the paths
//    run to hundreds of vertices through random memory: seconds.
//  - Euler-partition divide and conquer (Gabow 1976; Cole, Ost and Schirra 2001) halves the
//    degree with one linear pass per level: log2(1024) = 10 passes for the benchmark's
//    degree, each a sequential scan plus one chain of cache misses, which interleaved walks
//    overlap (src/edge_colouring.cc). It needs a regular graph: contracting low-degree ports
//    into bins and padding with dummy edges makes one at most about twice the size.
//  - An odd degree needs one perfect matching before the split; Alon's and Cole-Ost-
//    Schirra's matchings cost O(m log m) or more, the random walk of Goel, Kapralov and
//    Khanna O(n log n) expected on a regular graph, independent of the degree: that one.
//  - Regular patterns do not need any of it: closed forms below, O(connections).
#include "asn/schedule/compile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "asn/schedule/error.hpp"
#include "edge_colouring.hpp"
#include "greedy_assign.hpp"
#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

// Ports past this are refused by compile_pattern: its per-port arrays are dense.
constexpr uint32_t kMaxCompilePort = (1u << 20) - 1;

struct Degrees {
  uint32_t max_degree = 0;
  uint32_t inputs = 0;   // distinct input ports
  uint32_t outputs = 0;  // distinct output ports
};

Degrees count_degrees(std::span<const Connection> connections, uint32_t max_port) {
  std::vector<uint32_t> in(size_t{max_port} + 1, 0);
  std::vector<uint32_t> out(size_t{max_port} + 1, 0);
  for (const auto& c : connections) {
    ++in[c.from];
    ++out[c.to];
  }
  Degrees d;
  for (uint32_t p = 0; p <= max_port; ++p) {
    d.max_degree = std::max({d.max_degree, in[p], out[p]});
    d.inputs += in[p] != 0 ? 1 : 0;
    d.outputs += out[p] != 0 ? 1 : 0;
  }
  return d;
}

uint32_t highest_port(std::span<const Connection> connections) {
  uint32_t highest = 0;
  for (const auto& c : connections) highest = std::max({highest, c.from, c.to});
  return highest;
}

// Difference classes: number the n ports the pattern uses 0..n-1 and put a connection in
// class (to - from) mod n. Without repeated pairs, no two connections of a class share an
// input (the input fixes the output), nor an output, so each class is a valid slot; when
// there are exactly lower-bound classes, that is an optimal schedule. It catches shifts and
// unions of shifts (all-to-all is the n - 1 shifts), and a mesh neighbour exchange (four
// classes: +1, -1, +cols, -cols, 000 L740), in two passes over the connections.
std::optional<std::vector<uint32_t>> difference_classes(std::span<const Connection> pattern,
                                                        uint32_t max_port, uint32_t lower_bound) {
  std::vector<uint32_t> rank(size_t{max_port} + 1, 0);
  for (const auto& c : pattern) rank[c.from] = rank[c.to] = 1;
  uint32_t n = 0;
  for (auto& r : rank) r = r != 0 ? n++ : 0;
  // The repeat check takes n^2 bits: skip patterns too sparse to pay for it.
  const uint64_t pairs = uint64_t{n} * n;
  if (pairs / 8 > 64 * pattern.size() + (uint64_t{1} << 20)) return std::nullopt;
  std::vector<uint64_t> seen((pairs + 63) / 64, 0);
  std::vector<uint32_t> class_size(n, 0);
  uint32_t classes = 0;
  for (const auto& c : pattern) {
    const uint32_t from = rank[c.from];
    const uint32_t to = rank[c.to];
    const uint64_t pair = uint64_t{from} * n + to;
    uint64_t& word = seen[pair / 64];
    const uint64_t bit = uint64_t{1} << (pair % 64);
    if ((word & bit) != 0) return std::nullopt;  // a repeated pair
    word |= bit;
    uint32_t& size = class_size[(to + n - from) % n];
    classes += size == 0 ? 1 : 0;
    ++size;
    if (classes > lower_bound) return std::nullopt;
  }
  if (classes != lower_bound) return std::nullopt;
  std::vector<uint32_t>& slot_of_class = class_size;  // reused: class -> slot
  uint32_t next = 0;
  for (auto& s : slot_of_class) s = s != 0 ? next++ : 0;
  std::vector<uint32_t> slot_of(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    slot_of[i] = slot_of_class[(rank[pattern[i].to] + n - rank[pattern[i].from]) % n];
  }
  return slot_of;
}

double utilisation(uint64_t connections, uint32_t slots, uint32_t ports_in_use) {
  if (slots == 0 || ports_in_use == 0) return 0;
  return static_cast<double>(connections) / (static_cast<double>(slots) * ports_in_use);
}

}  // namespace

Assignment compile_pattern(std::span<const Connection> pattern, const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (pattern.size() > kMaxCompileConnections) {
    throw std::length_error(cat("a pattern of ", pattern.size(), " connections is past the ",
                                kMaxCompileConnections, " the compiler takes"));
  }
  const uint32_t max_port = highest_port(pattern);
  if (max_port > kMaxCompilePort) {
    throw std::length_error(
        cat("port ", max_port, " is past the highest port the compiler takes, ", kMaxCompilePort));
  }
  const Degrees degrees = count_degrees(pattern, max_port);
  Assignment result;
  CompileSummary& summary = result.summary;
  if (options.algorithm == Algorithm::kGreedy) {
    result.slot_of = detail::greedy_assign(pattern, summary.slots);
    summary.method = Method::kGreedy;
  } else if (degrees.max_degree <= 1) {
    result.slot_of.assign(pattern.size(), 0);
    summary.slots = degrees.max_degree;
    summary.method = Method::kClosedForm;
  } else if (auto classes = difference_classes(pattern, max_port, degrees.max_degree)) {
    result.slot_of = std::move(*classes);
    summary.slots = degrees.max_degree;
    summary.method = Method::kClosedForm;
  } else {
    result.slot_of = detail::colour_bipartite(pattern, degrees.max_degree);
    summary.slots = degrees.max_degree;
    summary.method = Method::kColouring;
  }
  summary.connections = pattern.size();
  summary.lower_bound = degrees.max_degree;
  summary.ports_in_use = std::max(degrees.inputs, degrees.outputs);
  summary.utilisation = utilisation(pattern.size(), summary.slots, summary.ports_in_use);
  summary.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - start);
  return result;
}

std::vector<Slot> layout_slots(std::span<const Connection> pattern, const Assignment& assignment) {
  std::vector<Slot> slots(assignment.summary.slots);
  std::vector<uint32_t> size(slots.size(), 0);
  for (uint32_t s : assignment.slot_of) ++size[s];
  for (size_t s = 0; s < slots.size(); ++s) slots[s].connections.reserve(size[s]);
  for (size_t i = 0; i < pattern.size(); ++i) {
    slots[assignment.slot_of[i]].connections.push_back(pattern[i]);
  }
  return slots;
}

CompileSummary summarize(std::span<const Slot> slots, Method method) {
  std::vector<Connection> all;
  for (const auto& slot : slots)
    all.insert(all.end(), slot.connections.begin(), slot.connections.end());
  CompileSummary summary;
  summary.method = method;
  summary.connections = all.size();
  summary.slots = static_cast<uint32_t>(slots.size());
  if (!all.empty()) {
    const uint32_t max_port = highest_port(all);
    if (max_port > kMaxCompilePort) {
      throw std::length_error(cat(
          "port ", max_port, " is past the highest port the compiler takes, ", kMaxCompilePort));
    }
    const Degrees degrees = count_degrees(all, max_port);
    summary.lower_bound = degrees.max_degree;
    summary.ports_in_use = std::max(degrees.inputs, degrees.outputs);
  }
  summary.utilisation = utilisation(summary.connections, summary.slots, summary.ports_in_use);
  return summary;
}

std::string describe(const CompileSummary& summary) {
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "utilisation %.1f%%", summary.utilisation * 100);
  auto plural = [](uint64_t n, std::string_view word) {
    return cat(n, " ", word, n == 1 ? "" : "s");
  };
  std::string out =
      cat(plural(summary.connections, "connection"), " in ", plural(summary.slots, "slot"),
          " (lower bound ", summary.lower_bound, summary.optimal() ? ": optimal" : "", "), ",
          plural(summary.ports_in_use, "port"), ", ", numbers, ", ", to_string(summary.method));
  if (summary.elapsed.count() > 0) {
    std::snprintf(numbers, sizeof numbers, ", %.2f ms",
                  std::chrono::duration<double, std::milli>(summary.elapsed).count());
    out += numbers;
  }
  return out;
}

void compile_plan(Plan& plan, const CompileOptions& options) {
  for (auto& phase : plan.phases) {
    for (auto& part : phase.parts) {
      if (!part.has_pattern) {
        part.summary = summarize(part.slots);
        continue;
      }
      Assignment assignment;
      try {
        assignment = compile_pattern(part.pattern, options);
      } catch (const std::length_error& e) {  // a pattern the compiler cannot take
        Problem problem;
        problem.file = plan.file;
        problem.mark = part.pattern_mark;
        problem.phase = phase.name;
        problem.switch_name = part.switch_name;
        problem.message = e.what();
        throw PlanError(std::move(problem));
      }
      part.slots = layout_slots(part.pattern, assignment);
      part.summary = assignment.summary;
    }
  }
}

}  // namespace asn::schedule

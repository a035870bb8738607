// The schedule compiler for multi-hop fabrics (issue 11): a pattern of connections becomes a
// path and a slot per connection, the same slot on every link of the path (path
// multiplexing, 002 L240-312), no two connections of one slot sharing a directed link or a
// terminal's send or receive port (L649-652, L1833).
//
// Algorithms:
//  - the seed's baselines, as 002 Ch. 5 describes them, on each connection's standard path
//    (path 0: X-Y odd-even on the torus): greedy (Fig 5.11), coloring with priority = path
//    length / conflict degree (Fig 5.13), ordered AAPC (Fig 5.14: greedy over the
//    connections reordered by AAPC configuration, ranked by summed path length), combined
//    (the best of them, L1787); on a fat tree also the level-wise scheme and the local
//    random choice of 000 Ch. 7, made into schedulers by filling one slot after another;
//  - default: paths and slots together. Paths are balanced to lower the largest link load;
//    then first-fit colourings in several orders pick, per connection, the path and slot
//    that is free earliest; then a local search empties the least used slot by moving its
//    connections (one displacement deep), and a tabu search (TabuCol) takes one slot away at
//    a time and walks the conflicts out, until the effort is spent or the lower bound is
//    reached. The baselines run too and the best schedule is kept, so default never uses
//    more slots than any baseline that ran. A fabric without links (one crossbar) goes to
//    lib/schedule's exact edge colouring: the lower bound, always.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/fabric_schedule/target.hpp"

namespace asn::fabric_schedule {

enum class Algorithm : uint8_t {
  kDefault,
  kGreedy,
  kColoring,
  kAapc,
  kCombined,
  kLevelWise,    // fat tree only
  kLocalRandom,  // fat tree only
};
std::string_view to_string(Algorithm algorithm);  // "default", "greedy", ..., "level-wise"
std::optional<Algorithm> parse_algorithm(std::string_view text);

// What determines the output: the target, the pattern and these options but time_budget. The
// search stops on counted work (effort), not on the clock, so one input gives one schedule on
// any machine and under any load, unless the time budget cuts it (Schedule::cut_by_time).
struct Options {
  Algorithm algorithm = Algorithm::kDefault;
  // What default may spend on its search beyond the first-fit schedules in fixed orders, in
  // visits (src/search.hpp: a resource looked up in a table or a connection scanned is one,
  // a resource of a path generated eight more), 1-3 ns each on a 2.4 GHz x86 core. The
  // default takes about a second of CPU where the search does not reach the lower bound
  // earlier (8x8 torus, 3200 random connections: 1.05 s); 0 keeps the first-fit schedules.
  uint64_t effort = 750'000'000;
  // A safety cap on the wall clock from the start of compile(), for inputs so big that the
  // effort takes too long: when it stops the search before the effort is spent, the result
  // says so (Schedule::cut_by_time) and may differ from run to run. Not a knob for quality:
  // raising it changes nothing while it does not cut.
  std::chrono::milliseconds time_budget{10000};
  uint64_t seed = 1;  // local random choice, the search's random orders and tabu ties
  // The coloring baseline builds the conflict graph, O(connections^2) in the worst case
  // (002 L1746): default and combined skip it past this many connections.
  size_t coloring_limit = 60000;
};

struct BaselineResult {
  Algorithm algorithm = Algorithm::kGreedy;
  uint32_t slots = 0;
  std::chrono::nanoseconds elapsed{0};
};

struct Schedule {
  std::vector<uint32_t> slot_of;  // per connection
  std::vector<uint32_t> path_of;  // per connection: its index into the target's paths
  uint32_t slots = 0;
  uint32_t lower_bound = 0;                   // max load over terminal ports and links (002 L656)
  Algorithm algorithm = Algorithm::kDefault;  // asked for
  std::string method;  // what produced the kept schedule: "search", "greedy", ...
  std::vector<BaselineResult> baselines;  // what each algorithm that ran gave (default, combined)
  std::chrono::nanoseconds elapsed{0};
  // Default's search: the effort it spent (at most Options::effort, plus the step that crossed
  // it), and whether the time budget stopped it first. When cut_by_time, this result may
  // differ from run to run and machine to machine: raise the time budget or lower the effort.
  uint64_t effort_spent = 0;
  bool cut_by_time = false;
  bool optimal() const { return slots == lower_bound; }
};

// Terminal port loads and Target::link_lower_bound: no schedule has fewer slots.
uint32_t lower_bound(const Target& target, std::span<const Conn> conns);

// Throws std::invalid_argument for a connection outside the target or to itself, and for
// level-wise / local random on a target that is not a fat tree, AAPC on one without AAPC
// configurations. Deterministic: the same input and options (time_budget aside) give the same
// schedule, unless cut_by_time.
Schedule compile(const Target& target, std::span<const Conn> conns, const Options& options = {});

// An independent check, sharing no code with the compiler but the target's paths: every
// connection has a slot below `slots` and a path of the target, and no two connections of a
// slot share a resource. Returns what is wrong, or nullopt.
std::optional<std::string> find_conflict(const Target& target, std::span<const Conn> conns,
                                         const Schedule& schedule);

}  // namespace asn::fabric_schedule

// The TDM schedule plan (issue 8): what a plan file says, independent of any board. Lengths
// stay in the units the user wrote until a board's clock turns them into cycles
// (validate.hpp, tdm_program.hpp); ports are plain numbers until validate() checks them
// against the board. The file format is docs/schedule-format.md.
//
// A plan has named phases (000 L949-960: a program runs through phases, each with its own
// working set of connections). A phase has one part per switch: a single-switch plan has one
// part with an empty switch name; a fabric plan lists its switches and holds a part per switch
// in every phase. A part is either explicit slots (hand-written or compiled) or a
// communication pattern that compile_plan() turns into slots.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asn::schedule {

// A place in the plan file, 1-based; line 0 when the item was not read from a file
// (built in code, or a slot the compiler made).
struct Mark {
  uint32_t line = 0;
  uint32_t column = 0;
  bool known() const { return line != 0; }
  friend bool operator==(const Mark&, const Mark&) = default;
};

// Slot-length policies of the TDM sequencer, 000 Ch. 4; the values are tdm.config.policy's.
enum class Policy : uint8_t {
  kFixed = 0,    // every slot, empty or not, lasts slot_length
  kSes = 1,      // skip empty slots (L744-781)
  kSla = 2,      // the wormhole slot has its own length (L783-793)
  kPreempt = 3,  // skip the preloaded slots while no predictable traffic is pending (L795-828)
};
std::string_view to_string(Policy policy);                  // "fixed", "ses", "sla", "preempt"
std::optional<Policy> parse_policy(std::string_view text);  // those names, any case

enum class LengthUnit : uint8_t { kCycles, kNanoseconds, kMicroseconds, kMilliseconds };

// A length as written: digits * 10^-decimals units, so "1.25 us" is {125, 2, us}. Exact
// until to_cycles() rounds it with a board's clock.
struct Length {
  uint64_t digits = 0;
  uint8_t decimals = 0;
  LengthUnit unit = LengthUnit::kCycles;
  Mark mark;

  static Length cycles(uint64_t n) { return {n, 0, LengthUnit::kCycles, {}}; }
  static Length nanoseconds(uint64_t n) { return {n, 0, LengthUnit::kNanoseconds, {}}; }
  std::string to_string() const;                              // "1.25 us", "125 cycles"
  friend bool operator==(const Length& a, const Length& b) {  // as written; marks aside
    return a.digits == b.digits && a.decimals == b.decimals && a.unit == b.unit;
  }
};

// How a time becomes whole cycles. Slot lengths round to the nearest cycle; a guard band
// rounds up, since it must cover the whole settling time it stands for.
enum class Rounding { kNearest, kUp };

struct Cycles {
  uint64_t cycles = 0;
  bool exact = true;  // the length was a whole number of cycles at this clock
};

// The length in cycles of a clock_hz clock; nullopt if it does not fit in 64 bits.
std::optional<Cycles> to_cycles(const Length& length, uint64_t clock_hz, Rounding rounding);

// Parses "2 us", "2us", "1.5 ms", "500 ns", "125 cycles" (units: ns, us, ms, cycles; a space
// is optional; up to 9 decimals). A bare number is refused: cycles or nanoseconds would be a
// guess. On failure returns nullopt and sets *why to the reason.
std::optional<Length> parse_length(std::string_view text, std::string* why);

// A circuit through the crossbar for one slot: data enters the switch at input port `from`
// and leaves at output port `to`. In the slot table that is out[to] = from (000 L955).
struct Connection {
  uint32_t from = 0;
  uint32_t to = 0;
  Mark mark;  // where it was written (a pattern's connection keeps its mark when compiled)
  friend bool operator==(const Connection& a, const Connection& b) {
    return a.from == b.from && a.to == b.to;
  }
};

// One crossbar configuration B^(i) (000 L955): the connections made during the slot.
struct Slot {
  std::vector<Connection> connections;
  Mark mark;
};

struct Timing {
  Policy policy = Policy::kFixed;
  std::optional<Length> slot_length;      // required (in the phase or the plan's defaults)
  std::optional<Length> guard_band;       // required likewise (000 L966)
  bool wormhole = false;                  // append the wormhole slot S_W (000 L704-708)
  std::optional<Length> wormhole_length;  // its own length (policy sla); else slot_length
  Mark policy_mark;
  Mark wormhole_mark;
};

enum class Algorithm : uint8_t {
  kOptimal,  // exact: slots == the lower bound (bipartite edge colouring, König)
  kGreedy,   // the real-time greedy scheduler of 000 L949-1002, as a baseline
};
std::string_view to_string(Algorithm algorithm);                  // "optimal", "greedy"
std::optional<Algorithm> parse_algorithm(std::string_view text);  // those names

// How a part's slots came about.
enum class Method : uint8_t {
  kExplicit,    // written in the plan
  kClosedForm,  // a regular pattern (permutation, shifts, all-to-all, mesh) laid out directly
  kColouring,   // the exact edge colouring
  kGreedy,      // the 000 greedy baseline
};
std::string_view to_string(Method method);

// What the summary of every compile shows (issue 8 part 2).
struct CompileSummary {
  uint64_t connections = 0;
  uint32_t slots = 0;         // slots of the part (for explicit slots, as written)
  uint32_t lower_bound = 0;   // the most connections at any one port: no schedule has fewer
  uint32_t ports_in_use = 0;  // max(distinct input ports, distinct output ports)
  // connections / (slots * ports_in_use): the share of the used ports' slot time spent
  // connected; 1.0 when every used port is busy in every slot. 0 when there are no slots.
  double utilisation = 0;
  Method method = Method::kExplicit;
  std::chrono::nanoseconds elapsed{0};  // compile time (0 for explicit slots)
  bool optimal() const { return slots == lower_bound; }
};

struct Part {
  std::string switch_name;  // "" in a single-switch plan
  Mark mark;
  bool has_pattern = false;
  std::vector<Connection> pattern;  // the pattern, repeats and generators expanded
  Mark pattern_mark;
  std::vector<Slot> slots;                // explicit, or filled in by compile_plan()
  std::optional<CompileSummary> summary;  // set by compile_plan()
};

struct Phase {
  std::string name;
  std::string description;
  Mark mark;
  Timing timing;  // the plan's defaults with the phase's own keys on top
  std::vector<Part> parts;
  const Part* find_part(std::string_view switch_name) const;
  // The number of slots every part of the phase runs: the largest part's. Shorter parts
  // idle in the slots past their own (their entries are empty), so that the frames of all
  // switches of a fabric stay aligned slot for slot.
  uint32_t slot_count() const;
};

struct Plan {
  std::string name;
  std::string description;
  std::string file;  // the file it was read from, for messages ("" when built in code)
  // The board profile the plan was written for ("netfpga-1g"), if it says: lets a tool
  // check a plan offline against that profile's limits; validate() warns when the board it
  // is given is another.
  std::string board;
  std::vector<std::string> switches;  // a fabric plan's switches; empty for one switch
  std::vector<Phase> phases;

  bool is_fabric() const { return !switches.empty(); }
  const Phase* find_phase(std::string_view name) const;
};

}  // namespace asn::schedule

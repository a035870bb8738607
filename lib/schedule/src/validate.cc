// The validator: its own code, sharing nothing with the compiler but the plan types, so that
// a compiler bug cannot hide from it (issue 8 part 3). The rules are listed in validate.hpp.
#include "asn/schedule/validate.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

constexpr uint32_t kUnused = 0xffffffffu;

std::string mhz(uint64_t clock_hz) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g MHz", static_cast<double>(clock_hz) / 1e6);
  return buffer;
}

// "1.304 us": cycles as time at the board's clock.
std::string as_time(uint64_t cycles, uint64_t clock_hz) {
  double ns = static_cast<double>(cycles) * 1e9 / static_cast<double>(clock_hz);
  char buffer[48];
  if (ns < 1e3) {
    std::snprintf(buffer, sizeof buffer, "%g ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buffer, sizeof buffer, "%g us", ns / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g ms", ns / 1e6);
  }
  return buffer;
}

// "6..63", "2, 7..9": runs of consecutive ports, the first few.
std::string port_runs(const std::set<uint32_t>& ports) {
  constexpr size_t kRunsShown = 8;
  std::vector<std::string> runs;
  for (auto it = ports.begin(); it != ports.end();) {
    const uint32_t first = *it;
    uint32_t last = first;
    while (++it != ports.end() && *it == last + 1) ++last;
    if (runs.size() == kRunsShown) {
      runs.push_back("...");
      break;
    }
    runs.push_back(last == first ? cat(first) : cat(first, "..", last));
  }
  return detail::join(runs);
}

class Checker {
 public:
  Checker(const Plan& plan, const BoardLimits& limits, const ValidateOptions& options,
          ValidationReport& report)
      : plan_(plan), limits_(limits), options_(options), report_(report) {}

  void run();

 private:
  Problem problem(const Phase* phase, const Part* part, Mark mark, std::string message) const {
    Problem p;
    p.file = plan_.file;
    p.mark = mark;
    if (phase != nullptr) p.phase = phase->name;
    if (part != nullptr) p.switch_name = part->switch_name;
    p.message = std::move(message);
    return p;
  }
  // Up to max_problems errors are listed, and warnings while the list is shorter than that:
  // warnings never push an error out.
  void add(Problem p) {
    bool is_error = p.severity == Severity::kError;
    bool room = is_error ? report_.error_count < options_.max_problems
                         : report_.problems.size() < options_.max_problems;
    if (is_error) ++report_.error_count;
    if (room) {
      report_.problems.push_back(std::move(p));
    } else {
      ++report_.omitted;
      if (!is_error) ++report_.omitted_warnings;
    }
  }
  void error(const Phase* phase, const Part* part, Mark mark, std::string message,
             ErrorKind kind = ErrorKind::kInvalidArgument) {
    Problem p = problem(phase, part, mark, std::move(message));
    p.kind = kind;
    add(std::move(p));
  }
  void warning(const Phase* phase, const Part* part, Mark mark, std::string message) {
    Problem p = problem(phase, part, mark, std::move(message));
    p.severity = Severity::kWarning;
    add(std::move(p));
  }

  bool board_ok();
  bool selected(const Part& part) const;
  std::optional<uint64_t> cycles_of(const Phase& phase, const Length& length, std::string_view key,
                                    Rounding rounding);
  void check_timing(const Phase& phase);
  void check_policy(const Phase& phase);
  void in_range(const Phase& phase, std::string_view key, uint64_t cycles, uint64_t max, Mark mark);
  std::optional<uint64_t> check_wormhole(const Phase& phase, std::optional<uint64_t> slot);
  void check_guard_band(const Phase& phase, std::optional<uint64_t> slot,
                        std::optional<uint64_t> wormhole);
  void check_part(const Phase& phase, const Part& part);
  void check_slot(const Phase& phase, const Part& part, uint32_t index, const Slot& slot);
  void note_missing_ports(const Problem& at, const Connection& c);
  void report_missing_ports();

  const Plan& plan_;
  const BoardLimits& limits_;
  const ValidateOptions& options_;
  ValidationReport& report_;
  // Per port, the index into the slot's connections using it, or kUnused.
  std::vector<uint32_t> by_output_;
  std::vector<uint32_t> by_input_;
  // Ports the plan uses that the board lacks: one error for them all, in the place of the
  // first (a plan for a 64-port board names dozens on a 6-port one, in every phase).
  struct MissingPorts {
    std::set<uint32_t> ports;
    size_t connections = 0;
    std::set<std::string> phases;
    std::string first;                // "0 -> 6"
    std::optional<size_t> listed_at;  // its index in report_.problems, when listed
  } missing_;
};

bool Checker::board_ok() {
  if (limits_.ports == 0 || limits_.clock_hz == 0) {
    error(nullptr, nullptr, {},
          cat("the board limits are incomplete (ports ", limits_.ports, ", clock ",
              limits_.clock_hz, " Hz): they come from the board's ID block"));
    return false;
  }
  return true;
}

bool Checker::selected(const Part& part) const {
  if (!options_.switch_name || !plan_.is_fabric()) return true;
  return part.switch_name == *options_.switch_name;
}

void Checker::run() {
  if (!board_ok()) return;
  if (options_.switch_name && plan_.is_fabric()) {
    const auto& names = plan_.switches;
    if (std::find(names.begin(), names.end(), *options_.switch_name) == names.end()) {
      error(nullptr, nullptr, {},
            cat("plan '", plan_.name, "' has no part for switch '", *options_.switch_name,
                "' (its switches: ", detail::join(names), ")"));
      return;
    }
  }
  if (!plan_.board.empty() && !limits_.board.empty() && plan_.board != limits_.board) {
    warning(nullptr, nullptr, {},
            cat("plan '", plan_.name, "' was written for board ", plan_.board, "; this board is ",
                limits_.board));
  }
  if (plan_.phases.empty())
    error(nullptr, nullptr, {}, cat("plan '", plan_.name, "' has no phase"));
  if (options_.phase && plan_.find_phase(*options_.phase) == nullptr) {
    std::vector<std::string> names;
    for (const auto& phase : plan_.phases) names.push_back(phase.name);
    error(nullptr, nullptr, {},
          cat("plan '", plan_.name, "' has no phase '", *options_.phase, "'",
              detail::did_you_mean(*options_.phase, names)));
    return;
  }
  for (const auto& phase : plan_.phases) {
    if (options_.phase && phase.name != *options_.phase) continue;
    check_timing(phase);
    for (const auto& part : phase.parts) {
      if (selected(part)) check_part(phase, part);
    }
  }
  report_missing_ports();
}

void Checker::note_missing_ports(const Problem& at, const Connection& c) {
  for (const uint32_t port : {c.from, c.to}) {
    if (port >= limits_.ports) missing_.ports.insert(port);
  }
  ++missing_.connections;
  missing_.phases.insert(at.phase);
  if (missing_.connections > 1) return;
  missing_.first = cat(c.from, " -> ", c.to);
  const size_t listed = report_.problems.size();
  add(at);  // the message comes at the end, when every such port is known
  if (report_.problems.size() > listed) missing_.listed_at = listed;
}

void Checker::report_missing_ports() {
  if (!missing_.listed_at) return;
  const size_t n = missing_.ports.size();
  const bool for_another_board =
      !plan_.board.empty() && !limits_.board.empty() && plan_.board != limits_.board;
  const size_t used_by = missing_.connections;
  std::string message =
      cat(used_by == 1 ? missing_.first + ": " : "", n == 1 ? "port " : "ports ",
          port_runs(missing_.ports), n == 1 ? " does" : " do", " not exist; the board",
          limits_.board.empty() ? "" : cat(" (", limits_.board, ")"), " has ports 0..",
          limits_.ports - 1);
  if (used_by > 1) {
    message += cat(" (", used_by, " connections in ", missing_.phases.size(),
                   missing_.phases.size() == 1 ? " phase" : " phases", " use ",
                   n == 1 ? "it" : "them", ", the first here: ", missing_.first, ")");
  }
  if (for_another_board) message += cat("; plan '", plan_.name, "' is for board ", plan_.board);
  report_.problems[*missing_.listed_at].message = std::move(message);
}

std::optional<uint64_t> Checker::cycles_of(const Phase& phase, const Length& length,
                                           std::string_view key, Rounding rounding) {
  std::optional<Cycles> c = to_cycles(length, limits_.clock_hz, rounding);
  if (!c) {
    error(&phase, nullptr, length.mark, cat(key, " ", length.to_string(), " is far too long"));
    return std::nullopt;
  }
  if (!c->exact) {
    warning(&phase, nullptr, length.mark,
            cat(key, " ", length.to_string(), " is not a whole number of cycles at ",
                mhz(limits_.clock_hz), ": using ", c->cycles, " cycles (",
                as_time(c->cycles, limits_.clock_hz), ")"));
  }
  return c->cycles;
}

void Checker::check_timing(const Phase& phase) {
  const Timing& t = phase.timing;
  if (!t.slot_length || !t.guard_band) {
    error(&phase, nullptr, phase.mark, "needs slot_length and guard_band");
    return;
  }
  check_policy(phase);
  std::optional<uint64_t> slot =
      cycles_of(phase, *t.slot_length, "slot_length", Rounding::kNearest);
  if (slot) in_range(phase, "slot_length", *slot, limits_.max_slot_cycles, t.slot_length->mark);
  std::optional<uint64_t> wormhole = check_wormhole(phase, slot);
  check_guard_band(phase, slot, wormhole);
  bool uncompiled = std::any_of(phase.parts.begin(), phase.parts.end(),
                                [](const Part& p) { return p.has_pattern && !p.summary; });
  if (phase.slot_count() == 0 && !t.wormhole && !uncompiled) {
    error(&phase, nullptr, phase.mark,
          "runs nothing: no slot and no wormhole slot (add connections or 'wormhole: on')");
  }
}

void Checker::check_policy(const Phase& phase) {
  const Timing& t = phase.timing;
  if (plan_.is_fabric() && (t.policy == Policy::kSes || t.policy == Policy::kPreempt)) {
    error(&phase, nullptr, t.policy_mark,
          cat("policy ", to_string(t.policy),
              " skips slots by each switch's own state, so the switches of a fabric would "
              "leave the common slot sequence a circuit across switches needs (002 L240); use "
              "fixed or sla in a fabric plan"));
  }
  if ((t.policy == Policy::kSla || t.policy == Policy::kPreempt) && !t.wormhole) {
    error(&phase, nullptr, t.policy_mark,
          cat("policy ", to_string(t.policy), " needs the wormhole slot ('wormhole: on'): ",
              t.policy == Policy::kSla ? "sla gives it its own length (000 L783)"
                                       : "preempt leaves only it while no predictable traffic "
                                         "is pending (000 L795)"));
  }
}

void Checker::in_range(const Phase& phase, std::string_view key, uint64_t cycles, uint64_t max,
                       Mark mark) {
  if (cycles == 0) {
    error(&phase, nullptr, mark, cat(key, " is 0 cycles: a slot lasts at least one cycle"));
  } else if (cycles > max) {
    error(&phase, nullptr, mark,
          cat(key, " is ", cycles, " cycles at ", mhz(limits_.clock_hz),
              "; the TDM block holds at most ", max, " (", as_time(max, limits_.clock_hz), ")"));
  }
}

// The wormhole slot's length in cycles (the slot length unless it has its own).
std::optional<uint64_t> Checker::check_wormhole(const Phase& phase, std::optional<uint64_t> slot) {
  const Timing& t = phase.timing;
  if (!t.wormhole_length) return slot;
  const Length& w = *t.wormhole_length;
  if (!t.wormhole) {
    warning(&phase, nullptr, w.mark, "a wormhole length is given but the wormhole slot is off");
    return slot;
  }
  std::optional<uint64_t> wormhole = cycles_of(phase, w, "wormhole length", Rounding::kNearest);
  if (!wormhole) return wormhole;
  in_range(phase, "wormhole length", *wormhole, limits_.max_slot_cycles, w.mark);
  if (slot && *wormhole != *slot && t.policy != Policy::kSla) {
    error(&phase, nullptr, w.mark,
          cat("a wormhole slot of its own length (", *wormhole, " cycles, the others ", *slot,
              ") needs policy sla (000 L783): set 'policy: sla' or drop the length"));
  }
  if (slot && *wormhole == *slot && t.policy == Policy::kSla) {
    warning(&phase, nullptr, w.mark,
            "policy sla with the wormhole slot as long as the others behaves as fixed");
  }
  return wormhole;
}

void Checker::check_guard_band(const Phase& phase, std::optional<uint64_t> slot,
                               std::optional<uint64_t> wormhole) {
  const Timing& t = phase.timing;
  std::optional<uint64_t> guard = cycles_of(phase, *t.guard_band, "guard_band", Rounding::kUp);
  const Mark mark = t.guard_band->mark;
  if (!guard) return;
  if (*guard > limits_.max_guard_cycles) {
    error(&phase, nullptr, mark,
          cat("guard_band is ", *guard, " cycles; the TDM block holds at most ",
              limits_.max_guard_cycles));
  } else if (slot && *guard >= *slot) {
    error(&phase, nullptr, mark,
          cat("guard_band (", *guard, " cycles) must be shorter than the slot (", *slot,
              " cycles): no time would be left to send (000 L966: 50 ns of a 1 us slot)"));
  } else if (wormhole && t.wormhole && *guard >= *wormhole) {
    error(&phase, nullptr, mark,
          cat("guard_band (", *guard, " cycles) must be shorter than the wormhole slot (",
              *wormhole, " cycles)"));
  }
}

void Checker::check_part(const Phase& phase, const Part& part) {
  if (part.has_pattern && !part.summary) {
    error(&phase, &part, part.pattern_mark,
          "the pattern has not been compiled into slots (compile_plan() comes before validate())");
    return;
  }
  const uint32_t needed = phase.slot_count();  // every part runs the phase's slot count
  if (needed > limits_.slots) {
    std::string why;
    if (part.summary && part.has_pattern && part.summary->lower_bound > limits_.slots) {
      why = cat(" (the pattern has ", part.summary->lower_bound,
                " connections at one port: no schedule of it fits; split it into phases)");
    } else if (part.summary && part.has_pattern && !part.summary->optimal()) {
      why = cat(" (", part.summary->lower_bound, " would do: compile with the optimal algorithm)");
    } else if (part.slots.size() < needed) {
      why = " (another switch's part of this phase has that many)";
    }
    Problem p = problem(&phase, &part, part.has_pattern ? part.pattern_mark : part.mark,
                        cat("needs ", needed, " slots; the board",
                            limits_.board.empty() ? "" : cat(" (", limits_.board, ")"), " has ",
                            limits_.slots, why));
    p.kind = ErrorKind::kResourceExhausted;
    add(std::move(p));
  }
  by_output_.assign(limits_.ports, kUnused);
  by_input_.assign(limits_.ports, kUnused);
  uint32_t empty = 0;
  for (uint32_t s = 0; s < part.slots.size(); ++s) {
    check_slot(phase, part, s, part.slots[s]);
    empty += part.slots[s].connections.empty() ? 1 : 0;
  }
  if (empty == part.slots.size() && !part.slots.empty() && phase.timing.policy == Policy::kSes &&
      !phase.timing.wormhole) {
    error(&phase, &part, part.mark,
          "runs nothing: every slot is empty, policy ses skips them all and there is no wormhole "
          "slot");
  }
  if (empty > 0 && phase.timing.policy == Policy::kFixed) {
    warning(&phase, &part, part.mark,
            cat(empty, " of ", part.slots.size(),
                " slots are empty; policy fixed still gives them their time (ses skips them)"));
  }
}

void Checker::check_slot(const Phase& phase, const Part& part, uint32_t index, const Slot& slot) {
  const auto& connections = slot.connections;
  auto slot_error = [&](const Connection& c, uint32_t port, std::string message) {
    Problem p = problem(&phase, &part, c.mark.known() ? c.mark : slot.mark, std::move(message));
    p.slot = index;
    p.port = port;
    add(std::move(p));
  };
  auto line_of = [](const Connection& c) {
    return c.mark.known() ? cat(" (line ", c.mark.line, ")") : std::string();
  };
  for (uint32_t i = 0; i < connections.size(); ++i) {
    const Connection& c = connections[i];
    if (c.from >= limits_.ports || c.to >= limits_.ports) {
      Problem at = problem(&phase, &part, c.mark.known() ? c.mark : slot.mark, "");
      at.slot = index;
      at.port = c.from >= limits_.ports ? c.from : c.to;
      note_missing_ports(at, c);
      continue;
    }
    if (c.from == c.to && !limits_.self_connections) {
      slot_error(c, c.from,
                 cat(c.from, " -> ", c.to, ": connects port ", c.from,
                     " to itself; the device on a port does not send to itself through the "
                     "crossbar"));
    }
    if (uint32_t other = by_output_[c.to]; other != kUnused) {
      const Connection& o = connections[other];
      slot_error(c, c.to,
                 cat("output ", c.to, " takes input ", c.from, " and also input ", o.from,
                     line_of(o), ": an output takes one input per slot (000 L955)"));
    } else {
      by_output_[c.to] = i;
    }
    if (uint32_t other = by_input_[c.from]; other != kUnused) {
      const Connection& o = connections[other];
      slot_error(c, c.from,
                 cat("input ", c.from, " sends to output ", c.to, " and also to output ", o.to,
                     line_of(o), ": an input drives one output per slot"));
    } else {
      by_input_[c.from] = i;
    }
  }
  for (const Connection& c : connections) {  // reset only what this slot marked
    if (c.from < limits_.ports && c.to < limits_.ports) {
      by_output_[c.to] = kUnused;
      by_input_[c.from] = kUnused;
    }
  }
}

}  // namespace

bool ValidationReport::ok() const { return error_count == 0; }

std::vector<Problem> ValidationReport::errors() const {
  std::vector<Problem> out;
  for (const auto& p : problems) {
    if (p.severity == Severity::kError) out.push_back(p);
  }
  return out;
}

std::vector<Problem> ValidationReport::warnings() const {
  std::vector<Problem> out;
  for (const auto& p : problems) {
    if (p.severity == Severity::kWarning) out.push_back(p);
  }
  if (omitted_warnings > 0) {
    Problem more;
    more.severity = Severity::kWarning;
    if (!problems.empty()) more.file = problems.front().file;
    more.message = cat("and ", omitted_warnings, " more warning", omitted_warnings == 1 ? "" : "s",
                       ", not listed (a check lists ", problems.size(), " problems at most)");
    out.push_back(std::move(more));
  }
  return out;
}

void ValidationReport::throw_if_errors() const {
  if (!ok()) throw PlanError(errors(), error_count);
}

ValidationReport validate(const Plan& plan, const BoardLimits& limits,
                          const ValidateOptions& options) {
  ValidationReport report;
  Checker(plan, limits, options, report).run();
  return report;
}

}  // namespace asn::schedule

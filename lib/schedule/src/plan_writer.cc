// format_plan: a plan back to the file format, defaults resolved into every phase.
#include <cstdio>

#include "asn/schedule/plan_file.hpp"
#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

// A YAML double-quoted string.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(c));
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string connection(const Connection& c) { return cat(c.from, " -> ", c.to); }

void write_slots(std::string& out, const std::vector<Slot>& slots, const std::string& indent) {
  out += cat(indent, "slots:", slots.empty() ? " []" : "", "\n");
  for (const auto& slot : slots) {
    out += cat(indent, "  - [");
    for (size_t i = 0; i < slot.connections.size(); ++i) {
      out += cat(i == 0 ? "" : ", ", quoted(connection(slot.connections[i])));
    }
    out += "]\n";
  }
}

// Runs of the same connection are written once with a repeat count ("0 -> 1 x2").
void write_pattern(std::string& out, const std::vector<Connection>& pattern,
                   const std::string& indent) {
  out += cat(indent, "pattern:", pattern.empty() ? " []" : "", "\n");
  for (size_t i = 0; i < pattern.size();) {
    size_t run = 1;
    while (i + run < pattern.size() && pattern[i + run] == pattern[i]) ++run;
    out +=
        cat(indent, "  - ", quoted(connection(pattern[i]) + (run > 1 ? cat(" x", run) : "")), "\n");
    i += run;
  }
}

void write_part(std::string& out, const Part& part, const std::string& indent) {
  if (part.has_pattern && !part.summary) {
    write_pattern(out, part.pattern, indent);
  } else {
    write_slots(out, part.slots, indent);
  }
}

void write_timing(std::string& out, const Timing& t) {
  out += cat("    policy: ", to_string(t.policy), "\n");
  if (t.slot_length) out += cat("    slot_length: ", t.slot_length->to_string(), "\n");
  if (t.guard_band) out += cat("    guard_band: ", t.guard_band->to_string(), "\n");
  if (t.wormhole_length) {
    out += cat("    wormhole: {enabled: ", t.wormhole ? "on" : "off",
               ", length: ", t.wormhole_length->to_string(), "}\n");
  } else {
    out += cat("    wormhole: ", t.wormhole ? "on" : "off", "\n");
  }
}

}  // namespace

std::string format_plan(const Plan& plan) {
  std::string out = "version: 1\n";
  out += cat("plan: ", plan.name, "\n");
  if (!plan.description.empty()) out += cat("description: ", quoted(plan.description), "\n");
  if (!plan.board.empty()) out += cat("board: ", plan.board, "\n");
  if (plan.is_fabric()) out += cat("switches: [", detail::join(plan.switches), "]\n");
  out += "phases:\n";
  for (const auto& phase : plan.phases) {
    out += cat("  - name: ", phase.name, "\n");
    if (!phase.description.empty()) {
      out += cat("    description: ", quoted(phase.description), "\n");
    }
    write_timing(out, phase.timing);
    if (!plan.is_fabric()) {
      if (!phase.parts.empty()) write_part(out, phase.parts.front(), "    ");
      continue;
    }
    bool any = false;
    for (const auto& part : phase.parts) {
      bool idle = !part.has_pattern && part.slots.empty();
      if (idle) continue;
      if (!any) out += "    switches:\n";
      any = true;
      out += cat("      ", part.switch_name, ":\n");
      write_part(out, part, "        ");
    }
  }
  return out;
}

}  // namespace asn::schedule

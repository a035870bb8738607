// parse_plan and load_plan_file: the plan file's structure (docs/schedule-format.md).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <tuple>
#include <vector>

#include "asn/schedule/detail/reader.hpp"
#include "asn/schedule/plan_file.hpp"
#include "pattern_reader.hpp"
#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;
using detail::child_field;
using detail::index_field;
using detail::MapView;
using detail::YamlNode;
using detail::YamlReader;

constexpr std::string_view kPlanExample = "'plan: halo-exchange' and 'phases: [...]'";
constexpr std::string_view kPhaseExample =
    "'name: halo', 'slot_length: 1 us', 'guard_band: 50 ns', 'pattern: [...]'";
constexpr std::string_view kWormholeExample = "on, off, or '{length: 2 us}'";

// "needs 'a', 'b' and 'c'": every required key that is missing, in one message, so that a
// plan written from scratch is not refused once for each.
std::string needs(const std::vector<std::string>& keys) {
  std::string out = "needs ";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += i + 1 == keys.size() ? " and " : ", ";
    out += keys[i];
  }
  return out;
}

// The timing keys of a phase or of `defaults:`; what is not given stays unset.
struct TimingKeys {
  std::optional<Policy> policy;
  Mark policy_mark;
  std::optional<Length> slot_length;
  std::optional<Length> guard_band;
  std::optional<bool> wormhole;
  std::optional<Length> wormhole_length;
  Mark wormhole_mark;
};

class PlanReader {
 public:
  PlanReader(std::string file, const ParseLimits& limits) : reader_(std::move(file), limits) {}

  Plan read(const YamlNode& root);

 private:
  TimingKeys read_timing(const MapView& map);
  void read_wormhole(const YamlNode& node, const std::string& field, TimingKeys& keys);
  Phase read_phase(const YamlNode& node, const std::string& field, const Plan& plan);
  void require_keys(const MapView& map, const YamlNode& node, const std::string& field,
                    const Phase& phase, bool fabric);
  Part read_part(const MapView& map, const YamlNode& at, std::string switch_name);
  void add_fabric_parts(const MapView& phase_map, const Plan& plan, Phase& phase);

  YamlReader reader_;
  TimingKeys defaults_;
};

Plan PlanReader::read(const YamlNode& root) {
  if (root.is_null()) {
    reader_.fail_at({1, 1}, "", cat("the file is empty: a plan needs ", kPlanExample));
  }
  MapView top = reader_.map(
      root, "", {"version", "plan", "description", "board", "switches", "defaults", "phases"},
      kPlanExample);
  Plan plan;
  plan.file = reader_.file();
  if (const YamlNode* version = top.get("version")) reader_.integer(*version, "version", 1, 1);
  const YamlNode* name = top.get("plan");
  const YamlNode* phases = top.get("phases");
  std::vector<std::string> missing;
  if (name == nullptr) missing.emplace_back("'plan: NAME' (a name such as 'halo')");
  if (phases == nullptr) missing.emplace_back("'phases:' (a list of phases)");
  if (!missing.empty()) reader_.fail(root, name == nullptr ? "plan" : "phases", needs(missing));
  plan.name = reader_.name(*name, "plan");
  if (const YamlNode* d = top.get("description")) {
    plan.description = reader_.scalar(*d, "description", "a text");
  }
  if (const YamlNode* board = top.get("board")) plan.board = reader_.name(*board, "board");
  if (const YamlNode* switches = top.get("switches")) {
    const auto& items = reader_.sequence(*switches, "switches", "[sw0, sw1]");
    if (items.empty())
      reader_.fail(*switches, "switches", "lists no switch ([sw0, sw1], or leave the key out)");
    if (items.size() > reader_.limits().max_switches) {
      reader_.fail(*switches, "switches",
                   cat("more than ", reader_.limits().max_switches, " switches (max_switches)"));
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < items.size(); ++i) {
      std::string switch_name = reader_.name(items[i], index_field("switches", i));
      if (!seen.insert(switch_name).second) {
        reader_.fail(items[i], index_field("switches", i),
                     cat("'", switch_name, "' is listed twice"));
      }
      plan.switches.push_back(switch_name);
    }
  }
  if (const YamlNode* defaults = top.get("defaults")) {
    defaults_ = read_timing(reader_.map(*defaults, "defaults",
                                        {"policy", "slot_length", "guard_band", "wormhole"},
                                        "'slot_length: 1 us' and 'guard_band: 50 ns'"));
  }
  const auto& items = reader_.sequence(*phases, "phases", "[{name: halo, pattern: [...]}]");
  if (items.empty()) reader_.fail(*phases, "phases", "lists no phase");
  if (items.size() > reader_.limits().max_phases) {
    reader_.fail(*phases, "phases",
                 cat("more than ", reader_.limits().max_phases, " phases (max_phases)"));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    Phase phase = read_phase(items[i], index_field("phases", i), plan);
    if (const Phase* earlier = plan.find_phase(phase.name)) {
      reader_.fail_at(
          phase.mark, index_field("phases", i),
          cat("a phase named '", phase.name, "' already exists (line ", earlier->mark.line, ")"));
    }
    plan.phases.push_back(std::move(phase));
  }
  return plan;
}

TimingKeys PlanReader::read_timing(const MapView& map) {
  TimingKeys keys;
  if (const YamlNode* policy = map.get("policy")) {
    const std::string& text =
        reader_.scalar(*policy, map.field_of("policy"), "fixed, ses, sla or preempt");
    keys.policy = parse_policy(text);
    if (!keys.policy) {
      reader_.fail(*policy, map.field_of("policy"),
                   cat(detail::quote(text), " is not a policy (fixed, ses, sla or preempt)"));
    }
    keys.policy_mark = policy->mark;
  }
  if (const YamlNode* n = map.get("slot_length")) {
    keys.slot_length = reader_.length(*n, map.field_of("slot_length"));
  }
  if (const YamlNode* n = map.get("guard_band")) {
    keys.guard_band = reader_.length(*n, map.field_of("guard_band"));
  }
  if (const YamlNode* n = map.get("wormhole")) read_wormhole(*n, map.field_of("wormhole"), keys);
  return keys;
}

void PlanReader::read_wormhole(const YamlNode& node, const std::string& field, TimingKeys& keys) {
  keys.wormhole_mark = node.mark;
  if (node.is_scalar()) {
    const std::string& text = node.scalar;
    if (parse_length(text, nullptr)) {
      reader_.fail(node, field,
                   cat(detail::quote(text), " is a length: write 'wormhole: {length: ", text,
                       "}' to give the wormhole slot its own length (policy sla)"));
    }
    keys.wormhole = reader_.boolean(node, field);
    return;
  }
  MapView map = reader_.map(node, field, {"enabled", "length"}, kWormholeExample);
  keys.wormhole = true;  // {length: ...} alone turns it on
  if (const YamlNode* enabled = map.get("enabled")) {
    keys.wormhole = reader_.boolean(*enabled, map.field_of("enabled"));
  }
  if (const YamlNode* length = map.get("length")) {
    keys.wormhole_length = reader_.length(*length, map.field_of("length"));
  }
}

Phase PlanReader::read_phase(const YamlNode& node, const std::string& field, const Plan& plan) {
  if (node.is_null()) reader_.fail(node, field, cat("a phase needs keys such as ", kPhaseExample));
  MapView map = reader_.map(node, field,
                            {"name", "description", "policy", "slot_length", "guard_band",
                             "wormhole", "slots", "pattern", "switches"},
                            kPhaseExample);
  Phase phase;
  phase.mark = node.mark;
  const YamlNode* name = map.get("name");
  if (name != nullptr) phase.name = reader_.name(*name, map.field_of("name"));
  if (const YamlNode* d = map.get("description")) {
    phase.description = reader_.scalar(*d, map.field_of("description"), "a text");
  }
  TimingKeys own = read_timing(map);
  Timing& t = phase.timing;
  t.policy = own.policy.value_or(defaults_.policy.value_or(Policy::kFixed));
  t.policy_mark = own.policy ? own.policy_mark : defaults_.policy_mark;
  t.slot_length = own.slot_length ? own.slot_length : defaults_.slot_length;
  t.guard_band = own.guard_band ? own.guard_band : defaults_.guard_band;
  t.wormhole = own.wormhole.value_or(defaults_.wormhole.value_or(false));
  t.wormhole_mark = own.wormhole ? own.wormhole_mark : defaults_.wormhole_mark;
  t.wormhole_length = own.wormhole_length ? own.wormhole_length : defaults_.wormhole_length;
  if (plan.is_fabric()) {
    add_fabric_parts(map, plan, phase);
  } else {
    if (const YamlNode* key = map.key("switches")) {
      reader_.fail(*key, map.field_of("switches"),
                   "this plan lists no switches: a fabric plan names them at the top "
                   "('switches: [sw0, sw1]'); a single switch's phase has 'slots:' or "
                   "'pattern:' directly");
    }
    // Without either, require_keys() says so together with whatever else is missing.
    if (map.get("slots") != nullptr || map.get("pattern") != nullptr) {
      phase.parts.push_back(read_part(map, node, ""));
    }
  }
  // Checked after the parts, so that errors come in the order of the file.
  require_keys(map, node, field, phase, plan.is_fabric());
  return phase;
}

// The keys a phase must have, with the timing it takes from `defaults:`: all that are
// missing in one message.
void PlanReader::require_keys(const MapView& map, const YamlNode& node, const std::string& field,
                              const Phase& phase, bool fabric) {
  const Timing& t = phase.timing;
  std::vector<std::string> missing;
  if (map.get("name") == nullptr) missing.emplace_back("'name:' (a name such as 'halo')");
  for (auto [given, key, example] : {std::tuple{t.slot_length.has_value(), "slot_length", "1 us"},
                                     std::tuple{t.guard_band.has_value(), "guard_band", "50 ns"}}) {
    if (!given) {
      missing.push_back(
          cat("'", key, ":' (in the phase or under 'defaults:', e.g. '", key, ": ", example, "')"));
    }
  }
  if (!fabric && map.get("slots") == nullptr && map.get("pattern") == nullptr) {
    missing.emplace_back(
        "'slots:' (explicit slots, e.g. [['0 -> 1'], ['1 -> 0']]) or 'pattern:' (connections "
        "to compile, e.g. ['0 -> 1', '1 -> 0'])");
  }
  if (missing.empty()) return;
  const YamlNode* name = map.get("name");
  reader_.fail(
      name != nullptr ? *name : node, field,
      cat(phase.name.empty() ? "a phase " : cat("phase '", phase.name, "' "), needs(missing)));
}

// A part: exactly one of `slots:` and `pattern:`.
Part PlanReader::read_part(const MapView& map, const YamlNode& at, std::string switch_name) {
  Part part;
  part.switch_name = std::move(switch_name);
  part.mark = at.mark;
  const YamlNode* slots = map.get("slots");
  const YamlNode* pattern = map.get("pattern");
  if (slots != nullptr && pattern != nullptr) {
    reader_.fail(*map.key("pattern"), map.field_of("pattern"),
                 "give either 'slots:' (explicit) or 'pattern:' (to compile), not both");
  }
  if (slots == nullptr && pattern == nullptr) {
    reader_.fail(at, map.field,
                 "needs 'slots:' (explicit slots, e.g. [['0 -> 1'], ['1 -> 0']]) or 'pattern:' "
                 "(connections to compile, e.g. ['0 -> 1', '1 -> 0'])");
  }
  if (slots != nullptr) {
    part.slots = detail::read_slots(reader_, *slots, map.field_of("slots"));
  } else {
    part.has_pattern = true;
    part.pattern_mark = pattern->mark;
    part.pattern = detail::read_pattern(reader_, *pattern, map.field_of("pattern"));
  }
  return part;
}

// A fabric phase: `switches: {sw0: {slots: ...}, sw1: {pattern: ...}}`. Every switch of the
// plan gets a part, in the plan's order; one the phase does not mention idles (no slots).
void PlanReader::add_fabric_parts(const MapView& phase_map, const Plan& plan, Phase& phase) {
  for (std::string_view key : {"slots", "pattern"}) {
    if (const YamlNode* k = phase_map.key(key)) {
      reader_.fail(*k, phase_map.field_of(key),
                   cat("in a fabric plan each switch has its own '", key, ":', under 'switches: {",
                       plan.switches.front(), ": {", key, ": ...}}'"));
    }
  }
  for (const auto& switch_name : plan.switches) {
    Part idle;
    idle.switch_name = switch_name;
    idle.mark = phase.mark;
    phase.parts.push_back(std::move(idle));
  }
  const YamlNode* switches = phase_map.get("switches");
  if (switches == nullptr) return;
  std::string field = phase_map.field_of("switches");
  if (!switches->is_map()) {
    reader_.fail(*switches, field,
                 cat("expected a map from switch name to its part, e.g. '{", plan.switches.front(),
                     ": {slots: [...]}}' (got ", detail::describe_kind(*switches), ")"));
  }
  std::set<std::string_view> seen;
  for (size_t i = 0; i + 1 < switches->children.size(); i += 2) {
    const YamlNode& key = switches->children[i];
    std::string part_field = child_field(field, key.scalar);
    auto it = std::find(plan.switches.begin(), plan.switches.end(), key.scalar);
    if (it == plan.switches.end()) {
      reader_.fail(key, part_field,
                   cat("no switch '", key.scalar, "' in the plan's switches",
                       detail::did_you_mean(key.scalar, plan.switches)));
    }
    if (!seen.insert(key.scalar).second) reader_.fail(key, part_field, "given twice");
    MapView part_map =
        reader_.map(switches->children[i + 1], part_field, {"slots", "pattern"}, "'slots: [...]'");
    phase.parts[it - plan.switches.begin()] = read_part(part_map, key, key.scalar);
  }
}

}  // namespace

Plan parse_plan(std::string_view text, std::string file, const ParseLimits& limits) {
  detail::YamlNode root = detail::read_yaml(text, file, limits);
  return PlanReader(std::move(file), limits).read(root);
}

std::string read_limited(const std::string& path, size_t max_bytes, std::string_view what) {
  auto fail = [&](std::string message) {
    Problem problem;
    problem.file = path;
    problem.message = std::move(message);
    throw PlanError(std::move(problem));
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(cat("cannot read the ", what, ": ", std::strerror(errno)));
  std::string text;
  std::vector<char> chunk(size_t{1} << 16);
  while (text.size() <= max_bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) fail(cat("cannot read the ", what, ": ", std::strerror(errno)));
  return text;
}

Plan load_plan_file(const std::string& path, const ParseLimits& limits) {
  return parse_plan(read_limited(path, limits.max_file_bytes, "plan file"), path, limits);
}

}  // namespace asn::schedule

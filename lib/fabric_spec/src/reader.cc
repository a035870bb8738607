// parse_fabric_spec: the fabric file read once; its shared part by load-schedule's reader
// (schedule::detail::read_fabric_file), topology, routing, routers and profiles here, then
// check_spec over the whole with each finding placed in the file.
#include "asn/schedule/detail/reader.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "asn/schedule/detail/fabric_reader.hpp"
#include "asn/schedule/detail/yaml_tree.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/text/text.hpp"
#include "asn/topology/fabric.hpp"
#include "check.hpp"

namespace asn::fabric {
namespace {

using schedule::Mark;
using schedule::ParseLimits;
using schedule::PlanError;
using schedule::Problem;
using schedule::detail::index_field;
using schedule::detail::MapView;
using schedule::detail::YamlNode;
using schedule::detail::YamlReader;
using text::cat;

constexpr std::string_view kTopologyExample = "'{terminals: 64, k: 4, channels: dilated}'";
constexpr std::string_view kRoutingExample =
    "'{mode: aldfb, enable: true, threshold: 12, thresholds: {4: 8}}'";
constexpr std::string_view kThresholdsExample = "'{4: 8, 5: 8}' (port: T_h in packets)";
const std::vector<std::string> kTopLevelKeys = {"fabric",     "topology", "routing",
                                                "arm_margin", "switches", "locks"};
constexpr std::string_view kLocksExample =
    "'{owners: [{switch: r0, slots: 0-2047}, {switch: r1, slots: 2048-4095}]}'";

struct ModeName {
  std::string_view name;
  RoutingMode mode;
};
constexpr ModeName kModes[] = {{"static", RoutingMode::kStatic},
                               {"minimal", RoutingMode::kMinimal},
                               {"ugal", RoutingMode::kUgal},
                               {"aldfb", RoutingMode::kAldfb}};

class SpecReader {
 public:
  explicit SpecReader(std::string file) : reader_(std::move(file), limits_) {}

  FabricSpec read(const YamlNode& root);

 private:
  void check_top_level_keys(const YamlNode& root) const;
  void read_topology(const YamlNode& node, FabricSpec& spec);
  void read_routing(const YamlNode& node, Routing& routing);
  void read_thresholds(const YamlNode& node, const std::string& field,
                       const std::string& switch_name, Routing& routing);
  void read_switch_routing(const YamlNode& node, const std::string& field, SwitchSpec& sw);
  void read_locks(const YamlNode& node, FabricSpec& spec);
  SwitchSpec read_switch(const YamlNode& node, const std::string& field,
                         const schedule::FabricFile::Switch& shared, const FabricSpec& spec);
  void remember(const std::string& switch_name, const std::string& key, const YamlNode& node);
  [[noreturn]] void fail_findings(const std::vector<detail::Finding>& findings) const;

  const ParseLimits limits_{};
  YamlReader reader_;
  // Where each field was written, by switch ("" for the fabric's) and key, and each
  // switch's place in the file's list, for the findings of check_spec.
  std::map<std::pair<std::string, std::string>, Mark> marks_;
  std::map<std::string, size_t> switch_index_;
};

// An unknown key at the top is most likely one of the fabric file's later parts: say so,
// rather than only suggest a near name.
void SpecReader::check_top_level_keys(const YamlNode& root) const {
  if (!root.is_map()) return;  // read_fabric_file says what a fabric file is
  for (size_t i = 0; i + 1 < root.children.size(); i += 2) {
    const YamlNode& key = root.children[i];
    if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key.scalar) != kTopLevelKeys.end()) {
      continue;
    }
    const std::optional<std::string> near = text::closest(key.scalar, kTopLevelKeys);
    reader_.fail(key, key.scalar,
                 cat("unknown key", near ? cat(" (did you mean '", *near, "'?)") : "",
                     ": a fabric file has ", text::join(kTopLevelKeys),
                     " (TDM plans and stripe groups are not part of it yet)"));
  }
}

FabricSpec SpecReader::read(const YamlNode& root) {
  check_top_level_keys(root);
  const schedule::FabricFile shared = schedule::detail::read_fabric_file(root, reader_.file());
  MapView top = reader_.map(
      root, "", {"fabric", "topology", "routing", "arm_margin", "switches", "locks"}, "");
  FabricSpec spec;
  spec.set_name(shared.name);
  remember("", "fabric", *top.get("fabric"));
  spec.set_arm_margin_ns(static_cast<uint64_t>(shared.arm_margin.count()));
  const YamlNode* topology = top.get("topology");
  if (topology == nullptr) {
    reader_.fail(root, "topology",
                 cat("needs 'topology:', the 2DFB's N, k and channels, e.g. ", kTopologyExample));
  }
  read_topology(*topology, spec);
  if (const YamlNode* routing = top.get("routing")) read_routing(*routing, *spec.mutable_routing());

  const auto& items = top.get("switches")->children;
  for (size_t i = 0; i < items.size(); ++i) {
    *spec.add_switches() =
        read_switch(items[i], index_field("switches", i), shared.switches[i], spec);
    switch_index_[shared.switches[i].name] = i;
  }
  std::sort(spec.mutable_switches()->begin(), spec.mutable_switches()->end(),
            [](const SwitchSpec& a, const SwitchSpec& b) { return a.name() < b.name(); });
  if (const YamlNode* locks = top.get("locks")) read_locks(*locks, spec);

  const std::vector<detail::Finding> findings = detail::check_spec(spec);
  if (!findings.empty()) fail_findings(findings);
  // Checked in the file's order (findings name locks.owners[i]); kept in slot order.
  if (spec.has_locks()) {
    auto& owners = *spec.mutable_locks()->mutable_assignments();
    std::sort(owners.begin(), owners.end(), [](const LockAssignment& a, const LockAssignment& b) {
      return a.first_slot() < b.first_slot();
    });
  }
  return spec;
}

// locks: {owners: [{switch: NAME, slots: FIRST-LAST | SLOT}, ...]}; the epochs are apply's.
void SpecReader::read_locks(const YamlNode& node, FabricSpec& spec) {
  MapView map = reader_.map(node, "locks", {"owners"}, kLocksExample);
  LockMap& locks = *spec.mutable_locks();
  locks.set_fabric(spec.name());
  const YamlNode* owners = map.get("owners");
  if (owners == nullptr) return;
  const auto& items = reader_.sequence(*owners, "locks.owners", kLocksExample);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string field = index_field("locks.owners", i);
    MapView entry =
        reader_.map(items[i], field, {"switch", "slots"}, "'{switch: r0, slots: 0-2047}'");
    for (std::string_view key : {"switch", "slots"}) {
      if (entry.get(key) == nullptr) {
        reader_.fail(items[i], field,
                     cat("needs '", key, ":', e.g. {switch: r0, slots: 0-2047} (slots 0 to ",
                         kLockSlots - 1, ")"));
      }
    }
    LockAssignment& a = *locks.add_assignments();
    a.set_owner(reader_.scalar(*entry.get("switch"), entry.field_of("switch"), "a switch name"));
    remember("", cat(field, ".switch"), *entry.get("switch"));
    const YamlNode& slots = *entry.get("slots");
    const std::string& text = reader_.scalar(slots, entry.field_of("slots"), "FIRST-LAST");
    const size_t dash = text.find('-');
    uint64_t first = 0;
    uint64_t last = 0;
    const auto number = [](std::string_view digits, uint64_t& out) {
      if (digits.empty() || digits.size() > 9) return false;
      out = 0;
      for (const char c : digits) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<uint64_t>(c - '0');
      }
      return true;
    };
    const std::string_view view(text);
    const bool ok = dash == std::string::npos ? number(view, first) && (last = first, true)
                                              : number(view.substr(0, dash), first) &&
                                                    number(view.substr(dash + 1), last);
    if (!ok) {
      reader_.fail(slots, entry.field_of("slots"),
                   cat(text::quoted(text, 40), " is no slot range: give FIRST-LAST (0 to ",
                       kLockSlots - 1, ", e.g. 0-2047) or one slot"));
    }
    a.set_first_slot(static_cast<uint32_t>(std::min<uint64_t>(first, UINT32_MAX)));
    a.set_last_slot(static_cast<uint32_t>(std::min<uint64_t>(last, UINT32_MAX)));
    remember("", cat(field, ".slots"), slots);
    if (const SwitchSpec* sw = find_switch(spec, a.owner())) a.set_endpoint(sw->endpoint());
  }
}

void SpecReader::read_topology(const YamlNode& node, FabricSpec& spec) {
  MapView map = reader_.map(node, "topology", {"terminals", "k", "channels"}, kTopologyExample);
  for (std::string_view key : {"terminals", "k"}) {
    if (map.get(key) == nullptr) {
      reader_.fail(node, "topology",
                   cat("needs '", key, ":' (N terminals, k per router), e.g. ", kTopologyExample));
    }
  }
  spec.set_terminals(static_cast<uint32_t>(reader_.integer(
      *map.get("terminals"), map.field_of("terminals"), 1, topology::kMaxTerminals)));
  remember("", "topology.terminals", *map.get("terminals"));
  spec.set_k(
      static_cast<uint32_t>(reader_.integer(*map.get("k"), map.field_of("k"), 1, UINT32_MAX)));
  remember("", "topology.k", *map.get("k"));
  if (const YamlNode* channels = map.get("channels")) {
    const std::string& text =
        reader_.scalar(*channels, map.field_of("channels"), "dilated or double-rate");
    if (text != "dilated" && text != "double-rate") {
      reader_.fail(*channels, map.field_of("channels"),
                   cat(text::quoted(text, 40),
                       " is no channel mode: give dilated (two channels A, B per router pair) "
                       "or double-rate (one of twice the bandwidth)"));
    }
    spec.set_double_rate(text == "double-rate");
  }
}

void SpecReader::read_routing(const YamlNode& node, Routing& routing) {
  MapView map =
      reader_.map(node, "routing", {"mode", "enable", "threshold", "thresholds"}, kRoutingExample);
  if (const YamlNode* mode = map.get("mode")) {
    const std::string& text =
        reader_.scalar(*mode, map.field_of("mode"), "static, minimal, ugal or aldfb");
    const auto known = std::find_if(std::begin(kModes), std::end(kModes),
                                    [&](const ModeName& m) { return m.name == text; });
    if (known == std::end(kModes)) {
      reader_.fail(*mode, map.field_of("mode"),
                   cat(text::quoted(text, 40),
                       " is no routing mode: give static, minimal, ugal "
                       "or aldfb"));
    }
    routing.set_mode(static_cast<uint32_t>(known->mode));
    remember("", "routing.mode", *mode);
    routing.set_enable(true);  // a mode is meant to route, as `asnctl routing set --mode`
  }
  if (const YamlNode* enable = map.get("enable")) {
    routing.set_enable(reader_.boolean(*enable, map.field_of("enable")));
  }
  if (const YamlNode* threshold = map.get("threshold")) {
    routing.set_threshold(static_cast<uint32_t>(
        reader_.integer(*threshold, map.field_of("threshold"), 0, UINT32_MAX)));
    remember("", "routing.threshold", *threshold);
  }
  if (const YamlNode* thresholds = map.get("thresholds")) {
    read_thresholds(*thresholds, map.field_of("thresholds"), "", routing);
  }
}

// A switch's own queue thresholds over the fabric's: T_h is tuned per board and port, while
// the mode and enable are the fabric's (every router must route alike).
void SpecReader::read_switch_routing(const YamlNode& node, const std::string& field,
                                     SwitchSpec& sw) {
  if (node.is_map()) {
    for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
      const YamlNode& key = node.children[i];
      if (key.scalar == "mode" || key.scalar == "enable") {
        reader_.fail(key, cat(field, ".", key.scalar),
                     cat("is the fabric's (every router routes alike): set it in the top-level "
                         "'routing:'; a switch's 'routing:' takes threshold and thresholds"));
      }
    }
  }
  MapView map = reader_.map(node, field, {"threshold", "thresholds"},
                            "'{threshold: 12, thresholds: {4: 8}}'");
  Routing& routing = *sw.mutable_routing();
  if (const YamlNode* threshold = map.get("threshold")) {
    // Every port's T_h for this switch: the fabric's per-port ones no longer apply.
    routing.set_threshold(static_cast<uint32_t>(
        reader_.integer(*threshold, map.field_of("threshold"), 0, UINT32_MAX)));
    routing.clear_thresholds();
    remember(sw.name(), "routing.threshold", *threshold);
  }
  if (const YamlNode* thresholds = map.get("thresholds")) {
    read_thresholds(*thresholds, map.field_of("thresholds"), sw.name(), routing);
  }
}

// {port: packets, ...}: keys are port numbers, so not a MapView of known keys.
void SpecReader::read_thresholds(const YamlNode& node, const std::string& field,
                                 const std::string& switch_name, Routing& routing) {
  if (node.is_null()) return;
  if (!node.is_map()) {
    reader_.fail(
        node, field,
        cat("expected ", kThresholdsExample, " (got ", schedule::detail::describe_kind(node), ")"));
  }
  std::map<uint32_t, Mark> seen;
  for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
    const YamlNode& key = node.children[i];
    const auto port = static_cast<uint32_t>(reader_.integer(key, field, 0, UINT32_MAX));
    const std::string port_field = cat(field, ".", port);
    if (auto first = seen.find(port); first != seen.end()) {
      reader_.fail(key, port_field, cat("given twice (first at line ", first->second.line, ")"));
    }
    seen[port] = key.mark;
    (*routing.mutable_thresholds())[port] =
        static_cast<uint32_t>(reader_.integer(node.children[i + 1], port_field, 0, UINT32_MAX));
    remember(switch_name, cat("routing.thresholds.", port), node.children[i + 1]);
  }
}

SwitchSpec SpecReader::read_switch(const YamlNode& node, const std::string& field,
                                   const schedule::FabricFile::Switch& shared,
                                   const FabricSpec& spec) {
  // read_fabric_file has checked the keys, the name, the endpoint and the timeout.
  MapView map =
      reader_.map(node, field, {"name", "router", "profile", "endpoint", "timeout", "routing"}, "");
  SwitchSpec sw;
  sw.set_fabric(spec.name());
  sw.set_name(shared.name);
  sw.set_endpoint(shared.endpoint);
  sw.set_timeout_ms(static_cast<uint32_t>(shared.timeout.count()));
  remember(sw.name(), "name", *map.get("name"));
  remember(sw.name(), "endpoint", *map.get("endpoint"));
  const YamlNode* router = map.get("router");
  if (router == nullptr) {
    reader_.fail(node, field,
                 cat("switch '", sw.name(), "' needs 'router:' (its router number, 0 .. N/k - 1)"));
  }
  sw.set_router(
      static_cast<uint32_t>(reader_.integer(*router, map.field_of("router"), 0, UINT32_MAX)));
  remember(sw.name(), "router", *router);
  const YamlNode* profile = map.get("profile");
  if (profile == nullptr) {
    reader_.fail(
        node, field,
        cat("switch '", sw.name(), "' needs 'profile:' (its board profile, e.g. emulated-64port)"));
  }
  sw.set_profile(reader_.scalar(*profile, map.field_of("profile"), "a board profile name"));
  remember(sw.name(), "profile", *profile);
  sw.set_terminals(spec.terminals());
  sw.set_k(spec.k());
  sw.set_double_rate(spec.double_rate());
  *sw.mutable_routing() = spec.routing();
  if (const YamlNode* routing = map.get("routing")) {
    read_switch_routing(*routing, map.field_of("routing"), sw);
  }
  return sw;
}

void SpecReader::remember(const std::string& switch_name, const std::string& key,
                          const YamlNode& node) {
  marks_[{switch_name, key}] = node.mark;
}

[[noreturn]] void SpecReader::fail_findings(const std::vector<detail::Finding>& findings) const {
  std::vector<Problem> problems;
  // The fabric's own setting found wrong for many switches (a threshold beyond their
  // queue depth) is one problem, naming the first switch and how many more.
  std::map<std::pair<std::string, std::string>, size_t> fabric_wide;  // field, message
  std::vector<size_t> also_at;  // by problem: the other switches it was found at
  for (const detail::Finding& finding : findings) {
    Problem problem;
    problem.file = reader_.file();
    problem.switch_name = finding.switch_name;
    problem.field = finding.key;
    problem.message = finding.message;
    // A switch's routing not written in its own entry is the fabric's: place the finding
    // there.
    auto mark = marks_.find({finding.switch_name, finding.key});
    if (!finding.switch_name.empty() && mark != marks_.end()) {
      problem.field =
          cat(index_field("switches", switch_index_.at(finding.switch_name)), ".", finding.key);
    }
    if (mark == marks_.end()) mark = marks_.find({"", finding.key});
    if (mark != marks_.end()) problem.mark = mark->second;
    if (!problem.switch_name.empty() && !problem.field.starts_with("switches")) {
      auto [first, fresh] =
          fabric_wide.emplace(std::pair(problem.field, problem.message), problems.size());
      if (!fresh) {
        ++also_at[first->second];
        continue;
      }
    }
    problems.push_back(std::move(problem));
    also_at.push_back(0);
  }
  for (size_t i = 0; i < problems.size(); ++i) {
    if (also_at[i] == 0) continue;
    problems[i].message +=
        cat(" (and at ", also_at[i], " more switch", also_at[i] == 1 ? "" : "es", ")");
  }
  // In file order, so that the first one is the first to fix.
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    return std::pair(a.mark.line, a.mark.column) < std::pair(b.mark.line, b.mark.column);
  });
  throw PlanError(std::move(problems));
}

}  // namespace

std::string routing_mode_name(uint32_t mode) {
  for (const ModeName& m : kModes) {
    if (static_cast<uint32_t>(m.mode) == mode) return std::string(m.name);
  }
  return cat("mode ", mode);
}

FabricSpec parse_fabric_spec(std::string_view text, std::string file) {
  const YamlNode root = schedule::detail::read_yaml(text, file, ParseLimits{});
  return SpecReader(std::move(file)).read(root);
}

FabricSpec load_fabric_spec(const std::string& path) {
  return parse_fabric_spec(
      schedule::read_limited(path, ParseLimits{}.max_file_bytes, "fabric file"), path);
}

std::vector<uint32_t> missing_routers(const FabricSpec& spec) {
  std::vector<uint32_t> missing;
  if (spec.k() == 0) return missing;
  std::vector<bool> held(spec.terminals() / spec.k(), false);
  for (const SwitchSpec& sw : spec.switches()) {
    if (sw.router() < held.size()) held[sw.router()] = true;
  }
  for (uint32_t r = 0; r < held.size(); ++r) {
    if (!held[r]) missing.push_back(r);
  }
  return missing;
}

const SwitchSpec* find_switch(const FabricSpec& spec, std::string_view name) {
  for (const SwitchSpec& sw : spec.switches()) {
    if (sw.name() == name) return &sw;
  }
  return nullptr;
}

}  // namespace asn::fabric

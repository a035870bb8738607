// parse_fabric_file and load_fabric_file: the fabric file's structure (fabric_file.hpp),
// read with the plan reader's YAML tree and typed access, so that its errors read alike.
#include "asn/schedule/fabric_file.hpp"

#include <optional>

#include "asn/schedule/detail/fabric_reader.hpp"
#include "asn/schedule/detail/reader.hpp"
#include "asn/schedule/detail/yaml_tree.hpp"
#include "asn/schedule/plan_file.hpp"
#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;
using detail::index_field;
using detail::MapView;
using detail::YamlNode;
using detail::YamlReader;

constexpr std::string_view kFabricExample =
    "'fabric: rack7' and 'switches: [{name: r0, endpoint: unix:/run/asn/asn0.sock}]'";
constexpr std::string_view kSwitchExample = "'{name: r0, endpoint: 10.0.0.2:7411, timeout: 2s}'";
constexpr std::string_view kDurationAdvice =
    " (write a number and a unit: '2s', '500 ms', '250 us', '100 ns')";

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A time as written in a fabric file: "500 us" as parse_length reads it, or seconds ("2s",
// "1.5 s"), which parse_length lacks (a slot is never that long). Rounded up to whole
// nanoseconds: a margin or a timeout must not come out shorter than written. On failure
// returns nullopt and sets `why`.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text, std::string& why) {
  std::string_view rest = trim_blanks(text);
  size_t i = 0;
  while (i < rest.size() && ((rest[i] >= '0' && rest[i] <= '9') || rest[i] == '.')) ++i;
  std::string_view number = rest.substr(0, i);
  std::string_view unit = trim_blanks(rest.substr(i));
  if (number.empty()) {
    why = "it does not start with a number";
    return std::nullopt;
  }
  if (unit.empty()) {
    why = "it has no unit";
    return std::nullopt;
  }
  if (unit == "cycles" || unit == "cycle") {
    why = "cycles need a board's clock; a fabric file gives times";
    return std::nullopt;
  }
  const bool seconds = unit == "s";
  if (!seconds && unit != "ms" && unit != "us" && unit != "\xc2\xb5s" && unit != "ns") {
    why = cat("unknown unit ", detail::quote(unit), " (units: s, ms, us, ns)");
    return std::nullopt;
  }
  // Seconds are read as milliseconds (the same digits) and counted at a clock 1000 times
  // faster: to_cycles at 1 GHz counts nanoseconds.
  std::optional<Length> length = parse_length(cat(number, " ", seconds ? "ms" : unit), &why);
  if (!length) return std::nullopt;
  const uint64_t clock_hz = seconds ? 1'000'000'000'000ull : 1'000'000'000ull;
  std::optional<Cycles> ns = to_cycles(*length, clock_hz, Rounding::kUp);
  // Past nanoseconds' range: saturated, for the caller's range check to refuse.
  constexpr auto kMax = static_cast<uint64_t>(std::chrono::nanoseconds::max().count());
  if (!ns || ns->cycles > kMax) return std::chrono::nanoseconds::max();
  return std::chrono::nanoseconds(static_cast<int64_t>(ns->cycles));
}

// "10 min" style limits for messages: the largest unit that divides the value.
std::string describe_limit(std::chrono::nanoseconds duration) {
  using namespace std::chrono;
  if (duration % minutes(1) == nanoseconds(0)) {
    return cat(duration_cast<minutes>(duration).count(), " min");
  }
  if (duration % seconds(1) == nanoseconds(0)) {
    return cat(duration_cast<seconds>(duration).count(), " s");
  }
  if (duration % milliseconds(1) == nanoseconds(0)) {
    return cat(duration_cast<milliseconds>(duration).count(), " ms");
  }
  return cat(duration.count(), " ns");
}

// Blanks and control characters: no gRPC target has them, and gRPC's own error for one
// comes only at the first call ("10.0.0.2 7411" for "10.0.0.2:7411").
bool printable(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

class FabricReader {
 public:
  explicit FabricReader(std::string file) : reader_(std::move(file), limits_) {}

  FabricFile read(const YamlNode& root);

 private:
  FabricFile::Switch read_switch(const YamlNode& node, const std::string& field,
                                 const std::vector<FabricFile::Switch>& earlier);
  std::chrono::nanoseconds duration(const YamlNode& node, const std::string& field,
                                    std::chrono::nanoseconds max);

  const ParseLimits limits_{};
  YamlReader reader_;
};

FabricFile FabricReader::read(const YamlNode& root) {
  if (root.is_null()) {
    reader_.fail_at({1, 1}, "", cat("the file is empty: a fabric file needs ", kFabricExample));
  }
  // topology and routing belong to the fabric spec (lib/fabric_spec), which checks them; a
  // load-schedule does not need them, so one file serves both.
  MapView top =
      reader_.map(root, "", {"fabric", "topology", "routing", "arm_margin", "switches", "locks"},
                  kFabricExample);
  FabricFile fabric;
  fabric.file = reader_.file();
  const YamlNode* name = top.get("fabric");
  if (name == nullptr) {
    reader_.fail(root, "fabric", "needs 'fabric: NAME' (a name such as 'rack7')");
  }
  fabric.name = reader_.name(*name, "fabric");

  const YamlNode* switches = top.get("switches");
  if (switches == nullptr) {
    reader_.fail(root, "switches", cat("needs 'switches:', a list such as ", kSwitchExample));
  }
  const auto& items = reader_.sequence(*switches, "switches", kSwitchExample);
  if (items.empty()) {
    reader_.fail(
        *switches, "switches",
        cat("lists no switch: give each switch's name and endpoint, e.g. ", kSwitchExample));
  }
  if (items.size() > limits_.max_switches) {
    reader_.fail(*switches, "switches",
                 cat("more than ", limits_.max_switches, " switches (max_switches)"));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    fabric.switches.push_back(read_switch(items[i], index_field("switches", i), fabric.switches));
  }
  if (const YamlNode* margin = top.get("arm_margin")) {
    fabric.arm_margin = duration(*margin, "arm_margin", kMaxArmMargin);
  }
  return fabric;
}

// A switch; `earlier` are the ones before it, which must have other names and endpoints.
FabricFile::Switch FabricReader::read_switch(const YamlNode& node, const std::string& field,
                                             const std::vector<FabricFile::Switch>& earlier) {
  // router, profile and routing: the fabric spec's, as topology and routing above.
  MapView map = reader_.map(
      node, field, {"name", "router", "profile", "endpoint", "timeout", "routing"}, kSwitchExample);
  FabricFile::Switch sw;
  sw.mark = node.mark;
  const YamlNode* name = map.get("name");
  if (name == nullptr) {
    reader_.fail(node, field,
                 cat("needs 'name:' (the switch's name in the plan), e.g. ", kSwitchExample));
  }
  sw.name = reader_.name(*name, map.field_of("name"));
  for (const auto& other : earlier) {
    if (other.name == sw.name) {
      reader_.fail(
          *name, map.field_of("name"),
          cat("switch '", sw.name, "' is listed twice (first at line ", other.mark.line, ")"));
    }
  }
  const YamlNode* endpoint = map.get("endpoint");
  if (endpoint == nullptr) {
    reader_.fail(node, field,
                 cat("switch '", sw.name,
                     "' needs 'endpoint:' (its asnd: unix:/run/asn/asn0.sock or host:port)"));
  }
  const std::string endpoint_field = map.field_of("endpoint");
  sw.endpoint =
      reader_.scalar(*endpoint, endpoint_field, "an endpoint such as unix:/run/asn/asn0.sock");
  if (sw.endpoint.empty()) {
    reader_.fail(*endpoint, endpoint_field,
                 "is empty: give the switch's asnd, unix:/run/asn/asn0.sock or host:port");
  }
  if (!printable(sw.endpoint)) {
    reader_.fail(*endpoint, endpoint_field,
                 cat(detail::quote(sw.endpoint),
                     " has a blank or control character: an endpoint is unix:/path or "
                     "host:port"));
  }
  // Two names for one asnd would load it with two switches' programs, the last one winning.
  for (const auto& other : earlier) {
    if (other.endpoint == sw.endpoint) {
      reader_.fail(*endpoint, endpoint_field,
                   cat(detail::quote(sw.endpoint), " is already the endpoint of switch '",
                       other.name, "' (line ", other.mark.line, "): each switch has its own asnd"));
    }
  }
  if (const YamlNode* timeout = map.get("timeout")) {
    // A sub-millisecond timeout rounds up: it is never shorter than written.
    std::chrono::nanoseconds ns = duration(*timeout, map.field_of("timeout"), kMaxSwitchTimeout);
    sw.timeout = std::chrono::ceil<std::chrono::milliseconds>(ns);
  }
  return sw;
}

std::chrono::nanoseconds FabricReader::duration(const YamlNode& node, const std::string& field,
                                                std::chrono::nanoseconds max) {
  const std::string& text = reader_.scalar(node, field, "a time such as '2s' or '50 ms'");
  std::string why;
  std::optional<std::chrono::nanoseconds> value = parse_duration(text, why);
  if (!value) {
    reader_.fail(node, field, cat(detail::quote(text), " is not a time: ", why, kDurationAdvice));
  }
  if (*value <= std::chrono::nanoseconds(0) || *value > max) {
    reader_.fail(node, field,
                 cat(detail::quote(text), " is out of range: give more than 0 and at most ",
                     describe_limit(max)));
  }
  return *value;
}

}  // namespace

const FabricFile::Switch* FabricFile::find_switch(std::string_view switch_name) const {
  for (const auto& sw : switches) {
    if (sw.name == switch_name) return &sw;
  }
  return nullptr;
}

namespace detail {

FabricFile read_fabric_file(const YamlNode& root, std::string file) {
  return FabricReader(std::move(file)).read(root);
}

}  // namespace detail

FabricFile parse_fabric_file(std::string_view text, std::string file) {
  detail::YamlNode root = detail::read_yaml(text, file, ParseLimits{});
  return detail::read_fabric_file(root, std::move(file));
}

FabricFile load_fabric_file(const std::string& path) {
  return parse_fabric_file(read_limited(path, ParseLimits{}.max_file_bytes, "fabric file"), path);
}

std::vector<std::string> missing_switches(const FabricFile& fabric, const Plan& plan) {
  std::vector<std::string> missing;
  for (const auto& switch_name : plan.switches) {
    if (fabric.find_switch(switch_name) == nullptr) missing.push_back(switch_name);
  }
  return missing;
}

}  // namespace asn::schedule

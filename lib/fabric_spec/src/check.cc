// check_spec: the fabric as the topology library and the board profiles see it.
#include "check.hpp"

#include <map>
#include <optional>
#include <string_view>

#include "asn/regmap/regs.hpp"
#include "asn/regmap/types.hpp"
#include "asn/text/text.hpp"
#include "asn/topology/error.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/schedule.hpp"

namespace asn::fabric::detail {
namespace {

using text::cat;

constexpr std::string_view kNameRule = "1-63 of a-z 0-9 . _ -, starting with a letter or digit";

std::string profile_names() {
  std::vector<std::string> names;
  for (const regmap::BoardProfile& board : regmap::register_map().boards) {
    names.emplace_back(board.name);
  }
  return text::join(names);
}

// The fabric's figures, or why N and k are no 2DFB.
struct Shape {
  std::optional<topology::Fabric> fabric;
  topology::ChannelMode channels = topology::ChannelMode::kDilated;
};

Shape check_topology(const FabricSpec& spec, std::vector<Finding>& findings) {
  Shape shape;
  shape.channels =
      spec.double_rate() ? topology::ChannelMode::kDoubleRate : topology::ChannelMode::kDilated;
  try {
    shape.fabric.emplace(spec.terminals(), spec.k());
  } catch (const topology::TopologyError& e) {
    findings.push_back(
        {"", cat("topology.", e.field()),
         cat("N = ", spec.terminals(), ", k = ", spec.k(), " is not a 2DFB: ", e.what())});
    return shape;
  }
  if (spec.routing().mode() == static_cast<uint32_t>(RoutingMode::kStatic) &&
      spec.routing().enable()) {
    if (auto why = topology::StaticSchedule::unsupported(*shape.fabric)) {
      findings.push_back({"", "routing.mode",
                          cat("static needs the conflict-free static schedule, and this fabric "
                              "has none (",
                              *why, "): give minimal, ugal or aldfb")});
    }
  }
  return shape;
}

// One switch against its profile: ports for the radix, destination entries for the routers,
// queue depth for the thresholds.
void check_profile(const SwitchSpec& sw, const Shape& shape, std::vector<Finding>& findings) {
  const regmap::BoardProfile* board = regmap::register_map().board(sw.profile());
  if (board == nullptr) {
    findings.push_back(
        {sw.name(), "profile",
         cat("unknown board profile '", sw.profile(), "': give one of ", profile_names())});
    return;
  }
  const uint32_t ports = board->cap(regmap::Cap::kPorts);
  if (shape.fabric) {
    const uint32_t radix = shape.fabric->radix(shape.channels);
    if (radix > ports) {
      std::string hint;
      const uint32_t double_rate = shape.fabric->radix(topology::ChannelMode::kDoubleRate);
      if (shape.channels == topology::ChannelMode::kDilated && double_rate <= ports) {
        hint = cat(" (with double-rate channels it would need ", double_rate,
                   ": topology.channels: double-rate)");
      }
      findings.push_back({sw.name(), "profile",
                          cat("'", sw.profile(), "' has ", ports, " ports and router ", sw.router(),
                              " needs ", radix, " (", sw.k(),
                              " terminals and its channels, 004 Eq 9): give a profile with at "
                              "least ",
                              radix, " ports", hint)});
    }
    const uint32_t entries = board->cap(regmap::Cap::kRouteEntries);
    if (shape.fabric->routers() > entries) {
      findings.push_back(
          {sw.name(), "profile",
           cat("'", sw.profile(), "' routes to ", entries,
               " routers (id.cap_route_entries) and the fabric has ", shape.fabric->routers(),
               ": give a profile with at least ", shape.fabric->routers(), " route entries")});
    }
  }
  const uint32_t depth = board->cap(regmap::Cap::kQueueDepth);
  const Routing& routing = sw.routing();
  if (routing.has_threshold() && routing.threshold() > depth) {
    findings.push_back({sw.name(), "routing.threshold",
                        cat(routing.threshold(), " packets is beyond the queue depth of '",
                            sw.profile(), "', ", depth, ": give 0 to ", depth)});
  }
  for (const auto& [port, packets] :
       std::map(routing.thresholds().begin(), routing.thresholds().end())) {
    const std::string key = cat("routing.thresholds.", port);
    if (port >= ports) {
      findings.push_back({sw.name(), key,
                          cat("port ", port, " does not exist on '", sw.profile(),
                              "': its ports are 0 to ", ports - 1)});
    } else if (packets > depth) {
      findings.push_back({sw.name(), key,
                          cat(packets, " packets is beyond the queue depth of '", sw.profile(),
                              "', ", depth, ": give 0 to ", depth)});
    }
  }
}

}  // namespace

bool is_key_segment(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name.front())) return false;
  for (char c : name) {
    if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::vector<Finding> check_spec(const FabricSpec& spec) {
  std::vector<Finding> findings;
  if (!is_key_segment(spec.name())) {
    findings.push_back(
        {"", "fabric",
         cat(text::quoted(spec.name(), 40), " cannot name a fabric in etcd: use ", kNameRule)});
  }
  const Shape shape = check_topology(spec, findings);
  std::map<uint32_t, std::string> router_holder;
  std::map<std::string, std::string> endpoint_holder;
  for (const SwitchSpec& sw : spec.switches()) {
    if (!is_key_segment(sw.name())) {
      findings.push_back(
          {sw.name(), "name",
           cat(text::quoted(sw.name(), 40), " cannot name a switch in etcd: use ", kNameRule)});
    }
    if (shape.fabric && sw.router() >= shape.fabric->routers()) {
      findings.push_back(
          {sw.name(), "router",
           cat(sw.router(), " is outside the fabric: N = ", spec.terminals(), ", k = ", spec.k(),
               " has routers 0 to ", shape.fabric->routers() - 1)});
    } else if (auto [at, fresh] = router_holder.emplace(sw.router(), sw.name()); !fresh) {
      findings.push_back({sw.name(), "router",
                          cat(sw.router(), " is already the router of switch '", at->second,
                              "': give each switch its own, 0 to ", shape.fabric->routers() - 1)});
    }
    if (auto [at, fresh] = endpoint_holder.emplace(sw.endpoint(), sw.name()); !fresh) {
      findings.push_back(
          {sw.name(), "endpoint",
           cat(text::quoted(sw.endpoint(), 40), " is already the endpoint of switch '", at->second,
               "': each switch has its own asnd")});
    }
    check_profile(sw, shape, findings);
  }
  std::set<std::string, std::less<>> names;
  for (const SwitchSpec& sw : spec.switches()) names.insert(sw.name());
  check_lock_map(spec.locks(), &names, findings);
  return findings;
}

}  // namespace asn::fabric::detail

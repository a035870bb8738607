// The fabric file of `asnctl load-schedule --fabric fabric.yaml PLAN`: which asnd serves
// each switch of a fabric plan, and how far ahead the common start frame is chosen.
//
//   fabric: rack7
//   switches:
//     - {name: r0, endpoint: unix:/run/asn/asn0.sock}
//     - {name: r1, endpoint: 10.0.0.2:7411, timeout: 2s}   # per-switch RPC timeout
//   arm_margin: 50 ms   # optional, default 100 ms
//
// The same file is the fabric spec of `asnctl fabric apply` (lib/fabric_spec,
// docs/fabric-file.md): its keys 'topology' and 'routing', and each switch's 'router',
// 'profile' and 'routing', are accepted here and left to that reader
// (asn::fabric::parse_fabric_spec), which reads this part through
// detail::read_fabric_file (asn/schedule/detail/fabric_reader.hpp).
//
// Durations are lengths as in a plan ('500 us', '2 ms'; parse_length) or seconds ('2s',
// '1.5 s'); cycles are refused, since no board clock is at hand. Errors are PlanErrors with
// the file, line, column, the key and what would be accepted, as the plan reader's.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "asn/schedule/error.hpp"
#include "asn/schedule/plan.hpp"

namespace asn::schedule {

inline constexpr std::chrono::milliseconds kDefaultSwitchTimeout{2000};
// How far ahead of the latest time a switch reported the common frame is chosen. asnctl
// also keeps it at least twice the slowest StagePlan round trip.
inline constexpr std::chrono::nanoseconds kDefaultArmMargin = std::chrono::milliseconds(100);
// Beyond these a value is taken for a typo ('50 s' for '50 ms'); both are far past any
// real RPC or arming time.
inline constexpr std::chrono::milliseconds kMaxSwitchTimeout = std::chrono::minutes(10);
inline constexpr std::chrono::nanoseconds kMaxArmMargin = std::chrono::seconds(60);

struct FabricFile {
  std::string name;
  struct Switch {
    std::string name;      // as in the plan's 'switches:'
    std::string endpoint;  // a gRPC target: unix:/path, host:port, ...
    std::chrono::milliseconds timeout{kDefaultSwitchTimeout};  // a sub-ms one rounds up
    Mark mark;                                                 // the list item
  };
  std::vector<Switch> switches;  // in file order; names and endpoints distinct
  std::chrono::nanoseconds arm_margin{kDefaultArmMargin};
  std::string file;  // the file it was read from, for messages

  const Switch* find_switch(std::string_view switch_name) const;  // nullptr if not listed
};

// Parses fabric file text; `file` names it in errors. Throws PlanError (kInvalidArgument)
// for: no switches, a switch without a name or endpoint, an empty endpoint, a name or an
// endpoint listed twice, an unknown key, a bad duration (or one out of range).
FabricFile parse_fabric_file(std::string_view text, std::string file = "<fabric>");

// Reads and parses a fabric file (bounded as a plan file is: ParseLimits' defaults).
FabricFile load_fabric_file(const std::string& path);

// The plan's switches (Plan::switches, in plan order) that the fabric file does not list;
// empty when it lists them all (or the plan is a single switch's). Switches of the file
// that the plan does not use are not an error: one fabric file can serve several plans.
std::vector<std::string> missing_switches(const FabricFile& fabric, const Plan& plan);

}  // namespace asn::schedule

// The fabric file read, checked as a whole and split into what etcd holds (issue 25): the one
// reader asnctl (`fabric apply`, `fabric diff`) and asnd (its part of the fabric) share.
//
//   fabric: rack7                                   # a name: [a-z0-9][a-z0-9._-]{0,62}
//   topology: {terminals: 64, k: 4, channels: dilated}   # channels: dilated | double-rate
//   routing: {mode: aldfb, enable: true, threshold: 12, thresholds: {4: 8}}
//   arm_margin: 100 ms                              # load-schedule --fabric's, optional
//   switches:
//     - {name: r0, router: 0, profile: emulated-64port, endpoint: unix:/run/asn/r0.sock}
//     - {name: r1, router: 1, profile: emulated-64port, endpoint: 10.0.0.2:7411, timeout: 2s,
//        routing: {thresholds: {4: 6}}}            # this switch's own T_h over the fabric's
//   locks:                                          # the lock map (asn/fabric_spec/lock_map.hpp)
//     owners: [{switch: r0, slots: 0-2047}, {switch: r1, slots: 2048-4095}]
//
// The words are asnctl's: `fabric set --terminals --k --router --channels`, `routing set
// --mode static|minimal|ugal|aldfb --enable|--disable --threshold [--port]`. routing.mode
// given without enable routes (enable: true), as `routing set --mode` does; routing left out
// places the tables and routes nothing. threshold is T_h for every port, thresholds T_h for
// the ports named; a switch's own routing takes only those two (its threshold replaces the
// fabric's per-port ones), the mode being the fabric's. Format: docs/fabric-file.md.
//
// The file is a superset of load-schedule's fabric file (asn/schedule/fabric_file.hpp), whose
// reader reads the shared part here: one file serves both. Keys for TDM plans or stripe groups
// are refused: not supported yet.
//
// Errors are asn::schedule::PlanErrors: file, line, column, the field ("switches[3].router"),
// the switch, and what would be accepted; every finding of the checks as a whole is listed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "asn/fabric/v1/fabric.pb.h"
#include "asn/schedule/error.hpp"

namespace asn::fabric {

using FabricSpec = v1::FabricSpec;
using SwitchSpec = v1::SwitchSpec;
using Routing = v1::Routing;

// Routing.mode values, as route.config.mode and asn.state.v1.FabricState.mode.
enum class RoutingMode : uint32_t { kStatic = 0, kMinimal = 1, kUgal = 2, kAldfb = 3 };
// "static", "minimal", "ugal", "aldfb"; "mode N" for a number outside them.
std::string routing_mode_name(uint32_t mode);

// Reads and checks fabric file text; `file` names it in errors. Throws schedule::PlanError
// (kInvalidArgument) for a malformed file (the first problem) or for every finding of the
// checks: N and k not a 2DFB; a router number repeated or not within 0..N/k-1; a switch or
// fabric name that is not an etcd key segment; an endpoint repeated; an unknown profile; a
// profile with fewer ports than the router's radix or a destination table shorter than
// N/k; a threshold beyond a profile's queue depth or for a port it lacks; static routing
// on a fabric without a conflict-free static schedule.
FabricSpec parse_fabric_spec(std::string_view text, std::string file = "<fabric>");
// Reads `path` (bounded as a plan file is) and parses it.
FabricSpec load_fabric_spec(const std::string& path);

// Router numbers 0..N/k-1 that no switch holds, ascending. Not an error: a fabric can be
// built (and applied) a switch at a time.
std::vector<uint32_t> missing_routers(const FabricSpec& spec);
// The switch called `name`, or nullptr.
const SwitchSpec* find_switch(const FabricSpec& spec, std::string_view name);

// The key/value pairs the fabric is stored as under `prefix` (e.g. "/asn"):
//   <prefix>/fabrics/<name>/fabric                    the FabricSpec
//   <prefix>/fabrics/<name>/switches/<switch>/desired that switch's SwitchSpec
//   <prefix>/fabrics/<name>/locks                     the lock map, when the spec has one
//                                                     (number its epochs first: lock_map.hpp)
// each as canonical JSON: proto field names, every field printed, map keys ascending, one
// line. The same spec always gives byte-identical documents.
std::map<std::string, std::string> etcd_documents(const FabricSpec& spec, std::string_view prefix);
std::string fabric_key(std::string_view prefix, std::string_view fabric);
std::string switch_key(std::string_view prefix, std::string_view fabric, std::string_view name);
// What the switch's asnd reports (asn.fabric.v1.SwitchStatus): under its lease, and the
// same without one, kept once the lease is gone (what it said last).
std::string status_key(std::string_view prefix, std::string_view fabric, std::string_view name);
std::string last_status_key(std::string_view prefix, std::string_view fabric,
                            std::string_view name);
// A schedule switched on every switch together (asn.fabric.v1.Activation): the one being
// loaded, and what each switch did for it.
std::string activation_key(std::string_view prefix, std::string_view fabric);
std::string activation_report_key(std::string_view prefix, std::string_view fabric,
                                  std::string_view name);
std::string to_json(const google::protobuf::Message& document);
// The wall clock the documents' *_unix_ms fields are stamped with and deadlines compared to
// (milliseconds since the Unix epoch).
int64_t now_unix_ms();

// Documents back from etcd. Throw std::invalid_argument naming what is wrong: not JSON of
// the message, an unknown field, a switch or fabric without a name, a document that fails
// the checks above (a SwitchSpec as the one switch of its fabric): written by hand, or by an
// asnctl that knows other profiles.
SwitchSpec parse_switch_document(std::string_view json);
FabricSpec parse_fabric_document(std::string_view json);

// What writing `wanted` over `stored` (both etcd_documents' form) would change.
struct FabricDiff {
  struct Change {
    std::string key;
    std::vector<std::string> fields;  // "routing.mode: minimal -> aldfb", in field order
  };
  std::vector<std::string> added;    // keys, ascending
  std::vector<Change> changed;       // by key, ascending
  std::vector<std::string> removed;  // keys, ascending
  size_t unchanged = 0;

  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};
FabricDiff diff(const std::map<std::string, std::string>& stored,
                const std::map<std::string, std::string>& wanted);
// As `terraform plan` shows it: "+ key", "~ key" with a line per field, "- key", then
// "N to add, N to change, N to remove, N unchanged." ("no changes (N documents)" if none).
std::string render_diff(const FabricDiff& diff);

}  // namespace asn::fabric

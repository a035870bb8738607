// asnd.yaml's locks section (issue 9; the quotas of issue 24):
//
//   locks:
//     default_ttl: 15s             # a session's lease when its client asks for none
//     max_ttl: 3600s               # the longest lease a client may ask for
//     grace_period: 15s            # after a restart, how long sessions have to re-attach
//     placement: first-fit         # or software-prefix:P1,P2,...
//     software_entries: 1048576    # the software domain's table
//     max_waiting: 100000          # Lock calls waiting at once
//     max_sessions_per_principal: 1024
//     max_waiting_per_principal: 4096
//     max_waiting_per_session: 1024
//     max_entries_per_session: 131072
//     max_entries_per_principal: 262144
//     max_switch_entries_per_principal: 4096
//     batch_reply_queue_bytes: 8388608   # a Batch stream's results waiting to be written
#include <fmt/format.h>

#include <string_view>

#include "asn/text/text.hpp"
#include "config_keys.hpp"

namespace asn::config_keys {

namespace {

void validate_placement(const std::string& where, const std::string& placement) {
  constexpr std::string_view kPrefix = "software-prefix:";
  if (placement == "first-fit") return;
  if (placement.rfind(kPrefix, 0) == 0 && placement.size() > kPrefix.size()) return;
  bad(where, fmt::format("{} is not a placement: write first-fit, or software-prefix:P1,P2,... "
                         "(files whose id starts with a prefix live in the software domain)",
                         text::quoted(placement)));
}

}  // namespace

std::map<std::string, Key> with_locks_keys(std::map<std::string, Key> table) {
  table.insert({
      {"locks.default_ttl", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.default_ttl_s = seconds(w, n, 1, 3600);
       }}},
      {"locks.max_ttl", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_ttl_s = seconds(w, n, 1, 86400);
       }}},
      {"locks.grace_period", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.grace_period_s = seconds(w, n, 0, 3600);
       }}},
      {"locks.placement", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.placement = scalar(w, n);
         validate_placement(w, c.locks.placement);
       }}},
      {"locks.software_entries", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.software_entries = number(w, n, 1, 1u << 24);
       }}},
      {"locks.max_waiting", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_waiting = number(w, n, 1, 1000000);
       }}},
      {"locks.max_sessions_per_principal",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_sessions_per_principal = number(w, n, 1, 1000000);
       }}},
      {"locks.max_waiting_per_principal",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_waiting_per_principal = number(w, n, 1, 1000000);
       }}},
      {"locks.max_waiting_per_session", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_waiting_per_session = number(w, n, 1, 1000000);
       }}},
      {"locks.max_entries_per_session", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_entries_per_session = number(w, n, 1, 100000000);
       }}},
      {"locks.max_entries_per_principal",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_entries_per_principal = number(w, n, 1, 100000000);
       }}},
      {"locks.max_switch_entries_per_principal",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.max_switch_entries_per_principal = number(w, n, 1, 100000000);
       }}},
      // From 64 KiB (gRPC's initial HTTP/2 window; below it a stream would pause its reads
      // on almost every message while a write is in flight) to 1 GiB.
      {"locks.batch_reply_queue_bytes", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.locks.batch_reply_queue_bytes = number(w, n, 64u << 10, 1u << 30);
       }}},
  });
  return table;
}

}  // namespace asn::config_keys

// asnd.yaml's fabric section (issue 25):
//
//   fabric:
//     name: rack7                  # the fabric, as `fabric:` in the fabric file
//     switch: r3                   # this switch, as in the fabric file's switches
//     status_ttl: 10s              # the lease of the status asnd reports
//     etcd:
//       endpoints: [10.0.0.1:2379, 10.0.0.2:2379, 10.0.0.3:2379]
//       prefix: /asn
//       ca_file: /etc/asn/etcd-ca.pem      # TLS (or https:// endpoints)
//       cert_file: /etc/asn/etcd-client.pem
//       key_file: /etc/asn/etcd-client.key
//       user: asnd                         # etcd authentication
//       password_file: /etc/asn/etcd-password
//       timeout: 2s
#include <fmt/format.h>

#include <regex>

#include "asn/text/text.hpp"
#include "config_keys.hpp"

namespace asn {

namespace config_keys {

namespace {

// A name as the fabric file allows it: it is a segment of etcd keys.
void validate_member_name(const std::string& where, const std::string& name) {
  static const std::regex kName("[a-z0-9][a-z0-9._-]{0,62}");
  if (!std::regex_match(name, kName)) {
    bad(where, fmt::format("{} is not a name of 1-63 lower-case letters, digits, '.', '_' or '-' "
                           "starting with a letter or digit",
                           text::quoted(name)));
  }
}

std::string readable_file(const std::string& where, const YAML::Node& node) {
  std::string path = scalar(where, node);
  validate_absolute(where, path);
  return path;
}

std::vector<std::string> endpoints(const std::string& where, const YAML::Node& node) {
  std::vector<std::string> out;
  auto add = [&](std::string endpoint) {
    std::string address = endpoint;
    for (std::string_view scheme : {"https://", "http://"}) {
      if (address.starts_with(scheme)) address = address.substr(scheme.size());
    }
    validate_tcp(where, address);
    out.push_back(std::move(endpoint));
  };
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) add(scalar(where, item));
  } else {
    // "a:2379,b:2379", as etcdctl's --endpoints
    std::string text = scalar(where, node);
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      add(text.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (out.empty()) bad(where, "no endpoint: list the etcd members' client URLs (host:2379)");
  return out;
}

}  // namespace

std::map<std::string, Key> with_fabric_keys(std::map<std::string, Key> table) {
  table.insert({
      {"fabric.name", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.name = scalar(w, n);
         validate_member_name(w, c.fabric.name);
       }}},
      {"fabric.switch", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.switch_name = scalar(w, n);
         validate_member_name(w, c.fabric.switch_name);
       }}},
      {"fabric.status_ttl", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.status_ttl_s = seconds(w, n, 2, 300);
       }}},
      {"fabric.etcd.endpoints", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.endpoints = endpoints(w, n);
       }}},
      {"fabric.etcd.prefix", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.prefix = scalar(w, n);
         if (!c.fabric.etcd.prefix.starts_with('/') || c.fabric.etcd.prefix.ends_with('/') ||
             c.fabric.etcd.prefix.size() > 128) {
           bad(w,
               fmt::format("{} is not a key prefix such as /asn (a leading '/', no trailing one)",
                           text::quoted(c.fabric.etcd.prefix)));
         }
       }}},
      {"fabric.etcd.ca_file", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.ca_file = readable_file(w, n);
       }}},
      {"fabric.etcd.cert_file", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.cert_file = readable_file(w, n);
       }}},
      {"fabric.etcd.key_file", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.key_file = readable_file(w, n);
       }}},
      {"fabric.etcd.user", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.user = scalar(w, n);
       }}},
      {"fabric.etcd.password_file", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.password_file = readable_file(w, n);
       }}},
      {"fabric.etcd.timeout", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.fabric.etcd.timeout_ms = seconds(w, n, 1, 60) * 1000;
       }}},
  });
  return table;
}

}  // namespace config_keys

void validate_fabric(const FabricConfig& fabric, const std::string& where) {
  const FabricEtcdConfig& etcd = fabric.etcd;
  const bool any = !fabric.name.empty() || !fabric.switch_name.empty() || !etcd.endpoints.empty();
  if (!any) return;
  auto missing = [&](const char* key, const char* what) {
    config_keys::bad(where + key,
                     fmt::format("is missing: a fabric member needs fabric.name, fabric.switch "
                                 "and fabric.etcd.endpoints ({})",
                                 what));
  };
  if (fabric.name.empty()) missing("fabric.name", "the fabric's name in its fabric file");
  if (fabric.switch_name.empty()) missing("fabric.switch", "this switch's name in the fabric file");
  if (etcd.endpoints.empty()) missing("fabric.etcd.endpoints", "the etcd members, host:2379");
  if (etcd.cert_file.empty() != etcd.key_file.empty()) {
    config_keys::bad(where + "fabric.etcd",
                     "cert_file and key_file go together: give both (a client certificate and "
                     "its key) or neither");
  }
  if (etcd.user.empty() != etcd.password_file.empty()) {
    config_keys::bad(where + "fabric.etcd",
                     "user and password_file go together: give both or neither");
  }
}

}  // namespace asn

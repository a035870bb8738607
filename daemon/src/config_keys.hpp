// The readers and checks of asnd.yaml's keys (config.cc), shared with the sections that
// live in files of their own (config_locks.cc, config_fabric.cc). Each throws asn::Error
// kInvalidArgument with `where` ("<file>:<line>: <key>") in front.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>

#include "config.hpp"

namespace asn::config_keys {

// One key of the file: how to read it into the config.
struct Key {
  std::function<void(Config&, const std::string& where, const YAML::Node&)> read;
};

[[noreturn]] void bad(const std::string& where, const std::string& reason);
std::string scalar(const std::string& where, const YAML::Node& node);
unsigned number(const std::string& where, const YAML::Node& node, unsigned min, unsigned max);
// "30s", "2m" or a plain number of seconds.
unsigned seconds(const std::string& where, const YAML::Node& node, unsigned min, unsigned max);
bool boolean(const std::string& where, const YAML::Node& node);
void validate_absolute(const std::string& where, const std::string& path);
void validate_tcp(const std::string& where, const std::string& address);

// listen.tls's files (config_tls.cc): readable, of at most kMaxPemBytes, and parsed by OpenSSL
// as certificates or a private key without a passphrase.
enum class PemKind { kCertificates, kPrivateKey };
void check_pem_file(const std::string& where, const std::string& path, PemKind kind);

// The locks section's keys (locks.*), added to the table of config.cc.
std::map<std::string, Key> with_locks_keys(std::map<std::string, Key> table);
// The fabric section's keys (fabric.*), added to the table of config.cc.
std::map<std::string, Key> with_fabric_keys(std::map<std::string, Key> table);

}  // namespace asn::config_keys

namespace asn {
// The fabric section as a whole (run after the file is read): all of it or none.
void validate_fabric(const FabricConfig& fabric, const std::string& where);
}  // namespace asn

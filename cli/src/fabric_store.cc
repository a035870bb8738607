#include "fabric_store.hpp"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "asn/fabric_spec/lock_map.hpp"
#include "errors.hpp"
#include "output.hpp"

namespace asnctl {

namespace {

std::vector<std::string> split_endpoints(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string endpoint = text.substr(start, comma - start);
    if (endpoint.empty()) throw UsageError("--etcd: an empty endpoint in '" + text + "'");
    out.push_back(endpoint);
    start = comma + 1;
  }
  return out;
}

std::string read_password(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("password_file: cannot read " + path);
  std::string password;
  std::getline(in, password);
  return password;
}

void read_context_file(const std::string& path, FabricContext& context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw UsageError(strprintf("%s:%d: not a fabric context file: %s", path.c_str(),
                               e.mark.line + 1, e.msg.c_str()));
  }
  if (!root.IsMap()) throw UsageError(path + ": expected keys such as 'endpoints: [host:2379]'");
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    const YAML::Node& value = item.second;
    const std::string where =
        strprintf("%s:%d: %s", path.c_str(), item.first.Mark().line + 1, key.c_str());
    try {
      if (key == "endpoints") {
        if (value.IsSequence()) {
          for (const auto& e : value) context.etcd.endpoints.push_back(e.as<std::string>());
        } else {
          context.etcd.endpoints = split_endpoints(value.as<std::string>());
        }
      } else if (key == "prefix") {
        context.prefix = value.as<std::string>();
      } else if (key == "ca_file") {
        context.etcd.ca_file = value.as<std::string>();
      } else if (key == "cert_file") {
        context.etcd.cert_file = value.as<std::string>();
      } else if (key == "key_file") {
        context.etcd.key_file = value.as<std::string>();
      } else if (key == "user") {
        context.etcd.user = value.as<std::string>();
      } else if (key == "password_file") {
        context.etcd.password = read_password(value.as<std::string>());
      } else {
        throw UsageError(where +
                         ": unknown key (keys: endpoints, prefix, ca_file, cert_file, "
                         "key_file, user, password_file)");
      }
    } catch (const YAML::Exception&) {
      throw UsageError(where + ": expected a value");
    }
  }
  if (context.etcd.endpoints.empty()) throw UsageError(path + ": endpoints: none given");
}

asn::fabric::v1::SwitchStatus parse_status(const std::string& json) {
  asn::fabric::v1::SwitchStatus status;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer asnd may report more
  if (!google::protobuf::util::JsonStringToMessage(json, &status, options).ok()) {
    status.set_condition("failed");
    status.set_error("its status in etcd is not a status this asnctl can read");
  }
  return status;
}

}  // namespace

void EtcdFlags::add_to(CLI::App* sub) {
  sub->add_option("--etcd", etcd,
                  "etcd endpoints (a:2379,b:2379) or a fabric context file (default: $ASN_FABRIC)");
  sub->add_option("--prefix", prefix, "The key prefix of asn's keys in etcd (default: /asn)");
}

FabricContext resolve_context(const EtcdFlags& flags) {
  std::string where = flags.etcd;
  if (where.empty()) {
    const char* env = std::getenv("ASN_FABRIC");
    if (env != nullptr) where = env;
  }
  if (where.empty()) {
    throw UsageError(
        "which etcd? give --etcd HOST:2379[,HOST:2379...] or a context file, or set ASN_FABRIC");
  }
  FabricContext context;
  struct stat st {};
  if (::stat(where.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    read_context_file(where, context);
  } else if (where.find('/') != std::string::npos && where.find(':') == std::string::npos) {
    throw UsageError("--etcd: " + where + " is neither a readable context file nor host:port");
  } else {
    context.etcd.endpoints = split_endpoints(where);
  }
  if (!flags.prefix.empty()) context.prefix = flags.prefix;
  if (context.prefix.empty() || context.prefix.front() != '/' || context.prefix.back() == '/') {
    throw UsageError("--prefix: '" + context.prefix + "' is not a key prefix such as /asn");
  }
  return context;
}

std::unique_ptr<asn::etcd::Client> open_etcd(const FabricContext& context, double timeout_seconds) {
  asn::etcd::Options options = context.etcd;
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  return std::make_unique<asn::etcd::Client>(options);
}

StoredFabric read_fabric(asn::etcd::Client& client, const std::string& prefix,
                         const std::string& name) {
  StoredFabric out;
  out.name = name;
  const std::string base = prefix + "/fabrics/" + name + "/";
  const asn::etcd::Range range = client.get_prefix(base);
  out.revision = range.revision;
  for (const asn::etcd::KeyValue& kv : range.kvs) {
    const std::string rest = kv.key.substr(base.size());
    if (rest == "fabric") {
      out.documents[kv.key] = kv.value;
      out.fabric_revision = kv.mod_revision;
      asn::fabric::v1::FabricSpec spec;
      if (google::protobuf::util::JsonStringToMessage(kv.value, &spec).ok()) out.spec = spec;
      continue;
    }
    if (rest == "locks") {
      out.documents[kv.key] = kv.value;
      out.locks_revision = kv.mod_revision;
      try {
        out.locks = asn::fabric::parse_lock_map_document(kv.value);
      } catch (const std::invalid_argument& e) {
        // Damaged: its highest epoch still bounds the next (epochs never go down), and a map
        // with no owners makes every slot of the next one a move.
        out.locks_damage = e.what();
        asn::fabric::v1::LockMap read;
        if (google::protobuf::util::JsonStringToMessage(kv.value, &read).ok()) {
          asn::fabric::v1::LockMap floor;
          uint64_t epoch = read.epoch();
          for (const auto& a : read.assignments()) epoch = std::max(epoch, a.epoch());
          floor.set_epoch(epoch);
          out.locks = floor;
        }
      }
      continue;
    }
    constexpr std::string_view kSwitches = "switches/";
    if (!rest.starts_with(kSwitches)) continue;
    const size_t slash = rest.find('/', kSwitches.size());
    if (slash == std::string::npos) continue;
    const std::string switch_name = rest.substr(kSwitches.size(), slash - kSwitches.size());
    const std::string leaf = rest.substr(slash + 1);
    SwitchEntry& entry = out.switches[switch_name];
    entry.name = switch_name;
    if (leaf == "desired") {
      out.documents[kv.key] = kv.value;
      entry.desired_revision = kv.mod_revision;
      asn::fabric::v1::SwitchSpec spec;
      if (google::protobuf::util::JsonStringToMessage(kv.value, &spec).ok()) entry.spec = spec;
    } else if (leaf == "status") {
      entry.status = parse_status(kv.value);
    } else if (leaf == "last-status") {
      entry.last_status = parse_status(kv.value);
    }
  }
  return out;
}

std::vector<std::string> fabric_names(asn::etcd::Client& client, const std::string& prefix) {
  const std::string base = prefix + "/fabrics/";
  std::vector<std::string> names;
  for (const asn::etcd::KeyValue& kv : client.get_prefix(base, 0, /*keys_only=*/true).kvs) {
    const std::string rest = kv.key.substr(base.size());
    if (rest.ends_with("/fabric") && rest.find('/') == rest.size() - 7) {
      names.push_back(rest.substr(0, rest.size() - 7));
    }
  }
  return names;
}

int report_etcd_error(const asn::etcd::Error& e) {
  std::fprintf(stderr, "asnctl: %s\n", e.what());
  if (e.unreachable()) {
    std::fprintf(stderr,
                 "hint: are the etcd members running, and is --etcd (or ASN_FABRIC) their client "
                 "URLs (host:2379)?\n");
    return kExitUnreachable;
  }
  return kExitFailed;
}

}  // namespace asnctl

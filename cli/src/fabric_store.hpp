// asnctl's side of the fabric on etcd (issue 25): which etcd to use (--etcd, or
// $ASN_FABRIC: a list of endpoints or a context file), and the fabric as etcd holds it (the
// fabric document, each switch's desired part and what its asnd reports).
//
// A context file (YAML), for fabrics with TLS or etcd users:
//   endpoints: [10.0.0.1:2379, 10.0.0.2:2379, 10.0.0.3:2379]
//   prefix: /asn
//   ca_file: /etc/asn/etcd-ca.pem
//   cert_file: /etc/asn/etcd-client.pem
//   key_file: /etc/asn/etcd-client.key
//   user: operator
//   password_file: /etc/asn/etcd-password
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asn/fabric/v1/fabric.pb.h"
#include "asn/fabric/v1/status.pb.h"
#include "etcd_client.hpp"

namespace asnctl {

// The options every `asnctl fabric` command against etcd takes.
struct EtcdFlags {
  std::string etcd;    // --etcd: endpoints "a:2379,b:2379" or a context file
  std::string prefix;  // --prefix; default /asn (or the context file's)
  void add_to(CLI::App* sub);
};

struct FabricContext {
  asn::etcd::Options etcd;
  std::string prefix = "/asn";
};

// --etcd, else $ASN_FABRIC; throws UsageError when neither is given or a context file is bad.
FabricContext resolve_context(const EtcdFlags& flags);
// A client of the context's etcd whose calls have asnctl's --timeout.
std::unique_ptr<asn::etcd::Client> open_etcd(const FabricContext& context, double timeout_seconds);

// One switch as etcd holds it.
struct SwitchEntry {
  std::string name;
  std::optional<asn::fabric::v1::SwitchSpec> spec;  // its desired part (none: not in the fabric)
  int64_t desired_revision = 0;                     // the part's mod_revision
  std::optional<asn::fabric::v1::SwitchStatus> status;       // leased: its asnd is alive
  std::optional<asn::fabric::v1::SwitchStatus> last_status;  // what it reported last
};

struct StoredFabric {
  std::string name;
  int64_t revision = 0;         // the store's revision the read saw
  int64_t fabric_revision = 0;  // the fabric document's mod_revision (0: never applied)
  std::optional<asn::fabric::v1::FabricSpec> spec;
  std::optional<asn::fabric::v1::LockMap> locks;  // the lock map, with its epochs
  int64_t locks_revision = 0;                     // its mod_revision (0: none)
  // Why the lock map etcd holds was refused ("" when it was not): `locks` then holds only
  // its highest epoch, if even that could be read.
  std::string locks_damage;
  std::map<std::string, SwitchEntry> switches;   // by name
  std::map<std::string, std::string> documents;  // the desired keys, the fabric and lock map
};

// Reads everything of fabric `name` in one read (one revision).
StoredFabric read_fabric(asn::etcd::Client& client, const std::string& prefix,
                         const std::string& name);
// The fabrics under `prefix`.
std::vector<std::string> fabric_names(asn::etcd::Client& client, const std::string& prefix);

// An etcd failure as asnctl reports it: "asnctl: cannot reach etcd ..." (exit 3) or
// "asnctl: ..." (exit 1).
int report_etcd_error(const asn::etcd::Error& e);

}  // namespace asnctl

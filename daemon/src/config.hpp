// asnd's configuration: /etc/asn/asnd.yaml (path overridable), then command-line flags on
// top. A bad file is refused with the file, the line, the key and the reason.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace asn {

inline constexpr const char* kDefaultConfigPath = "/etc/asn/asnd.yaml";
// A configuration file larger than this is refused before it is parsed.
inline constexpr size_t kMaxConfigBytes = 1u << 20;

// Mutual TLS on the TCP listener (listen.tls): asnd's certificate and key, and the CA whose
// signature a client's certificate must carry. All three or none.
struct TlsConfig {
  std::string cert;       // PEM: asnd's certificate (its chain may follow)
  std::string key;        // PEM: its private key
  std::string client_ca;  // PEM: the CA certificate(s) that sign client certificates
  bool enabled() const { return !cert.empty() || !key.empty() || !client_ca.empty(); }
};

// The PEM text of the three files, checked: each readable, of at most kMaxPemBytes, parsed
// (certificates, a private key), and the key the certificate's.
struct TlsMaterial {
  std::string cert_chain;
  std::string private_key;
  std::string client_ca;
};
inline constexpr size_t kMaxPemBytes = 1u << 20;

// Reads and checks the files of `tls`; throws asn::Error (kInvalidArgument) naming the key
// ("listen.tls.key"), the file and what is wrong with it. `where` goes in front.
TlsMaterial load_tls(const TlsConfig& tls, const std::string& where = "");

struct ListenConfig {
  std::string socket = "/run/asn/asnd.sock";
  uint32_t socket_mode = 0660;
  std::string socket_group;  // empty: the group of the process
  std::string tcp;           // "host:port"; empty: no TCP listener
  std::string metrics;       // "host:port" serving GET /metrics (Prometheus); empty: none
  bool tcp_admin = false;    // TCP callers get the admin role (else lock client)
  TlsConfig tls;             // set: the TCP listener serves mutual TLS only
  // What one listener gives its clients (the unit's LimitNOFILE leaves room for all of it).
  unsigned max_connections = 512;            // open connections per listener
  unsigned max_connections_per_peer = 64;    // per uid (Unix) or per address (TCP)
  unsigned max_streams_per_connection = 32;  // concurrent calls on one connection
  unsigned max_threads = 32;                 // threads serving the listener's calls
  unsigned max_streams = 64;                 // concurrent streaming replies (dumps) per listener
  unsigned stream_write_timeout_s = 30;      // a stream whose client stops reading is cancelled
};

// The emulated backend: the software model of the board, its memory in a file.
struct EmulatedBackendConfig {
  std::string board = "asn0";
  std::string profile = "netfpga-1g";
  std::string shm_dir = "/dev/shm/asn";  // a directory only asnd's user may change
  // Where the emulated storage servers behind the member ports keep the striped files
  // (issue 10); empty: <state_dir>/storage (emulated_storage_dir()).
  std::string storage_dir;
};

// The kernel backend: a board asn.ko has bound, reached over its generic netlink family
// "asn" (docs/driver.md).
struct KernelBackendConfig {
  std::string device;  // the board's PCI address ("0000:03:00.0"); empty: the only board
};

struct BackendConfig {
  std::string kind = "emulated";  // "emulated" or "kernel"
  EmulatedBackendConfig emulated;
  KernelBackendConfig kernel;
  bool reset_board = false;  // from the command line only: start from a fresh board
};

// The lock service (issue 9): leases, the restart grace period and where files are placed.
struct LocksConfig {
  unsigned default_ttl_s = 15;   // a session's lease when the client asks for none
  unsigned max_ttl_s = 3600;     // the longest lease a client may ask for
  unsigned grace_period_s = 15;  // after a restart, how long sessions have to re-attach
  // "first-fit": a new file goes to the switch while its table has room, else to the
  // software domain. "software-prefix:P1,P2,...": files whose id starts with one of the
  // prefixes live in the software domain, the others on the switch.
  std::string placement = "first-fit";
  unsigned software_entries = 1u << 20;  // capacity of the software domain's table
  unsigned max_waiting = 100000;         // Lock calls waiting at once
  // Quotas, so that no client shuts the others out. A principal is who owns sessions: a
  // certificate subject, a uid, or on plain TCP the client's address.
  unsigned max_sessions_per_principal = 1024;
  unsigned max_waiting_per_principal = 4096;
  unsigned max_waiting_per_session = 1024;
  // Lock entries (held ranges, and the ranges of waiting requests): what the tables are
  // short of. A session may use two requests of the most ranges (65,536 each); a principal
  // a quarter of the software domain's default table, and a quarter of the switch table of
  // the largest board (16,384 entries): over that share its new files go to the software
  // domain.
  unsigned max_entries_per_session = 131072;
  unsigned max_entries_per_principal = 262144;
  unsigned max_switch_entries_per_principal = 4096;
  // A Batch stream stops reading ops while more results than this wait to be written to its
  // client, so that a client that does not read its replies cannot grow asnd's memory without
  // end (services/lock_batch.cc). 8 MiB: four of the largest replies (2 MiB each).
  unsigned batch_reply_queue_bytes = 8u << 20;
};

// The fabric (issue 25): with a `fabric:` section asnd is the agent of one switch of a
// fabric whose desired state lives in etcd; without one (name empty) nothing changes.
struct FabricEtcdConfig {
  std::vector<std::string> endpoints;  // host:port, http:// or https:// URLs
  std::string prefix = "/asn";         // every key of asn's lives under it
  std::string ca_file;                 // TLS: the members' CA
  std::string cert_file;               // TLS client certificate (etcd --client-cert-auth)
  std::string key_file;
  std::string user;  // etcd authentication; the password in password_file
  std::string password_file;
  unsigned timeout_ms = 2000;  // per call
};

struct FabricConfig {
  std::string name;         // the fabric, as in the fabric file
  std::string switch_name;  // this switch, as in the fabric file's switches
  FabricEtcdConfig etcd;
  unsigned status_ttl_s = 10;  // the lease of the status this asnd reports
  bool enabled() const { return !name.empty(); }
};

struct Config {
  std::string log_level = "info";
  std::string state_dir = "/var/lib/asn";
  ListenConfig listen;
  BackendConfig backend;
  LocksConfig locks;
  FabricConfig fabric;
  // Keys that still work but have a new name: logged at start ("<file>:<line>: ...").
  std::vector<std::string> deprecations;
  // Every key the file gives, by its full (current) name, with its value as YAML text: what
  // SIGHUP compares to tell which keys changed (reload.cc).
  std::map<std::string, std::string> given;
  // False when load_config() found no file at the default path and the defaults stand:
  // `--check-config` must not call a file that is not there valid.
  bool from_file = true;
};

// Values given on the command line; each one set overrides the file.
struct ConfigOverrides {
  std::optional<std::string> log_level;
  std::optional<std::string> state_dir;
  std::optional<std::string> socket_path;
  std::optional<std::string> tcp_listen;
  std::optional<std::string> backend;
  std::optional<std::string> board_name;
  std::optional<std::string> board_profile;
  std::optional<std::string> shm_dir;
  std::optional<std::string> device;  // --device: backend.kernel.device
  bool reset_board = false;
};

// backend.emulated.storage_dir, or its default under state_dir.
std::string emulated_storage_dir(const Config& config);

// Loads `path`. A missing file is an error only when `required` (the path was given
// explicitly); otherwise the defaults stand. Only a regular file of at most
// kMaxConfigBytes is read. Throws asn::Error (kInvalidArgument) with
// "<path>:<line>: <key>: <reason>".
Config load_config(const std::string& path, bool required);

// The same for text already read (`path` names it in messages).
Config parse_config(const std::string& text, const std::string& path);

// Applies the overrides and validates the result (the same checks as the file's values);
// throws asn::Error naming the flag.
void apply_overrides(Config& config, const ConfigOverrides& overrides);

// Checks shared by the file and the flags; each throws asn::Error with `where` in front.
void validate_log_level(const std::string& where, const std::string& level);
void validate_board_name(const std::string& where, const std::string& name);
// A PCI address in the kernel's form: domain:bus:device.function, "0000:03:00.0".
void validate_pci_address(const std::string& where, const std::string& bdf);

}  // namespace asn

#include "config.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "asn/regmap/types.hpp"
#include "asn/text/text.hpp"
#include "config_keys.hpp"
#include "error.hpp"

namespace asn {

// The readers and checks of keys, shared with the sections in files of their own
// (config_locks.cc, config_fabric.cc) through config_keys.hpp.
namespace config_keys {

constexpr std::array kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
constexpr std::array kBackends = {"emulated", "kernel"};

[[noreturn]] void bad(const std::string& where, const std::string& reason) {
  throw Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", where, reason));
}

template <typename List>
std::string join(const List& list) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

void validate_absolute(const std::string& where, const std::string& path) {
  if (path.empty() || path[0] != '/') {
    bad(where, fmt::format("{} is not an absolute path", text::quoted(path)));
  }
  if (path.size() > 4096) bad(where, fmt::format("a path of {} bytes", path.size()));
}

void validate_socket_path(const std::string& where, const std::string& path) {
  validate_absolute(where, path);
  // sun_path holds 108 bytes including the terminating NUL.
  if (path.size() > 107) bad(where, fmt::format("{} is longer than 107 bytes", text::quoted(path)));
}

// host:port only, where host is a name, an IPv4 address or a bracketed IPv6 address: gRPC
// would also take "unix:..." or "unix-abstract:..." here, and a Unix socket must never get
// a TCP listener's rules.
void validate_tcp(const std::string& where, const std::string& address) {
  if (address.empty()) return;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    bad(where, fmt::format("{} is not host:port (e.g. 127.0.0.1:50051)", text::quoted(address)));
  }
  const std::string host = address.substr(0, colon);
  const bool bracketed =
      host.size() > 2 && host.front() == '[' && host.back() == ']' &&
      std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
      });
  const bool plain = std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
  if (!bracketed && !plain) {
    bad(where, fmt::format("{} is not host:port: the host must be a name, an IPv4 address or "
                           "an [IPv6] address (a Unix socket belongs in listen.socket)",
                           text::quoted(address)));
  }
  unsigned port = 0;
  std::string_view digits(address.data() + colon + 1, address.size() - colon - 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    bad(where,
        fmt::format("port {} of {} is not 1-65535", text::quoted(digits), text::quoted(address)));
  }
}

void validate_backend(const std::string& where, const std::string& backend) {
  if (std::find(kBackends.begin(), kBackends.end(), backend) == kBackends.end()) {
    bad(where,
        fmt::format("unknown backend {} (backends: {})", text::quoted(backend), join(kBackends)));
  }
}

void validate_profile(const std::string& where, const std::string& profile) {
  std::vector<std::string_view> names;
  for (const auto& b : regmap::register_map().boards) {
    if (b.name == profile) return;
    names.push_back(b.name);
  }
  bad(where,
      fmt::format("unknown board profile {} (profiles: {})", text::quoted(profile), join(names)));
}

void validate_group(const std::string& where, const std::string& group) {
  if (group.empty()) return;
  if (getgrnam(group.c_str()) == nullptr) {
    bad(where, fmt::format("no group named {}", text::quoted(group)));
  }
}

std::string scalar(const std::string& where, const YAML::Node& node) {
  if (!node.IsScalar()) bad(where, "expected a single value");
  return node.Scalar();
}

unsigned number(const std::string& where, const YAML::Node& node, unsigned min, unsigned max) {
  const std::string text = scalar(where, node);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    bad(where, fmt::format("{} is not a whole number from {} to {}", text::quoted(text), min, max));
  }
  return value;
}

// "30s", "2m" or a plain number of seconds.
unsigned seconds(const std::string& where, const YAML::Node& node, unsigned min, unsigned max) {
  std::string text = scalar(where, node);
  unsigned scale = 1;
  if (!text.empty() && (text.back() == 's' || text.back() == 'm')) {
    scale = text.back() == 'm' ? 60 : 1;
    text.pop_back();
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max / scale ||
      value * scale < min) {
    bad(where, fmt::format("{} is not a duration from {} s to {} s (e.g. 30s, 2m)",
                           text::quoted(scalar(where, node)), min, max));
  }
  return value * scale;
}

bool boolean(const std::string& where, const YAML::Node& node) {
  std::string text = scalar(where, node);
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  bad(where, fmt::format("{} is not true or false", text::quoted(text)));
}

const std::map<std::string, Key>& keys() {
  static const std::map<std::string, Key> table = with_fabric_keys(with_locks_keys({
      {"log_level", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.log_level = scalar(w, n);
         validate_log_level(w, c.log_level);
       }}},
      {"state_dir", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.state_dir = scalar(w, n);
         validate_absolute(w, c.state_dir);
       }}},
      {"listen.socket", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.socket = scalar(w, n);
         validate_socket_path(w, c.listen.socket);
       }}},
      {"listen.socket_mode", {[](Config& c, const std::string& w, const YAML::Node& n) {
         std::string text = scalar(w, n);
         unsigned mode = 0;
         auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
         if (ec != std::errc() || end != text.data() + text.size() || mode > 0777) {
           bad(w, fmt::format("{} is not an octal file mode such as \"0660\"", text::quoted(text)));
         }
         c.listen.socket_mode = mode;
       }}},
      {"listen.socket_group", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.socket_group = scalar(w, n);
         validate_group(w, c.listen.socket_group);
       }}},
      {"listen.tcp", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.tcp = n.IsNull() ? "" : scalar(w, n);
         validate_tcp(w, c.listen.tcp);
       }}},
      {"listen.metrics", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.metrics = n.IsNull() ? "" : scalar(w, n);
         validate_tcp(w, c.listen.metrics);
       }}},
      {"listen.max_connections", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.max_connections = number(w, n, 1, 65536);
       }}},
      {"listen.max_connections_per_peer",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.max_connections_per_peer = number(w, n, 1, 65536);
       }}},
      {"listen.max_streams_per_connection",
       {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.max_streams_per_connection = number(w, n, 1, 1024);
       }}},
      {"listen.max_threads", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.max_threads = number(w, n, 2, 1024);
       }}},
      {"listen.max_streams", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.max_streams = number(w, n, 1, 65536);
       }}},
      {"listen.stream_write_timeout", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.stream_write_timeout_s = seconds(w, n, 1, 3600);
       }}},
      {"listen.tcp_admin", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.tcp_admin = boolean(w, n);
       }}},
      {"listen.tls.cert", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.tls.cert = scalar(w, n);
         check_pem_file(w, c.listen.tls.cert, PemKind::kCertificates);
       }}},
      {"listen.tls.key", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.tls.key = scalar(w, n);
         check_pem_file(w, c.listen.tls.key, PemKind::kPrivateKey);
       }}},
      {"listen.tls.client_ca", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.listen.tls.client_ca = scalar(w, n);
         check_pem_file(w, c.listen.tls.client_ca, PemKind::kCertificates);
       }}},
      {"backend.kind", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.kind = scalar(w, n);
         validate_backend(w, c.backend.kind);
       }}},
      {"backend.emulated.board", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.emulated.board = scalar(w, n);
         validate_board_name(w, c.backend.emulated.board);
       }}},
      {"backend.emulated.profile", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.emulated.profile = scalar(w, n);
         validate_profile(w, c.backend.emulated.profile);
       }}},
      {"backend.emulated.shm_dir", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.emulated.shm_dir = scalar(w, n);
         validate_absolute(w, c.backend.emulated.shm_dir);
       }}},
      {"backend.emulated.storage_dir", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.emulated.storage_dir = scalar(w, n);
         validate_absolute(w, c.backend.emulated.storage_dir);
       }}},
      {"backend.kernel.device", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend.kernel.device = n.IsNull() ? "" : scalar(w, n);
         if (!c.backend.kernel.device.empty()) validate_pci_address(w, c.backend.kernel.device);
       }}},
  }));
  return table;
}

// Keys of earlier releases, still read, under their new names.
const std::map<std::string, std::string>& renamed_keys() {
  static const std::map<std::string, std::string> table = {
      {"backend.board", "backend.emulated.board"},
      {"backend.profile", "backend.emulated.profile"},
      {"backend.shm_dir", "backend.emulated.shm_dir"},
  };
  return table;
}

// A value as YAML on one line (lists and maps in flow style), for Config::given.
std::string one_line(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetSeqFormat(YAML::Flow);
  out.SetMapFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

void read_map(Config& config, const std::string& path, const YAML::Node& map,
              const std::string& prefix) {
  for (const auto& item : map) {
    const YAML::Node& key_node = item.first;
    if (!key_node.IsScalar()) {
      bad(fmt::format("{}:{}", path, key_node.Mark().line + 1), "a key must be a plain name");
    }
    std::string key = prefix + key_node.Scalar();
    const std::string where =
        fmt::format("{}:{}: {}", path, key_node.Mark().line + 1, text::escaped(key, 64));
    if (auto renamed = renamed_keys().find(key); renamed != renamed_keys().end()) {
      config.deprecations.push_back(fmt::format("{}:{}: {} is deprecated: write {}", path,
                                                key_node.Mark().line + 1, key, renamed->second));
      key = renamed->second;
    }
    auto it = keys().find(key);
    if (it != keys().end()) {
      it->second.read(config, where, item.second);
      config.given[key] = one_line(item.second);
      continue;
    }
    bool is_section = std::any_of(keys().begin(), keys().end(), [&](const auto& kv) {
      return kv.first.rfind(key + ".", 0) == 0;
    });
    if (is_section) {
      if (!item.second.IsMap()) bad(where, "expected a section of keys");
      read_map(config, path, item.second, key + ".");
      continue;
    }
    std::vector<std::string> known;
    for (const auto& [k, _] : keys()) known.push_back(k);
    // A misspelt old name suggests the new one.
    std::vector<std::string> old_names;
    for (const auto& [old_name, _] : renamed_keys()) old_names.push_back(old_name);
    if (auto old = text::closest(key, old_names); old && !text::closest(key, known)) {
      bad(where, fmt::format("unknown key (did you mean '{}'?)", renamed_keys().at(*old)));
    }
    bad(where, fmt::format("unknown key{}", text::did_you_mean(key, known)));
  }
}

// Each backend's own keys belong to it: a flag meant for the other backend is a mistake
// worth stopping for. The file's backend.emulated section is let stand under the kernel
// backend (a packaged asnd.yaml carries one), but not backend.kernel.device under the
// emulated backend, where it would silently mean nothing.
void validate_backend_keys(const Config& config, const ConfigOverrides& o) {
  if (config.backend.kind == "kernel") {
    const std::pair<const char*, bool> emulated_flags[] = {
        {"--board", o.board_name.has_value()},
        {"--profile", o.board_profile.has_value()},
        {"--shm-dir", o.shm_dir.has_value()}};
    for (const auto& [flag, given] : emulated_flags) {
      if (given) {
        bad(flag,
            "only for the emulated backend, and the backend is kernel (a real board is "
            "chosen with --device; its profile is what its registers say)");
      }
    }
    // The emulated board resets before asnd reads it; a real board is reset through its
    // registers once asnd runs.
    if (o.reset_board) {
      bad("--reset-board",
          "only for the emulated backend, and the backend is kernel: reset a real board "
          "with `asnctl board reset` once asnd runs");
    }
  } else if (!config.backend.kernel.device.empty()) {
    bad(o.device ? "--device" : "backend.kernel.device",
        fmt::format("only for the kernel backend, and the backend is {} (set backend.kind: "
                    "kernel or --backend kernel)",
                    config.backend.kind));
  }
}

}  // namespace config_keys

using namespace config_keys;

void validate_log_level(const std::string& where, const std::string& level) {
  if (std::find(kLogLevels.begin(), kLogLevels.end(), level) == kLogLevels.end()) {
    bad(where,
        fmt::format("unknown log level {} (levels: {})", text::quoted(level), join(kLogLevels)));
  }
}

void validate_board_name(const std::string& where, const std::string& name) {
  bool ok =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
      });
  if (!ok)
    bad(where, fmt::format("board name {} must be 1-64 of A-Z a-z 0-9 - _", text::quoted(name)));
}

void validate_pci_address(const std::string& where, const std::string& bdf) {
  // dddd:bb:dd.f in lower-case hex, as sysfs and asn.ko's device list write it: the
  // address is compared as text with what the driver reports.
  auto hex_at = [&](size_t pos, size_t len) {
    return std::all_of(bdf.begin() + pos, bdf.begin() + pos + len, [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch)) || (ch >= 'a' && ch <= 'f');
    });
  };
  const bool ok = bdf.size() == 12 && bdf[4] == ':' && bdf[7] == ':' && bdf[10] == '.' &&
                  hex_at(0, 4) && hex_at(5, 2) && hex_at(8, 2) && bdf[11] >= '0' &&
                  bdf[11] <= '7' && (bdf[8] <= '1');
  if (!ok) {
    bad(where, fmt::format("{} is not a PCI address: write domain:bus:device.function in "
                           "lower-case hex, e.g. 0000:03:00.0 (`asnd --list-boards` lists them)",
                           text::quoted(bdf)));
  }
}

namespace {

// The file's text: only a regular file (not a FIFO that would block, a device, a directory
// or /proc/self/mem), only up to kMaxConfigBytes, opened without blocking.
std::optional<std::string> read_config_file(const std::string& path, bool required) {
  auto cannot = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{}: cannot read the configuration file: {}", path, why));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (!required && errno == ENOENT) return std::nullopt;
    if (errno == ENOENT) {
      cannot(
          fmt::format("it does not exist (give an existing file with --config, or leave "
                      "--config out to start from {} or the defaults)",
                      kDefaultConfigPath));
    }
    cannot(std::strerror(errno));
  }
  std::string text;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  std::string error = ok ? "" : std::strerror(errno);
  if (ok && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= kMaxConfigBytes) {
    // Read one byte more than the limit: a file that grew since fstat is still caught.
    text.resize(kMaxConfigBytes + 1);
    size_t done = 0;
    for (;;) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {  // /proc/self/mem, a file on a failing disk
        ok = false;
        error = std::strerror(errno);
      }
      if (n <= 0) break;
      done += static_cast<size_t>(n);
      if (done == text.size()) break;
    }
    text.resize(done);
  }
  ::close(fd);
  if (!ok) cannot(error);
  if (!S_ISREG(st.st_mode)) cannot("not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigBytes || text.size() > kMaxConfigBytes) {
    cannot(fmt::format("it is larger than {} KiB", kMaxConfigBytes / 1024));
  }
  return text;
}

}  // namespace

Config load_config(const std::string& path, bool required) {
  const std::optional<std::string> text = read_config_file(path, required);
  if (text) return parse_config(*text, path);
  Config defaults;
  defaults.from_file = false;
  return defaults;
}

Config parse_config(const std::string& text, const std::string& path) {
  Config config;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (root.IsNull()) return config;  // an empty file: the defaults
  if (!root.IsMap()) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{}:1: expected keys such as 'log_level: info'", path));
  }
  read_map(config, path, root, "");
  // The three files together: all given, and the key the certificate's.
  if (config.listen.tls.enabled()) load_tls(config.listen.tls, path + ": ");
  validate_fabric(config.fabric, path + ": ");
  return config;
}

std::string emulated_storage_dir(const Config& config) {
  const std::string& dir = config.backend.emulated.storage_dir;
  return dir.empty() ? (std::filesystem::path(config.state_dir) / "storage").string() : dir;
}

void apply_overrides(Config& config, const ConfigOverrides& o) {
  if (o.log_level) {
    validate_log_level("--log-level", *o.log_level);
    config.log_level = *o.log_level;
  }
  if (o.state_dir) {
    validate_absolute("--state-dir", *o.state_dir);
    config.state_dir = *o.state_dir;
  }
  if (o.socket_path) {
    validate_socket_path("--socket", *o.socket_path);
    config.listen.socket = *o.socket_path;
  }
  if (o.tcp_listen) {
    validate_tcp("--tcp", *o.tcp_listen);
    config.listen.tcp = *o.tcp_listen;
  }
  if (o.backend) {
    validate_backend("--backend", *o.backend);
    config.backend.kind = *o.backend;
  }
  if (o.board_name) {
    validate_board_name("--board", *o.board_name);
    config.backend.emulated.board = *o.board_name;
  }
  if (o.board_profile) {
    validate_profile("--profile", *o.board_profile);
    config.backend.emulated.profile = *o.board_profile;
  }
  if (o.shm_dir) {
    validate_absolute("--shm-dir", *o.shm_dir);
    config.backend.emulated.shm_dir = *o.shm_dir;
  }
  if (o.device) {
    validate_pci_address("--device", *o.device);
    config.backend.kernel.device = *o.device;
  }
  config.backend.reset_board = o.reset_board;
  validate_backend_keys(config, o);
  if (config.listen.tls.enabled() && config.listen.tcp.empty()) {
    bad("listen.tls",
        "mutual TLS is for the TCP listener, and there is none: set listen.tcp "
        "(or --tcp HOST:PORT), or remove listen.tls");
  }
}

}  // namespace asn

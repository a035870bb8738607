#include "config.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "asn/regmap/types.hpp"
#include "error.hpp"
#include "suggest.hpp"

namespace asn {

namespace {

constexpr std::array kLogLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
constexpr std::array kBackends = {"emulated"};

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
  if (path.empty() || path[0] != '/') bad(where, fmt::format("'{}' is not an absolute path", path));
}

void validate_socket_path(const std::string& where, const std::string& path) {
  validate_absolute(where, path);
  // sun_path holds 108 bytes including the terminating NUL.
  if (path.size() > 107) bad(where, fmt::format("'{}' is longer than 107 bytes", path));
}

void validate_tcp(const std::string& where, const std::string& address) {
  if (address.empty()) return;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    bad(where, fmt::format("'{}' is not host:port (e.g. 127.0.0.1:50051)", address));
  }
  unsigned port = 0;
  std::string_view digits(address.data() + colon + 1, address.size() - colon - 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535) {
    bad(where, fmt::format("port '{}' of '{}' is not 1-65535", digits, address));
  }
}

void validate_backend(const std::string& where, const std::string& backend) {
  if (std::find(kBackends.begin(), kBackends.end(), backend) == kBackends.end()) {
    bad(where, fmt::format("unknown backend '{}' (backends: {}; the kernel backend arrives "
                           "with the asn.ko driver)",
                           backend, join(kBackends)));
  }
}

void validate_profile(const std::string& where, const std::string& profile) {
  std::vector<std::string_view> names;
  for (const auto& b : regmap::register_map().boards) {
    if (b.name == profile) return;
    names.push_back(b.name);
  }
  bad(where, fmt::format("unknown board profile '{}' (profiles: {})", profile, join(names)));
}

void validate_group(const std::string& where, const std::string& group) {
  if (group.empty()) return;
  if (getgrnam(group.c_str()) == nullptr) bad(where, fmt::format("no group named '{}'", group));
}

// One key of the file: how to read it into the config.
struct Key {
  std::function<void(Config&, const std::string& where, const YAML::Node&)> read;
};

std::string scalar(const std::string& where, const YAML::Node& node) {
  if (!node.IsScalar()) bad(where, "expected a single value");
  return node.Scalar();
}

bool boolean(const std::string& where, const YAML::Node& node) {
  std::string text = scalar(where, node);
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  bad(where, fmt::format("'{}' is not true or false", text));
}

const std::map<std::string, Key>& keys() {
  static const std::map<std::string, Key> table = {
      {"log_level", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.log_level = scalar(w, n);
         validate_log_level(w, c.log_level);
       }}},
      {"state_dir", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.state_dir = scalar(w, n);
         validate_absolute(w, c.state_dir);
       }}},
      {"listen.socket", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.socket_path = scalar(w, n);
         validate_socket_path(w, c.socket_path);
       }}},
      {"listen.socket_mode", {[](Config& c, const std::string& w, const YAML::Node& n) {
         std::string text = scalar(w, n);
         unsigned mode = 0;
         auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
         if (ec != std::errc() || end != text.data() + text.size() || mode > 0777) {
           bad(w, fmt::format("'{}' is not an octal file mode such as \"0660\"", text));
         }
         c.socket_mode = mode;
       }}},
      {"listen.socket_group", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.socket_group = scalar(w, n);
         validate_group(w, c.socket_group);
       }}},
      {"listen.tcp", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.tcp_listen = n.IsNull() ? "" : scalar(w, n);
         validate_tcp(w, c.tcp_listen);
       }}},
      {"listen.tcp_admin",
       {[](Config& c, const std::string& w, const YAML::Node& n) { c.tcp_admin = boolean(w, n); }}},
      {"backend.kind", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.backend = scalar(w, n);
         validate_backend(w, c.backend);
       }}},
      {"backend.board", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.board_name = scalar(w, n);
         validate_board_name(w, c.board_name);
       }}},
      {"backend.profile", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.board_profile = scalar(w, n);
         validate_profile(w, c.board_profile);
       }}},
      {"backend.shm_dir", {[](Config& c, const std::string& w, const YAML::Node& n) {
         c.shm_dir = scalar(w, n);
         validate_absolute(w, c.shm_dir);
       }}},
  };
  return table;
}

void read_map(Config& config, const std::string& path, const YAML::Node& map,
              const std::string& prefix) {
  for (const auto& item : map) {
    const YAML::Node& key_node = item.first;
    std::string key = prefix + key_node.Scalar();
    std::string where = fmt::format("{}:{}: {}", path, key_node.Mark().line + 1, key);
    auto it = keys().find(key);
    if (it != keys().end()) {
      it->second.read(config, where, item.second);
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
    bad(where, fmt::format("unknown key{}", did_you_mean(key, known)));
  }
}

}  // namespace

void validate_log_level(const std::string& where, const std::string& level) {
  if (std::find(kLogLevels.begin(), kLogLevels.end(), level) == kLogLevels.end()) {
    bad(where, fmt::format("unknown log level '{}' (levels: {})", level, join(kLogLevels)));
  }
}

void validate_board_name(const std::string& where, const std::string& name) {
  bool ok =
      !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
      });
  if (!ok) bad(where, fmt::format("board name '{}' must be 1-64 of A-Z a-z 0-9 - _", name));
}

Config load_config(const std::string& path, bool required) {
  Config config;
  std::ifstream in(path);
  if (!in) {
    if (!required && !std::filesystem::exists(path)) return config;
    throw Error(
        ErrorCode::kInvalidArgument,
        fmt::format("{}: cannot read the configuration file: {}", path, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
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
  return config;
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
    config.socket_path = *o.socket_path;
  }
  if (o.tcp_listen) {
    validate_tcp("--tcp", *o.tcp_listen);
    config.tcp_listen = *o.tcp_listen;
  }
  if (o.backend) {
    validate_backend("--backend", *o.backend);
    config.backend = *o.backend;
  }
  if (o.board_name) {
    validate_board_name("--board", *o.board_name);
    config.board_name = *o.board_name;
  }
  if (o.board_profile) {
    validate_profile("--profile", *o.board_profile);
    config.board_profile = *o.board_profile;
  }
  if (o.shm_dir) {
    validate_absolute("--shm-dir", *o.shm_dir);
    config.shm_dir = *o.shm_dir;
  }
  config.reset_board = o.reset_board;
}

}  // namespace asn

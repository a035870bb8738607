#include "config_reload.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

namespace asn {
namespace {

// The keys a reload takes, each with how it copies its value into the running configuration.
// The lock manager reads these under its mutex (LockManager::set_limits); the rest of the
// configuration is read once, when asnd starts: listeners, the backend, the state directory,
// the fabric, the lock tables' sizes and placement, and the grace of a restart.
using Copy = std::function<void(Config&, const Config&)>;

const std::map<std::string, Copy>& reloadable() {
  static const std::map<std::string, Copy> keys = {
      {"log_level", [](Config& to, const Config& from) { to.log_level = from.log_level; }},
      {"locks.default_ttl",
       [](Config& to, const Config& from) { to.locks.default_ttl_s = from.locks.default_ttl_s; }},
      {"locks.max_ttl",
       [](Config& to, const Config& from) { to.locks.max_ttl_s = from.locks.max_ttl_s; }},
      {"locks.max_waiting",
       [](Config& to, const Config& from) { to.locks.max_waiting = from.locks.max_waiting; }},
      {"locks.max_sessions_per_principal",
       [](Config& to, const Config& from) {
         to.locks.max_sessions_per_principal = from.locks.max_sessions_per_principal;
       }},
      {"locks.max_waiting_per_principal",
       [](Config& to, const Config& from) {
         to.locks.max_waiting_per_principal = from.locks.max_waiting_per_principal;
       }},
      {"locks.max_waiting_per_session",
       [](Config& to, const Config& from) {
         to.locks.max_waiting_per_session = from.locks.max_waiting_per_session;
       }},
      {"locks.max_entries_per_session",
       [](Config& to, const Config& from) {
         to.locks.max_entries_per_session = from.locks.max_entries_per_session;
       }},
      {"locks.max_entries_per_principal",
       [](Config& to, const Config& from) {
         to.locks.max_entries_per_principal = from.locks.max_entries_per_principal;
       }},
      {"locks.max_switch_entries_per_principal",
       [](Config& to, const Config& from) {
         to.locks.max_switch_entries_per_principal = from.locks.max_switch_entries_per_principal;
       }},
  };
  return keys;
}

// The keys a command-line flag sets (apply_overrides): the file's value does not count.
std::map<std::string, std::string> flags_given(const ConfigOverrides& o) {
  std::map<std::string, std::string> flags;
  if (o.log_level) flags["log_level"] = "--log-level";
  if (o.state_dir) flags["state_dir"] = "--state-dir";
  if (o.socket_path) flags["listen.socket"] = "--socket";
  if (o.tcp_listen) flags["listen.tcp"] = "--tcp";
  if (o.backend) flags["backend.kind"] = "--backend";
  if (o.board_name) flags["backend.emulated.board"] = "--board";
  if (o.board_profile) flags["backend.emulated.profile"] = "--profile";
  if (o.shm_dir) flags["backend.emulated.shm_dir"] = "--shm-dir";
  if (o.device) flags["backend.kernel.device"] = "--device";
  return flags;
}

std::string given(const Config& config, const std::string& key) {
  auto it = config.given.find(key);
  return it == config.given.end() ? std::string() : it->second;
}

}  // namespace

bool reloadable_key(const std::string& key, const Config& running) {
  if (key == "locks.max_ttl" && running.fabric.enabled()) return false;
  return reloadable().count(key) > 0;
}

ConfigReload compare_for_reload(const Config& running, const Config& fresh,
                                const ConfigOverrides& overrides) {
  std::set<std::string> keys;
  for (const auto& [key, _] : running.given) keys.insert(key);
  for (const auto& [key, _] : fresh.given) keys.insert(key);
  const auto flags = flags_given(overrides);
  ConfigReload reload;
  for (const std::string& key : keys) {
    ConfigChange change{key, given(running, key), given(fresh, key), ""};
    if (change.was == change.now) continue;
    if (auto flag = flags.find(key); flag != flags.end()) {
      change.flag = flag->second;
      reload.overridden.push_back(std::move(change));
    } else if (reloadable_key(key, running)) {
      reload.applied.push_back(std::move(change));
    } else {
      reload.need_restart.push_back(std::move(change));
    }
  }
  return reload;
}

void apply_reload(Config& running, const Config& fresh, const ConfigReload& reload) {
  for (const ConfigChange& change : reload.applied) {
    reloadable().at(change.key)(running, fresh);
    if (change.now.empty()) {
      running.given.erase(change.key);
    } else {
      running.given[change.key] = change.now;
    }
  }
}

std::string describe(const ConfigChange& change) {
  auto value = [](const std::string& text) {
    return text.empty() ? std::string("the default") : text;
  };
  return fmt::format("{}: {} (was {})", change.key, value(change.now), value(change.was));
}

}  // namespace asn

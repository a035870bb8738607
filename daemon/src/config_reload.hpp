// What SIGHUP (`systemctl reload asnd`) does with a fresh read of asnd.yaml (issue 28, finding
// 15): the keys that can change while asnd runs take effect at once; every other key that
// changed is named, with "takes effect at the next restart", and keeps its running value.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"

namespace asn {

struct ConfigChange {
  std::string key;   // its full name: locks.max_ttl
  std::string was;   // as the file gave it; "" when it did not (the default stood)
  std::string now;   // as the file gives it now; "" when it no longer does
  std::string flag;  // overridden: the command-line flag that sets it ("" otherwise)
};

struct ConfigReload {
  std::vector<ConfigChange> applied;       // in force once apply_reload() has run
  std::vector<ConfigChange> need_restart;  // changed in the file; the running value stays
  std::vector<ConfigChange> overridden;    // changed in the file; a flag sets it
};

// Whether `key` can change while asnd runs. locks.max_ttl cannot in a fabric: every member's
// takeover grace counts on it (daemon.cc), so it changes with a restart of them all.
bool reloadable_key(const std::string& key, const Config& running);

// The keys whose value in the file differs between `running` and `fresh` (both read by
// load_config(), `fresh` validated whole), sorted by what a reload does with them.
ConfigReload compare_for_reload(const Config& running, const Config& fresh,
                                const ConfigOverrides& overrides);

// Takes the values of `reload.applied` from `fresh` into `running` (the configuration asnd
// runs with from then on); the others stay, and are named again at the next SIGHUP.
void apply_reload(Config& running, const Config& fresh, const ConfigReload& reload);

// One line for the log: "locks.max_ttl: 120 (was 60)", "log_level: the default (was debug)".
std::string describe(const ConfigChange& change);

}  // namespace asn

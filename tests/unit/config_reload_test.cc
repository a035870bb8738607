// SIGHUP's reload of asnd.yaml (config_reload.hpp, issue 28 finding 15): which keys take
// effect at once, which are named as needing a restart, and which a flag overrides.
#include "config_reload.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config.hpp"

namespace asn {
namespace {

std::vector<std::string> keys(const std::vector<ConfigChange>& changes) {
  std::vector<std::string> out;
  for (const ConfigChange& c : changes) out.push_back(c.key);
  return out;
}

TEST(ConfigReload, LeasesQuotasAndTheLogLevelApplyTheRestWaitForARestart) {
  Config running = parse_config(
      "log_level: info\nlocks:\n  max_ttl: 60s\n  grace_period: 20\nlisten:\n  max_threads: 16\n",
      "asnd.yaml");
  const Config fresh = parse_config(
      "log_level: debug\nlocks:\n  max_ttl: 2m\n  grace_period: 20\n"
      "  max_sessions_per_principal: 3\nlisten:\n  max_threads: 8\n",
      "asnd.yaml");
  const ConfigReload reload = compare_for_reload(running, fresh, {});
  EXPECT_EQ(keys(reload.applied), (std::vector<std::string>{"locks.max_sessions_per_principal",
                                                            "locks.max_ttl", "log_level"}));
  EXPECT_EQ(keys(reload.need_restart), std::vector<std::string>{"listen.max_threads"});
  EXPECT_TRUE(reload.overridden.empty());
  EXPECT_EQ(describe(reload.applied[1]), "locks.max_ttl: 2m (was 60s)");
  EXPECT_EQ(describe(reload.applied[0]), "locks.max_sessions_per_principal: 3 (was the default)");

  apply_reload(running, fresh, reload);
  EXPECT_EQ(running.log_level, "debug");
  EXPECT_EQ(running.locks.max_ttl_s, 120u);
  EXPECT_EQ(running.locks.max_sessions_per_principal, 3u);
  EXPECT_EQ(running.listen.max_threads, 16u);  // the listener runs with what it started with
  // The next SIGHUP names only what is still waiting for a restart.
  const ConfigReload again = compare_for_reload(running, fresh, {});
  EXPECT_TRUE(again.applied.empty());
  EXPECT_EQ(keys(again.need_restart), std::vector<std::string>{"listen.max_threads"});
}

TEST(ConfigReload, AKeyTakenOutOfTheFileGoesBackToItsDefault) {
  Config running = parse_config("locks:\n  max_waiting: 5\n", "asnd.yaml");
  const Config fresh = parse_config("", "asnd.yaml");
  const ConfigReload reload = compare_for_reload(running, fresh, {});
  ASSERT_EQ(keys(reload.applied), std::vector<std::string>{"locks.max_waiting"});
  EXPECT_EQ(describe(reload.applied[0]), "locks.max_waiting: the default (was 5)");
  apply_reload(running, fresh, reload);
  EXPECT_EQ(running.locks.max_waiting, LocksConfig{}.max_waiting);
  EXPECT_TRUE(compare_for_reload(running, fresh, {}).applied.empty());
}

TEST(ConfigReload, InAFabricTheLongestLeaseChangesOnlyWithARestart) {
  // Every member's takeover grace counts on locks.max_ttl (daemon.cc).
  Config running = parse_config("locks:\n  max_ttl: 30\n", "asnd.yaml");
  running.fabric.name = "f1";
  const Config fresh = parse_config("locks:\n  max_ttl: 300\n", "asnd.yaml");
  const ConfigReload reload = compare_for_reload(running, fresh, {});
  EXPECT_TRUE(reload.applied.empty());
  EXPECT_EQ(keys(reload.need_restart), std::vector<std::string>{"locks.max_ttl"});
  apply_reload(running, fresh, reload);
  EXPECT_EQ(running.locks.max_ttl_s, 30u);
}

TEST(ConfigReload, AFlagWinsOverTheFileAndARenamedKeyIsTheSameKey) {
  Config running = parse_config("log_level: info\nbackend:\n  board: a1\n", "asnd.yaml");
  const Config fresh =
      parse_config("log_level: trace\nbackend:\n  emulated:\n    board: a1\n", "asnd.yaml");
  ConfigOverrides flags;
  flags.log_level = "warn";
  const ConfigReload reload = compare_for_reload(running, fresh, flags);
  EXPECT_TRUE(reload.applied.empty());
  EXPECT_TRUE(reload.need_restart.empty());  // backend.board is backend.emulated.board
  ASSERT_EQ(keys(reload.overridden), std::vector<std::string>{"log_level"});
  EXPECT_EQ(reload.overridden[0].flag, "--log-level");
}

TEST(ConfigReload, AListenerChangeIsNamedWithBothValues) {
  const Config running = parse_config("listen:\n  tcp: 127.0.0.1:7000\n", "asnd.yaml");
  const Config fresh = parse_config("listen:\n  tcp: 127.0.0.1:7001\n", "asnd.yaml");
  const ConfigReload reload = compare_for_reload(running, fresh, {});
  ASSERT_EQ(keys(reload.need_restart), std::vector<std::string>{"listen.tcp"});
  EXPECT_EQ(describe(reload.need_restart[0]), "listen.tcp: 127.0.0.1:7001 (was 127.0.0.1:7000)");
}

}  // namespace
}  // namespace asn

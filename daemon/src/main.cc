// asnd: the asn switch daemon.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "asn/version.hpp"
#include "config.hpp"
#include "daemon.hpp"
#include "error.hpp"
#include "logging.hpp"

namespace {

// Exit codes (docs/operator-guide.md): 0 stopped cleanly, 1 could not run (board busy,
// socket in use, ...), 2 bad command line or configuration (systemd must not restart).
constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"asnd: control plane daemon of the asn active storage network switch"};
  std::string config_path = asn::kDefaultConfigPath;
  asn::ConfigOverrides o;
  auto* config_opt =
      app.add_option("-c,--config", config_path, "Configuration file")->capture_default_str();
  app.add_option("--socket", o.socket_path, "Unix socket to serve on (listen.socket)");
  app.add_option("--tcp", o.tcp_listen, "Also serve on host:port (listen.tcp)");
  app.add_option("--backend", o.backend, "Board backend (backend.kind): emulated");
  app.add_option("--board", o.board_name, "Emulated board name (backend.emulated.board)");
  app.add_option("--profile", o.board_profile, "Emulated board profile (backend.emulated.profile)");
  app.add_option("--shm-dir", o.shm_dir,
                 "Directory of emulated board memory (backend.emulated.shm_dir)");
  app.add_option("--state-dir", o.state_dir, "State directory (state_dir)");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off");
  app.add_flag("--reset-board", o.reset_board,
               "Reset the board at start: forget everything it holds");
  bool check_only = false;
  app.add_flag("--check-config", check_only, "Validate the configuration and exit");
  app.set_version_flag("--version", std::string(asn::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitConfig;
  }

  bool config_required = config_opt->count() > 0;
  asn::Config config;
  try {
    config = asn::load_config(config_path, config_required);
    asn::apply_overrides(config, o);
  } catch (const asn::Error& e) {
    std::fprintf(stderr, "asnd: %s\n", e.what());
    return kExitConfig;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asnd: cannot read the configuration: %s\n", e.what());
    return kExitConfig;
  }
  if (check_only) {
    for (const auto& note : config.deprecations) std::printf("%s\n", note.c_str());
    std::printf("%s: configuration is valid\n", config_path.c_str());
    return 0;
  }

  // Signals are blocked only now: reading the configuration must stay interruptible.
  sigset_t signals = asn::block_daemon_signals();
  asn::setup_logging(config.log_level);
  try {
    return asn::run_daemon(config, config_path, config_required, o, signals);
  } catch (const asn::Error& e) {
    spdlog::critical("cannot run: {}", e.what());
    return kExitRuntime;
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return kExitRuntime;
  }
}

// asnd: the asn switch daemon.
#include <absl/synchronization/mutex.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "asn/version.hpp"
#include "bus/pci_discovery.hpp"
#include "config.hpp"
#include "daemon.hpp"
#include "error.hpp"
#include "logging.hpp"

namespace {

// Exit codes (docs/operator-guide.md): 0 stopped cleanly, 1 could not run (board busy,
// socket in use, ...), 2 bad command line or configuration (systemd must not restart).
constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

// Whether asn.ko was loaded with ivshmem=1 and so also binds QEMU's ivshmem-plain device:
// only then is such a device worth listing as a board.
bool asn_binds_ivshmem() {
  std::ifstream param("/sys/module/asn/parameters/ivshmem");
  char value = 'N';
  return param >> value && (value == 'Y' || value == '1');
}

// `asnd --list-boards`: the asn boards on the PCI bus and the driver each is bound to, the
// first thing to look at when the kernel backend says "no board".
int list_boards() {
  asn::PciDiscoveryOptions options;
  options.include_ivshmem = asn_binds_ivshmem();
  std::vector<asn::PciBoard> boards;
  try {
    boards = asn::discover_pci_boards(options);
  } catch (const asn::Error& e) {
    std::fprintf(stderr, "asnd: cannot list the PCI boards: %s\n", e.what());
    return kExitRuntime;
  }
  if (boards.empty()) {
    std::printf(
        "no asn board on the PCI bus (NetFPGA-1G feed:0001, SUME 10ee:7028, PLUS "
        "10ee:903f/913f)\n");
    return 0;
  }
  std::printf("%-14s %-10s %-16s %s\n", "BDF", "ID", "MODEL", "DRIVER");
  for (const auto& board : boards) {
    const std::string driver = board.driver.empty() ? "(none)" : board.driver;
    const std::string id = fmt::format("{:04x}:{:04x}", board.vendor, board.device);
    std::printf("%-14s %-10s %-16s %s%s\n", board.bdf.c_str(), id.c_str(), board.model.c_str(),
                driver.c_str(),
                board.bound_to_asn() ? "" : "  (asnd's kernel backend needs asn.ko bound)");
  }
  return 0;
}

// `asnd --check-config`: what the file says, or that there is none. A missing default file
// is no error (asnd starts from the defaults, and the unit runs this before every start);
// a missing --config file never gets here (load_config() refused it: exit 2).
int check_config(const asn::Config& config, const std::string& path) {
  for (const auto& note : config.deprecations) std::printf("%s\n", note.c_str());
  if (!config.from_file) {
    std::printf(
        "%s: no such file: asnd would start with the built-in defaults and the flags "
        "given (docs/operator-guide.md, Configure)\n",
        path.c_str());
    return 0;
  }
  std::printf("%s: configuration is valid\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // gRPC locks absl::Mutex several times per call. The distribution's abseil is built without
  // NDEBUG, so every such lock also updated a lock-order graph (deadlock detection): about 5% of
  // asnd's CPU under unary lock traffic (perf, issue 24). It is a debugging aid for gRPC's
  // own code, not for asnd's, whose mutexes are std:: ones; the sanitizer builds check those.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"asnd: control plane daemon of the asn active storage network switch"};
  std::string config_path = asn::kDefaultConfigPath;
  asn::ConfigOverrides o;
  auto* config_opt =
      app.add_option("-c,--config", config_path, "Configuration file")->capture_default_str();
  app.add_option("--socket", o.socket_path, "Unix socket to serve on (listen.socket)");
  app.add_option("--tcp", o.tcp_listen, "Also serve on host:port (listen.tcp)");
  app.add_option("--backend", o.backend, "Board backend (backend.kind): emulated, kernel");
  app.add_option("--device", o.device,
                 "Kernel backend: the board's PCI address, e.g. 0000:03:00.0 "
                 "(backend.kernel.device; default: the only board asn.ko drives)");
  app.add_option("--board", o.board_name, "Emulated board name (backend.emulated.board)");
  app.add_option("--profile", o.board_profile, "Emulated board profile (backend.emulated.profile)");
  app.add_option("--shm-dir", o.shm_dir,
                 "Directory of emulated board memory (backend.emulated.shm_dir)");
  app.add_option("--state-dir", o.state_dir, "State directory (state_dir)");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off");
  app.add_flag("--reset-board", o.reset_board,
               "Emulated backend: reset the board at start, forget everything it holds");
  bool check_only = false;
  app.add_flag("--check-config", check_only, "Validate the configuration and exit");
  bool list_only = false;
  app.add_flag("--list-boards", list_only,
               "List the asn boards on the PCI bus and their drivers, and exit");
  app.set_version_flag("--version", std::string(asn::kVersion));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitConfig;
  }

  if (list_only) return list_boards();

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
  if (check_only) return check_config(config, config_path);

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

#include "daemon.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "asn/version.hpp"
#include "device.hpp"
#include "device_service.hpp"
#include "emulated_bus.hpp"
#include "error.hpp"
#include "logging.hpp"
#include "systemd.hpp"

namespace asn {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void system_error(const std::string& what) {
  throw Error(ErrorCode::kUnavailable, fmt::format("{}: {}", what, std::strerror(errno)));
}

// True when something accepts connections on the Unix socket at `path`.
bool socket_in_use(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool in_use = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return in_use;
}

void prepare_socket_path(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw Error(ErrorCode::kUnavailable, fmt::format("cannot create the socket directory {}: {}",
                                                     dir.string(), ec.message()));
  }
  if (!fs::exists(fs::symlink_status(path))) return;
  if (!fs::is_socket(fs::symlink_status(path))) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{} exists and is not a socket; remove it or choose another "
                            "listen.socket",
                            path));
  }
  if (socket_in_use(path)) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("another asnd is already serving {}; stop it first (systemctl stop "
                            "asnd) or use another --socket",
                            path));
  }
  // A socket left behind by an asnd that crashed.
  if (unlink(path.c_str()) != 0) system_error(fmt::format("cannot remove stale socket {}", path));
}

void secure_socket(const Config& config) {
  if (chmod(config.socket_path.c_str(), config.socket_mode) != 0) {
    system_error(fmt::format("cannot set mode {:o} on {}", config.socket_mode, config.socket_path));
  }
  if (!config.socket_group.empty()) {
    const group* g = getgrnam(config.socket_group.c_str());
    if (g == nullptr || chown(config.socket_path.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0) {
      system_error(
          fmt::format("cannot give {} to group {}", config.socket_path, config.socket_group));
    }
  }
}

void prepare_state_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot create the state directory {}: {}", dir, ec.message()));
  }
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec, ec);
}

}  // namespace

sigset_t block_daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int run_daemon(const Config& config, const std::string& config_path, bool config_required,
               const ConfigOverrides& overrides, const sigset_t& signals) {
  spdlog::info("asnd {} starting (config {}, backend {}, board '{}', profile {})", kVersion,
               config_path, config.backend, config.board_name, config.board_profile);
  prepare_state_dir(config.state_dir);
  prepare_socket_path(config.socket_path);

  EmulatedBusOptions bus_options;
  bus_options.board_name = config.board_name;
  bus_options.profile = config.board_profile;
  bus_options.power_on_reset = config.reset_board;
  bus_options.shm_dir = config.shm_dir;
  EmulatedBus bus(bus_options);
  const auto& report = bus.open_report();
  if (report.created) {
    spdlog::info("{}: new board memory", bus.describe());
  } else if (report.reinitialised) {
    spdlog::warn("{}: board memory reinitialised: {}", bus.describe(), report.reason);
  } else {
    spdlog::info("{}: board memory kept from before (warm start)", bus.describe());
  }

  Device device(bus);
  uint32_t generation = device.read(regs::id::kGeneration);
  spdlog::info("{}: {} ports, register map {}.{}, generation {}", bus.describe(),
               device.capabilities().ports, device.regmap_major(), device.regmap_minor(),
               generation);

  DeviceService device_service(
      device, DaemonIdentity{config.backend, config.board_name, config.board_profile},
      AdminPolicy{config.tcp_admin});

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + config.socket_path, grpc::InsecureServerCredentials());
  int tcp_port = 0;
  if (!config.tcp_listen.empty()) {
    builder.AddListeningPort(config.tcp_listen, grpc::InsecureServerCredentials(), &tcp_port);
  }
  builder.RegisterService(&device_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot listen on unix:{}{}", config.socket_path,
                            config.tcp_listen.empty() ? "" : " and " + config.tcp_listen));
  }
  if (!config.tcp_listen.empty() && tcp_port == 0) {
    server->Shutdown();
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot listen on {} (listen.tcp)", config.tcp_listen));
  }
  secure_socket(config);
  server->GetHealthCheckService()->SetServingStatus(true);

  SystemdNotifier notifier([&device] {
    try {
      return device.read(regs::id::kMagic) == regs::kMagic;
    } catch (const Error&) {
      return false;
    }
  });
  std::string listening = "unix:" + config.socket_path;
  if (tcp_port) listening += fmt::format(" and {}", config.tcp_listen);
  notifier.ready(fmt::format("serving {} on {}", bus.describe(), listening));
  spdlog::info("serving on {}", listening);

  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      // Re-read the log level; the rest of the configuration needs a restart.
      try {
        Config fresh = load_config(config_path, config_required);
        apply_overrides(fresh, overrides);
        set_log_level(fresh.log_level);
        spdlog::info("SIGHUP: log level {}", fresh.log_level);
      } catch (const Error& e) {
        spdlog::error("SIGHUP: keeping the current log level: {}", e.what());
      }
      continue;
    }
    spdlog::info("{}: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    break;
  }
  notifier.stopping();
  server->GetHealthCheckService()->SetServingStatus(false);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  unlink(config.socket_path.c_str());
  spdlog::info("stopped");
  return 0;
}

}  // namespace asn

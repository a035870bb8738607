#include "listeners.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "error.hpp"

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

void secure_socket(const ListenConfig& config) {
  if (chmod(config.socket.c_str(), config.socket_mode) != 0) {
    system_error(fmt::format("cannot set mode {:o} on {}", config.socket_mode, config.socket));
  }
  if (!config.socket_group.empty()) {
    const group* g = getgrnam(config.socket_group.c_str());
    if (g == nullptr || chown(config.socket.c_str(), static_cast<uid_t>(-1), g->gr_gid) != 0) {
      system_error(fmt::format("cannot give {} to group {}", config.socket, config.socket_group));
    }
  }
}

}  // namespace

Listeners::Listeners(const ListenConfig& config, const ServiceFactory& services) : config_(config) {
  prepare_socket_path(config.socket);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  const std::string unix_name = "unix:" + config.socket;
  servers_.push_back(
      start(unix_name, ListenerPolicy{unix_name, Role::kAdmin, ""}, services, nullptr));
  description_ = unix_name;
  if (!config.tcp.empty()) {
    ListenerPolicy tcp{"tcp " + config.tcp, config.tcp_admin ? Role::kAdmin : Role::kReader,
                       "use asnd's Unix socket, or set listen.tcp_admin: true in asnd.yaml"};
    int port = 0;
    servers_.push_back(start(config.tcp, std::move(tcp), services, &port));
    if (port == 0) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("cannot listen on {} (listen.tcp)", config.tcp));
    }
    description_ += " and " + config.tcp;
  }
  secure_socket(config);
}

std::unique_ptr<Listeners::Server> Listeners::start(const std::string& address,
                                                    ListenerPolicy policy,
                                                    const ServiceFactory& services,
                                                    int* bound_port) {
  auto server = std::make_unique<Server>();
  server->policy = std::move(policy);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), bound_port);
  services(builder, server->policy, server->services);
  server->server = builder.BuildAndStart();
  if (!server->server) {
    throw Error(ErrorCode::kUnavailable, fmt::format("cannot listen on {}", address));
  }
  return server;
}

Listeners::~Listeners() { shutdown(std::chrono::milliseconds(0)); }

void Listeners::set_serving(bool serving) {
  for (auto& s : servers_) s->server->GetHealthCheckService()->SetServingStatus(serving);
}

void Listeners::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  const auto deadline = std::chrono::system_clock::now() + grace;
  for (auto& s : servers_) s->server->Shutdown(deadline);
  for (auto& s : servers_) s->server->Wait();
  unlink(config_.socket.c_str());
}

}  // namespace asn

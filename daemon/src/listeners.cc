#include "listeners.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_posix.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "error.hpp"
#include "services/grpc_status.hpp"
#include "services/support.hpp"
#include "tcp_listener.hpp"
#include "tls_relay.hpp"
#include "unique_fd.hpp"

namespace asn {

namespace {

namespace fs = std::filesystem;

// A warning about refused connections at most this often per listener: a flood must not
// flood the journal too.
constexpr auto kRefusalLogEvery = std::chrono::seconds(10);
constexpr int kBacklog = 128;

[[noreturn]] void system_error(const std::string& what, int err = errno) {
  throw Error(ErrorCode::kUnavailable, fmt::format("{}: {}", what, std::strerror(err)));
}

std::string user_name(uid_t uid) {
  const passwd* pw = getpwuid(uid);
  return pw ? fmt::format("uid {} ({})", uid, pw->pw_name) : fmt::format("uid {}", uid);
}

// The socket's directory must be one nobody else can change: owned by root or by asnd's
// user, writable by its owner only. Otherwise another user could swap the socket for a
// link (and have asnd chmod something else) or squat it.
UniqueFd trusted_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw Error(ErrorCode::kUnavailable, fmt::format("cannot create the socket directory {}: {}",
                                                     dir.string(), ec.message()));
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) system_error(fmt::format("cannot open the socket directory {}", dir.string()));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) system_error("cannot stat " + dir.string());
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the socket directory {} belongs to {}, not to root or asnd's user: "
                            "another user could replace the socket; use a directory of asnd's "
                            "own, such as /run/asn",
                            dir.string(), user_name(st.st_uid)));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the socket directory {} is writable by {} (mode {:04o}): another "
                            "user could replace the socket; use a directory of asnd's own, such "
                            "as /run/asn",
                            dir.string(), (st.st_mode & S_IWOTH) ? "everyone" : "its group",
                            st.st_mode & 07777));
  }
  return fd;
}

bool accepts_connections(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

// Removes a socket a crashed asnd left behind; refuses anything else at the path.
void clear_socket_path(int dirfd, const std::string& name, const std::string& path) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    system_error("cannot stat " + path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{} exists and is not a socket; remove it or choose another "
                            "listen.socket",
                            path));
  }
  if (accepts_connections(path)) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{} is already being served (the socket belongs to {}); stop that "
                            "asnd first (systemctl stop asnd) or use another --socket",
                            path, user_name(st.st_uid)));
  }
  if (::unlinkat(dirfd, name.c_str(), 0) != 0) {
    system_error(fmt::format("cannot remove stale socket {}", path));
  }
}

// The Unix listener: bound with the socket's final mode already in place (the umask around
// bind, not a chmod after it) and its group set through the trusted directory.
UniqueFd open_unix_listener(const ListenConfig& config) {
  const fs::path path(config.socket);
  const std::string name = path.filename().string();
  UniqueFd dir = trusted_directory(path.parent_path());
  clear_socket_path(dir.get(), name, config.socket);

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) system_error("cannot create a Unix socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, config.socket.c_str(), sizeof(addr.sun_path) - 1);
  const mode_t old_mask = ::umask(0777 & ~config.socket_mode);
  const int bound = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  ::umask(old_mask);
  if (bound != 0) system_error("cannot bind " + config.socket, bind_errno);
  if (!config.socket_group.empty()) {
    const group* g = getgrnam(config.socket_group.c_str());
    if (g == nullptr || ::fchownat(dir.get(), name.c_str(), static_cast<uid_t>(-1), g->gr_gid,
                                   AT_SYMLINK_NOFOLLOW) != 0) {
      system_error(fmt::format("cannot give {} to group {}", config.socket, config.socket_group));
    }
  }
  if (::listen(fd.get(), kBacklog) != 0) system_error("cannot listen on " + config.socket);
  return fd;
}

}  // namespace

UniqueFd open_tcp_listener(const std::string& address, const std::string& key) {
  const size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot listen on {} ({}): {}", address, key, gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  int last_errno = 0;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) continue;
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd.get(), kBacklog) == 0) {
      return fd;
    }
    last_errno = errno;
  }
  system_error(fmt::format("cannot listen on {} ({})", address, key), last_errno);
}

std::shared_ptr<grpc::ServerCredentials> mutual_tls_credentials(const TlsConfig& tls) {
  // Read again (and checked again) now: the files may have changed since the configuration
  // was loaded.
  const TlsMaterial pem = load_tls(tls, "");
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = pem.client_ca;
  options.pem_key_cert_pairs.push_back({pem.private_key, pem.cert_chain});
  return grpc::SslServerCredentials(options);
}

// A TLS handshake not done within this is dropped: a client that connects and says nothing
// holds a connection only this long.
constexpr int kTlsHandshakeTimeoutMs = 10'000;

// One listener: its socket, its gRPC server, and the thread that accepts for it. With TLS
// (`tls`: gRPC's credentials) gRPC serves a private Unix socket and the listener relays the
// connections it accepts there (tls_relay.cc).
class Listener {
 public:
  Listener(UniqueFd listen_fd, bool unix_socket, ListenerPolicy policy, const ListenConfig& limits,
           const ServiceFactory& services, metrics::GrpcCalls& calls,
           std::shared_ptr<grpc::ServerCredentials> tls = nullptr)
      : listen_fd_(std::move(listen_fd)),
        unix_socket_(unix_socket),
        limits_(limits),
        wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        reserve_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
    stats_.name = policy.name;
    policy.describe_peer = [this](const std::string& peer) { return describe(peer); };
    policy.peer_owner = [this](const std::string& peer) { return owner(peer); };
    policy_ = policy;
    grpc::ServerBuilder builder;
    // A slow client may hold a few streams, not the server: per connection, a cap on
    // concurrent streams; per server, a cap on threads and memory; idle connections go.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                               static_cast<int>(limits.max_streams_per_connection));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 10 * 60 * 1000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60 * 1000);
    grpc::ResourceQuota quota("asnd " + policy.name);
    quota.SetMaxThreads(static_cast<int>(limits.max_threads));
    quota.Resize(size_t{256} << 20);
    builder.SetResourceQuota(quota);
    builder.SetMaxReceiveMessageSize(static_cast<int>(kMaxRequestBytes));
    int tls_port = 0;
    if (tls) {
      backend_ = std::make_unique<RelayBackend>(limits.socket);
      builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kTlsHandshakeTimeoutMs);
      builder.AddListeningPort("unix:" + backend_->path(), tls, &tls_port);
    }
    services(builder, policy_, services_);
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> counting;
    counting.push_back(calls.interceptor_factory());
    builder.experimental().SetInterceptorCreators(std::move(counting));
    server_ = builder.BuildAndStart();
    if (tls && (!server_ || tls_port == 0)) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("cannot serve TLS on {} (asnd's private socket for listen.tls; "
                              "gRPC's log above says more)",
                              backend_->path()));
    }
    if (!server_ || wake_fd_.get() < 0) {
      throw Error(ErrorCode::kUnavailable, "cannot start the server of " + policy.name);
    }
    if (tls) relay_ = std::make_unique<TlsRelay>(backend_->path());
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~Listener() {
    stop_accepting();
    shutdown(std::chrono::milliseconds(0));
  }

  void stop_accepting() {
    if (!acceptor_.joinable()) return;
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
    acceptor_.join();
    listen_fd_.reset();
  }

  void shutdown(std::chrono::milliseconds grace) {
    if (!server_ || shut_down_) return;
    shut_down_ = true;
    server_->Shutdown(std::chrono::system_clock::now() + grace);
    server_->Wait();
    // Only now: the calls in flight during the grace period went through it.
    if (relay_) relay_->stop();
  }

  grpc::Server& server() { return *server_; }
  const ListenerPolicy& policy() const { return policy_; }

  ListenerStats stats() {
    std::lock_guard lock(mutex_);
    reap_closed();
    ListenerStats s = stats_;
    s.open_connections = static_cast<unsigned>(connections_.size());
    return s;
  }

  std::string describe(const std::string& peer) {
    if (peer.rfind("fd:", 0) == 0) {
      std::lock_guard lock(mutex_);
      auto it = connections_.find(std::atoi(peer.c_str() + 3));
      if (it != connections_.end()) return it->second.description;
    }
    // Relayed: gRPC saw the relay's Unix socket, the listener the client's address.
    if (relay_ && peer.rfind("unix-abstract:", 0) == 0) {
      std::lock_guard lock(mutex_);
      for (const auto& [_, c] : connections_) {
        if (c.relayed_as == peer) return c.description;
      }
    }
    return peer.empty() || peer.rfind("unix", 0) == 0 ? "a client" : peer;
  }

  // The owner of the lock sessions a peer opens: on the Unix socket its uid ("uid 1000", as
  // SO_PEERCRED gave it when the connection was accepted); elsewhere nobody the listener
  // can vouch for ("").
  std::string owner(const std::string& peer) {
    if (!unix_socket_ || peer.rfind("fd:", 0) != 0) return "";
    std::lock_guard lock(mutex_);
    auto it = connections_.find(std::atoi(peer.c_str() + 3));
    return it == connections_.end() ? "" : it->second.peer;
  }

 private:
  struct Connection {
    dev_t dev;
    ino_t ino;
    std::string peer;         // what the per-peer cap counts by
    std::string description;  // for logs
    std::string relayed_as;   // with TLS: the peer gRPC reports (TlsRelay::add)
  };

  void accept_loop() {
    pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    for (;;) {
      const int ready = ::poll(fds, 2, 1000);
      if (ready < 0 && errno != EINTR) {
        spdlog::error("{}: poll: {}", policy_.name, std::strerror(errno));
        return;
      }
      if ((fds[1].revents & POLLIN) != 0) return;
      std::lock_guard lock(mutex_);
      reap_closed();
      if ((fds[0].revents & POLLIN) != 0) accept_pending();
      log_refusals();
    }
  }

  void accept_pending() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          shed_one();
          continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          spdlog::error("{}: accept: {}", policy_.name, std::strerror(errno));
        }
        return;
      }
      admit(UniqueFd(fd), addr);
    }
  }

  // Out of descriptors: accept the waiting connection on the reserve descriptor and close
  // it at once, so that the listener keeps draining its queue instead of spinning on it.
  void shed_one() {
    reserve_fd_.reset();
    UniqueFd doomed(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    doomed.reset();
    reserve_fd_ = UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ++stats_.refused_no_descriptor;
    ++unlogged_;
  }

  void admit(UniqueFd fd, const sockaddr_storage& addr) {
    std::string peer;
    std::string description;
    pid_t peer_pid = 0;
    if (unix_socket_) {
      ucred cred{};
      socklen_t len = sizeof cred;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len);
      peer_pid = cred.pid;
      peer = fmt::format("uid {}", cred.uid);
      description = fmt::format("{} pid {} on {}", user_name(cred.uid), cred.pid, policy_.name);
    } else {
      char host[INET6_ADDRSTRLEN] = "?";
      uint16_t port = 0;
      if (addr.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
        ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
      } else if (addr.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
        ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
      }
      peer = host;
      description = fmt::format("{}:{} on {}", host, port, policy_.name);
      const int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    unsigned from_peer = 0;
    for (const auto& [_, c] : connections_) from_peer += c.peer == peer;
    // asnd's own health check (the watchdog's) always gets in: a flood must not make
    // systemd restart a daemon that serves everyone else.
    const bool self = unix_socket_ && peer_pid == ::getpid();
    if (!self && (connections_.size() >= limits_.max_connections ||
                  from_peer >= limits_.max_connections_per_peer)) {
      ++stats_.refused_over_limit;
      ++unlogged_;
      last_refused_peer_ = description;
      return;  // closed by UniqueFd
    }
    struct stat st {};
    ::fstat(fd.get(), &st);
    const int key = fd.get();
    Connection connection{st.st_dev, st.st_ino, peer, description, ""};
    if (relay_) {
      if (!relay(std::move(fd), connection)) return;
    } else {
      grpc::AddInsecureChannelFromFd(server_.get(), fd.release());
    }
    connections_[key] = std::move(connection);
    ++stats_.accepted;
  }

  // Hands a TLS connection to the relay, which closes it when it ends (and so frees its
  // slot: reap_closed). False when the relay could not take it: refused and counted.
  bool relay(UniqueFd fd, Connection& connection) {
    int error = 0;
    connection.relayed_as = relay_->add(fd.release(), error);
    if (connection.relayed_as.empty()) {
      const bool no_fd = error == EMFILE || error == ENFILE;
      ++(no_fd ? stats_.refused_no_descriptor : stats_.refused_over_limit);
      ++unlogged_;
      last_refused_peer_ =
          fmt::format("{} (not relayed to gRPC: {})", connection.description, std::strerror(error));
      return false;
    }
    spdlog::debug("{}: {} relayed as {}", policy_.name, connection.description,
                  connection.relayed_as);
    return true;
  }

  // gRPC closes a connection's descriptor when it ends; a descriptor that is gone, or now
  // names another file, is a connection that ended.
  void reap_closed() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      struct stat st {};
      const bool same = ::fstat(it->first, &st) == 0 && st.st_dev == it->second.dev &&
                        st.st_ino == it->second.ino;
      it = same ? std::next(it) : connections_.erase(it);
    }
  }

  void log_refusals() {
    const auto now = std::chrono::steady_clock::now();
    if (unlogged_ == 0 || now - last_log_ < kRefusalLogEvery) return;
    spdlog::warn(
        "{}: refused {} connection{} in the last {} s ({} open, cap {}, {} per peer; "
        "{} refused for want of file descriptors; last refused: {})",
        policy_.name, unlogged_, unlogged_ == 1 ? "" : "s", kRefusalLogEvery.count(),
        connections_.size(), limits_.max_connections, limits_.max_connections_per_peer,
        stats_.refused_no_descriptor, last_refused_peer_);
    unlogged_ = 0;
    last_log_ = now;
  }

  UniqueFd listen_fd_;
  bool unix_socket_;
  ListenConfig limits_;
  UniqueFd wake_fd_;
  UniqueFd reserve_fd_;
  ListenerPolicy policy_;
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<RelayBackend> backend_;  // with TLS: where gRPC listens
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<TlsRelay> relay_;  // with TLS
  bool shut_down_ = false;
  std::thread acceptor_;

  std::mutex mutex_;  // the members below
  std::map<int, Connection> connections_;
  ListenerStats stats_;
  uint64_t unlogged_ = 0;
  std::string last_refused_peer_ = "-";
  std::chrono::steady_clock::time_point last_log_{};
};

Listeners::Listeners(const ListenConfig& config, const ServiceFactory& services) : config_(config) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  const std::string unix_name = "unix:" + config.socket;
  listeners_.push_back(std::make_unique<Listener>(open_unix_listener(config), true,
                                                  ListenerPolicy{unix_name, Role::kAdmin, "", {}},
                                                  config, services, grpc_calls_));
  description_ = unix_name;
  if (!config.tcp.empty()) {
    // PFS clients lock over TCP: a lock client reads and locks, and never configures or
    // writes registers.
    const bool tls = config.tls.enabled();
    ListenerPolicy tcp{(tls ? "tls " : "tcp ") + config.tcp,
                       config.tcp_admin ? Role::kAdmin : Role::kLockClient,
                       "use asnd's Unix socket, or set listen.tcp_admin: true in asnd.yaml",
                       {}};
    listeners_.push_back(std::make_unique<Listener>(
        open_tcp_listener(config.tcp, "listen.tcp"), false, std::move(tcp), config, services,
        grpc_calls_, tls ? mutual_tls_credentials(config.tls) : nullptr));
    description_ += " and " + config.tcp + (tls ? " (mutual TLS)" : "");
  }
}

Listeners::~Listeners() { shutdown(std::chrono::milliseconds(0)); }

void Listeners::set_serving(bool serving) {
  for (auto& l : listeners_) l->server().GetHealthCheckService()->SetServingStatus(serving);
}

bool Listeners::answers(std::chrono::milliseconds timeout) const {
  // A connection of its own (not one from the shared subchannel pool), so that it proves the
  // listener still accepts.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel =
      grpc::CreateCustomChannel("unix:" + config_.socket, grpc::InsecureChannelCredentials(), args);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::CompletionQueue cq;
  // grpc.health.v1.HealthCheckRequest{service: ""} is the empty message.
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  const bool got = cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return got && ok && status.ok();
}

std::vector<ListenerStats> Listeners::stats() const {
  std::vector<ListenerStats> out;
  for (const auto& l : listeners_) out.push_back(l->stats());
  return out;
}

std::string Listeners::describe_peer(const std::string& peer) const {
  for (const auto& l : listeners_) {
    std::string d = l->describe(peer);
    if (d != "a client" && d != peer) return d;
  }
  return peer;
}

void Listeners::shutdown(std::chrono::milliseconds grace) {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& l : listeners_) l->stop_accepting();
  for (auto& l : listeners_) l->shutdown(grace);
  ::unlink(config_.socket.c_str());
}

}  // namespace asn

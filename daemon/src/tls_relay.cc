// How the mutual-TLS listener keeps asnd's connection caps.
//
// gRPC 1.51 can serve a connection accepted elsewhere only without a handshake
// (grpc_server_add_channel_from_fd takes insecure credentials), and asnd's caps live in its
// own accept loop (listeners.cc). So with listen.tls asnd accepts the TCP port itself, as it
// does plain TCP, applies the same caps and descriptor reserve, and then, instead of handing
// the descriptor to gRPC, connects to gRPC's TLS port on a private Unix socket
// (RelayBackend: a 0700 directory next to listen.socket) and copies the bytes both ways
// unchanged. TLS stays end to end between the client and gRPC: asnd never sees plaintext or
// keys, gRPC verifies the client certificate as before (the call's auth context), and its
// handshake timeout still drops a connection that never completes one (gRPC closes the Unix
// side; the relay then closes the TCP side).
//
// One thread relays every connection: epoll, edge-triggered, over both sockets of each, and
// splice(2) through a pipe per direction, so bytes go socket -> pipe -> socket inside the
// kernel without a copy through user space, and a direction whose receiver is slow stops
// reading its sender (the pipe is full) instead of buffering. A connection costs 6
// descriptors in asnd (the TCP socket, the Unix socket to gRPC, two pipes) plus gRPC's end.
//
// Ends: the client's FIN is passed on with shutdown(SHUT_WR) after the bytes before it;
// gRPC then closes its end, as it does on its own (idle, handshake timeout, shutdown). When
// gRPC's end reads as closed, what it sent last is flushed to the client (for up to
// kDrainTimeout) and both sockets are closed; any error on either side closes both at once.
// The listener counts a connection until its TCP descriptor is closed, here.
//
// Descriptors: gRPC 1.51's listener stops accepting for good once accept(2) fails with
// EMFILE (grpc/grpc#20418), and gRPC must accept the relay's end of every connection; so
// add() refuses (as out of descriptors) while fewer than kHeadroom would be left free. It
// counts the open descriptors in /proc/self/fd through a directory descriptor it keeps, and
// so takes none to count: an earlier probe that dup()ed kHeadroom descriptors to see whether
// it could held, for that moment, the very ones gRPC's accept needed, and a flood of
// connections now and then wedged the listener that way (TlsFdTest, 3 runs in 15 on a
// loaded machine).
//
// The caller's peer, as gRPC reports it, is the Unix socket's autobound abstract name
// ("unix-abstract:1a2b3"); add() returns it so that the listener can map a call back to the
// TCP address it accepted.
#include "tls_relay.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <limits>

#include "error.hpp"

namespace asn {

namespace {

// What a pipe holds at most by default (16 pages); the relay never asks it for more.
constexpr size_t kPipeBytes = 64 * 1024;
// After gRPC closed its end, how long the client has to take what gRPC sent last.
constexpr auto kDrainTimeout = std::chrono::seconds(5);
constexpr int kEventsPerWait = 64;
// gRPC 1.51 stops accepting for good when accept(2) fails with EMFILE, so gRPC's end of a
// relayed connection must always find a descriptor: a connection is relayed only while this
// many are free besides the five it takes (a Unix socket, two pipes).
constexpr int kHeadroom = 16;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

RelayBackend::RelayBackend(const std::string& listen_socket)
    : dir_(listen_socket + ".tls"), path_(dir_ + "/grpc.sock") {
  if (path_.size() >= sizeof(sockaddr_un::sun_path)) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("listen.socket {} is too long for listen.tls: asnd's private TLS "
                            "socket {} would not fit a Unix socket address ({} bytes at most)",
                            listen_socket, path_, sizeof(sockaddr_un::sun_path) - 1));
  }
  // The parent is listen.socket's directory, which asnd checked nobody else may change.
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot create {}: {}", dir_, std::strerror(errno)));
  }
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  const bool own =
      dir >= 0 && ::fstat(dir, &st) == 0 && st.st_uid == ::geteuid() && ::fchmod(dir, 0700) == 0;
  // A stale socket of a crashed asnd goes; gRPC would also replace it.
  if (own && ::unlinkat(dir, "grpc.sock", 0) != 0 && errno != ENOENT) {
    ::close(dir);
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot remove the stale socket {}: {}", path_, std::strerror(errno)));
  }
  if (dir >= 0) ::close(dir);
  if (!own) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("{} (asnd's private TLS socket directory) is not a directory of "
                            "asnd's user that asnd can make 0700; remove it",
                            dir_));
  }
}

RelayBackend::~RelayBackend() {
  ::unlink(path_.c_str());
  ::rmdir(dir_.c_str());
}

// One relayed connection and its two directions.
struct TlsRelay::Connection {
  // Bytes read from `from` wait in the pipe until `to` takes them.
  struct Flow {
    int from = -1;
    int to = -1;
    int pipe[2] = {-1, -1};
    size_t queued = 0;
    bool eof = false;        // `from` sends no more
    bool passed_on = false;  // ... and `to` was told so

    // Moves what can be moved now, until neither side can give or take more (edge-triggered
    // epoll reports a socket again only after that). False when a side failed.
    bool advance() {
      for (;;) {
        bool progress = false;
        if (!eof && queued < kPipeBytes) {
          const ssize_t n = ::splice(from, nullptr, pipe[1], nullptr, kPipeBytes - queued,
                                     SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0) queued += static_cast<size_t>(n);
          if (n == 0) eof = true;
          if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
          progress = n >= 0;
        }
        if (queued > 0) {
          const ssize_t n =
              ::splice(pipe[0], nullptr, to, nullptr, queued, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
          if (n > 0) queued -= static_cast<size_t>(n);
          if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
          progress = progress || n > 0;
        }
        if (!progress) return true;
      }
    }
  };

  ~Connection() {
    close_fd(client);
    close_fd(backend);
    for (Flow* f : {&up, &down}) {
      close_fd(f->pipe[0]);
      close_fd(f->pipe[1]);
    }
  }

  int client = -1;
  int backend = -1;
  Flow up;    // client -> gRPC
  Flow down;  // gRPC -> client
  // Set once gRPC closed its end: the client's last chance to take the rest.
  std::chrono::steady_clock::time_point drain_until{};
  uint32_t client_events = 0;  // what epoll watches for (0: not yet added)
  uint32_t backend_events = 0;
};

TlsRelay::TlsRelay(std::string backend)
    : backend_(std::move(backend)),
      epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      proc_fd_(::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  // Without /proc the relay cannot count descriptors and relays regardless.
  if (proc_fd_ < 0) spdlog::warn("TLS relay: /proc/self/fd: {}", std::strerror(errno));
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = 0;  // connection ids start at 1
  if (epoll_fd_ < 0 || wake_fd_ < 0 ||
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) {
    const int err = errno;
    close_fd(epoll_fd_);
    close_fd(wake_fd_);
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot start the TLS relay: {}", std::strerror(err)));
  }
  thread_ = std::thread([this] { run(); });
}

TlsRelay::~TlsRelay() {
  stop();
  close_fd(epoll_fd_);
  close_fd(wake_fd_);
  close_fd(proc_fd_);
}

void TlsRelay::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  connections_.clear();
  std::lock_guard lock(mutex_);
  new_.clear();
}

namespace {

// How many more descriptors the process may open: RLIMIT_NOFILE less those open, listed in
// /proc/self/fd through `proc_fd` (that directory, kept open), so that counting takes none.
// INT_MAX when there is no limit or it cannot be told.
int descriptors_free(int proc_fd) {
  rlimit limit{};
  if (proc_fd < 0 || ::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      ::lseek(proc_fd, 0, SEEK_SET) != 0) {
    return std::numeric_limits<int>::max();
  }
  alignas(dirent64) char buffer[8192];
  long open = 0;
  for (;;) {
    const ssize_t n = ::getdents64(proc_fd, buffer, sizeof buffer);
    if (n < 0) return std::numeric_limits<int>::max();
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
      if (entry->d_name[0] != '.') ++open;  // not "." nor ".."
      at += entry->d_reclen;
    }
  }
  return static_cast<int>(
      std::min<long>(static_cast<long>(limit.rlim_cur) - open, std::numeric_limits<int>::max()));
}

}  // namespace

std::string TlsRelay::add(int client, int& error) {
  auto c = std::make_unique<Connection>();
  c->client = client;
  if (descriptors_free(proc_fd_) < kHeadroom + 5) {
    error = EMFILE;
    return "";
  }
  c->backend = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un to{};
  to.sun_family = AF_UNIX;
  std::strncpy(to.sun_path, backend_.c_str(), sizeof(to.sun_path) - 1);
  // Binding just the family autobinds an abstract name ("\0" and 5 hex digits), which is
  // what gRPC will report as the peer. A Unix connect is done at once, or fails with EAGAIN
  // when gRPC's backlog is full.
  const sa_family_t family = AF_UNIX;
  if (c->backend < 0 ||
      ::bind(c->backend, reinterpret_cast<const sockaddr*>(&family), sizeof family) != 0 ||
      ::connect(c->backend, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 ||
      ::pipe2(c->up.pipe, O_NONBLOCK | O_CLOEXEC) != 0 ||
      ::pipe2(c->down.pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
    error = errno;
    return "";
  }
  sockaddr_un self{};
  socklen_t len = sizeof self;
  ::getsockname(c->backend, reinterpret_cast<sockaddr*>(&self), &len);
  const size_t name_at = offsetof(sockaddr_un, sun_path) + 1;  // after the "\0"
  std::string peer =
      "unix-abstract:" + std::string(self.sun_path + 1, len > name_at ? len - name_at : 0);
  c->up.from = c->client;
  c->up.to = c->backend;
  c->down.from = c->backend;
  c->down.to = c->client;
  {
    std::lock_guard lock(mutex_);
    new_.push_back(std::move(c));
  }
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  return peer;
}

void TlsRelay::run() {
  // splice(2) into a socket its peer closed raises SIGPIPE, which would end asnd (splice has
  // no MSG_NOSIGNAL): blocked in this thread it stays pending, and the call fails with EPIPE.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  epoll_event events[kEventsPerWait];
  while (!stopping_) {
    // A second at most, for the drain timeouts.
    const int ready = ::epoll_wait(epoll_fd_, events, kEventsPerWait, 1000);
    if (ready < 0 && errno != EINTR) {
      spdlog::error("TLS relay: epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.u64 == 0) {
        uint64_t count = 0;
        [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof count);
        take_new();
      } else {
        pump(events[i].data.u64);
      }
    }
    close_expired();
  }
}

void TlsRelay::take_new() {
  std::vector<std::unique_ptr<Connection>> taken;
  {
    std::lock_guard lock(mutex_);
    taken.swap(new_);
  }
  for (auto& c : taken) {
    const uint64_t id = next_id_++;
    connections_.emplace(id, std::move(c));
    pump(id);  // moves what came already, and watches both sockets
  }
}

// Readable always; writable only while bytes wait for the socket, since every bit of send
// buffer freed would otherwise wake the relay for nothing (about twice the wakeups).
bool TlsRelay::watch(uint64_t id, Connection& c) {
  const uint32_t base = EPOLLIN | EPOLLRDHUP | EPOLLET;
  const int fds[2] = {c.client, c.backend};
  const uint32_t wanted[2] = {base | (c.down.queued > 0 ? EPOLLOUT : 0u),
                              base | (c.up.queued > 0 ? EPOLLOUT : 0u)};
  uint32_t* const current[2] = {&c.client_events, &c.backend_events};
  for (int i = 0; i < 2; ++i) {
    if (*current[i] == wanted[i]) continue;
    epoll_event ev{};
    ev.events = wanted[i];
    ev.data.u64 = id;
    // Adding, or changing, a socket that is ready already reports it at once.
    const int op = *current[i] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(epoll_fd_, op, fds[i], &ev) != 0) {
      spdlog::warn("TLS relay: epoll_ctl: {}; connection closed", std::strerror(errno));
      return false;
    }
    *current[i] = wanted[i];
  }
  return true;
}

void TlsRelay::pump(uint64_t id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;  // closed earlier in this round of events
  Connection& c = *it->second;
  bool done = !c.up.advance() || !c.down.advance();
  // The client sends no more: tell gRPC, which then ends the connection.
  if (!done && c.up.eof && c.up.queued == 0 && !c.up.passed_on) {
    ::shutdown(c.backend, SHUT_WR);
    c.up.passed_on = true;
  }
  // gRPC ended the connection: once the client has what gRPC sent last, close both.
  if (!done && c.down.eof) {
    if (c.down.queued == 0) {
      ::shutdown(c.client, SHUT_WR);
      done = true;
    } else if (c.drain_until == std::chrono::steady_clock::time_point{}) {
      c.drain_until = std::chrono::steady_clock::now() + kDrainTimeout;
    }
  }
  if (!done) done = !watch(id, c);
  if (done) connections_.erase(it);  // closing a descriptor takes it out of the epoll set
}

void TlsRelay::close_expired() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = connections_.begin(); it != connections_.end();) {
    const auto until = it->second->drain_until;
    const bool expired = until != std::chrono::steady_clock::time_point{} && now >= until;
    it = expired ? connections_.erase(it) : std::next(it);
  }
}

}  // namespace asn

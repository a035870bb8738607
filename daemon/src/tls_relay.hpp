// The mutual-TLS listener's relay: asnd accepts the TLS port's TCP connections itself (so that
// its connection caps and its handling of running out of descriptors apply, as on the other
// listeners) and copies each one's bytes to and from a private Unix socket on which gRPC runs
// the TLS handshake and serves the calls. See tls_relay.cc for how and why.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace asn {

// The private socket gRPC listens on with TLS: a directory next to listen.socket that only
// asnd's user may enter (0700), so that no one can reach gRPC's TLS but through the relay and
// its caps.
class RelayBackend {
 public:
  // Creates (or takes back, after a crash) "<listen.socket>.tls/" and clears a stale socket
  // in it. Throws asn::Error when it cannot, or when the directory is not asnd's own.
  explicit RelayBackend(const std::string& listen_socket);
  ~RelayBackend();  // removes the socket and the directory
  RelayBackend(const RelayBackend&) = delete;
  RelayBackend& operator=(const RelayBackend&) = delete;

  const std::string& path() const { return path_; }  // the socket, for "unix:" + path()

 private:
  std::string dir_;
  std::string path_;
};

class TlsRelay {
 public:
  // Relays to the Unix socket at `backend` (where gRPC must already listen). Starts its
  // thread; throws asn::Error when it cannot.
  explicit TlsRelay(std::string backend);
  ~TlsRelay();
  TlsRelay(const TlsRelay&) = delete;
  TlsRelay& operator=(const TlsRelay&) = delete;

  // Takes `client` (a connected, non-blocking socket) and relays it to a new connection to
  // the backend; closes `client` when either side ends. Returns "" and closes `client` at once
  // when that connection cannot be made, setting `error` to the errno (EMFILE and ENFILE: out
  // of descriptors, or too few left for gRPC to accept its end). Otherwise returns the peer
  // name gRPC will report for the connection ("unix-abstract:..."), by which a call's peer
  // maps back to `client`.
  std::string add(int client, int& error);

  // Closes every connection still relayed and stops the thread.
  void stop();

 private:
  struct Connection;
  void run();
  void take_new();
  void pump(uint64_t id);
  bool watch(uint64_t id, Connection& c);
  void close_expired();

  std::string backend_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int proc_fd_ = -1;  // /proc/self/fd: counting the descriptors open takes none
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  // The relay thread's own.
  std::map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = 1;

  std::mutex mutex_;  // new_
  std::vector<std::unique_ptr<Connection>> new_;
};

}  // namespace asn

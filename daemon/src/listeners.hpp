// The places asnd listens on. Each listener is served by a gRPC server of its own, so that a
// call's permissions follow from the listener it arrived on (services/auth.hpp): the Unix
// socket (admin: its file mode and group are the access control) and, when configured, TCP
// (reader, or admin with listen.tcp_admin).
//
// asnd accepts the connections itself and hands each one to its listener's server, so that
// a flood can neither wedge the listener (EMFILE is survived with a reserve descriptor) nor
// take every slot (caps per listener and per peer: a Unix peer is its uid, a TCP peer its
// address), and so that logs can say who a caller is. With mutual TLS (listen.tls) the same
// accept loop applies the same caps, and relays each connection to gRPC's TLS on a private
// Unix socket (tls_relay.hpp), since gRPC cannot run TLS on a descriptor it is handed.
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/service_type.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "metrics/grpc_calls.hpp"
#include "services/auth.hpp"

namespace asn {

// Creates the service objects for one listener (they must live as long as the Listeners)
// and registers them on its builder.
using ServiceFactory = std::function<void(grpc::ServerBuilder&, const ListenerPolicy&,
                                          std::vector<std::unique_ptr<grpc::Service>>&)>;

// What a listener has accepted, for status and tests.
struct ListenerStats {
  std::string name;
  unsigned open_connections = 0;
  uint64_t accepted = 0;
  uint64_t refused_over_limit = 0;     // closed at once: over the listener's or the peer's cap
  uint64_t refused_no_descriptor = 0;  // closed at once: the process was out of descriptors
};

class Listener;

class Listeners {
 public:
  // Checks and prepares the socket path (refusing one in use, or a directory others could
  // tamper with), opens every listener, starts one server per listener and their accept
  // loops. Throws asn::Error when a listener cannot be opened.
  Listeners(const ListenConfig& config, const ServiceFactory& services);
  ~Listeners();
  Listeners(const Listeners&) = delete;
  Listeners& operator=(const Listeners&) = delete;

  // "unix:/run/asn/asnd.sock and 127.0.0.1:50051"
  const std::string& description() const { return description_; }
  void set_serving(bool serving);
  // A real call through the Unix socket, as a client would make it (the health service):
  // proves that connections are accepted and calls answered. The watchdog asks it.
  bool answers(std::chrono::milliseconds timeout) const;
  std::vector<ListenerStats> stats() const;
  // Calls answered on every listener, by method and status code (listen.metrics).
  const metrics::GrpcCalls& grpc_calls() const { return grpc_calls_; }
  // Who is behind a call's peer string ("fd:12"): "uid 1000 (alice)", "10.0.0.2:4711".
  std::string describe_peer(const std::string& peer) const;
  // Stops accepting, lets calls in flight finish for up to `grace`.
  void shutdown(std::chrono::milliseconds grace);

 private:
  ListenConfig config_;
  metrics::GrpcCalls grpc_calls_;  // before listeners_: their servers count into it
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::string description_;
  bool shut_down_ = false;
};

}  // namespace asn

// The places asnd listens on, each served by a gRPC server of its own so that a call's
// permissions follow from the listener it arrived on (services/auth.hpp): the Unix socket
// (admin: its file mode and group are the access control) and, when configured, TCP
// (reader, or admin with listen.tcp_admin).
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/service_type.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "services/auth.hpp"

namespace asn {

// Creates the service objects for one listener (they must live as long as the Listeners)
// and registers them on its builder.
using ServiceFactory = std::function<void(grpc::ServerBuilder&, const ListenerPolicy&,
                                          std::vector<std::unique_ptr<grpc::Service>>&)>;

class Listeners {
 public:
  // Prepares the socket path (refusing one that is in use), starts one server per listener
  // and secures the socket. Throws asn::Error when a listener cannot be opened.
  Listeners(const ListenConfig& config, const ServiceFactory& services);
  ~Listeners();

  // "unix:/run/asn/asnd.sock and 127.0.0.1:50051"
  const std::string& description() const { return description_; }
  void set_serving(bool serving);
  // Stops accepting, lets calls in flight finish for up to `grace`.
  void shutdown(std::chrono::milliseconds grace);

 private:
  struct Server {
    ListenerPolicy policy;
    std::vector<std::unique_ptr<grpc::Service>> services;
    std::unique_ptr<grpc::Server> server;
  };
  std::unique_ptr<Server> start(const std::string& address, ListenerPolicy policy,
                                const ServiceFactory& services, int* bound_port);

  ListenConfig config_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::string description_;
  bool shut_down_ = false;
};

}  // namespace asn

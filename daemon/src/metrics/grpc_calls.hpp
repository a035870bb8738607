// gRPC calls by method and status code, counted by a server interceptor registered on every
// listener (listeners.cc): the services stay as they are, and a call refused before a service
// sees it (by permission, by a deadline) is counted all the same.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace asn::metrics {

class GrpcCalls {
 public:
  struct Count {
    std::string method;  // "/asn.v1.PortService/SetPorts"
    std::string code;    // "OK"
    uint64_t calls = 0;
  };

  void add(const std::string& method, int code);
  // Sorted by method, then code.
  std::vector<Count> counts() const;
  // For ServerBuilder::experimental().SetInterceptorCreators(): counts into this object, which
  // must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> interceptor_factory();

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> counts_;
};

}  // namespace asn::metrics

#include "connection.hpp"

#include <chrono>

#include "errors.hpp"

namespace asnctl {

Connection::Connection(const GlobalOptions& options)
    : target_(options.address.empty() ? "unix:" + options.socket_path : options.address),
      over_tcp_(!options.address.empty()),
      timeout_seconds_(options.timeout_seconds),
      channel_(grpc::CreateChannel(target_, grpc::InsecureChannelCredentials())) {}

void Connection::prepare(grpc::ClientContext& context) const {
  auto timeout = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(timeout_seconds_));
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  context.set_wait_for_ready(false);
}

void Connection::check(const grpc::Status& status) const {
  if (status.ok()) return;
  bool unreachable = false;
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    // asnd itself answers UNAVAILABLE when the board cannot be reached, and a slow answer
    // ends in DEADLINE_EXCEEDED: those came over a working connection. Without one, asnd
    // was never reached.
    unreachable = channel_->GetState(false) != GRPC_CHANNEL_READY;
  }
  throw RpcError(status, unreachable);
}

}  // namespace asnctl

// The one mapping from asn::Error to gRPC status, and the guard every RPC runs in.
#pragma once

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <string_view>

#include "error.hpp"

namespace asn {

grpc::StatusCode to_grpc_code(ErrorCode code);
grpc::Status to_grpc_status(const Error& error);

// Runs an RPC body; asn::Error becomes its status, anything else INTERNAL (and is logged:
// it is a bug). Input never crashes the daemon.
template <typename Body>
grpc::Status guarded(std::string_view rpc, Body&& body) {
  try {
    body();
    return grpc::Status::OK;
  } catch (const Error& e) {
    spdlog::debug("{}: {}: {}", rpc, code_name(e.code()), e.what());
    return to_grpc_status(e);
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", rpc, e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what());
  }
}

}  // namespace asn

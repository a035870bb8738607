// The one mapping from asn::Error to gRPC status, and the guard every RPC runs in.
#pragma once

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace asn {

// A status message travels in a header that clients limit (8 KiB by default, and it is
// percent-encoded on the wire), so messages are cut to this many bytes.
inline constexpr size_t kMaxStatusMessageBytes = 2048;

grpc::StatusCode to_grpc_code(ErrorCode code);
grpc::Status to_grpc_status(const Error& error);

// "problem; problem; ... and 12 more; <tail>": as many whole problems as fit in the
// status message, then the count of the rest (their detail belongs in the response body).
std::string join_problems(const std::vector<std::string>& problems, std::string_view tail);

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
  } catch (const std::bad_alloc&) {
    spdlog::error("{}: out of memory", rpc);
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "asnd is out of memory");
  } catch (const std::exception& e) {
    spdlog::error("{}: internal error: {}", rpc, e.what());
    return to_grpc_status(Error(ErrorCode::kInternal, std::string("internal error: ") + e.what()));
  }
}

}  // namespace asn

#include "grpc_status.hpp"

namespace asn {

grpc::StatusCode to_grpc_code(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case ErrorCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::kAborted:
      return grpc::StatusCode::ABORTED;
    case ErrorCode::kOutOfRange:
      return grpc::StatusCode::OUT_OF_RANGE;
    case ErrorCode::kUnimplemented:
      return grpc::StatusCode::UNIMPLEMENTED;
    case ErrorCode::kHardware:
    case ErrorCode::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

grpc::Status to_grpc_status(const Error& error) {
  return grpc::Status(to_grpc_code(error.code()), error.what());
}

}  // namespace asn

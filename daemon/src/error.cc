#include "error.hpp"

namespace asn {

status::Code status_code(ErrorCode code) {
  using status::Code;
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return Code::kInvalidArgument;
    case ErrorCode::kNotFound:
      return Code::kNotFound;
    case ErrorCode::kAlreadyExists:
      return Code::kAlreadyExists;
    case ErrorCode::kFailedPrecondition:
      return Code::kFailedPrecondition;
    case ErrorCode::kResourceExhausted:
      return Code::kResourceExhausted;
    case ErrorCode::kPermissionDenied:
      return Code::kPermissionDenied;
    case ErrorCode::kUnavailable:
      return Code::kUnavailable;
    case ErrorCode::kAborted:
      return Code::kAborted;
    case ErrorCode::kOutOfRange:
      return Code::kOutOfRange;
    case ErrorCode::kUnimplemented:
      return Code::kUnimplemented;
    case ErrorCode::kDeadlineExceeded:
      return Code::kDeadlineExceeded;
    case ErrorCode::kHardware:
    case ErrorCode::kInternal:
      return Code::kInternal;
  }
  return Code::kUnknown;
}

std::string_view code_name(ErrorCode code) { return status::name(status_code(code)); }

}  // namespace asn

// The one error type of asnd. Every layer throws asn::Error; the service layer maps it to a
// gRPC status in one place (services/grpc_status.cc). Messages say what was wrong and what
// to do.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "asn/status/codes.hpp"
#include "asn/text/text.hpp"

namespace asn {

enum class ErrorCode {
  kInvalidArgument,  // the request itself is wrong: bad name, value, field, file line
  kNotFound,         // it names something that does not exist
  kAlreadyExists,
  kFailedPrecondition,  // valid, but not in this state: read-only target, board not ready
  kResourceExhausted,   // a table or queue is full
  kPermissionDenied,    // an operation the caller's role does not allow
  kUnavailable,         // the board or a peer cannot be reached now; retrying may help
  kAborted,
  kOutOfRange,
  kUnimplemented,
  kDeadlineExceeded,
  kHardware,  // the board misbehaved: bus error, wrong magic, unknown block version
  kInternal,  // a bug in asnd
};

// The canonical status code an error code maps to (the one mapping of asnd).
status::Code status_code(ErrorCode code);
// Its canonical name, e.g. "INVALID_ARGUMENT".
std::string_view code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  // Control bytes in `message` (a NUL in a name from a request) are escaped here, once for
  // every message of asnd: what() would end at a NUL (text::printable).
  Error(ErrorCode code, std::string_view message)
      : std::runtime_error(text::printable(message)), code_(code) {}

  ErrorCode code() const { return code_; }

  // A machine-readable word for what went wrong where the code alone does not tell a client
  // what to do (the Locks service sends it as trailing metadata: "session-gone", "conflict",
  // "not-held"); empty for most errors.
  const std::string& reason() const { return reason_; }
  Error& with_reason(std::string reason) {
    reason_ = std::move(reason);
    return *this;
  }
  // Where the call belongs instead (a lock map's redirect: the owning switch's API address);
  // the Locks service sends it as "asn-lock-owner". Empty for most errors.
  const std::string& redirect() const { return redirect_; }
  Error& with_redirect(std::string endpoint) {
    redirect_ = std::move(endpoint);
    return *this;
  }

 private:
  ErrorCode code_;
  std::string reason_;
  std::string redirect_;
};

}  // namespace asn

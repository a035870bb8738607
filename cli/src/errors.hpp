// What can go wrong in asnctl, and the exit code each failure maps to (docs/asnctl.md).
#pragma once

#include <grpcpp/support/status.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace asnctl {

// Exit codes. Scripts depend on them: never renumber.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;       // asnd refused or failed the request
inline constexpr int kExitUsage = 2;        // bad command line; asnd was not contacted
inline constexpr int kExitUnreachable = 3;  // asnd could not be reached

// A bad command line found after CLI11 parsed it (a VALUE that is not a number, a missing
// --yes, ...). Reported as "asnctl: <message>" with exit code 2, before any call to asnd.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A call to asnd that did not succeed. `unreachable` says asnd was never reached (exit 3);
// otherwise asnd answered with an error (exit 1).
class RpcError : public std::runtime_error {
 public:
  RpcError(grpc::Status status, bool unreachable)
      : std::runtime_error(status.error_message()),
        status_(std::move(status)),
        unreachable_(unreachable) {}

  const grpc::Status& status() const { return status_; }
  bool unreachable() const { return unreachable_; }

 private:
  grpc::Status status_;
  bool unreachable_;
};

// gRPC's canonical name of a status code, e.g. "INVALID_ARGUMENT".
std::string_view code_name(grpc::StatusCode code);

}  // namespace asnctl

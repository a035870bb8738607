// The canonical status codes of gRPC (the numbers are part of its wire protocol) and their
// names, written once for asnd, asnctl and the client library.
#pragma once

#include <cstdint>
#include <string_view>

namespace asn::status {

enum class Code : uint8_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT"; "UNKNOWN" for a number outside the table.
std::string_view name(Code code);
std::string_view name(int code);

}  // namespace asn::status

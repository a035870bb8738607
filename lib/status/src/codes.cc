#include "asn/status/codes.hpp"

#include <array>

namespace asn::status {

namespace {

constexpr std::array<std::string_view, 17> kNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

}  // namespace

std::string_view name(int code) {
  return code >= 0 && code < static_cast<int>(kNames.size()) ? kNames[code] : "UNKNOWN";
}

std::string_view name(Code code) { return name(static_cast<int>(code)); }

}  // namespace asn::status

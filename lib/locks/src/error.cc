#include "asn/locks/error.hpp"

namespace asn::locks {

std::string_view name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kResourceExhausted:
      return "resource exhausted";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kFailedPrecondition:
      return "failed precondition";
  }
  return "unknown";
}

}  // namespace asn::locks

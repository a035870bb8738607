// The one error type of the lock library: a bad request (a range, a file id, a strided
// description), a full table, an unknown request or session, or an operation the table's
// state does not allow (unlocking what is not held). The kind maps to one gRPC status in
// asnd; the message names the range at fault by its index and says what would be accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asn::locks {

enum class ErrorKind : uint8_t {
  kInvalidArgument,     // the request is malformed: an empty or overlapping range, ...
  kResourceExhausted,   // the request is fine but the table has no room for it
  kNotFound,            // no such request or session
  kFailedPrecondition,  // not allowed in the table's state: a conflict in try mode,
                        // unlocking bytes not held, a request of an expired session
};

// "invalid argument", "resource exhausted", "not found", "failed precondition".
std::string_view name(ErrorKind kind);

// A value (Outcome and Change carry one) that can also be thrown (expand() throws it).
class LockError : public std::runtime_error {
 public:
  LockError(ErrorKind kind, const std::string& message, std::optional<size_t> index = {})
      : std::runtime_error(message), kind_(kind), index_(index) {}

  ErrorKind kind() const { return kind_; }
  // The range at fault, by its index in the request (the block, for a strided one).
  std::optional<size_t> index() const { return index_; }

 private:
  ErrorKind kind_;
  std::optional<size_t> index_;
};

}  // namespace asn::locks

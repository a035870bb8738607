// Bad input to the circuit library: one error type naming the field and what would be
// accepted, so that asnd maps it to one gRPC status in one place.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace asn::circuit {

enum class ErrorKind : uint8_t {
  kInvalidArgument,    // a node, port or slot that does not exist, a path that does not connect
  kResourceExhausted,  // well-formed, but asks for more slots than the links leave to run time
};

class CircuitError : public std::runtime_error {
 public:
  // what() is "<field>: <message>".
  CircuitError(ErrorKind kind, std::string field, const std::string& message);
  ErrorKind kind() const { return kind_; }
  const std::string& field() const { return field_; }

 private:
  ErrorKind kind_;
  std::string field_;
};

}  // namespace asn::circuit

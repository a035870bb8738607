#include "asn/circuit/error.hpp"

#include <utility>

namespace asn::circuit {

CircuitError::CircuitError(ErrorKind kind, std::string field, const std::string& message)
    : std::runtime_error(field + ": " + message), kind_(kind), field_(std::move(field)) {}

}  // namespace asn::circuit

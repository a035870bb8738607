// The one error type of the topology library: bad input (an impossible fabric, a router
// outside it, a fabric the ROUTE block cannot hold) names the field and what is accepted.
#pragma once

#include <stdexcept>
#include <string>

namespace asn::topology {

class TopologyError : public std::invalid_argument {
 public:
  // what() is "<field>: <message>"; the message states the limit or the accepted values.
  TopologyError(std::string field, const std::string& message)
      : std::invalid_argument(field + ": " + message), field_(std::move(field)) {}

  // The input at fault: "terminals", "k", "router", "radix", "dimensions", ...
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace asn::topology

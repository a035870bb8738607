#include "errors.hpp"

#include "asn/status/codes.hpp"

namespace asnctl {

std::string_view code_name(grpc::StatusCode code) {
  return asn::status::name(static_cast<int>(code));
}

}  // namespace asnctl

#include "services/grpc_status.hpp"

#include <fmt/format.h>

namespace asn {

grpc::StatusCode to_grpc_code(ErrorCode code) {
  // The canonical numbers are gRPC's own (asn/status/codes.hpp).
  return static_cast<grpc::StatusCode>(status_code(code));
}

grpc::Status to_grpc_status(const Error& error) {
  std::string message = error.what();
  if (message.size() > kMaxStatusMessageBytes) {
    const std::string more = fmt::format("... ({} bytes in all)", message.size());
    message.resize(kMaxStatusMessageBytes - more.size());
    message += more;
  }
  return grpc::Status(to_grpc_code(error.code()), message);
}

std::string join_problems(const std::vector<std::string>& problems, std::string_view tail) {
  // Leave room for the " and N more; " and the tail.
  const size_t budget = kMaxStatusMessageBytes - tail.size() - 32;
  std::string out;
  size_t shown = 0;
  for (const auto& p : problems) {
    if (out.size() + p.size() + 2 > budget) break;
    out += p + "; ";
    ++shown;
  }
  if (shown < problems.size()) {
    if (shown == 0) {
      out = problems.front().substr(0, budget) + "...; ";
      shown = 1;
    }
    if (shown < problems.size()) out += fmt::format("and {} more; ", problems.size() - shown);
  }
  return out + std::string(tail);
}

}  // namespace asn

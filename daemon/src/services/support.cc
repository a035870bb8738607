#include "services/support.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace asn {

void check_batch(int size, std::string_view what, int max) {
  if (size == 0) throw Error(ErrorCode::kInvalidArgument, fmt::format("no {} given", what));
  if (size > max) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{} {} in one call; at most {}", size, what, max));
  }
}

}  // namespace asn

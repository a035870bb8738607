// What every gRPC service of asnd shares beyond the status mapping (grpc_status.hpp) and
// authorization (auth.hpp): request size limits.
#pragma once

#include <cstddef>
#include <string_view>

namespace asn {

// The largest request asnd receives: a plan file of up to 4 MiB (the plan parser's limit)
// with room to spare, so that one a little larger is refused by asnd with a message that
// says so, not by gRPC's transport.
inline constexpr size_t kMaxRequestBytes = size_t{8} << 20;

// Items in one request (register reads or writes, ports, ...): larger batches are refused
// rather than tying up the bus for one caller.
inline constexpr int kMaxBatchItems = 4096;

// Throws kInvalidArgument for an empty batch or one over `max` items.
void check_batch(int size, std::string_view what, int max = kMaxBatchItems);

}  // namespace asn

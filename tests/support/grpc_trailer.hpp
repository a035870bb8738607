// trailer(context, key): one key of a finished call's trailing metadata, as the lock tests read
// asn-lock-reason and asn-lock-owner, one helper for the service and the integration tests.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>
#include <string_view>

namespace asn::test {

// The value of `key` in the call's trailing metadata, `missing` when the server sent none.
inline std::string trailer(const grpc::ClientContext& context, std::string_view key,
                           std::string_view missing = "") {
  const auto& trailers = context.GetServerTrailingMetadata();
  auto it = trailers.find(grpc::string_ref(key.data(), key.size()));
  return it == trailers.end() ? std::string(missing)
                              : std::string(it->second.data(), it->second.size());
}

}  // namespace asn::test

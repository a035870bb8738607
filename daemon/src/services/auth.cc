#include "services/auth.hpp"

#include <fmt/format.h>

#include "asn/text/text.hpp"
#include "error.hpp"

namespace asn {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::kReader:
      return "reader";
    case Role::kLockClient:
      return "lock client";
    case Role::kAdmin:
      return "admin";
  }
  return "?";
}

bool role_allows(Role role, Permission permission) {
  switch (role) {
    case Role::kAdmin:
      return true;
    case Role::kLockClient:
      return permission == Permission::kRead || permission == Permission::kLock;
    case Role::kReader:
      return permission == Permission::kRead;
  }
  return false;
}

void Authorizer::require(Permission permission, std::string_view operation) const {
  if (role_allows(policy_.role, permission)) return;
  throw Error(ErrorCode::kPermissionDenied,
              fmt::format("{} needs more than the {} role that {} grants{}", operation,
                          to_string(policy_.role), policy_.name,
                          policy_.how_to_get_more.empty() ? "" : ": " + policy_.how_to_get_more));
}

std::string Authorizer::describe_peer(const grpc::ServerContext& context) const {
  const std::string peer = context.peer();
  if (policy_.describe_peer) return policy_.describe_peer(peer);
  // A Unix-socket peer is just "unix:" (or the fd asnd handed to gRPC): the listener says it.
  if (peer.rfind("unix:", 0) == 0 || peer.rfind("fd:", 0) == 0 || peer.empty()) {
    return fmt::format("a client on {}", policy_.name);
  }
  return fmt::format("{} on {}", text::quoted(peer, 64), policy_.name);
}

}  // namespace asn

#include "services/auth.hpp"

#include <fmt/format.h>
#include <grpc/grpc_security_constants.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>

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

namespace {

[[noreturn]] void refuse(const ListenerPolicy& policy, std::string_view operation) {
  throw Error(ErrorCode::kPermissionDenied,
              fmt::format("{} needs more than the {} role that {} grants{}", operation,
                          to_string(policy.role), policy.name,
                          policy.how_to_get_more.empty() ? "" : ": " + policy.how_to_get_more));
}

// Refusals are logged at most this often (process-wide): a client retrying a refused call
// in a loop must not flood the journal.
constexpr auto kRefusalLogInterval = std::chrono::milliseconds(200);
std::atomic<int64_t> last_refusal_logged{INT64_MIN / 2};
std::atomic<uint64_t> refusals_unlogged{0};

bool may_log_refusal(uint64_t& skipped) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_refusal_logged.load();
  if (now - last < kRefusalLogInterval.count() ||
      !last_refusal_logged.compare_exchange_strong(last, now)) {
    refusals_unlogged.fetch_add(1);
    return false;
  }
  skipped = refusals_unlogged.exchange(0);
  return true;
}

}  // namespace

void Authorizer::require(Permission permission, std::string_view operation) const {
  if (role_allows(policy_.role, permission)) return;
  refuse(policy_, operation);
}

void Authorizer::require(Permission permission, std::string_view operation,
                         const grpc::ServerContextBase& context) const {
  if (role_allows(policy_.role, permission)) return;
  uint64_t skipped = 0;
  if (may_log_refusal(skipped)) {
    spdlog::warn("refused {} to {} on {} ({} role){}", operation, principal(context), policy_.name,
                 to_string(policy_.role),
                 skipped == 0 ? "" : fmt::format(" ({} more refusals not logged)", skipped));
  }
  refuse(policy_, operation);
}

std::string Authorizer::principal(const grpc::ServerContextBase& context) const {
  // Only a peer gRPC authenticated has properties worth naming: the TLS listener verified
  // its certificate against listen.tls.client_ca before the call arrived.
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth && auth->IsPeerAuthenticated()) {
    for (const char* property : {GRPC_X509_SUBJECT_PROPERTY_NAME, GRPC_X509_CN_PROPERTY_NAME}) {
      const std::vector<grpc::string_ref> values = auth->FindPropertyValues(property);
      if (!values.empty() && !values.front().empty()) {
        return text::escaped(std::string_view(values.front().data(), values.front().size()), 256);
      }
    }
  }
  return describe_peer(context);
}

bool Authorizer::certified(const grpc::ServerContextBase& context) const {
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  return auth && auth->IsPeerAuthenticated();
}

std::string Authorizer::owner_key(const grpc::ServerContextBase& context) const {
  if (certified(context)) return "cert " + principal(context);
  return policy_.peer_owner ? policy_.peer_owner(context.peer()) : std::string();
}

std::string Authorizer::quota_key(const grpc::ServerContextBase& context) const {
  std::string key = owner_key(context);
  if (!key.empty()) return key;
  // gRPC's peer: "ipv4:10.0.0.2:5123", "ipv6:[::1]:5123", "unix:..." (no uid known: the
  // listener's name stands for it).
  std::string peer = context.peer();
  if (peer.rfind("ipv4:", 0) == 0 || peer.rfind("ipv6:", 0) == 0) {
    peer = peer.substr(5);
    if (auto colon = peer.rfind(':'); colon != std::string::npos) peer.resize(colon);
    return "address " + text::escaped(peer, 64);
  }
  return "a client on " + policy_.name;
}

std::string Authorizer::describe_peer(const grpc::ServerContextBase& context) const {
  const std::string peer = context.peer();
  if (policy_.describe_peer) return policy_.describe_peer(peer);
  // A Unix-socket peer is just "unix:" (or the fd asnd handed to gRPC): the listener says it.
  if (peer.rfind("unix:", 0) == 0 || peer.rfind("fd:", 0) == 0 || peer.empty()) {
    return fmt::format("a client on {}", policy_.name);
  }
  return fmt::format("{} on {}", text::quoted(peer, 64), policy_.name);
}

}  // namespace asn

// Who may do what. asnd serves each listener (the Unix socket, TCP) with its own server and
// its own service instances, so a call's permissions follow from the listener it arrived
// on and the roles that listener grants: never from the peer string a client can shape.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <string>
#include <string_view>

namespace asn {

// What an operation needs.
enum class Permission : uint8_t {
  kRead,       // status, info, register reads and dumps, routes, schedules
  kLock,       // lock sessions, lock and unlock
  kConfigure,  // desired state: fabric, routing, schedules, stripe groups, ports
  kRegisters,  // raw register writes and board reset (bring-up)
  kLockAdmin,  // revoke any lock session, force-release any session's locks
};

// A role is a set of permissions. A reader only reads; a lock client reads and locks (a PFS
// client must never write registers); an admin may do everything.
enum class Role : uint8_t { kReader, kLockClient, kAdmin };

std::string_view to_string(Role role);
bool role_allows(Role role, Permission permission);

struct ListenerPolicy {
  std::string name;  // "unix:/run/asn/asnd.sock", "tcp 127.0.0.1:50051"
  Role role = Role::kReader;
  std::string how_to_get_more;  // appended to a refusal: what would allow it
  // Who is behind a call's peer string, as the listener that accepted it knows: "uid 1000
  // (alice) pid 42 on unix:/run/asn/asnd.sock". Unset: the peer string.
  std::function<std::string(const std::string& peer)> describe_peer;
  // Who owns the lock sessions a call's peer opens, as the listener verified it: "uid 1000"
  // on the Unix socket (SO_PEERCRED: any process of that user), empty where the listener
  // cannot tell (plain TCP: a session's secret stands for its owner there). Unset: empty.
  std::function<std::string(const std::string& peer)> peer_owner = {};
};

class Authorizer {
 public:
  explicit Authorizer(ListenerPolicy policy) : policy_(std::move(policy)) {}

  // Throws asn::Error kPermissionDenied naming the operation, the listener's role and what
  // would allow it.
  void require(Permission permission, std::string_view operation) const;
  // The same, and a refusal is logged naming the caller (principal()): "refused writing
  // registers to CN=pfs-client-7 on tcp 0.0.0.0:50051 (lock client role)". At most a few
  // refusals a second are logged; the rest are counted in the next one logged.
  void require(Permission permission, std::string_view operation,
               const grpc::ServerContextBase& context) const;
  const ListenerPolicy& policy() const { return policy_; }
  // For logs: "uid 0 (root) pid 42 on unix:/run/asn/asnd.sock", "10.0.0.2:5123 on tcp ...".
  std::string describe_peer(const grpc::ServerContextBase& context) const;
  // Who the caller is, as an owner to record (lock sessions) and to name in logs: with
  // mutual TLS the subject of the client's certificate, which the listener verified
  // ("CN=pfs-client-7,O=Example"); otherwise describe_peer(): "uid 1000 (alice) pid 42 on
  // unix:/run/asn/asnd.sock", the address on plain TCP.
  std::string principal(const grpc::ServerContextBase& context) const;
  // Whether principal() is a certificate subject the listener verified (mutual TLS), and so
  // names the caller whatever connection it comes on.
  bool certified(const grpc::ServerContextBase& context) const;
  // The caller's principal as a lock session owner (SessionCaller::owner_key): "cert
  // <subject>" with mutual TLS, else the listener's peer_owner ("uid 1000"), else empty.
  std::string owner_key(const grpc::ServerContextBase& context) const;
  // Whose quotas the caller's lock sessions count against: owner_key(), or on plain TCP,
  // where nobody is verified, the client's address without its port ("address 10.0.0.2"):
  // one host cannot take the whole switch by opening connections.
  std::string quota_key(const grpc::ServerContextBase& context) const;

 private:
  ListenerPolicy policy_;
};

}  // namespace asn

// A client of etcd's v3 gRPC API (KV, Txn, Lease, Watch) for the fabric (issue 25): the
// part of go.etcd.io/etcd/clientv3 asnd and asnctl need, over the gRPC we already use and
// the proto files Debian ships (etcd/CMakeLists.txt).
//
// Several endpoints (the members of a cluster): a call goes to the member that last
// answered; when that member cannot be reached the call moves on to the next, so one dead
// member changes nothing. A write is only retried on another member when the first never
// received it (UNAVAILABLE before sending); a write that timed out is reported, not
// repeated, since it may have been applied.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace etcdserverpb {
class RangeRequest;
}

namespace asn::etcd {

struct Options {
  // host:port, http://host:port or https://host:port (TLS). At least one.
  std::vector<std::string> endpoints;
  // TLS: the CA that signed the members' certificates, and the client's own pair (etcd's
  // --client-cert-auth). Empty: the system's roots, no client certificate.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // etcd's own authentication (etcdctl auth enable): empty user, none.
  std::string user;
  std::string password;
  std::chrono::milliseconds timeout{2000};  // per call
};

// A call that did not succeed: which member(s), what etcd (or the network) said.
// `unreachable`: no member answered at all (the store is down or the endpoints are wrong).
class Error : public std::runtime_error {
 public:
  Error(int grpc_code, bool unreachable, std::string message)
      : std::runtime_error(std::move(message)), code_(grpc_code), unreachable_(unreachable) {}
  int grpc_code() const { return code_; }
  bool unreachable() const { return unreachable_; }

 private:
  int code_;
  bool unreachable_;
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

struct Range {
  int64_t revision = 0;  // the store's revision the read saw
  std::vector<KeyValue> kvs;
};

struct Put {
  std::string key;
  std::string value;
  int64_t lease = 0;  // 0: none
};
struct Delete {
  std::string key;
  bool prefix = false;  // every key that starts with `key`
};
using Op = std::variant<Put, Delete>;

// A Txn's guard: the key was last modified at `mod_revision` (0: the key does not exist).
struct ModRevisionIs {
  std::string key;
  int64_t mod_revision = 0;
};

struct TxnResult {
  bool succeeded = false;  // every guard held and the ops were applied
  int64_t revision = 0;    // the store's revision after the Txn
};

// The key range that holds every key starting with `prefix` (etcd's range_end).
std::string prefix_end(std::string_view prefix);

class Client {
 public:
  // Checks the options (throws std::invalid_argument naming the bad field); connects lazily.
  explicit Client(Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Options& options() const { return options_; }
  std::string endpoints_text() const;  // "a, b, c", for messages

  Range get(std::string_view key);
  // Every key under `prefix`, at `revision` (0: the latest); `keys_only`: without values.
  Range get_prefix(std::string_view prefix, int64_t revision = 0, bool keys_only = false);
  int64_t put(const Put& put);  // returns the revision it made
  // Applies `ops` in one transaction if every guard holds; nothing otherwise.
  TxnResult txn(const std::vector<ModRevisionIs>& guards, const std::vector<Op>& ops);

  // Leases: a key put with a lease is deleted when the lease expires.
  int64_t grant_lease(std::chrono::seconds ttl);
  // Renews the lease; returns the TTL it now has (0: it had expired, the keys are gone).
  int64_t keep_alive(int64_t lease);
  void revoke_lease(int64_t lease);

  // A gRPC channel to a member that answers, and the metadata every call carries (the auth
  // token); for the Watch stream. Throws Error when no member answers.
  struct Connection {
    std::shared_ptr<grpc::Channel> channel;
    std::string token;
    std::string endpoint;
  };
  Connection connect();
  // The Watch stream broke on this member: the next connect() starts with the next one.
  void mark_failed(const std::string& endpoint);

  // Ends every call in flight (they throw Error, CANCELLED) and makes later ones fail at
  // once: for a shutdown that must not wait out a timeout on a silent member.
  void cancel_all();

 private:
  struct Member;
  template <typename Call>
  auto with_member(std::string_view what, bool idempotent, Call&& call);
  std::string authenticate(Member& member);
  Range range(const etcdserverpb::RangeRequest& request);

  Options options_;
  std::vector<std::unique_ptr<Member>> members_;
  std::mutex mutex_;
  size_t current_ = 0;                           // the member that last answered (mutex_)
  bool cancelled_ = false;                       // mutex_
  std::vector<grpc::ClientContext*> in_flight_;  // mutex_
};

}  // namespace asn::etcd

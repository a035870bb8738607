// The one channel asnctl opens to asnd, and the rules every call follows: a deadline from
// --timeout, no waiting for a server that is not there, and one way of judging failures.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace asnctl {

inline constexpr const char* kDefaultSocket = "/run/asn/asnd.sock";

// The global options, as given before or after the subcommand.
struct GlobalOptions {
  std::string socket_path = kDefaultSocket;  // or $ASN_SOCKET
  std::string address;                       // HOST:PORT; when set, TCP instead of the socket
  // TLS over TCP (asnd's listen.tls): the CA that signed asnd's certificate, and this
  // client's certificate and key (or $ASNCTL_TLS_CA, $ASNCTL_TLS_CERT, $ASNCTL_TLS_KEY).
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  bool tls() const { return !tls_ca.empty() || !tls_cert.empty() || !tls_key.empty(); }
  std::string output = "table";  // table or json
  double timeout_seconds = 10;
};

// Checks the TLS options before asnd is contacted: only with --address, --tls-cert and
// --tls-key together, each file readable. Throws UsageError.
void check_tls_options(const GlobalOptions& options);

class Connection {
 public:
  explicit Connection(const GlobalOptions& options);

  // The channel target: "unix:/run/asn/asnd.sock" or "HOST:PORT".
  const std::string& target() const { return target_; }
  bool over_tcp() const { return over_tcp_; }
  bool over_tls() const { return over_tls_; }
  double timeout_seconds() const { return timeout_seconds_; }

  // The channel to asnd; each command makes the stubs of the services it calls.
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Every call goes through here: sets the deadline (now + --timeout) and
  // wait_for_ready(false), so that a missing asnd fails at once instead of hanging.
  void prepare(grpc::ClientContext& context) const;

  // Throws RpcError unless `status` is OK. A call that never reached asnd (UNAVAILABLE or
  // DEADLINE_EXCEEDED while the channel is not connected) is marked unreachable.
  void check(const grpc::Status& status) const;

 private:
  std::string target_;
  bool over_tcp_;
  bool over_tls_;
  double timeout_seconds_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace asnctl

#include "connection.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "errors.hpp"

namespace asnctl {

namespace {

// A PEM file of a --tls-* option, whole; "" and `error` set when it cannot be read.
std::string read_file(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return "";
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) error = "read error";
  return text.str();
}

std::shared_ptr<grpc::ChannelCredentials> credentials(const GlobalOptions& options) {
  if (!options.tls()) return grpc::InsecureChannelCredentials();
  std::string error;
  grpc::SslCredentialsOptions ssl;
  // No --tls-ca: the system's CAs.
  if (!options.tls_ca.empty()) ssl.pem_root_certs = read_file(options.tls_ca, error);
  if (!options.tls_cert.empty()) ssl.pem_cert_chain = read_file(options.tls_cert, error);
  if (!options.tls_key.empty()) ssl.pem_private_key = read_file(options.tls_key, error);
  return grpc::SslCredentials(ssl);
}

}  // namespace

void check_tls_options(const GlobalOptions& options) {
  if (!options.tls()) return;
  if (options.address.empty()) {
    throw UsageError("--tls-ca, --tls-cert and --tls-key are for TCP: give --address HOST:PORT");
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw UsageError(options.tls_cert.empty()
                         ? "--tls-key without --tls-cert: give the certificate the key belongs to"
                         : "--tls-cert without --tls-key: give the certificate's private key");
  }
  const std::pair<const char*, const std::string*> files[] = {{"--tls-ca", &options.tls_ca},
                                                              {"--tls-cert", &options.tls_cert},
                                                              {"--tls-key", &options.tls_key}};
  for (const auto& [option, path] : files) {
    if (path->empty()) continue;
    std::string error;
    const std::string text = read_file(*path, error);
    if (!error.empty())
      throw UsageError(std::string(option) + ": cannot read " + *path + ": " + error);
    if (text.find("-----BEGIN ") == std::string::npos) {
      throw UsageError(std::string(option) + ": " + *path + " is not a PEM file (expected " +
                       (option == std::string("--tls-key") ? "'-----BEGIN PRIVATE KEY-----'"
                                                           : "'-----BEGIN CERTIFICATE-----'") +
                       ")");
    }
  }
}

namespace {

// A reply may be larger than gRPC's default limit of 4 MiB (a fabric's compiled plan, asked
// for with --yaml, is megabytes): what asnd sends is what was asked for, and asnctl takes it
// whole, as etcdctl does (its MaxCallRecvMsgSize defaults to no limit).
grpc::ChannelArguments channel_arguments() {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  return arguments;
}

}  // namespace

Connection::Connection(const GlobalOptions& options)
    : target_(options.address.empty() ? "unix:" + options.socket_path : options.address),
      over_tcp_(!options.address.empty()),
      over_tls_(options.tls()),
      timeout_seconds_(options.timeout_seconds),
      channel_(grpc::CreateCustomChannel(target_, credentials(options), channel_arguments())) {}

void Connection::prepare(grpc::ClientContext& context) const {
  auto timeout = std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::duration<double>(timeout_seconds_));
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  context.set_wait_for_ready(false);
}

void Connection::check(const grpc::Status& status) const {
  if (status.ok()) return;
  bool unreachable = false;
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    // asnd itself answers UNAVAILABLE when the board cannot be reached, and a slow answer
    // ends in DEADLINE_EXCEEDED: those came over a working connection. Without one, asnd
    // was never reached.
    unreachable = channel_->GetState(false) != GRPC_CHANNEL_READY;
  }
  throw RpcError(status, unreachable);
}

}  // namespace asnctl

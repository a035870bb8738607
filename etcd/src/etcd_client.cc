#include "etcd_client.hpp"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <fstream>
#include <sstream>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace asn::etcd {

namespace pb = etcdserverpb;

namespace {

std::string read_file(const std::string& field, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read {}", field, path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "https://h:p" -> {"h:p", true}; "http://h:p" and "h:p" -> {"h:p", false}.
std::pair<std::string, bool> split_scheme(const std::string& endpoint) {
  constexpr std::string_view kHttps = "https://", kHttp = "http://";
  if (endpoint.starts_with(kHttps)) return {endpoint.substr(kHttps.size()), true};
  if (endpoint.starts_with(kHttp)) return {endpoint.substr(kHttp.size()), false};
  return {endpoint, false};
}

KeyValue from_pb(const mvccpb::KeyValue& kv) {
  return KeyValue{kv.key(),          kv.value(),   kv.create_revision(),
                  kv.mod_revision(), kv.version(), kv.lease()};
}

bool is_auth_failure(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         status.error_message().find("invalid auth token") != std::string::npos;
}

}  // namespace

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

struct Client::Member {
  std::string endpoint;  // as configured
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::KV::Stub> kv;
  std::unique_ptr<pb::Lease::Stub> lease;
  std::unique_ptr<pb::Auth::Stub> auth;
  std::mutex token_mutex;
  std::string token;  // token_mutex
};

Client::Client(Options options) : options_(std::move(options)) {
  if (options_.endpoints.empty()) {
    throw std::invalid_argument("etcd endpoints: none given (e.g. 127.0.0.1:2379)");
  }
  if (options_.cert_file.empty() != options_.key_file.empty()) {
    throw std::invalid_argument("etcd cert_file and key_file: give both or neither");
  }
  if (options_.timeout <= std::chrono::milliseconds::zero()) {
    throw std::invalid_argument("etcd timeout: must be above 0");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options_.ca_file.empty()) ssl.pem_root_certs = read_file("etcd ca_file", options_.ca_file);
  if (!options_.cert_file.empty()) {
    ssl.pem_cert_chain = read_file("etcd cert_file", options_.cert_file);
    ssl.pem_private_key = read_file("etcd key_file", options_.key_file);
  }
  grpc::ChannelArguments args;
  // A member that comes back is used again within seconds, not after gRPC's default backoff
  // of up to two minutes: "catches up when etcd returns" depends on it.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  args.SetMaxReceiveMessageSize(64 << 20);
  // A member that stops answering (a partition, SIGSTOP) breaks a Watch stream within
  // seconds instead of leaving it silent; etcd allows a ping every 5 s (its
  // --grpc-keepalive-min-time).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  for (const std::string& endpoint : options_.endpoints) {
    auto [target, https] = split_scheme(endpoint);
    if (target.empty())
      throw std::invalid_argument(fmt::format("etcd endpoint '{}': no address", endpoint));
    const bool tls = https || !options_.ca_file.empty();
    auto member = std::make_unique<Member>();
    member->endpoint = endpoint;
    member->channel = grpc::CreateCustomChannel(
        target, tls ? grpc::SslCredentials(ssl) : grpc::InsecureChannelCredentials(), args);
    member->kv = pb::KV::NewStub(member->channel);
    member->lease = pb::Lease::NewStub(member->channel);
    member->auth = pb::Auth::NewStub(member->channel);
    members_.push_back(std::move(member));
  }
}

Client::~Client() = default;

std::string Client::endpoints_text() const {
  return fmt::format("{}", fmt::join(options_.endpoints, ", "));
}

std::string Client::authenticate(Member& member) {
  if (options_.user.empty()) return {};
  pb::AuthenticateRequest request;
  request.set_name(options_.user);
  request.set_password(options_.password);
  pb::AuthenticateResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  grpc::Status status = member.auth->Authenticate(&context, request, &response);
  if (!status.ok()) {
    const bool unreachable = status.error_code() == grpc::StatusCode::UNAVAILABLE;
    throw Error(status.error_code(), unreachable,
                fmt::format("etcd at {} refused user '{}': {}", member.endpoint, options_.user,
                            status.error_message()));
  }
  std::lock_guard lock(member.token_mutex);
  member.token = response.token();
  return member.token;
}

// Runs `call(member, context)` on the member that last answered, then on the others while
// members cannot be reached. `idempotent`: a timeout may also be retried elsewhere.
template <typename Call>
auto Client::with_member(std::string_view what, bool idempotent, Call&& call) {
  size_t start;
  {
    std::lock_guard lock(mutex_);
    start = current_;
  }
  std::vector<std::string> failures;
  for (size_t i = 0; i < members_.size(); ++i) {
    const size_t index = (start + i) % members_.size();
    Member& member = *members_[index];
    grpc::Status status;
    for (int attempt = 0; attempt < 2; ++attempt) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + options_.timeout);
      std::string token;
      {
        std::lock_guard lock(member.token_mutex);
        token = member.token;
      }
      if (token.empty() && !options_.user.empty()) {
        try {
          token = authenticate(member);
        } catch (const Error& e) {
          if (!e.unreachable()) throw;
          status = grpc::Status(grpc::StatusCode::UNAVAILABLE, e.what());
          break;
        }
      }
      if (!token.empty()) context.AddMetadata("token", token);
      {
        std::lock_guard lock(mutex_);
        if (cancelled_) throw Error(grpc::StatusCode::CANCELLED, false, "etcd client stopped");
        in_flight_.push_back(&context);
      }
      status = call(member, context);
      {
        std::lock_guard lock(mutex_);
        std::erase(in_flight_, &context);
        if (cancelled_) throw Error(grpc::StatusCode::CANCELLED, false, "etcd client stopped");
      }
      if (status.ok() || attempt == 1 || options_.user.empty() || !is_auth_failure(status)) break;
      std::lock_guard lock(member.token_mutex);
      member.token.clear();  // expired: authenticate again once
    }
    if (status.ok()) {
      std::lock_guard lock(mutex_);
      current_ = index;
      return;
    }
    const auto code = status.error_code();
    if (code == grpc::StatusCode::UNIMPLEMENTED) {
      throw Error(code, false,
                  fmt::format("{} does not serve etcd's v3 API ({}): is the endpoint an etcd "
                              "member's client URL (--listen-client-urls)?",
                              member.endpoint, status.error_message()));
    }
    const bool retry = code == grpc::StatusCode::UNAVAILABLE ||
                       (idempotent && code == grpc::StatusCode::DEADLINE_EXCEEDED);
    if (!retry) {
      throw Error(
          code, false,
          fmt::format("etcd {} failed at {}: {}", what, member.endpoint, status.error_message()));
    }
    failures.push_back(fmt::format("{}: {}", member.endpoint, status.error_message()));
  }
  throw Error(static_cast<int>(grpc::StatusCode::UNAVAILABLE), true,
              fmt::format("etcd cannot be reached ({}): {}", what, fmt::join(failures, "; ")));
}

Range Client::range(const etcdserverpb::RangeRequest& request) {
  Range out;
  with_member("get", true, [&](Member& m, grpc::ClientContext& context) {
    pb::RangeResponse response;
    grpc::Status status = m.kv->Range(&context, request, &response);
    if (status.ok()) {
      out.revision = response.header().revision();
      out.kvs.clear();
      for (const auto& kv : response.kvs()) out.kvs.push_back(from_pb(kv));
    }
    return status;
  });
  return out;
}

Range Client::get(std::string_view key) {
  pb::RangeRequest request;
  request.set_key(std::string(key));
  return range(request);
}

Range Client::get_prefix(std::string_view prefix, int64_t revision, bool keys_only) {
  pb::RangeRequest request;
  request.set_key(std::string(prefix));
  request.set_range_end(prefix_end(prefix));
  request.set_revision(revision);
  request.set_keys_only(keys_only);
  request.set_sort_order(pb::RangeRequest::ASCEND);
  request.set_sort_target(pb::RangeRequest::KEY);
  return range(request);
}

int64_t Client::put(const Put& put) {
  pb::PutRequest request;
  request.set_key(put.key);
  request.set_value(put.value);
  request.set_lease(put.lease);
  int64_t revision = 0;
  with_member("put", false, [&](Member& m, grpc::ClientContext& context) {
    pb::PutResponse response;
    grpc::Status status = m.kv->Put(&context, request, &response);
    if (status.ok()) revision = response.header().revision();
    return status;
  });
  return revision;
}

TxnResult Client::txn(const std::vector<ModRevisionIs>& guards, const std::vector<Op>& ops) {
  pb::TxnRequest request;
  for (const ModRevisionIs& guard : guards) {
    pb::Compare* compare = request.add_compare();
    compare->set_key(guard.key);
    compare->set_result(pb::Compare::EQUAL);
    compare->set_target(pb::Compare::MOD);
    compare->set_mod_revision(guard.mod_revision);
  }
  for (const Op& op : ops) {
    pb::RequestOp* request_op = request.add_success();
    if (const auto* put = std::get_if<Put>(&op)) {
      pb::PutRequest* p = request_op->mutable_request_put();
      p->set_key(put->key);
      p->set_value(put->value);
      p->set_lease(put->lease);
    } else {
      const auto& del = std::get<Delete>(op);
      pb::DeleteRangeRequest* d = request_op->mutable_request_delete_range();
      d->set_key(del.key);
      if (del.prefix) d->set_range_end(prefix_end(del.key));
    }
  }
  TxnResult out;
  with_member("txn", false, [&](Member& m, grpc::ClientContext& context) {
    pb::TxnResponse response;
    grpc::Status status = m.kv->Txn(&context, request, &response);
    if (status.ok()) {
      out.succeeded = response.succeeded();
      out.revision = response.header().revision();
    }
    return status;
  });
  return out;
}

int64_t Client::grant_lease(std::chrono::seconds ttl) {
  pb::LeaseGrantRequest request;
  request.set_ttl(ttl.count());
  int64_t id = 0;
  with_member("lease grant", false, [&](Member& m, grpc::ClientContext& context) {
    pb::LeaseGrantResponse response;
    grpc::Status status = m.lease->LeaseGrant(&context, request, &response);
    if (status.ok() && !response.error().empty()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, response.error());
    }
    if (status.ok()) id = response.id();
    return status;
  });
  return id;
}

int64_t Client::keep_alive(int64_t lease) {
  int64_t ttl = 0;
  with_member("lease keep-alive", true, [&](Member& m, grpc::ClientContext& context) {
    auto stream = m.lease->LeaseKeepAlive(&context);
    pb::LeaseKeepAliveRequest request;
    request.set_id(lease);
    pb::LeaseKeepAliveResponse response;
    // One renewal per call; closing our side ends etcd's loop, and the stream with it.
    if (stream->Write(request) && stream->Read(&response)) ttl = response.ttl();
    stream->WritesDone();
    return stream->Finish();
  });
  return ttl;
}

void Client::revoke_lease(int64_t lease) {
  pb::LeaseRevokeRequest request;
  request.set_id(lease);
  with_member("lease revoke", true, [&](Member& m, grpc::ClientContext& context) {
    pb::LeaseRevokeResponse response;
    grpc::Status status = m.lease->LeaseRevoke(&context, request, &response);
    // An expired lease is already gone: what revoke wanted.
    if (status.error_message().find("requested lease not found") != std::string::npos) {
      return grpc::Status::OK;
    }
    return status;
  });
}

Client::Connection Client::connect() {
  Connection out;
  with_member("connect", true, [&](Member& m, grpc::ClientContext& context) {
    // A cheap linearizable-free read proves the member answers (and the token is good).
    pb::RangeRequest request;
    request.set_key("\0", 1);
    request.set_serializable(true);
    request.set_count_only(true);
    pb::RangeResponse response;
    grpc::Status status = m.kv->Range(&context, request, &response);
    if (status.ok()) {
      out.channel = m.channel;
      out.endpoint = m.endpoint;
      std::lock_guard lock(m.token_mutex);
      out.token = m.token;
    }
    return status;
  });
  return out;
}

void Client::cancel_all() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  for (grpc::ClientContext* context : in_flight_) context->TryCancel();
}

void Client::mark_failed(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  if (members_[current_]->endpoint == endpoint) current_ = (current_ + 1) % members_.size();
}

}  // namespace asn::etcd

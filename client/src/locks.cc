// libasnclient: the C++ API over the generated Locks stub: the client, and the calls of a
// session (its keepalive and recovery are in session_recovery.cc).
#include "asn/client/locks.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <type_traits>

#include "session_impl.hpp"

namespace asn::client {

namespace {

const char* const kCodeNames[] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

std::string describe(std::string_view call, StatusCode code, const std::string& message) {
  std::string text(call);
  text += ": ";
  text += to_string(code);
  if (!message.empty()) {
    text += ": ";
    text += message;
  }
  return text;
}

std::string read_pem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    throw Error("CONNECT", StatusCode::kInvalidArgument,
                std::string("cannot read the TLS ") + what + " file " + path);
  }
  return text.str();
}

// "unix:/p" and "host:port" as they are; a path ("/p", "./p", "p.sock") becomes "unix:p";
// "" the default endpoint.
std::string target_of(const std::string& endpoint) {
  if (endpoint.empty()) return LockClient::default_endpoint();
  if (endpoint.rfind("unix:", 0) == 0 || endpoint.rfind("unix-abstract:", 0) == 0) {
    return endpoint;
  }
  if (endpoint.front() == '/' || endpoint.front() == '.' ||
      endpoint.find(':') == std::string::npos) {
    return "unix:" + endpoint;
  }
  return endpoint;
}

std::chrono::system_clock::time_point system_deadline(Clock::time_point at) {
  auto left = at - Clock::now();
  if (left < Clock::duration::zero()) left = Clock::duration::zero();
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
}

void fill(pb::ByteRange* out, const ByteRange& range) {
  out->set_offset(range.offset);
  out->set_length(range.length);
}

void fill(pb::StridedRanges* out, const Strided& strided) {
  out->set_offset(strided.offset);
  out->set_block_length(strided.block_length);
  out->set_stride(strided.stride);
  out->set_count(strided.count);
}

template <class Request>
void fill_ranges(Request& request, const Ranges& ranges) {
  if (ranges.is_strided()) {
    fill(request.mutable_strided(), ranges.strided());
  } else {
    for (const auto& range : ranges.list()) fill(request.add_ranges(), range);
  }
}

}  // namespace

const char* to_string(StatusCode code) noexcept {
  auto index = static_cast<int>(code);
  if (index < 0 || index > 16) return "UNKNOWN";
  return kCodeNames[index];
}

Error::Error(std::string_view call, StatusCode code, std::string message)
    : std::runtime_error(describe(call, code, message)),
      code_(code),
      message_(std::move(message)) {}

Moved::Moved(std::string_view call, StatusCode code, std::string message, std::string owner)
    : Error(call, code, std::move(message)), owner_(std::move(owner)) {}

// ---------------------------------------------------------------------------------------------

std::string LockClient::default_endpoint() {
  // As asnctl reads it: a socket path, whatever it looks like, so that one variable points
  // both at the same asnd.
  const char* socket = std::getenv("ASN_SOCKET");
  return socket != nullptr && *socket != '\0' ? "unix:" + std::string(socket) : kDefaultEndpoint;
}

LockClient::LockClient(std::string endpoint, ClientOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->target = target_of(endpoint);
  impl_->options = options;
  grpc::ChannelArguments args;
  // Reconnect as quickly as the session's own backoff retries (gRPC's default waits up to
  // 120 s between attempts, longer than any lease). Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS:
  // gRPC takes it as the time one connection attempt may last, and at 20 ms a loaded host's
  // handshake ran past it ("connection attempt timed out before receiving SETTINGS frame"),
  // failing calls against a server that was up.
  auto initial = static_cast<int>(std::max<milliseconds::rep>(options.initial_backoff.count(), 1));
  auto cap = static_cast<int>(std::max<milliseconds::rep>(options.max_backoff.count(), initial));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, initial);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, cap);
  // A grant lists its ranges (65,536 at most: about 0.9 MB); asnd cuts the Batch stream's
  // replies at 2 MiB, but a reply gRPC refused for its size would lose the grants in it.
  args.SetMaxReceiveMessageSize(16 << 20);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  const TlsOptions& tls = options.tls;
  if (!tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty()) {
    if (tls.cert_file.empty() != tls.key_file.empty()) {
      throw Error("CONNECT", StatusCode::kInvalidArgument,
                  "TLS needs both the client certificate and its key (or neither)");
    }
    grpc::SslCredentialsOptions ssl;
    if (!tls.ca_file.empty()) ssl.pem_root_certs = read_pem(tls.ca_file, "CA");
    if (!tls.cert_file.empty()) {
      ssl.pem_cert_chain = read_pem(tls.cert_file, "certificate");
      ssl.pem_private_key = read_pem(tls.key_file, "key");
    }
    if (!tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  impl_->channel = grpc::CreateCustomChannel(impl_->target, credentials, args);
  impl_->stub = pb::Locks::NewStub(impl_->channel);
}

LockClient::~LockClient() = default;
LockClient::LockClient(LockClient&&) noexcept = default;
LockClient& LockClient::operator=(LockClient&&) noexcept = default;

const std::string& LockClient::target() const { return impl_->target; }

// ---------------------------------------------------------------------------------------------

void Session::Impl::check_usable(std::string_view call) const {
  if (lost) {
    std::lock_guard lock(mutex);
    throw SessionLost(
        call, lost_error->code(),
        "session " + std::to_string(id) + " is lost, its locks are gone: " + lost_error->message());
  }
  if (closed) {
    throw Error(call, StatusCode::kFailedPrecondition,
                "session " + std::to_string(id) + " was closed");
  }
}

Refusal Session::Impl::refusal_of(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto value = [&](const char* key) {
    auto it = trailers.find(key);
    return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
  };
  return {value("asn-lock-reason"), value("asn-lock-owner")};
}

void Session::Impl::fail(std::string_view call, const grpc::Status& status, bool try_lock,
                         const Refusal& refusal, bool may_probe) {
  const std::string& reason = refusal.reason;
  StatusCode code = code_of(status);
  if (closed) {
    throw Error(call, code, status.error_message() + " (the session was closed)");
  }
  if (reason == "session-gone") {
    mark_lost(Error(call, code, status.error_message()));
    throw SessionLost(call, code,
                      "session " + std::to_string(id) +
                          " is lost, its locks are gone: " + status.error_message());
  }
  if (reason == "conflict") throw Conflict(call, code, status.error_message());
  if (reason == "moved" && !refusal.owner.empty()) {
    throw Moved(call, code, status.error_message(), refusal.owner);
  }
  if (reason == "locks-lost" || reason == "confirm-held") {
    ask_recovery();
    throw MustRecover(call, code, status.error_message());
  }
  if (reason == "grace") throw InLossGrace(call, code, status.error_message());
  if (!reason.empty()) throw Error(call, code, status.error_message());
  // An asnd that gives no reason: ask it whether the session is still there.
  if (code == StatusCode::kFailedPrecondition || code == StatusCode::kAborted) {
    if (may_probe && probe_lost()) {
      throw SessionLost(call, code,
                        "session " + std::to_string(id) +
                            " is lost, its locks are gone: " + status.error_message());
    }
    if (try_lock && code == StatusCode::kFailedPrecondition) {
      throw Conflict(call, code, status.error_message());
    }
  }
  throw Error(call, code, status.error_message());
}

Grant Session::Impl::lock(std::string_view call, std::string_view file, const Ranges& ranges,
                          Mode mode, const Deadline& deadline, const std::stop_token& stop,
                          bool try_lock) {
  bool recovered_once = false;
  for (;;) {
    try {
      // Noted before the call counts as ended: see lock_calls.
      LockCallScope in_flight(*this);
      Grant grant = lock_once(call, file, ranges, mode, deadline, stop, try_lock);
      noted(file, mode, grant);
      return grant;
    } catch (const MustRecover&) {
      if (recovered_once) throw;
      await_recovery();
      recovered_once = true;
    } catch (const InLossGrace&) {
      if (try_lock) throw;
      const auto now = Clock::now();
      if (!deadline.is_never() && now >= deadline.at()) throw;
      auto pause = milliseconds(100);
      if (!deadline.is_never()) {
        pause = std::min(pause, std::chrono::ceil<milliseconds>(deadline.at() - now));
      }
      std::unique_lock lock(mutex);
      wake.wait_for(lock, stop, pause, [] { return false; });
      if (stop.stop_requested()) throw Error(call, StatusCode::kCancelled, "cancelled");
    }
  }
}

Grant Session::Impl::lock_once(std::string_view call, std::string_view file, const Ranges& ranges,
                               Mode mode, const Deadline& deadline, const std::stop_token& stop,
                               bool try_lock) {
  check_usable(call);
  if (stop.stop_requested()) throw Error(call, StatusCode::kCancelled, "cancelled");
  pb::LockRequest request = lock_request(file, ranges, mode);
  // The stream has no cancel of one op: a lock that may be stopped goes as its own call.
  if (client->options.batch && !stop.stop_possible()) {
    return lock_batched(call, std::move(request), deadline, try_lock);
  }
  grpc::ClientContext context;
  if (try_lock) {
    set_timeout(context, options().call_timeout);
  } else if (!deadline.is_never()) {
    context.set_deadline(system_deadline(deadline.at()));
  }
  // A call made while asnd restarts waits for it (within its deadline).
  context.set_wait_for_ready(true);
  std::optional<std::stop_callback<std::function<void()>>> cancel;
  if (stop.stop_possible()) cancel.emplace(stop, [&context] { context.TryCancel(); });
  pb::LockResponse response;
  grpc::Status status = try_lock ? stub().TryLock(&context, request, &response)
                                 : stub().Lock(&context, request, &response);
  cancel.reset();
  if (!status.ok()) fail(call, status, try_lock, refusal_of(context));
  return grant_of(response);
}

Grant Session::Impl::grant_of(const pb::LockResponse& response) {
  Grant grant;
  grant.token = response.token();
  grant.request = response.request();
  grant.domain = response.domain();
  grant.waited = response.waited();
  for (const auto& range : response.ranges()) {
    grant.ranges.push_back({range.offset(), range.length()});
  }
  return grant;
}

pb::LockRequest Session::Impl::lock_request(std::string_view file, const Ranges& ranges,
                                            Mode mode) const {
  pb::LockRequest request;
  request.set_session(id);
  request.set_secret(secret);
  request.set_file(std::string(file));
  request.set_mode(mode == Mode::kExclusive ? pb::LOCK_MODE_EXCLUSIVE : pb::LOCK_MODE_SHARED);
  fill_ranges(request, ranges);
  return request;
}

pb::UnlockRequest Session::Impl::unlock_request(std::string_view file, const Ranges& ranges) const {
  pb::UnlockRequest request;
  request.set_session(id);
  request.set_secret(secret);
  request.set_file(std::string(file));
  fill_ranges(request, ranges);
  return request;
}

pb::LockOp Session::Impl::lock_op(pb::LockRequest request, const Deadline& deadline, bool try_lock,
                                  Clock::time_point& wait_until) const {
  pb::LockOp op;
  wait_until = Clock::time_point::max();
  if (try_lock) {
    *op.mutable_try_lock() = std::move(request);
    wait_until = Clock::now() + options().call_timeout;
  } else {
    *op.mutable_lock() = std::move(request);
    if (!deadline.is_never()) {
      const auto left = std::chrono::ceil<milliseconds>(deadline.at() - Clock::now()).count();
      op.set_timeout_ms(static_cast<std::uint32_t>(
          std::clamp<milliseconds::rep>(left, 1, std::numeric_limits<std::uint32_t>::max())));
      wait_until = deadline.at() + options().call_timeout;
    }
  }
  return op;
}

pb::LockOp Session::Impl::unlock_op(pb::UnlockRequest request, bool downgrade) {
  pb::LockOp op;
  *(downgrade ? op.mutable_downgrade() : op.mutable_unlock()) = std::move(request);
  return op;
}

UnlockResult Session::Impl::unlock_result_of(const pb::UnlockResponse& response) {
  return {response.released(), response.granted()};
}

Grant Session::Impl::lock_batched(std::string_view call, pb::LockRequest request,
                                  const Deadline& deadline, bool try_lock) {
  Clock::time_point wait_until;
  pb::LockOp op = lock_op(std::move(request), deadline, try_lock, wait_until);
  BatchOutcome outcome = client->batcher().run(std::move(op), wait_until);
  if (!outcome.status.ok()) fail(call, outcome.status, try_lock, outcome.refusal);
  return grant_of(outcome.result.lock());
}

UnlockResult Session::Impl::unlock_batched(std::string_view call, pb::UnlockRequest request,
                                           bool downgrade) {
  BatchOutcome outcome = client->batcher().run(unlock_op(std::move(request), downgrade),
                                               Clock::now() + options().call_timeout);
  if (!outcome.status.ok()) fail(call, outcome.status, false, outcome.refusal);
  return unlock_result_of(outcome.result.unlock());
}

std::exception_ptr Session::Impl::error_of(std::string_view call, const BatchOutcome& outcome,
                                           bool try_lock) {
  try {
    fail(call, outcome.status, try_lock, outcome.refusal, /*may_probe=*/false);
  } catch (...) {
    return std::current_exception();
  }
}

template <class T>
void Session::Impl::submit(std::string_view call, pb::LockOp op, bool try_lock,
                           Clock::time_point wait_until, std::function<void(Result<T>)> done) {
  try {
    check_usable(call);
  } catch (...) {
    done(std::current_exception());
    return;
  }
  client->batcher().submit(
      std::move(op),
      [self = shared_from_this(), call, try_lock, done = std::move(done)](BatchOutcome outcome) {
        if (!outcome.status.ok()) {
          done(self->error_of(call, outcome, try_lock));
        } else if constexpr (std::is_same_v<T, Grant>) {
          done(grant_of(outcome.result.lock()));
        } else {
          done(unlock_result_of(outcome.result.unlock()));
        }
      },
      wait_until);
}

void Session::Impl::lock_async(std::string_view call, std::string_view file, const Ranges& ranges,
                               Mode mode, const Deadline& deadline, bool try_lock,
                               std::function<void(Result<Grant>)> done) {
  Clock::time_point wait_until;
  pb::LockOp op = lock_op(lock_request(file, ranges, mode), deadline, try_lock, wait_until);
  lock_call_started();
  submit<Grant>(call, std::move(op), try_lock, wait_until,
                [self = shared_from_this(), file = std::string(file), mode,
                 done = std::move(done)](Result<Grant> result) {
                  if (result.ok()) self->noted(file, mode, result.value());
                  self->lock_call_ended();
                  done(std::move(result));
                });
}

void Session::Impl::unlock_async(std::string_view call, std::string_view file, const Ranges& ranges,
                                 bool downgrade, std::function<void(Result<UnlockResult>)> done) {
  submit<UnlockResult>(call, unlock_op(unlock_request(file, ranges), downgrade), false,
                       Clock::now() + options().call_timeout,
                       [self = shared_from_this(), file = std::string(file), ranges, downgrade,
                        done = std::move(done)](Result<UnlockResult> result) {
                         if (result.ok()) self->noted_unlock(file, ranges, downgrade);
                         done(std::move(result));
                       });
}

UnlockResult Session::Impl::unlock(std::string_view call, std::string_view file,
                                   const Ranges& ranges, bool downgrade) {
  try {
    return unlock_once(call, file, ranges, downgrade);
  } catch (const MustRecover&) {
    await_recovery();
    return unlock_once(call, file, ranges, downgrade);
  }
}

UnlockResult Session::Impl::unlock_once(std::string_view call, std::string_view file,
                                        const Ranges& ranges, bool downgrade) {
  check_usable(call);
  pb::UnlockRequest request = unlock_request(file, ranges);
  if (client->options.batch) {
    UnlockResult done = unlock_batched(call, std::move(request), downgrade);
    noted_unlock(file, ranges, downgrade);
    return done;
  }
  grpc::ClientContext context;
  set_timeout(context, options().call_timeout);
  context.set_wait_for_ready(true);
  pb::UnlockResponse response;
  grpc::Status status = downgrade ? stub().Downgrade(&context, request, &response)
                                  : stub().Unlock(&context, request, &response);
  if (!status.ok()) fail(call, status, false, refusal_of(context));
  noted_unlock(file, ranges, downgrade);
  return {response.released(), response.granted()};
}

void Session::Impl::close() {
  if (closed.exchange(true)) return;
  stop_keepalive();
  if (lost) return;
  grpc::ClientContext context;
  set_timeout(context, options().call_timeout);
  context.set_wait_for_ready(false);  // asnd gone: the lease ends the session anyway
  pb::CloseSessionRequest request;
  request.set_session(id);
  request.set_secret(secret);
  pb::CloseSessionResponse response;
  grpc::Status status = stub().CloseSession(&context, request, &response);
  if (!status.ok() && !says_gone(status)) {
    throw Error("CLOSE_SESSION", code_of(status), status.error_message());
  }
}

Session LockClient::open_session(std::chrono::seconds ttl, std::string name) {
  grpc::ClientContext context;
  set_timeout(context, impl_->options.call_timeout);
  context.set_wait_for_ready(false);  // no asnd: say so now
  pb::OpenSessionRequest request;
  request.set_ttl_seconds(static_cast<std::uint32_t>(std::max<std::int64_t>(ttl.count(), 0)));
  request.set_name(std::move(name));
  pb::OpenSessionResponse response;
  grpc::Status status = impl_->stub->OpenSession(&context, request, &response);
  if (!status.ok()) throw Error("OPEN_SESSION", code_of(status), status.error_message());
  std::uint32_t granted = response.ttl_seconds() > 0 ? response.ttl_seconds() : 15;
  return Session(
      std::make_shared<Session::Impl>(impl_, response.session(), response.secret(), granted));
}

// ---------------------------------------------------------------------------------------------

Session::Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    if (impl_) {
      try {
        impl_->close();
      } catch (...) {
      }
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Session::~Session() {
  if (!impl_) return;
  try {
    impl_->close();
  } catch (...) {
    // The lease ends the session on asnd.
  }
}

std::uint64_t Session::id() const { return impl_->id; }
std::chrono::seconds Session::ttl() const {
  return std::chrono::duration_cast<std::chrono::seconds>(milliseconds(impl_->ttl_ms.load()));
}
bool Session::lost() const { return impl_->lost; }
std::uint64_t Session::reattach_count() const { return impl_->reattaches; }
std::uint64_t Session::locks_lost_count() const { return impl_->locks_lost; }

void Session::on_locks_lost(std::function<void(const LocksLost&)> callback) {
  std::lock_guard lock(impl_->mutex);
  impl_->on_locks_lost = std::move(callback);
}
std::chrono::steady_clock::time_point Session::lease_expires() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->lease_expires;
}

void Session::on_lost(std::function<void(const Error&)> callback) {
  std::optional<Error> already;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->on_lost = callback;
    if (impl_->lost) already = impl_->lost_error;
  }
  if (already && callback) callback(*already);
}

Grant Session::lock(std::string_view file, const Ranges& ranges, Mode mode, Deadline deadline,
                    std::stop_token stop) {
  return impl_->lock("LOCK", file, ranges, mode, deadline, stop, false);
}

Grant Session::try_lock(std::string_view file, const Ranges& ranges, Mode mode) {
  return impl_->lock("TRY_LOCK", file, ranges, mode, Deadline::never(), {}, true);
}

UnlockResult Session::unlock(std::string_view file, const Ranges& ranges) {
  return impl_->unlock("UNLOCK", file, ranges, false);
}

UnlockResult Session::downgrade(std::string_view file, const Ranges& ranges) {
  return impl_->unlock("DOWNGRADE", file, ranges, true);
}

void Session::close() {
  if (impl_) impl_->close();
}

void Session::lock_async(std::string_view file, const Ranges& ranges, Mode mode, Deadline deadline,
                         std::function<void(Result<Grant>)> done) {
  impl_->lock_async("LOCK", file, ranges, mode, deadline, false, std::move(done));
}

void Session::try_lock_async(std::string_view file, const Ranges& ranges, Mode mode,
                             std::function<void(Result<Grant>)> done) {
  impl_->lock_async("TRY_LOCK", file, ranges, mode, Deadline::never(), true, std::move(done));
}

void Session::unlock_async(std::string_view file, const Ranges& ranges,
                           std::function<void(Result<UnlockResult>)> done) {
  impl_->unlock_async("UNLOCK", file, ranges, false, std::move(done));
}

void Session::downgrade_async(std::string_view file, const Ranges& ranges,
                              std::function<void(Result<UnlockResult>)> done) {
  impl_->unlock_async("DOWNGRADE", file, ranges, true, std::move(done));
}

// ---------------------------------------------------------------------------------------------

LockGuard::LockGuard(Session& session, std::string file, Ranges ranges, Mode mode,
                     Deadline deadline, std::stop_token stop)
    : file_(std::move(file)), ranges_(std::move(ranges)) {
  grant_ = session.impl_->lock("LOCK", file_, ranges_, mode, deadline, stop, false);
  session_ = session.impl_;
}

LockGuard::LockGuard(Session& session, std::string file, Ranges ranges, Grant grant)
    : session_(session.impl_),
      file_(std::move(file)),
      ranges_(std::move(ranges)),
      grant_(std::move(grant)) {}

LockGuard::LockGuard(LockGuard&& other) noexcept
    : session_(std::move(other.session_)),
      file_(std::move(other.file_)),
      ranges_(std::move(other.ranges_)),
      grant_(std::move(other.grant_)) {}

LockGuard& LockGuard::operator=(LockGuard&& other) noexcept {
  if (this != &other) {
    reset();
    session_ = std::move(other.session_);
    file_ = std::move(other.file_);
    ranges_ = std::move(other.ranges_);
    grant_ = std::move(other.grant_);
  }
  return *this;
}

LockGuard::~LockGuard() { reset(); }

void LockGuard::reset() noexcept {
  auto session = std::move(session_);
  session_.reset();
  if (!session || session->lost || session->closed) return;
  try {
    session->unlock("UNLOCK", file_, ranges_, false);
  } catch (...) {
    // Lost session or asnd gone: the lock ends with the session.
  }
}

void LockGuard::downgrade() {
  if (!session_) throw Error("DOWNGRADE", StatusCode::kFailedPrecondition, "no lock held");
  session_->unlock("DOWNGRADE", file_, ranges_, true);
}

void LockGuard::unlock() {
  if (!session_) throw Error("UNLOCK", StatusCode::kFailedPrecondition, "no lock held");
  auto session = std::move(session_);
  session_.reset();
  session->unlock("UNLOCK", file_, ranges_, false);
}

Grant LockGuard::release() {
  session_.reset();
  return grant_;
}

}  // namespace asn::client

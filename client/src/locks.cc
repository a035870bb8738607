// libasnclient: the C++ API over the generated Locks stub.
#include "asn/client/locks.hpp"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>
#include <type_traits>

#include "asn/v1/locks.grpc.pb.h"
#include "held_locks.hpp"
#include "lock_batcher.hpp"

namespace asn::client {

namespace {

namespace pb = asn::v1;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

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

StatusCode code_of(const grpc::Status& status) {
  return static_cast<StatusCode>(static_cast<int>(status.error_code()));
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

// "unix:/p" and "host:port" as they are; a path ("/p", "./p", "p.sock") becomes "unix:p".
std::string target_of(const std::string& endpoint) {
  if (endpoint.empty()) return LockClient::kDefaultEndpoint;
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

void set_timeout(grpc::ClientContext& context, milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
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

// ---------------------------------------------------------------------------------------------

struct LockClient::Impl {
  std::string target;
  ClientOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::Locks::Stub> stub;

  ~Impl() {
    if (batcher_) batcher_->shutdown();
    // The last Session may go inside an asynchronous call's callback, on a gRPC thread: the
    // channel must not be destroyed there (lock_batcher.hpp).
    if (on_grpc_thread()) {
      destroy_elsewhere(std::shared_ptr<pb::Locks::Stub>(std::move(stub)));
      destroy_elsewhere(std::move(channel));
    }
  }

  // The Batch stream of all the client's sessions (the asynchronous calls, and the blocking
  // ones with options.batch), made at first use.
  LockBatcher& batcher() {
    std::call_once(batcher_made, [this] { batcher_ = std::make_shared<LockBatcher>(*stub); });
    return *batcher_;
  }

 private:
  std::once_flag batcher_made;
  // Its open stream keeps it until gRPC is done with the stream; it opens none after
  // shutdown(), so it does not use the stub after ~Impl.
  std::shared_ptr<LockBatcher> batcher_;
};

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

// A call refused while the session's switch locks are lost and not yet reclaimed (asnd's
// reason "locks-lost"): the session recovers, and the call is made once more.
class MustReclaim : public Error {
 public:
  using Error::Error;
};

// A lock refused during asnd's loss grace (UNAVAILABLE, reason "grace"): the bytes may be a
// lost lock's that its holder has not reclaimed yet; a blocking lock waits it out.
class InLossGrace : public Error {
 public:
  using Error::Error;
};

struct Session::Impl : std::enable_shared_from_this<Session::Impl> {
  Impl(std::shared_ptr<LockClient::Impl> c, std::uint64_t session, std::string session_secret,
       std::uint32_t ttl_seconds)
      : client(std::move(c)),
        id(session),
        secret(std::move(session_secret)),
        ttl_ms(1000 * std::int64_t{ttl_seconds}) {
    lease_expires = Clock::now() + milliseconds(ttl_ms.load());
    keepalive = std::jthread([this](std::stop_token stop) { run_keepalive(stop); });
  }
  ~Impl() { stop_keepalive(); }

  std::shared_ptr<LockClient::Impl> client;
  const std::uint64_t id;
  // OpenSessionResponse.secret, sent with every call naming the session (asnd requires it on
  // plain TCP, and refuses a wrong one everywhere).
  const std::string secret;
  std::atomic<std::int64_t> ttl_ms;
  std::atomic<bool> lost{false};
  std::atomic<bool> closed{false};
  std::atomic<std::uint64_t> reattaches{0};
  std::atomic<std::uint64_t> locks_lost{0};

  mutable std::mutex mutex;  // guards the members below
  std::condition_variable_any wake;
  // A call found the session's switch locks lost (reason "locks-lost"): the keepalive thread
  // recovers at once (a KeepAlive, the reclaims, reclaim_complete) and counts `recoveries`.
  bool recover_now = false;
  std::uint64_t recoveries = 0;
  std::condition_variable_any recovered;
  std::function<void(const Error&)> on_lost;
  std::function<void(const LocksLost&)> on_locks_lost;
  std::mutex held_mutex;  // guards `held`
  HeldLocks held;         // what the session's calls were granted: reclaimed after a loss
  std::optional<Error> lost_error;
  Clock::time_point lease_expires;

  std::jthread keepalive;  // last: stops (and joins) before the members above go

  const ClientOptions& options() const { return client->options; }
  pb::Locks::Stub& stub() const { return *client->stub; }

  milliseconds keepalive_interval() const {
    return milliseconds(std::max<std::int64_t>(ttl_ms.load() / 3, 10));
  }

  void stop_keepalive() {
    keepalive.request_stop();
    wake.notify_all();
    if (keepalive.joinable() && keepalive.get_id() != std::this_thread::get_id()) {
      keepalive.join();
    }
  }

  // A KeepAlive answered: the lease runs from when it was sent.
  void renewed(Clock::time_point sent, const pb::KeepAliveResponse& response) {
    if (response.ttl_seconds() > 0) ttl_ms = 1000 * std::int64_t{response.ttl_seconds()};
    if (response.reattached()) ++reattaches;
    std::lock_guard lock(mutex);
    lease_expires = sent + milliseconds(ttl_ms.load());
  }

  static bool says_gone(const grpc::Status& status) {
    return status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
           status.error_code() == grpc::StatusCode::NOT_FOUND;
  }

  void mark_lost(const Error& error) {
    std::function<void(const Error&)> callback;
    {
      std::lock_guard lock(mutex);
      if (lost || closed) return;
      lost = true;
      lost_error = error;
      callback = on_lost;
    }
    keepalive.request_stop();
    wake.notify_all();
    if (callback) callback(error);
  }

  void run_keepalive(std::stop_token stop) {
    milliseconds backoff = options().initial_backoff;
    bool reclaimed = false;  // the next KeepAlive says reclaim_complete
    auto next = Clock::now() + keepalive_interval();
    for (;;) {
      {
        std::unique_lock lock(mutex);
        wake.wait_until(lock, stop, next, [this] { return recover_now; });
        recover_now = false;
      }
      if (stop.stop_requested()) return;
      grpc::ClientContext context;
      set_timeout(context, std::min(keepalive_interval(), options().call_timeout));
      context.set_wait_for_ready(false);
      std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
      pb::KeepAliveRequest request;
      request.set_session(id);
      request.set_secret(secret);
      request.set_reclaim_complete(reclaimed);
      pb::KeepAliveResponse response;
      auto sent = Clock::now();
      grpc::Status status = stub().KeepAlive(&context, request, &response);
      if (stop.stop_requested()) return;
      if (status.ok()) {
        renewed(sent, response);
        backoff = options().initial_backoff;
        next = Clock::now() + keepalive_interval();
        reclaimed = false;
        if (!response.locks_lost()) {
          std::lock_guard lock(mutex);
          ++recoveries;
          recovered.notify_all();
        } else {
          // The switch lost its lock table: this session's locks there are gone. asnd keeps
          // those files from everyone else until the sessions that lost locks take them
          // again (reclaim) or say they are done: reclaim, tell the application what is
          // lost, then say so.
          const LocksLost report = reclaim(stop);
          ++locks_lost;
          std::function<void(const LocksLost&)> callback;
          {
            std::lock_guard lock(mutex);
            callback = on_locks_lost;
          }
          if (callback) callback(report);
          reclaimed = true;
          next = Clock::now();
        }
      } else if (says_gone(status)) {
        mark_lost(Error("KEEPALIVE", code_of(status), status.error_message()));
        return;
      } else {
        // asnd unreachable (restarting?) or slow: retry sooner, backing off up to the cap. The
        // channel reconnects by itself; the session id is the same when it comes back.
        next = Clock::now() + backoff;
        backoff = std::min(backoff * 2, std::max(options().max_backoff, options().initial_backoff));
      }
    }
  }

  // A call was refused because the session's switch locks were lost: has the keepalive
  // thread recover now and waits for it (at most call_timeout).
  void await_recovery() {
    std::unique_lock lock(mutex);
    const std::uint64_t seen = recoveries;
    recover_now = true;
    wake.notify_all();
    recovered.wait_for(lock, options().call_timeout,
                       [&] { return recoveries != seen || lost.load() || closed.load(); });
  }

  void ask_recovery() {
    std::lock_guard lock(mutex);
    recover_now = true;
    wake.notify_all();
  }

  // Takes the session's switch locks again (LockRequest.reclaim), as the library knows them:
  // a reclaim is granted at once or refused, with a new, higher token.
  LocksLost reclaim(const std::stop_token& stop) {
    std::vector<HeldLocks::Reclaim> wanted;
    {
      std::lock_guard lock(held_mutex);
      wanted = held.take_switch_locks();
    }
    LocksLost report;
    for (const auto& want : wanted) {
      if (stop.stop_requested()) break;
      pb::LockRequest request = lock_request(want.file, Ranges(want.ranges), want.mode);
      request.set_reclaim(true);
      grpc::ClientContext context;
      set_timeout(context, options().call_timeout);
      pb::LockResponse response;
      const grpc::Status status = stub().TryLock(&context, request, &response);
      if (status.ok()) {
        noted(want.file, want.mode, grant_of(response));
        report.reclaimed += want.ranges.size();
      } else {
        report.lost += want.ranges.size();
        if (report.lost_files.empty() || report.lost_files.back() != want.file) {
          report.lost_files.push_back(want.file);
        }
      }
    }
    return report;
  }

  void noted(std::string_view file, Mode mode, const Grant& grant) {
    std::lock_guard lock(held_mutex);
    held.granted(file, mode, grant);
  }

  void noted_unlock(std::string_view file, const Ranges& ranges, bool downgrade) {
    std::lock_guard lock(held_mutex);
    if (downgrade) {
      held.downgraded(file, ranges);
    } else {
      held.released(file, ranges);
    }
  }

  // After FAILED_PRECONDITION or ABORTED from a call: is the session gone (a KeepAlive says
  // so), or was it the call (a conflict, a double unlock)? The codes alone do not tell.
  bool probe_lost() {
    if (lost) return true;
    grpc::ClientContext context;
    set_timeout(context, options().call_timeout);
    pb::KeepAliveRequest request;
    request.set_session(id);
    request.set_secret(secret);
    pb::KeepAliveResponse response;
    auto sent = Clock::now();
    grpc::Status status = stub().KeepAlive(&context, request, &response);
    if (status.ok()) {
      renewed(sent, response);
      return false;
    }
    if (says_gone(status)) {
      mark_lost(Error("KEEPALIVE", code_of(status), status.error_message()));
      return true;
    }
    return false;
  }

  void check_usable(std::string_view call) const {
    if (lost) {
      std::lock_guard lock(mutex);
      throw SessionLost(call, lost_error->code(),
                        "session " + std::to_string(id) +
                            " is lost, its locks are gone: " + lost_error->message());
    }
    if (closed) {
      throw Error(call, StatusCode::kFailedPrecondition,
                  "session " + std::to_string(id) + " was closed");
    }
  }

  // What asnd says went wrong, beyond the code (its trailing metadata "asn-lock-reason":
  // "session-gone", "conflict", "not-held"); empty from a server that does not say.
  static std::string reason_of(const grpc::ClientContext& context) {
    const auto& trailers = context.GetServerTrailingMetadata();
    auto it = trailers.find("asn-lock-reason");
    return it == trailers.end() ? std::string() : std::string(it->second.data(), it->second.size());
  }

  // `reason`: asnd's asn-lock-reason (reason_of(), or a Batch op's LockOpResult.reason).
  // `may_probe`: an asnd that gives no reason may be asked (a blocking call: not from a
  // callback of the Batch stream, whose asnd gives reasons anyway).
  [[noreturn]] void fail(std::string_view call, const grpc::Status& status, bool try_lock,
                         const std::string& reason, bool may_probe = true) {
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
    if (reason == "locks-lost") {
      ask_recovery();
      throw MustReclaim(call, code, status.error_message());
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

  // A blocking Lock that meets the loss grace after a board reset (UNAVAILABLE, reason
  // "grace") waits it out, within its deadline, as it would wait for a holder.
  Grant lock(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
             const Deadline& deadline, const std::stop_token& stop, bool try_lock) {
    bool recovered_once = false;
    for (;;) {
      try {
        Grant grant = lock_once(call, file, ranges, mode, deadline, stop, try_lock);
        noted(file, mode, grant);
        return grant;
      } catch (const MustReclaim&) {
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

  Grant lock_once(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
                  const Deadline& deadline, const std::stop_token& stop, bool try_lock) {
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
    if (!status.ok()) fail(call, status, try_lock, reason_of(context));
    return grant_of(response);
  }

  static Grant grant_of(const pb::LockResponse& response) {
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

  pb::LockRequest lock_request(std::string_view file, const Ranges& ranges, Mode mode) const {
    pb::LockRequest request;
    request.set_session(id);
    request.set_secret(secret);
    request.set_file(std::string(file));
    request.set_mode(mode == Mode::kExclusive ? pb::LOCK_MODE_EXCLUSIVE : pb::LOCK_MODE_SHARED);
    fill_ranges(request, ranges);
    return request;
  }

  pb::UnlockRequest unlock_request(std::string_view file, const Ranges& ranges) const {
    pb::UnlockRequest request;
    request.set_session(id);
    request.set_secret(secret);
    request.set_file(std::string(file));
    fill_ranges(request, ranges);
    return request;
  }

  // The lock as an op of the client's Batch stream. asnd ends the wait at the deadline
  // (timeout_ms); a blocking caller waits call_timeout longer (`wait_until`) for an asnd that
  // does not answer.
  pb::LockOp lock_op(pb::LockRequest request, const Deadline& deadline, bool try_lock,
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

  static pb::LockOp unlock_op(pb::UnlockRequest request, bool downgrade) {
    pb::LockOp op;
    *(downgrade ? op.mutable_downgrade() : op.mutable_unlock()) = std::move(request);
    return op;
  }

  static UnlockResult unlock_result_of(const pb::UnlockResponse& response) {
    return {response.released(), response.granted()};
  }

  Grant lock_batched(std::string_view call, pb::LockRequest request, const Deadline& deadline,
                     bool try_lock) {
    Clock::time_point wait_until;
    pb::LockOp op = lock_op(std::move(request), deadline, try_lock, wait_until);
    BatchOutcome outcome = client->batcher().run(std::move(op), wait_until);
    if (!outcome.status.ok()) fail(call, outcome.status, try_lock, outcome.reason);
    return grant_of(outcome.result.lock());
  }

  UnlockResult unlock_batched(std::string_view call, pb::UnlockRequest request, bool downgrade) {
    BatchOutcome outcome = client->batcher().run(unlock_op(std::move(request), downgrade),
                                                 Clock::now() + options().call_timeout);
    if (!outcome.status.ok()) fail(call, outcome.status, false, outcome.reason);
    return unlock_result_of(outcome.result.unlock());
  }

  // The exception fail() throws, for a Result.
  std::exception_ptr error_of(std::string_view call, const BatchOutcome& outcome, bool try_lock) {
    try {
      fail(call, outcome.status, try_lock, outcome.reason, /*may_probe=*/false);
    } catch (...) {
      return std::current_exception();
    }
  }

  // The asynchronous calls: the op goes to the batcher; its callback turns the outcome into
  // the Result the blocking call would have returned or thrown. `call` is a literal.
  // `wait_until`: as the blocking call's (lock_op()); the callback gets DEADLINE_EXCEEDED
  // then if asnd has not answered.
  template <class T>
  void submit(std::string_view call, pb::LockOp op, bool try_lock, Clock::time_point wait_until,
              std::function<void(Result<T>)> done) {
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

  void lock_async(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
                  const Deadline& deadline, bool try_lock,
                  std::function<void(Result<Grant>)> done) {
    Clock::time_point wait_until;
    pb::LockOp op = lock_op(lock_request(file, ranges, mode), deadline, try_lock, wait_until);
    submit<Grant>(call, std::move(op), try_lock, wait_until,
                  [self = shared_from_this(), file = std::string(file), mode,
                   done = std::move(done)](Result<Grant> result) {
                    if (result.ok()) self->noted(file, mode, result.value());
                    done(std::move(result));
                  });
  }

  void unlock_async(std::string_view call, std::string_view file, const Ranges& ranges,
                    bool downgrade, std::function<void(Result<UnlockResult>)> done) {
    submit<UnlockResult>(call, unlock_op(unlock_request(file, ranges), downgrade), false,
                         Clock::now() + options().call_timeout,
                         [self = shared_from_this(), file = std::string(file), ranges, downgrade,
                          done = std::move(done)](Result<UnlockResult> result) {
                           if (result.ok()) self->noted_unlock(file, ranges, downgrade);
                           done(std::move(result));
                         });
  }

  UnlockResult unlock(std::string_view call, std::string_view file, const Ranges& ranges,
                      bool downgrade) {
    try {
      return unlock_once(call, file, ranges, downgrade);
    } catch (const MustReclaim&) {
      await_recovery();
      return unlock_once(call, file, ranges, downgrade);
    }
  }

  UnlockResult unlock_once(std::string_view call, std::string_view file, const Ranges& ranges,
                           bool downgrade) {
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
    if (!status.ok()) fail(call, status, false, reason_of(context));
    noted_unlock(file, ranges, downgrade);
    return {response.released(), response.granted()};
  }

  void close() {
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
};

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

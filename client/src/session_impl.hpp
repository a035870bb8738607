// Internal to libasnclient: LockClient::Impl (the channel, the stub, the Batch stream) and
// Session::Impl (one session: its calls in locks.cc; its lease, its re-attach after an asnd
// restart and its recovery after a board reset in session_recovery.cc).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include "asn/client/locks.hpp"
#include "asn/v1/locks.grpc.pb.h"
#include "held_locks.hpp"
#include "lock_batcher.hpp"

namespace asn::client {

namespace pb = asn::v1;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline StatusCode code_of(const grpc::Status& status) {
  return static_cast<StatusCode>(static_cast<int>(status.error_code()));
}

inline void set_timeout(grpc::ClientContext& context, milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

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

// A call refused until the session recovers: its switch locks are lost and not yet reclaimed
// (asnd's reason "locks-lost"), or asnd restarted and waits for it to say which locks it holds
// ("confirm-held"). The keepalive thread recovers, and the call is made once more.
class MustRecover : public Error {
 public:
  using Error::Error;
};

// A lock refused during asnd's loss grace (UNAVAILABLE, reason "grace"): the bytes may be a
// lost lock's that its holder has not reclaimed yet; a blocking lock waits it out.
class InLossGrace : public Error {
 public:
  using Error::Error;
};

// One session: its lease and recovery (session_recovery.cc), its calls (locks.cc).
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
  // A call found the session's switch locks lost (reason "locks-lost") or asnd waiting for the
  // locks it holds ("confirm-held"): the keepalive thread recovers at once (a KeepAlive, the
  // held tokens, the reclaims, reclaim_complete) and counts `recoveries`.
  bool recover_now = false;
  std::uint64_t recoveries = 0;
  std::condition_variable_any recovered;
  std::function<void(const Error&)> on_lost;
  std::function<void(const LocksLost&)> on_locks_lost;
  std::mutex held_mutex;  // guards `held` and `lock_calls`
  HeldLocks held;         // what the session's calls were granted: reclaimed after a loss
  // Lock calls sent and not yet noted (their grant in `held`) or failed. After an asnd restart
  // the held tokens are named only when there are none: a grant of the earlier asnd whose
  // answer is being read would be left out, and released though the caller gets it. asnd
  // refuses the session's new Lock calls until then (confirm-held), so this does not wait
  // on a call that waits for a lock.
  std::size_t lock_calls = 0;
  std::condition_variable_any lock_calls_done;
  std::optional<Error> lost_error;
  Clock::time_point lease_expires;

  std::jthread keepalive;  // last: stops (and joins) before the members above go

  const ClientOptions& options() const { return client->options; }
  pb::Locks::Stub& stub() const { return *client->stub; }

  milliseconds keepalive_interval() const;

  void stop_keepalive();

  // A KeepAlive answered: the lease runs from when it was sent.
  void renewed(Clock::time_point sent, const pb::KeepAliveResponse& response);

  static bool says_gone(const grpc::Status& status);

  void mark_lost(const Error& error);

  void run_keepalive(std::stop_token stop);

  // A call was refused because the session's switch locks were lost: has the keepalive
  // thread recover now and waits for it (at most call_timeout).
  void await_recovery();

  void ask_recovery();

  // Names the grants the session holds in `request` (KeepAliveRequest.held), once no Lock call
  // is between its answer and `held` (at most call_timeout); false if that did not come.
  bool name_held(pb::KeepAliveRequest& request, const std::stop_token& stop);
  // A Lock call in flight, from before it is sent until its grant is noted or it failed.
  void lock_call_started();
  void lock_call_ended();
  struct LockCallScope {
    explicit LockCallScope(Impl& impl) : impl(impl) { impl.lock_call_started(); }
    ~LockCallScope() { impl.lock_call_ended(); }
    LockCallScope(const LockCallScope&) = delete;
    LockCallScope& operator=(const LockCallScope&) = delete;
    Impl& impl;
  };

  // Takes the session's switch locks again (LockRequest.reclaim), as the library knows them:
  // a reclaim is granted at once or refused, with a new, higher token.
  LocksLost reclaim(const std::stop_token& stop);

  void noted(std::string_view file, Mode mode, const Grant& grant);

  void noted_unlock(std::string_view file, const Ranges& ranges, bool downgrade);

  // After FAILED_PRECONDITION or ABORTED from a call: is the session gone (a KeepAlive says
  // so), or was it the call (a conflict, a double unlock)? The codes alone do not tell.
  bool probe_lost();

  void check_usable(std::string_view call) const;

  // What asnd says went wrong, beyond the code (its trailing metadata "asn-lock-reason" and,
  // for "moved", "asn-lock-owner"); empty from a server that does not say.
  static Refusal refusal_of(const grpc::ClientContext& context);

  // `refusal`: asnd's reason (refusal_of(), or a Batch op's LockOpResult.reason and owner).
  // `may_probe`: an asnd that gives no reason may be asked (a blocking call: not from a
  // callback of the Batch stream, whose asnd gives reasons anyway).
  [[noreturn]] void fail(std::string_view call, const grpc::Status& status, bool try_lock,
                         const Refusal& refusal, bool may_probe = true);

  // A blocking Lock that meets the loss grace after a board reset (UNAVAILABLE, reason
  // "grace") waits it out, within its deadline, as it would wait for a holder.
  Grant lock(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
             const Deadline& deadline, const std::stop_token& stop, bool try_lock);

  Grant lock_once(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
                  const Deadline& deadline, const std::stop_token& stop, bool try_lock);

  static Grant grant_of(const pb::LockResponse& response);

  pb::LockRequest lock_request(std::string_view file, const Ranges& ranges, Mode mode) const;

  pb::UnlockRequest unlock_request(std::string_view file, const Ranges& ranges) const;

  // The lock as an op of the client's Batch stream. asnd ends the wait at the deadline
  // (timeout_ms); a blocking caller waits call_timeout longer (`wait_until`) for an asnd that
  // does not answer.
  pb::LockOp lock_op(pb::LockRequest request, const Deadline& deadline, bool try_lock,
                     Clock::time_point& wait_until) const;

  static pb::LockOp unlock_op(pb::UnlockRequest request, bool downgrade);

  static UnlockResult unlock_result_of(const pb::UnlockResponse& response);

  Grant lock_batched(std::string_view call, pb::LockRequest request, const Deadline& deadline,
                     bool try_lock);

  UnlockResult unlock_batched(std::string_view call, pb::UnlockRequest request, bool downgrade);

  // The exception fail() throws, for a Result.
  std::exception_ptr error_of(std::string_view call, const BatchOutcome& outcome, bool try_lock);

  // The asynchronous calls: the op goes to the batcher; its callback turns the outcome into
  // the Result the blocking call would have returned or thrown. `call` is a literal.
  // `wait_until`: as the blocking call's (lock_op()); the callback gets DEADLINE_EXCEEDED
  // then if asnd has not answered.
  template <class T>
  void submit(std::string_view call, pb::LockOp op, bool try_lock, Clock::time_point wait_until,
              std::function<void(Result<T>)> done);

  void lock_async(std::string_view call, std::string_view file, const Ranges& ranges, Mode mode,
                  const Deadline& deadline, bool try_lock, std::function<void(Result<Grant>)> done);

  void unlock_async(std::string_view call, std::string_view file, const Ranges& ranges,
                    bool downgrade, std::function<void(Result<UnlockResult>)> done);

  UnlockResult unlock(std::string_view call, std::string_view file, const Ranges& ranges,
                      bool downgrade);

  UnlockResult unlock_once(std::string_view call, std::string_view file, const Ranges& ranges,
                           bool downgrade);

  void close();
};

}  // namespace asn::client

// The Locks service's operations, one piece of code for the unary calls (Lock, TryLock,
// Unlock, Downgrade, KeepAlive) and the ops of a Batch stream: the owner check, the
// validation of the request, the LockManager call and the error mapping (guarded(), so
// grpc_status.hpp's one mapping). The caller checks the permission first: each unary call
// does, a Batch stream once when it starts.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "asn/v1/locks.pb.h"
#include "locks/lock_manager.hpp"
#include "services/auth.hpp"
#include "services/grpc_status.hpp"

namespace asn {

// How an operation ended: OK, or the status and Error::reason() (the unary calls send it as
// the trailing metadata "asn-lock-reason", a Batch op in LockOpResult.reason).
struct OpStatus {
  grpc::Status status;
  std::string reason;
  std::string owner;  // Error::redirect(): "asn-lock-owner", LockOpResult.owner
  bool ok() const { return status.ok(); }
};

// guarded(), keeping the reason of an asn::Error.
template <typename Body>
OpStatus run_op(std::string_view rpc, Body&& body) {
  OpStatus out;
  out.status = guarded(rpc, [&] {
    try {
      body();
    } catch (const Error& e) {
      out.reason = e.reason();
      out.owner = e.redirect();
      throw;
    }
  });
  return out;
}

void fill_range(const locks::ByteRange& range, v1::ByteRange* out);

// A lock op's end: its status and, when OK, the response.
using LockOpDone = std::function<void(const OpStatus&, v1::LockResponse*)>;

class LockOps {
 public:
  LockOps(LockManager& locks, const Authorizer& authorizer)
      : locks_(locks), authorizer_(authorizer) {}

  // Validates a lock request and starts it: `done` is called exactly once, with the grant or
  // why not, maybe before this returns and maybe from another thread. Returns the handle for
  // cancel() (0: it ended already).
  uint64_t lock(const grpc::ServerContextBase& context, const v1::LockRequest& request,
                locks::Wait wait, std::optional<LockClock::time_point> deadline,
                const LockOpDone& done) const;
  // The client gave up the wait: it ends with ABORTED ("the wait was cancelled: <why>").
  void cancel(uint64_t handle, std::string_view why) const;
  // A grant of `request` whose response did not reach the client (the call was cancelled or
  // its deadline passed first, the stream broke): released, so that a failed call grants
  // nothing. Never throws.
  void give_back(const v1::LockRequest& request, const v1::LockResponse& granted) const;
  // cancel() of many waits at once (a Batch stream ended): one withdrawal per lock domain.
  void cancel(std::span<const uint64_t> handles, std::string_view why) const;

  OpStatus unlock(const grpc::ServerContextBase& context, const v1::UnlockRequest& request,
                  v1::UnlockResponse* response) const;
  OpStatus downgrade(const grpc::ServerContextBase& context, const v1::UnlockRequest& request,
                     v1::UnlockResponse* response) const;
  OpStatus keep_alive(const grpc::ServerContextBase& context, const v1::KeepAliveRequest& request,
                      v1::KeepAliveResponse* response) const;

  // A caller uses only the sessions it opened (LockManager::check_owner): as the same
  // certificate subject or uid, or with the session's secret (required on plain TCP); anyone
  // else is answered as for a session never opened. A secret of the wrong length is
  // INVALID_ARGUMENT.
  void check_owner(const grpc::ServerContextBase& context, uint64_t session,
                   const std::string& secret) const;

 private:
  LockManager& locks_;
  const Authorizer& authorizer_;
};

}  // namespace asn

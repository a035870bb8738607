#include "services/lock_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace asn {

namespace {

locks::Mode mode_of(v1::LockMode mode) {
  switch (mode) {
    case v1::LOCK_MODE_SHARED:
      return locks::Mode::kShared;
    case v1::LOCK_MODE_EXCLUSIVE:
      return locks::Mode::kExclusive;
    default:
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("mode: {} is not LOCK_MODE_SHARED or LOCK_MODE_EXCLUSIVE",
                              static_cast<int>(mode)));
  }
}

// Exactly one of a list and a strided pattern; the lock table checks the ranges themselves.
template <typename Message>
locks::RangeSpec ranges_of(const Message& request) {
  const bool list = request.ranges_size() > 0;
  if (list == request.has_strided()) {
    throw Error(ErrorCode::kInvalidArgument,
                list ? "ranges and strided: give one of them, not both"
                     : "ranges: none given; give a list of ranges or a strided pattern");
  }
  if (!list) {
    const auto& s = request.strided();
    return locks::Strided{s.offset(), s.block_length(), s.stride(), s.count()};
  }
  std::vector<locks::ByteRange> out;
  out.reserve(static_cast<size_t>(std::min(request.ranges_size(), 1 << 16)));
  for (const auto& r : request.ranges()) out.push_back({r.offset(), r.length()});
  return out;
}

void fill(const LockGranted& granted, v1::LockResponse* response) {
  response->set_token(granted.grant.token);
  response->set_request(granted.grant.request);
  for (const auto& range : granted.grant.ranges) fill_range(range, response->add_ranges());
  response->set_domain(granted.domain);
  response->set_waited(granted.waited);
}

}  // namespace

void fill_range(const locks::ByteRange& range, v1::ByteRange* out) {
  out->set_offset(range.offset);
  out->set_length(range.length);
}

void LockOps::check_owner(const grpc::ServerContextBase& context, uint64_t session,
                          const std::string& secret) const {
  if (!secret.empty() && secret.size() != kSessionSecretBytes) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("secret: {} bytes; a session's secret is the {} bytes OpenSession "
                            "returned for it",
                            secret.size(), kSessionSecretBytes));
  }
  locks_.check_owner(session, SessionCaller{authorizer_.owner_key(context), secret});
}

uint64_t LockOps::lock(const grpc::ServerContextBase& context, const v1::LockRequest& request,
                       locks::Wait wait, std::optional<LockClock::time_point> deadline,
                       const LockOpDone& done) const {
  const char* rpc = wait == locks::Wait::kTry ? "Locks.TryLock" : "Locks.Lock";
  uint64_t handle = 0;
  const OpStatus refused = run_op(rpc, [&] {
    check_owner(context, request.session(), request.secret());
    LockCall call;
    call.session = request.session();
    call.file = request.file();
    call.mode = mode_of(request.mode());
    call.ranges = ranges_of(request);
    call.reclaim = request.reclaim();
    handle = locks_.lock(call, wait, deadline, [done, rpc](LockResult result) {
      if (const auto* e = std::get_if<Error>(&result)) {
        done(run_op(rpc, [&] { throw *e; }), nullptr);
        return;
      }
      v1::LockResponse response;
      fill(std::get<LockGranted>(result), &response);
      done(OpStatus{}, &response);
    });
  });
  if (!refused.ok()) done(refused, nullptr);
  return handle;
}

void LockOps::cancel(uint64_t handle, std::string_view why) const {
  locks_.cancel_call(handle,
                     Error(ErrorCode::kAborted, fmt::format("the wait was cancelled: {}", why)));
}

void LockOps::give_back(const v1::LockRequest& request, const v1::LockResponse& granted) const {
  std::vector<locks::ByteRange> ranges;
  ranges.reserve(static_cast<size_t>(granted.ranges_size()));
  for (const auto& r : granted.ranges()) ranges.push_back({r.offset(), r.length()});
  locks_.give_back(request.session(), request.file(), ranges, granted.token());
}

void LockOps::cancel(std::span<const uint64_t> handles, std::string_view why) const {
  locks_.cancel_calls(handles,
                      Error(ErrorCode::kAborted, fmt::format("the wait was cancelled: {}", why)));
}

OpStatus LockOps::unlock(const grpc::ServerContextBase& context, const v1::UnlockRequest& request,
                         v1::UnlockResponse* response) const {
  return run_op("Locks.Unlock", [&] {
    check_owner(context, request.session(), request.secret());
    const auto done = locks_.unlock(request.session(), request.file(), ranges_of(request));
    response->set_released(done.released);
    response->set_granted(done.granted);
  });
}

OpStatus LockOps::downgrade(const grpc::ServerContextBase& context,
                            const v1::UnlockRequest& request, v1::UnlockResponse* response) const {
  return run_op("Locks.Downgrade", [&] {
    check_owner(context, request.session(), request.secret());
    const auto done = locks_.downgrade(request.session(), request.file(), ranges_of(request));
    response->set_released(done.released);
    response->set_granted(done.granted);
  });
}

OpStatus LockOps::keep_alive(const grpc::ServerContextBase& context,
                             const v1::KeepAliveRequest& request,
                             v1::KeepAliveResponse* response) const {
  return run_op("Locks.KeepAlive", [&] {
    check_owner(context, request.session(), request.secret());
    std::vector<locks::Token> held;
    if (request.has_held())
      held.assign(request.held().tokens().begin(), request.held().tokens().end());
    const KeptAlive kept = locks_.keep_alive(request.session(), request.reclaim_complete(),
                                             request.has_held() ? &held : nullptr);
    response->set_ttl_seconds(kept.ttl_seconds);
    response->set_reattached(kept.reattached);
    response->set_locks_lost(kept.locks_lost);
    response->set_reclaim_seconds(kept.reclaim_seconds);
    response->set_confirm_held(kept.confirm_held);
    response->set_released_unconfirmed(kept.released_unconfirmed);
  });
}

}  // namespace asn

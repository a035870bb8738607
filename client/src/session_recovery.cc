// libasnclient: what keeps a session alive and brings it back: the keepalive thread and its
// lease, the re-attach after an asnd restart (the session names the locks it holds, so that
// asnd releases a grant whose answer died with the earlier asnd), the session found lost, and
// the reclaims after a board reset from what the session's calls were granted
// (held_locks.hpp).
#include <algorithm>

#include "session_impl.hpp"

namespace asn::client {

milliseconds Session::Impl::keepalive_interval() const {
  return milliseconds(std::max<std::int64_t>(ttl_ms.load() / 3, 10));
}

void Session::Impl::stop_keepalive() {
  keepalive.request_stop();
  wake.notify_all();
  if (keepalive.joinable() && keepalive.get_id() != std::this_thread::get_id()) {
    keepalive.join();
  }
}

void Session::Impl::renewed(Clock::time_point sent, const pb::KeepAliveResponse& response) {
  if (response.ttl_seconds() > 0) ttl_ms = 1000 * std::int64_t{response.ttl_seconds()};
  if (response.reattached()) ++reattaches;
  std::lock_guard lock(mutex);
  lease_expires = sent + milliseconds(ttl_ms.load());
}

bool Session::Impl::says_gone(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
         status.error_code() == grpc::StatusCode::NOT_FOUND;
}

void Session::Impl::mark_lost(const Error& error) {
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

void Session::Impl::run_keepalive(std::stop_token stop) {
  milliseconds backoff = options().initial_backoff;
  bool reclaimed = false;  // the next KeepAlive says reclaim_complete
  bool confirm = false;    // the next KeepAlive names the locks held (asnd restarted)
  auto next = Clock::now() + keepalive_interval();
  for (;;) {
    {
      std::unique_lock lock(mutex);
      wake.wait_until(lock, stop, next, [this] { return recover_now; });
      recover_now = false;
    }
    if (stop.stop_requested()) return;
    pb::KeepAliveRequest request;
    request.set_session(id);
    request.set_secret(secret);
    request.set_reclaim_complete(reclaimed);
    // Before the call's deadline starts: naming may wait for lock calls in flight.
    if (confirm && !name_held(request, stop) && stop.stop_requested()) return;
    grpc::ClientContext context;
    set_timeout(context, std::min(keepalive_interval(), options().call_timeout));
    context.set_wait_for_ready(false);
    std::stop_callback cancel(stop, [&context] { context.TryCancel(); });
    pb::KeepAliveResponse response;
    auto sent = Clock::now();
    grpc::Status status = stub().KeepAlive(&context, request, &response);
    if (stop.stop_requested()) return;
    if (status.ok()) {
      renewed(sent, response);
      backoff = options().initial_backoff;
      next = Clock::now() + keepalive_interval();
      reclaimed = false;
      if (response.confirm_held()) {
        // asnd restarted while the session held locks and waits to hear which it holds: say
        // so now (it releases the others, grants whose calls failed) and then go on, with
        // the reclaims if the switch lost its table too.
        confirm = true;
        next = Clock::now();
        continue;
      }
      confirm = false;
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

void Session::Impl::await_recovery() {
  std::unique_lock lock(mutex);
  const std::uint64_t seen = recoveries;
  recover_now = true;
  wake.notify_all();
  recovered.wait_for(lock, options().call_timeout,
                     [&] { return recoveries != seen || lost.load() || closed.load(); });
}

void Session::Impl::ask_recovery() {
  std::lock_guard lock(mutex);
  recover_now = true;
  wake.notify_all();
}

bool Session::Impl::name_held(pb::KeepAliveRequest& request, const std::stop_token& stop) {
  std::unique_lock lock(held_mutex);
  if (!lock_calls_done.wait_for(lock, stop, options().call_timeout,
                                [this] { return lock_calls == 0; })) {
    return false;
  }
  auto* named = request.mutable_held();
  for (const std::uint64_t token : held.tokens()) named->add_tokens(token);
  return true;
}

void Session::Impl::lock_call_started() {
  std::lock_guard lock(held_mutex);
  ++lock_calls;
}

void Session::Impl::lock_call_ended() {
  {
    std::lock_guard lock(held_mutex);
    --lock_calls;
  }
  lock_calls_done.notify_all();
}

LocksLost Session::Impl::reclaim(const std::stop_token& stop) {
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

void Session::Impl::noted(std::string_view file, Mode mode, const Grant& grant) {
  std::lock_guard lock(held_mutex);
  held.granted(file, mode, grant);
}

void Session::Impl::noted_unlock(std::string_view file, const Ranges& ranges, bool downgrade) {
  std::lock_guard lock(held_mutex);
  if (downgrade) {
    held.downgraded(file, ranges);
  } else {
    held.released(file, ranges);
  }
}

bool Session::Impl::probe_lost() {
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
    if (response.confirm_held()) ask_recovery();
    return false;
  }
  if (says_gone(status)) {
    mark_lost(Error("KEEPALIVE", code_of(status), status.error_message()));
    return true;
  }
  return false;
}

}  // namespace asn::client

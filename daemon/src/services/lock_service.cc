#include "services/lock_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "services/grpc_status.hpp"
#include "services/lock_batch.hpp"

namespace asn {

namespace {

// Entries ListLocks returns unless asked for fewer, and the most it returns.
constexpr uint32_t kDefaultListLimit = 1000;
constexpr uint32_t kMaxListLimit = 100000;
// What a listing response carries at most (about: one entry more may go past it), well under
// the 4 MiB a gRPC client receives by default. A page of ListLocks or ListSessions ends there.
constexpr size_t kPageBytes = size_t{2} << 20;
// GetLockStats' sessions unless asked for another number, and the most it lists.
constexpr uint32_t kDefaultTopSessions = 20;
constexpr uint32_t kMaxTopSessions = 1000;
// Sessions a ListSessions page holds unless asked for fewer, and the most.
constexpr uint32_t kDefaultSessionPage = 1000;
constexpr uint32_t kMaxSessionPage = 10000;

// A ListLocks page token: the entry to go on from (8 bytes, little-endian), then the file id.
std::string page_token(const ListCursor& cursor) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((cursor.skip >> (8 * i)) & 0xff);
  return out + cursor.file;
}

ListCursor from_page_token(const std::string& token) {
  if (token.size() < 9) {
    throw Error(ErrorCode::kInvalidArgument,
                "page_token: not one a ListLocks response gave (pass next_page_token as it is)");
  }
  ListCursor out;
  for (int i = 0; i < 8; ++i) out.skip |= uint64_t{static_cast<uint8_t>(token[i])} << (8 * i);
  out.file = token.substr(8);
  return out;
}

void fill_session(const SessionView& s, v1::LockSessionInfo* out) {
  out->set_session(s.session);
  out->set_owner(s.owner);
  out->set_name(s.name);
  out->set_ttl_seconds(s.ttl_seconds);
  out->set_expires_in_seconds(s.expires_in_seconds);
  out->set_held_entries(s.held_entries);
  out->set_waiting_requests(s.waiting_requests);
  out->set_reattached(s.reattached);
  out->set_confirm_held(s.confirm_held);
}

v1::LockMode mode_of(locks::Mode mode) {
  return mode == locks::Mode::kShared ? v1::LOCK_MODE_SHARED : v1::LOCK_MODE_EXCLUSIVE;
}

// A held lock as ListLocks and ReleaseLocks send it.
void fill_held(const HeldView& h, v1::HeldLock* out) {
  out->set_file(h.file);
  out->set_session(h.session);
  out->set_owner(h.owner);
  out->set_session_name(h.session_name);
  out->set_mode(mode_of(h.lock.mode));
  out->set_token(h.lock.token);
  fill_range(h.lock.range, out->mutable_range());
  out->set_domain(h.domain);
  out->set_request(h.lock.request);
}

// The trailing metadata that carries Error::reason().
constexpr char kReasonKey[] = "asn-lock-reason";

// And the owning switch of a redirect (reason "moved").
constexpr char kOwnerKey[] = "asn-lock-owner";

void send_reason(grpc::CallbackServerContext& context, const OpStatus& status) {
  if (!status.reason.empty()) context.AddTrailingMetadata(kReasonKey, status.reason);
  if (!status.owner.empty()) context.AddTrailingMetadata(kOwnerKey, status.owner);
}

// Finishes the call with `status` (and its reason).
grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, const OpStatus& status) {
  auto* reactor = context->DefaultReactor();
  send_reason(*context, status);
  reactor->Finish(status.status);
  return reactor;
}

// Runs `body` and finishes the call with its status (and the error's reason).
template <typename Body>
grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, std::string_view rpc,
                                 Body&& body) {
  return answer(context, run_op(rpc, std::forward<Body>(body)));
}

// A Lock call that may wait: finished by the LockManager from whichever thread grants it,
// times it out, or cancels it. It deletes itself once both gRPC is done with it and lock()
// has returned.
class LockReactor final : public grpc::ServerUnaryReactor {
 public:
  LockReactor(const LockOps& ops, grpc::CallbackServerContext* context, v1::LockResponse* response)
      : ops_(ops), context_(context), response_(response) {}

  void start(const v1::LockRequest& request, locks::Wait wait,
             std::optional<LockClock::time_point> deadline) {
    request_ = &request;  // gRPC keeps it until OnDone
    const uint64_t handle = ops_.lock(
        *context_, request, wait, deadline,
        [this](const OpStatus& status, v1::LockResponse* granted) { complete(status, granted); });
    bool cancel = false;
    {
      std::lock_guard lock(mu_);
      handle_ = handle;
      started_ = true;
      cancel = cancelled_ && handle != 0;
    }
    if (cancel) ops_.cancel(handle, kCancelledWhy);
    release();
  }

  void OnCancel() override {
    uint64_t handle = 0;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      if (started_) handle = handle_;
    }
    if (handle != 0) ops_.cancel(handle, kCancelledWhy);
  }

  // A grant whose status did not reach the client (its deadline passed, it cancelled, the
  // connection broke) is released: a failed Lock grants nothing.
  void OnDone() override {
    if (granted_ && context_->IsCancelled()) ops_.give_back(*request_, *response_);
    release();
  }

 private:
  static constexpr char kCancelledWhy[] = "the client cancelled the call";

  void complete(const OpStatus& status, v1::LockResponse* granted) {
    if (granted != nullptr) {
      response_->Swap(granted);
      granted_ = true;
    }
    send_reason(*context_, status);
    Finish(status.status);
  }

  void release() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  const LockOps& ops_;
  grpc::CallbackServerContext* context_;
  v1::LockResponse* response_;
  const v1::LockRequest* request_ = nullptr;
  bool granted_ = false;      // set before Finish, read in OnDone
  std::atomic<int> refs_{2};  // gRPC (until OnDone) and start()
  std::mutex mu_;
  uint64_t handle_ = 0;
  bool started_ = false;
  bool cancelled_ = false;
};

}  // namespace

grpc::ServerUnaryReactor* LockService::OpenSession(grpc::CallbackServerContext* context,
                                                   const v1::OpenSessionRequest* request,
                                                   v1::OpenSessionResponse* response) {
  return answer(context, "Locks.OpenSession", [&] {
    authorizer_.require(Permission::kLock, "OpenSession", *context);
    const auto opened = locks_.open_session(
        authorizer_.principal(*context), authorizer_.owner_key(*context), request->name(),
        request->ttl_seconds(), authorizer_.quota_key(*context));
    response->set_session(opened.session);
    response->set_ttl_seconds(opened.ttl_seconds);
    response->set_secret(opened.secret);
  });
}

grpc::ServerUnaryReactor* LockService::KeepAlive(grpc::CallbackServerContext* context,
                                                 const v1::KeepAliveRequest* request,
                                                 v1::KeepAliveResponse* response) {
  const OpStatus denied = run_op(
      "Locks.KeepAlive", [&] { authorizer_.require(Permission::kLock, "KeepAlive", *context); });
  return answer(context, denied.ok() ? ops_.keep_alive(*context, *request, response) : denied);
}

grpc::ServerUnaryReactor* LockService::CloseSession(grpc::CallbackServerContext* context,
                                                    const v1::CloseSessionRequest* request,
                                                    v1::CloseSessionResponse* response) {
  return answer(context, "Locks.CloseSession", [&] {
    authorizer_.require(Permission::kLock, "CloseSession", *context);
    ops_.check_owner(*context, request->session(), request->secret());
    const auto closed = locks_.close_session(request->session());
    response->set_released(closed.released);
    response->set_cancelled(closed.cancelled);
  });
}

grpc::ServerUnaryReactor* LockService::lock(grpc::CallbackServerContext* context,
                                            const v1::LockRequest* request,
                                            v1::LockResponse* response, locks::Wait wait) {
  const bool try_lock = wait == locks::Wait::kTry;
  const OpStatus denied = run_op(try_lock ? "Locks.TryLock" : "Locks.Lock", [&] {
    authorizer_.require(Permission::kLock, try_lock ? "TryLock" : "Lock", *context);
  });
  if (!denied.ok()) return answer(context, denied);
  std::optional<LockClock::time_point> deadline;
  const auto end = context->deadline();
  if (end != std::chrono::system_clock::time_point::max()) {
    // The wait ends a little before the client's deadline, so that its DEADLINE_EXCEEDED,
    // or a grant just before it, reaches the client before the client gives up by itself
    // (a grant it never received would be given back in OnDone, but the client could not
    // tell it from one it did).
    const auto left =
        std::chrono::duration_cast<LockClock::duration>(end - std::chrono::system_clock::now());
    const auto margin = std::clamp<LockClock::duration>(left / 10, std::chrono::milliseconds(2),
                                                        std::chrono::milliseconds(200));
    deadline = LockClock::now() + left - margin;
  }
  auto* reactor = new LockReactor(ops_, context, response);
  reactor->start(*request, wait, deadline);
  return reactor;
}

grpc::ServerUnaryReactor* LockService::Lock(grpc::CallbackServerContext* context,
                                            const v1::LockRequest* request,
                                            v1::LockResponse* response) {
  return lock(context, request, response, locks::Wait::kBlock);
}

grpc::ServerUnaryReactor* LockService::TryLock(grpc::CallbackServerContext* context,
                                               const v1::LockRequest* request,
                                               v1::LockResponse* response) {
  return lock(context, request, response, locks::Wait::kTry);
}

grpc::ServerUnaryReactor* LockService::Unlock(grpc::CallbackServerContext* context,
                                              const v1::UnlockRequest* request,
                                              v1::UnlockResponse* response) {
  const OpStatus denied =
      run_op("Locks.Unlock", [&] { authorizer_.require(Permission::kLock, "Unlock", *context); });
  return answer(context, denied.ok() ? ops_.unlock(*context, *request, response) : denied);
}

grpc::ServerUnaryReactor* LockService::Downgrade(grpc::CallbackServerContext* context,
                                                 const v1::UnlockRequest* request,
                                                 v1::UnlockResponse* response) {
  const OpStatus denied = run_op(
      "Locks.Downgrade", [&] { authorizer_.require(Permission::kLock, "Downgrade", *context); });
  return answer(context, denied.ok() ? ops_.downgrade(*context, *request, response) : denied);
}

grpc::ServerBidiReactor<v1::LockBatch, v1::LockBatchReply>* LockService::Batch(
    grpc::CallbackServerContext* context) {
  return start_batch(ops_, authorizer_, context, locks_.config().batch_reply_queue_bytes);
}

grpc::ServerUnaryReactor* LockService::ListLocks(grpc::CallbackServerContext* context,
                                                 const v1::ListLocksRequest* request,
                                                 v1::ListLocksResponse* response) {
  return answer(context, "Locks.ListLocks", [&] {
    authorizer_.require(Permission::kRead, "ListLocks", *context);
    uint32_t limit = request->limit() == 0 ? kDefaultListLimit : request->limit();
    if (limit > kMaxListLimit) {
      throw Error(
          ErrorCode::kInvalidArgument,
          fmt::format("limit: {} is more than {}; page with `after`", limit, kMaxListLimit));
    }
    std::optional<ListCursor> from;
    if (!request->page_token().empty()) from = from_page_token(request->page_token());
    const auto view = locks_.list(request->file(), request->after(), limit, from, kPageBytes);
    for (const auto& h : view.held) {
      fill_held(h, response->add_held());
    }
    for (const auto& w : view.waiting) {
      auto* out = response->add_waiting();
      out->set_file(w.file);
      out->set_session(w.session);
      out->set_owner(w.owner);
      out->set_mode(mode_of(w.request.mode));
      out->set_request(w.request.request);
      for (const auto& r : w.request.ranges) fill_range(r, out->add_ranges());
      out->set_domain(w.domain);
    }
    response->set_next_after(view.next_after);
    if (view.next) response->set_next_page_token(page_token(*view.next));
  });
}

grpc::ServerUnaryReactor* LockService::RevokeSession(grpc::CallbackServerContext* context,
                                                     const v1::RevokeSessionRequest* request,
                                                     v1::RevokeSessionResponse* response) {
  return answer(context, "Locks.RevokeSession", [&] {
    authorizer_.require(Permission::kLockAdmin, "RevokeSession", *context);
    const auto revoked = locks_.revoke_session(request->session(), authorizer_.principal(*context));
    response->set_released(revoked.released);
    response->set_cancelled(revoked.cancelled);
    response->set_owner(revoked.owner);
    response->set_name(revoked.name);
  });
}

grpc::ServerUnaryReactor* LockService::ReleaseLocks(grpc::CallbackServerContext* context,
                                                    const v1::ReleaseLocksRequest* request,
                                                    v1::ReleaseLocksResponse* response) {
  return answer(context, "Locks.ReleaseLocks", [&] {
    authorizer_.require(Permission::kLockAdmin, "ReleaseLocks", *context);
    if (request->file().empty()) {
      throw Error(ErrorCode::kInvalidArgument, "file: none given; name the file to release");
    }
    if (request->ranges_size() == 0) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ranges: none given; name the bytes to release (e.g. offset 0, length 4096)");
    }
    std::vector<locks::ByteRange> ranges;
    ranges.reserve(static_cast<size_t>(std::min(request->ranges_size(), 1 << 16)));
    for (const auto& r : request->ranges()) ranges.push_back({r.offset(), r.length()});
    const auto done = locks_.release_locks(request->file(), ranges, request->dry_run(),
                                           authorizer_.principal(*context));
    for (const auto& h : done.released) {
      fill_held(h, response->add_released());
    }
    response->set_granted(done.granted);
    response->set_dry_run(request->dry_run());
  });
}

grpc::ServerUnaryReactor* LockService::GetLockStats(grpc::CallbackServerContext* context,
                                                    const v1::GetLockStatsRequest* request,
                                                    v1::GetLockStatsResponse* response) {
  return answer(context, "Locks.GetLockStats", [&] {
    authorizer_.require(Permission::kRead, "GetLockStats", *context);
    const uint32_t top = request->top() == 0 ? kDefaultTopSessions : request->top();
    if (top > kMaxTopSessions) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("top: {} is more than {}; ListSessions lists every session", top,
                              kMaxTopSessions));
    }
    const auto view = locks_.stats(top);
    for (const auto& d : view.domains) {
      auto* out = response->add_domains();
      out->set_name(d.name);
      out->set_capacity(d.stats.capacity);
      out->set_entries_in_use(d.stats.entries_in_use);
      out->set_held_entries(d.stats.held_entries);
      out->set_waiting_entries(d.stats.waiting_entries);
      out->set_waiting_requests(d.stats.waiting_requests);
      out->set_files(d.stats.files);
      out->set_grants(d.stats.grants);
      out->set_queued(d.stats.queued);
      out->set_releases(d.stats.releases);
      out->set_table_full(d.stats.table_full);
      out->set_conflicts(d.stats.conflicts);
      out->set_cancelled(d.stats.cancelled);
      out->set_expired(d.stats.expired);
    }
    response->set_placement(view.placement);
    response->set_sessions(view.session_count);
    response->set_sessions_not_reattached(view.not_reattached);
    response->set_held_entries(view.held_entries);
    response->set_waiting_requests(view.waiting_requests);
    response->set_waiting_calls(view.waiting_calls);
    response->set_grace_remaining_seconds(view.grace_remaining_seconds);
    response->set_loss_grace_remaining_seconds(view.loss_grace_remaining_seconds);
    response->set_reclaiming_sessions(view.reclaiming_sessions);
    auto* counters = response->mutable_session_counters();
    counters->set_opened(view.counters.opened);
    counters->set_closed(view.counters.closed);
    counters->set_expired(view.counters.expired);
    counters->set_revoked(view.counters.revoked);
    counters->set_locks_lost(view.counters.locks_lost);
    counters->set_reclaims(view.counters.reclaims);
    counters->set_reclaims_refused(view.counters.reclaims_refused);
    for (const auto& s : view.sessions) fill_session(s, response->add_session_list());
  });
}

grpc::ServerUnaryReactor* LockService::ListSessions(grpc::CallbackServerContext* context,
                                                    const v1::ListSessionsRequest* request,
                                                    v1::ListSessionsResponse* response) {
  return answer(context, "Locks.ListSessions", [&] {
    authorizer_.require(Permission::kRead, "ListSessions", *context);
    const uint32_t limit = request->limit() == 0 ? kDefaultSessionPage : request->limit();
    if (limit > kMaxSessionPage) {
      throw Error(
          ErrorCode::kInvalidArgument,
          fmt::format("limit: {} is more than {}; page with `after`", limit, kMaxSessionPage));
    }
    const SessionPage page = locks_.sessions(request->after(), limit);
    size_t bytes = 0;
    for (const auto& s : page.sessions) {
      if (bytes >= kPageBytes) {  // the rest in the next page
        response->set_next_after(response->sessions().rbegin()->session());
        return;
      }
      auto* out = response->add_sessions();
      fill_session(s, out);
      bytes += out->ByteSizeLong() + 4;
    }
    if (page.more && !page.sessions.empty()) {
      response->set_next_after(page.sessions.back().session);
    }
  });
}

}  // namespace asn

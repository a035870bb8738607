#include "services/lock_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "services/grpc_status.hpp"

namespace asn {

namespace {

// Entries ListLocks returns unless asked for fewer, and the most it returns.
constexpr uint32_t kDefaultListLimit = 1000;
constexpr uint32_t kMaxListLimit = 100000;

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

v1::LockMode mode_of(locks::Mode mode) {
  return mode == locks::Mode::kShared ? v1::LOCK_MODE_SHARED : v1::LOCK_MODE_EXCLUSIVE;
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

void fill(const locks::ByteRange& range, v1::ByteRange* out) {
  out->set_offset(range.offset);
  out->set_length(range.length);
}

// A caller with a verified certificate uses only the sessions it opened.
void check_owner(const Authorizer& authorizer, LockManager& locks,
                 const grpc::CallbackServerContext& context, uint64_t session) {
  if (authorizer.certified(context)) locks.check_owner(session, authorizer.principal(context));
}

// The trailing metadata that carries Error::reason().
constexpr char kReasonKey[] = "asn-lock-reason";

void send_reason(grpc::CallbackServerContext& context, const Error& e) {
  if (!e.reason().empty()) context.AddTrailingMetadata(kReasonKey, e.reason());
}

// Runs `body` and finishes the call with its status (and the error's reason).
template <typename Body>
grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, std::string_view rpc,
                                 Body&& body) {
  auto* reactor = context->DefaultReactor();
  reactor->Finish(guarded(rpc, [&] {
    try {
      body();
    } catch (const Error& e) {
      send_reason(*context, e);
      throw;
    }
  }));
  return reactor;
}

// A Lock call that may wait: finished by the LockManager from whichever thread grants it,
// times it out, or cancels it. It deletes itself once both gRPC is done with it and lock()
// has returned.
class LockReactor final : public grpc::ServerUnaryReactor {
 public:
  LockReactor(LockManager& locks, grpc::CallbackServerContext* context, v1::LockResponse* response)
      : locks_(locks), context_(context), response_(response) {}

  void start(const LockCall& call, locks::Wait wait,
             std::optional<LockClock::time_point> deadline) {
    uint64_t handle = 0;
    try {
      handle = locks_.lock(call, wait, deadline, [this](LockResult result) { complete(result); });
    } catch (const Error& e) {
      send_reason(*context_, e);
      Finish(to_grpc_status(e));
    } catch (const std::exception& e) {
      spdlog::error("Locks.Lock: internal error: {}", e.what());
      Finish(to_grpc_status(Error(ErrorCode::kInternal, e.what())));
    }
    bool cancel = false;
    {
      std::lock_guard lock(mu_);
      handle_ = handle;
      started_ = true;
      cancel = cancelled_ && handle != 0;
    }
    if (cancel) locks_.cancel_call(handle, cancelled());
    release();
  }

  void OnCancel() override {
    uint64_t handle = 0;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      if (started_) handle = handle_;
    }
    if (handle != 0) locks_.cancel_call(handle, cancelled());
  }

  void OnDone() override { release(); }

 private:
  static Error cancelled() {
    return Error(ErrorCode::kAborted, "the wait was cancelled: the client cancelled the call");
  }

  void complete(const LockResult& result) {
    if (const auto* e = std::get_if<Error>(&result)) {
      send_reason(*context_, *e);
      Finish(to_grpc_status(*e));
      return;
    }
    const auto& granted = std::get<LockGranted>(result);
    response_->set_token(granted.grant.token);
    response_->set_request(granted.grant.request);
    for (const auto& range : granted.grant.ranges) fill(range, response_->add_ranges());
    response_->set_domain(granted.domain);
    response_->set_waited(granted.waited);
    Finish(grpc::Status::OK);
  }

  void release() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  LockManager& locks_;
  grpc::CallbackServerContext* context_;
  v1::LockResponse* response_;
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
    const auto opened = locks_.open_session(authorizer_.principal(*context), request->name(),
                                            request->ttl_seconds());
    response->set_session(opened.session);
    response->set_ttl_seconds(opened.ttl_seconds);
  });
}

grpc::ServerUnaryReactor* LockService::KeepAlive(grpc::CallbackServerContext* context,
                                                 const v1::KeepAliveRequest* request,
                                                 v1::KeepAliveResponse* response) {
  return answer(context, "Locks.KeepAlive", [&] {
    authorizer_.require(Permission::kLock, "KeepAlive", *context);
    check_owner(authorizer_, locks_, *context, request->session());
    const auto [ttl, reattached] = locks_.keep_alive(request->session());
    response->set_ttl_seconds(ttl);
    response->set_reattached(reattached);
  });
}

grpc::ServerUnaryReactor* LockService::CloseSession(grpc::CallbackServerContext* context,
                                                    const v1::CloseSessionRequest* request,
                                                    v1::CloseSessionResponse* response) {
  return answer(context, "Locks.CloseSession", [&] {
    authorizer_.require(Permission::kLock, "CloseSession", *context);
    check_owner(authorizer_, locks_, *context, request->session());
    const auto closed = locks_.close_session(request->session());
    response->set_released(closed.released);
    response->set_cancelled(closed.cancelled);
  });
}

grpc::ServerUnaryReactor* LockService::lock(grpc::CallbackServerContext* context,
                                            const v1::LockRequest* request,
                                            v1::LockResponse* response, locks::Wait wait) {
  LockCall call;
  std::optional<LockClock::time_point> deadline;
  const grpc::Status status = guarded("Locks.Lock", [&] {
    authorizer_.require(Permission::kLock, wait == locks::Wait::kTry ? "TryLock" : "Lock",
                        *context);
    check_owner(authorizer_, locks_, *context, request->session());
    call.session = request->session();
    call.file = request->file();
    call.mode = mode_of(request->mode());
    call.ranges = ranges_of(*request);
    const auto end = context->deadline();
    if (end != std::chrono::system_clock::time_point::max()) {
      deadline = LockClock::now() + std::chrono::duration_cast<LockClock::duration>(
                                        end - std::chrono::system_clock::now());
    }
  });
  if (!status.ok()) {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  auto* reactor = new LockReactor(locks_, context, response);
  reactor->start(call, wait, deadline);
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
  return answer(context, "Locks.Unlock", [&] {
    authorizer_.require(Permission::kLock, "Unlock", *context);
    check_owner(authorizer_, locks_, *context, request->session());
    const auto done = locks_.unlock(request->session(), request->file(), ranges_of(*request));
    response->set_released(done.released);
    response->set_granted(done.granted);
  });
}

grpc::ServerUnaryReactor* LockService::Downgrade(grpc::CallbackServerContext* context,
                                                 const v1::UnlockRequest* request,
                                                 v1::UnlockResponse* response) {
  return answer(context, "Locks.Downgrade", [&] {
    authorizer_.require(Permission::kLock, "Downgrade", *context);
    check_owner(authorizer_, locks_, *context, request->session());
    const auto done = locks_.downgrade(request->session(), request->file(), ranges_of(*request));
    response->set_released(done.released);
    response->set_granted(done.granted);
  });
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
    const auto view = locks_.list(request->file(), request->after(), limit);
    for (const auto& h : view.held) {
      auto* out = response->add_held();
      out->set_file(h.file);
      out->set_session(h.session);
      out->set_owner(h.owner);
      out->set_session_name(h.session_name);
      out->set_mode(mode_of(h.lock.mode));
      out->set_token(h.lock.token);
      fill(h.lock.range, out->mutable_range());
      out->set_domain(h.domain);
      out->set_request(h.lock.request);
    }
    for (const auto& w : view.waiting) {
      auto* out = response->add_waiting();
      out->set_file(w.file);
      out->set_session(w.session);
      out->set_owner(w.owner);
      out->set_mode(mode_of(w.request.mode));
      out->set_request(w.request.request);
      for (const auto& r : w.request.ranges) fill(r, out->add_ranges());
      out->set_domain(w.domain);
    }
    response->set_next_after(view.next_after);
  });
}

grpc::ServerUnaryReactor* LockService::GetLockStats(grpc::CallbackServerContext* context,
                                                    const v1::GetLockStatsRequest*,
                                                    v1::GetLockStatsResponse* response) {
  return answer(context, "Locks.GetLockStats", [&] {
    authorizer_.require(Permission::kRead, "GetLockStats", *context);
    const auto view = locks_.stats();
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
    response->set_sessions(view.sessions.size());
    response->set_waiting_calls(view.waiting_calls);
    response->set_grace_remaining_seconds(view.grace_remaining_seconds);
    for (const auto& s : view.sessions) {
      auto* out = response->add_session_list();
      out->set_session(s.session);
      out->set_owner(s.owner);
      out->set_name(s.name);
      out->set_ttl_seconds(s.ttl_seconds);
      out->set_expires_in_seconds(s.expires_in_seconds);
      out->set_held_entries(s.held_entries);
      out->set_waiting_requests(s.waiting_requests);
      out->set_reattached(s.reattached);
    }
  });
}

}  // namespace asn

#include "fake_locks.hpp"

#include <algorithm>
#include <stdexcept>

namespace asn::test {

namespace pb = asn::v1;
using Clock = FakeLockState::Clock;

namespace {

struct Span {
  std::uint64_t begin, end;
};

template <class Request>
bool expand(const Request& request, std::vector<Span>& out) {
  if (request.has_strided() && request.ranges_size() > 0) return false;
  if (request.has_strided()) {
    const auto& s = request.strided();
    if (s.block_length() == 0 || s.count() == 0) return false;
    for (std::uint64_t i = 0; i < s.count(); ++i) {
      out.push_back({s.offset() + i * s.stride(), s.offset() + i * s.stride() + s.block_length()});
    }
  }
  for (const auto& r : request.ranges()) {
    if (r.length() == 0) return false;
    out.push_back({r.offset(), r.offset() + r.length()});
  }
  return !out.empty();
}

bool overlaps(std::uint64_t b1, std::uint64_t e1, std::uint64_t b2, std::uint64_t e2) {
  return b1 < e2 && b2 < e1;
}

grpc::Status gone(std::uint64_t session) {
  return {grpc::StatusCode::FAILED_PRECONDITION,
          "session " + std::to_string(session) + " expired or was closed"};
}

}  // namespace

void FakeLockState::expire_locked() {
  auto now = Clock::now();
  bool any = false;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second.expires < now) {
      for (auto& [file, held] : files_) {
        std::erase_if(held, [&](const Held& h) { return h.session == it->first; });
      }
      it = sessions_.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  if (any) changed_.notify_all();
}

void FakeLockState::forget(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  sessions_.erase(session);
  for (auto& [file, held] : files_) {
    std::erase_if(held, [&](const Held& h) { return h.session == session; });
  }
  changed_.notify_all();
}

void FakeLockState::hang(bool hung) {
  std::lock_guard lock(mutex_);
  hung_ = hung;
  changed_.notify_all();
}

void FakeLockState::restarted(std::chrono::milliseconds grace) {
  std::lock_guard lock(mutex_);
  for (auto& [id, session] : sessions_) {
    session.pending_reattach = true;
    session.expires = Clock::now() + grace;
  }
}

bool FakeLockState::has_session(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  expire_locked();
  return sessions_.contains(session);
}

std::size_t FakeLockState::held_entries(std::uint64_t session) {
  std::lock_guard lock(mutex_);
  expire_locked();
  std::size_t n = 0;
  for (const auto& [file, held] : files_) {
    n += std::count_if(held.begin(), held.end(),
                       [&](const Held& h) { return h.session == session; });
  }
  return n;
}

std::vector<FakeLockState::Held> FakeLockState::held(const std::string& file) {
  std::lock_guard lock(mutex_);
  expire_locked();
  auto it = files_.find(file);
  return it == files_.end() ? std::vector<Held>{} : it->second;
}

grpc::Status FakeLocksService::OpenSession(grpc::ServerContext*,
                                           const pb::OpenSessionRequest* request,
                                           pb::OpenSessionResponse* response) {
  if (request->ttl_seconds() > 3600) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "ttl_seconds above 3600"};
  }
  auto& s = *state_;
  std::lock_guard lock(s.mutex_);
  std::uint32_t ttl = request->ttl_seconds() == 0 ? 15 : request->ttl_seconds();
  std::uint64_t id = s.next_session_++;
  s.sessions_[id] = {ttl, Clock::now() + std::chrono::seconds(ttl), request->name()};
  response->set_session(id);
  response->set_ttl_seconds(ttl);
  return grpc::Status::OK;
}

grpc::Status FakeLocksService::KeepAlive(grpc::ServerContext*, const pb::KeepAliveRequest* request,
                                         pb::KeepAliveResponse* response) {
  auto& s = *state_;
  std::lock_guard lock(s.mutex_);
  ++s.keepalives_;
  s.expire_locked();
  auto it = s.sessions_.find(request->session());
  if (it == s.sessions_.end()) return gone(request->session());
  it->second.expires = Clock::now() + std::chrono::seconds(it->second.ttl_seconds);
  response->set_ttl_seconds(it->second.ttl_seconds);
  response->set_reattached(it->second.pending_reattach);
  it->second.pending_reattach = false;
  return grpc::Status::OK;
}

grpc::Status FakeLocksService::CloseSession(grpc::ServerContext*,
                                            const pb::CloseSessionRequest* request,
                                            pb::CloseSessionResponse* response) {
  auto& s = *state_;
  std::lock_guard lock(s.mutex_);
  s.expire_locked();
  if (!s.sessions_.erase(request->session())) return gone(request->session());
  std::uint64_t released = 0;
  for (auto& [file, held] : s.files_) {
    released += std::erase_if(held, [&](const auto& h) { return h.session == request->session(); });
  }
  response->set_released(released);
  s.changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status FakeLocksService::lock(grpc::ServerContext* context, const pb::LockRequest* request,
                                    pb::LockResponse* response, bool wait,
                                    std::uint32_t timeout_ms) {
  const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<Span> spans;
  if (request->file().empty() || !expand(*request, spans)) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "a file and ranges (or a strided pattern)"};
  }
  if (request->mode() == pb::LOCK_MODE_UNSPECIFIED) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "mode unspecified"};
  }
  bool exclusive = request->mode() == pb::LOCK_MODE_EXCLUSIVE;
  auto& s = *state_;
  std::unique_lock lock(s.mutex_);
  bool waited = false;
  for (;;) {
    s.expire_locked();
    if (!s.sessions_.contains(request->session())) {
      return waited ? grpc::Status(grpc::StatusCode::ABORTED, "the session ended")
                    : gone(request->session());
    }
    const FakeLockState::Held* conflict = nullptr;
    for (const auto& h : s.files_[request->file()]) {
      if (h.session == request->session() || (!exclusive && !h.exclusive)) continue;
      for (const auto& span : spans) {
        if (overlaps(h.begin, h.end, span.begin, span.end)) conflict = &h;
      }
    }
    if (!conflict) break;
    if (!wait) {
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "conflicts with [" + std::to_string(conflict->begin) + ", " +
                  std::to_string(conflict->end) + ") held by session " +
                  std::to_string(conflict->session)};
    }
    if (context->IsCancelled()) return grpc::Status::CANCELLED;
    if (timeout_ms > 0 && Clock::now() >= until) {
      return {grpc::StatusCode::DEADLINE_EXCEEDED, "not granted within timeout_ms"};
    }
    waited = true;
    s.changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
  std::uint64_t token = s.next_token_++;
  std::uint64_t id = s.next_request_++;
  std::sort(spans.begin(), spans.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  for (const auto& span : spans) {
    s.files_[request->file()].push_back(
        {request->session(), exclusive, span.begin, span.end, token, id});
    auto* range = response->add_ranges();
    range->set_offset(span.begin);
    range->set_length(span.end - span.begin);
  }
  response->set_token(token);
  response->set_request(id);
  response->set_domain("software");
  response->set_waited(waited);
  return grpc::Status::OK;
}

grpc::Status FakeLocksService::Lock(grpc::ServerContext* context, const pb::LockRequest* request,
                                    pb::LockResponse* response) {
  return lock(context, request, response, true);
}

grpc::Status FakeLocksService::TryLock(grpc::ServerContext* context, const pb::LockRequest* request,
                                       pb::LockResponse* response) {
  return lock(context, request, response, false);
}

grpc::Status FakeLocksService::unlock(const pb::UnlockRequest* request,
                                      pb::UnlockResponse* response, bool downgrade) {
  std::vector<Span> spans;
  if (request->file().empty() || !expand(*request, spans)) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "a file and ranges (or a strided pattern)"};
  }
  auto& s = *state_;
  std::lock_guard lock(s.mutex_);
  s.expire_locked();
  if (!s.sessions_.contains(request->session())) return gone(request->session());
  auto& held = s.files_[request->file()];
  // Every byte named must be held by the session.
  for (const auto& span : spans) {
    std::uint64_t covered = 0;
    for (const auto& h : held) {
      if (h.session != request->session()) continue;
      if (overlaps(h.begin, h.end, span.begin, span.end)) {
        covered += std::min(h.end, span.end) - std::max(h.begin, span.begin);
      }
    }
    if (covered < span.end - span.begin) {
      return {grpc::StatusCode::FAILED_PRECONDITION, "bytes [" + std::to_string(span.begin) + ", " +
                                                         std::to_string(span.end) +
                                                         ") are not held by the session"};
    }
  }
  std::uint64_t changed = 0;
  std::vector<FakeLockState::Held> next;
  for (const auto& h : held) {
    bool touched = false;
    if (h.session == request->session()) {
      for (const auto& span : spans) touched |= overlaps(h.begin, h.end, span.begin, span.end);
    }
    if (!touched) {
      next.push_back(h);
      continue;
    }
    ++changed;
    if (downgrade) {
      next.push_back(h);
      next.back().exclusive = false;
      continue;
    }
    // Keep what lies outside the named spans.
    std::vector<Span> rest{{h.begin, h.end}};
    for (const auto& span : spans) {
      std::vector<Span> cut;
      for (const auto& r : rest) {
        if (!overlaps(r.begin, r.end, span.begin, span.end)) {
          cut.push_back(r);
          continue;
        }
        if (r.begin < span.begin) cut.push_back({r.begin, span.begin});
        if (span.end < r.end) cut.push_back({span.end, r.end});
      }
      rest = cut;
    }
    for (const auto& r : rest) {
      next.push_back(h);
      next.back().begin = r.begin;
      next.back().end = r.end;
    }
  }
  held = std::move(next);
  response->set_released(changed);
  s.changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status FakeLocksService::Unlock(grpc::ServerContext*, const pb::UnlockRequest* request,
                                      pb::UnlockResponse* response) {
  return unlock(request, response, false);
}

grpc::Status FakeLocksService::Downgrade(grpc::ServerContext*, const pb::UnlockRequest* request,
                                         pb::UnlockResponse* response) {
  return unlock(request, response, true);
}

grpc::Status FakeLocksService::Batch(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<pb::LockBatchReply, pb::LockBatch>* stream) {
  pb::LockBatch batch;
  while (stream->Read(&batch)) {
    {
      std::unique_lock lock(state_->mutex_);
      state_->changed_.wait(lock, [&] { return !state_->hung_; });
    }
    pb::LockBatchReply reply;
    for (const auto& op : batch.ops()) {
      pb::LockOpResult* result = reply.add_results();
      result->set_id(op.id());
      grpc::Status status;
      switch (op.op_case()) {
        case pb::LockOp::kLock:
          status = lock(context, &op.lock(), result->mutable_lock(), true, op.timeout_ms());
          break;
        case pb::LockOp::kTryLock:
          status = lock(context, &op.try_lock(), result->mutable_lock(), false);
          break;
        case pb::LockOp::kUnlock:
          status = unlock(&op.unlock(), result->mutable_unlock(), false);
          break;
        case pb::LockOp::kDowngrade:
          status = unlock(&op.downgrade(), result->mutable_unlock(), true);
          break;
        case pb::LockOp::kKeepAlive:
          status = KeepAlive(context, &op.keep_alive(), result->mutable_keep_alive());
          break;
        case pb::LockOp::OP_NOT_SET:
          status = {grpc::StatusCode::INVALID_ARGUMENT, "op: none given"};
          break;
      }
      if (!status.ok()) {
        result->clear_result();
        result->set_code(static_cast<std::int32_t>(status.error_code()));
        result->set_message(status.error_message());
      }
    }
    if (!stream->Write(reply)) break;
  }
  return grpc::Status::OK;
}

FakeLocksServer::FakeLocksServer(std::shared_ptr<FakeLockState> state, std::string socket_path)
    : state_(std::move(state)), endpoint_("unix:" + socket_path) {
  start();
}

FakeLocksServer::~FakeLocksServer() { stop(); }

void FakeLocksServer::start() {
  if (server_) return;
  service_ = std::make_unique<FakeLocksService>(state_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(endpoint_, grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) throw std::runtime_error("cannot listen on " + endpoint_);
}

void FakeLocksServer::stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
  service_.reset();
}

void FakeLocksServer::restart(std::chrono::milliseconds grace) {
  stop();
  state_->restarted(grace);
  start();
}

}  // namespace asn::test

// The LockManager's sessions, locks and time (lock_manager.hpp); its start, stop and board
// resets are in lock_manager_start.cc, its reads in lock_manager_reads.cc.
#include "locks/lock_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "asn/state/v1/state.pb.h"
#include "asn/text/text.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

namespace lock_manager_detail {

namespace {

constexpr std::string_view kSoftwarePrefix = "software-prefix:";

ErrorCode code_of(locks::ErrorKind kind) {
  switch (kind) {
    case locks::ErrorKind::kInvalidArgument:
      return ErrorCode::kInvalidArgument;
    case locks::ErrorKind::kResourceExhausted:
      return ErrorCode::kResourceExhausted;
    case locks::ErrorKind::kNotFound:
      return ErrorCode::kNotFound;
    case locks::ErrorKind::kFailedPrecondition:
      return ErrorCode::kFailedPrecondition;
  }
  return ErrorCode::kInternal;
}

}  // namespace

Error error_of(const locks::LockError& e) { return Error(code_of(e.kind()), e.what()); }

Error with_not_held(Error e) {
  if (e.code() == ErrorCode::kFailedPrecondition) e.with_reason(kReasonNotHeld);
  return e;
}

std::string printable(std::string_view file) { return text::escaped(file, 64); }

double seconds_until(LockClock::time_point when, LockClock::time_point now) {
  return std::chrono::duration<double>(when - now).count();
}

std::vector<std::string> software_prefixes(const std::string& placement) {
  std::vector<std::string> out;
  if (placement.rfind(kSoftwarePrefix, 0) != 0) return out;
  std::string rest = placement.substr(kSoftwarePrefix.size());
  size_t start = 0;
  while (start <= rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    if (comma > start) out.push_back(rest.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace lock_manager_detail

using namespace lock_manager_detail;

namespace {

// Files in the placement map before it is first pruned of files that no longer have entries.
constexpr size_t kPlacementPruneFloor = 4096;

}  // namespace

// ---- sessions -----------------------------------------------------------------------------

OpenedSession LockManager::open_session(const std::string& owner, const std::string& name,
                                        uint32_t ttl_seconds) {
  if (ttl_seconds == 0) ttl_seconds = config_.default_ttl_s;
  if (ttl_seconds > config_.max_ttl_s) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("ttl_seconds: {} is longer than the longest lease, {} s "
                            "(locks.max_ttl); keep the session alive instead",
                            ttl_seconds, config_.max_ttl_s));
  }
  if (name.size() > 256) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("name: {} bytes; at most 256 are accepted", name.size()));
  }
  std::lock_guard lock(mu_);
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  state::v1::LockSessionLabel label;
  label.set_owner(owner);
  label.set_name(name);
  label.set_ttl_seconds(ttl_seconds);
  if (switch_ >= 0) label.set_switch_session(domains_[switch_]->open_session(""));
  locks::SessionId id = 0;
  try {
    id = domains_[software_]->open_session(label.SerializeAsString());
  } catch (const locks::LockError& e) {
    if (label.switch_session() != 0) domains_[switch_]->expire(label.switch_session());
    throw error_of(e);
  }
  auto session = std::make_unique<Session>();
  session->id = id;
  session->owner = owner;
  session->name = name;
  session->ttl = ttl_seconds;
  session->switch_session = label.switch_session();
  session->expires = LockClock::now() + std::chrono::seconds(ttl_seconds);
  if (session->switch_session != 0) by_switch_session_[session->switch_session] = id;
  leases_.emplace(session->expires, id);
  sessions_.emplace(id, std::move(session));
  spdlog::debug("locks: session {} opened by {} ({}), lease {} s", id, owner, name, ttl_seconds);
  wake_.notify_all();
  return {id, ttl_seconds};
}

LockManager::Session& LockManager::session_or_throw(uint64_t id, LockClock::time_point now) {
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("session {} is not open: it expired, was closed or never existed, "
                            "and its locks are released; open a new session",
                            id))
        .with_reason(kReasonSessionGone);
  }
  touch(*it->second, now);
  return *it->second;
}

void LockManager::touch(Session& session, LockClock::time_point now) {
  leases_.erase({session.expires, session.id});
  session.expires = now + std::chrono::seconds(session.ttl);
  leases_.emplace(session.expires, session.id);
}

void LockManager::check_owner(uint64_t id, const std::string& principal) const {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second->owner == principal) return;
  throw Error(ErrorCode::kPermissionDenied,
              fmt::format("session {} belongs to {}, not to {}: a client uses only the sessions "
                          "it opened",
                          id, text::quoted(it->second->owner, 128), text::quoted(principal, 128)));
}

std::pair<uint32_t, bool> LockManager::keep_alive(uint64_t id) {
  std::lock_guard lock(mu_);
  Session& session = session_or_throw(id, LockClock::now());
  const bool reattached = !session.reattached;
  if (reattached) spdlog::info("locks: session {} of {} re-attached", id, session.owner);
  session.reattached = true;
  return {session.ttl, reattached};
}

SessionClosed LockManager::close_session(uint64_t id) {
  Finished finished;
  SessionClosed out;
  {
    std::lock_guard lock(mu_);
    Session& session = session_or_throw(id, LockClock::now());
    out.cancelled = session.waiters.size();
    Error why(ErrorCode::kAborted,
              fmt::format("the wait was cancelled: session {} was closed", id));
    out.released = expire_locked(id, why, finished);
  }
  run(finished);
  return out;
}

// Ends a session in every domain; its waiters finish with `why`. Returns the entries released.
uint64_t LockManager::expire_locked(uint64_t id, const Error& why, Finished& finished) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return 0;
  uint64_t released = 0;
  Session& session = *it->second;
  for (const WaitKey& key : std::set<WaitKey>(session.waiters)) {
    finish_waiter(key, why, finished);
  }
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    const locks::SessionId sid = domain_session(session, d);
    if (sid == 0) continue;
    locks::Change change = domains_[d]->expire(sid);
    released += change.released;
    apply(d, change, finished);
  }
  leases_.erase({session.expires, id});
  if (session.switch_session != 0) by_switch_session_.erase(session.switch_session);
  sessions_.erase(it);
  return released;
}

locks::SessionId LockManager::domain_session(const Session& session, int domain) const {
  return domain == software_ ? session.id : session.switch_session;
}

// ---- locks --------------------------------------------------------------------------------

int LockManager::place(const std::string& file, bool& fresh) {
  fresh = false;
  if (auto it = placement_.find(file); it != placement_.end()) return it->second;
  fresh = true;
  if (switch_ < 0) return software_;
  const auto& prefixes = software_prefixes_;
  if (!prefixes.empty()) {
    const bool software = std::any_of(prefixes.begin(), prefixes.end(), [&](const auto& p) {
      return file.compare(0, p.size(), p) == 0;
    });
    return software ? software_ : switch_;
  }
  return switch_;  // first fit: the switch, unless its table turns out full (lock())
}

int LockManager::domain_index(std::string_view name) const {
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    if (domains_[d]->name() == name) return d;
  }
  return -1;
}

uint64_t LockManager::lock(const LockCall& call, locks::Wait wait,
                           std::optional<LockClock::time_point> deadline, LockDone done) {
  Finished finished;
  uint64_t handle = 0;
  {
    std::unique_lock lock(mu_);
    const auto now = LockClock::now();
    Session& session = session_or_throw(call.session, now);
    session.reattached = true;
    bool fresh = false;
    int d = place(call.file, fresh);
    if (fresh) catch_up_tokens(d);
    locks::Request request{domain_session(session, d), call.file, call.mode, call.ranges, wait};
    locks::Outcome outcome = domains_[d]->request(request);
    // First fit: a new file that does not fit in the switch's table goes to the software
    // domain instead.
    if (outcome.status == locks::Status::kTableFull && fresh && d == switch_ &&
        software_prefixes_.empty()) {
      d = software_;
      catch_up_tokens(d);
      request.session = session.id;
      outcome = domains_[d]->request(request);
    }
    switch (outcome.status) {
      case locks::Status::kGranted: {
        placement_[call.file] = d;
        note_token(d, outcome.grant->token);
        LockGranted granted{std::move(*outcome.grant), std::string(domains_[d]->name()), false};
        granted.grant.session = session.id;
        finished.emplace_back(std::move(done), std::move(granted));
        break;
      }
      case locks::Status::kQueued:
        handle =
            enqueue(session, d, outcome.request, call.file, deadline, std::move(done), finished);
        placement_[call.file] = d;
        break;
      case locks::Status::kTableFull:
        if (outcome.error) {
          throw Error(ErrorCode::kResourceExhausted,
                      fmt::format("{} ({} domain{})", outcome.error->what(), domains_[d]->name(),
                                  fresh ? "" : ", where this file lives"));
        }
        throw Error(ErrorCode::kResourceExhausted, "the lock table is full");
      case locks::Status::kConflict:
        if (outcome.error) throw error_of(*outcome.error).with_reason(kReasonConflict);
        throw Error(ErrorCode::kInternal, "a lock domain refused a request without saying why");
      case locks::Status::kInvalid:
        if (outcome.error) throw error_of(*outcome.error);
        throw Error(ErrorCode::kInternal, "a lock domain refused a request without saying why");
    }
    if (placement_.size() > std::max(kPlacementPruneFloor, 2 * placement_pruned_at_)) {
      prune_placement();
    }
  }
  run(finished);
  return handle;
}

// Keeps a queued request's call until a grant, its deadline, a cancel or its session's end
// finishes it. Over locks.max_waiting, withdraws the request and refuses the call instead.
uint64_t LockManager::enqueue(Session& session, int domain, locks::RequestId request,
                              const std::string& file,
                              std::optional<LockClock::time_point> deadline, LockDone done,
                              Finished& finished) {
  if (waiters_.size() >= config_.max_waiting) {
    apply(domain, domains_[domain]->cancel(request), finished);
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("the lock is taken, and {} Lock calls are waiting already, the most "
                            "asnd keeps (locks.max_waiting); retry later",
                            waiters_.size()));
  }
  const WaitKey key{domain, request};
  auto waiter = std::make_unique<Waiter>();
  waiter->session = session.id;
  waiter->call = next_call_++;
  waiter->file = file;
  waiter->deadline = deadline;
  waiter->since = LockClock::now();
  waiter->done = std::move(done);
  if (deadline) wait_deadlines_.emplace(*deadline, key);
  calls_.emplace(waiter->call, key);
  session.waiters.insert(key);
  const uint64_t handle = waiter->call;
  waiters_.emplace(key, std::move(waiter));
  wake_.notify_all();
  return handle;
}

void LockManager::cancel_call(uint64_t handle, const Error& why) {
  Finished finished;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(handle);
    if (it == calls_.end()) return;
    const WaitKey key = it->second;
    finish_waiter(key, why, finished);
    apply(key.domain, domains_[key.domain]->cancel(key.request), finished);
  }
  run(finished);
}

void LockManager::cancel_calls(std::span<const uint64_t> handles, const Error& why) {
  Finished finished;
  {
    std::lock_guard lock(mu_);
    std::vector<std::vector<locks::RequestId>> by_domain(domains_.size());
    for (const uint64_t handle : handles) {
      auto it = calls_.find(handle);
      if (it == calls_.end()) continue;
      const WaitKey key = it->second;
      finish_waiter(key, why, finished);
      by_domain[key.domain].push_back(key.request);
    }
    withdraw_locked(by_domain, finished);
  }
  run(finished);
}

void LockManager::withdraw_locked(const std::vector<std::vector<locks::RequestId>>& by_domain,
                                  Finished& finished) {
  for (int d = 0; d < static_cast<int>(by_domain.size()); ++d) {
    if (by_domain[d].empty()) continue;
    locks::Change change = domains_[d]->withdraw(by_domain[d]);
    if (change.error) {
      // Cannot be: the manager's waiters are the domains' (the domain failed otherwise).
      spdlog::error("locks: withdrawing {} waiting requests of the {} domain: {}",
                    by_domain[d].size(), domains_[d]->name(), change.error->what());
    }
    apply(d, change, finished);
  }
}

UnlockDone LockManager::unlock(uint64_t id, const std::string& file,
                               const locks::RangeSpec& ranges) {
  return carve(id, file, ranges, false);
}

UnlockDone LockManager::downgrade(uint64_t id, const std::string& file,
                                  const locks::RangeSpec& ranges) {
  return carve(id, file, ranges, true);
}

// Releases, or downgrades, the session's locks on `ranges` in the file's domain.
UnlockDone LockManager::carve(uint64_t id, const std::string& file, const locks::RangeSpec& ranges,
                              bool downgrade) {
  Finished finished;
  UnlockDone out;
  {
    std::lock_guard lock(mu_);
    Session& session = session_or_throw(id, LockClock::now());
    session.reattached = true;
    auto it = placement_.find(file);
    const int d = it == placement_.end() ? software_ : it->second;
    const locks::SessionId sid = domain_session(session, d);
    locks::Change change = downgrade ? domains_[d]->downgrade(sid, file, ranges)
                                     : domains_[d]->release(sid, file, ranges);
    if (change.error) throw with_not_held(error_of(*change.error));
    out.released = change.released;
    out.granted = change.granted.size();
    apply(d, change, finished);
  }
  run(finished);
  return out;
}

// Grants of waiting requests finish their calls; a grant whose call is gone (an asnd
// restart) stays held by its session until unlocked or the session ends.
void LockManager::apply(int domain, const locks::Change& change, Finished& finished) {
  for (const locks::Grant& grant : change.granted) {
    note_token(domain, grant.token);
    const WaitKey key{domain, grant.request};
    auto it = waiters_.find(key);
    if (it == waiters_.end()) {
      spdlog::warn("locks: request {} of {} was granted with no call waiting for it", grant.request,
                   printable(grant.file));
      continue;
    }
    LockGranted granted{grant, std::string(domains_[domain]->name()), true};
    granted.grant.session = it->second->session;
    finish_waiter(key, std::move(granted), finished);
  }
  for (locks::RequestId id : change.cancelled) {
    const WaitKey key{domain, id};
    if (waiters_.contains(key)) {
      finish_waiter(key,
                    Error(ErrorCode::kAborted, "the wait was cancelled: its session ended")
                        .with_reason(kReasonSessionGone),
                    finished);
    }
  }
}

void LockManager::finish_waiter(const WaitKey& key, LockResult result, Finished& finished) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  Waiter& waiter = *it->second;
  if (waiter.deadline) wait_deadlines_.erase({*waiter.deadline, key});
  calls_.erase(waiter.call);
  if (auto s = sessions_.find(waiter.session); s != sessions_.end()) s->second->waiters.erase(key);
  finished.emplace_back(std::move(waiter.done), std::move(result));
  waiters_.erase(it);
}

void LockManager::run(Finished& finished) {
  for (auto& [done, result] : finished) {
    if (done) done(std::move(result));
  }
  finished.clear();
}

void LockManager::prune_placement() {
  std::set<std::string, std::less<>> live;
  for (const auto& domain : domains_) {
    std::string after;
    for (;;) {
      auto files = domain->files(after, 4096);
      live.insert(files.begin(), files.end());
      if (files.size() < 4096) break;
      after = files.back();
    }
  }
  std::erase_if(placement_, [&](const auto& kv) { return !live.contains(kv.first); });
  placement_pruned_at_ = placement_.size();
}

// ---- time ---------------------------------------------------------------------------------

void LockManager::timer_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = LockClock::time_point::max();
    if (!leases_.empty()) next = std::min(next, leases_.begin()->first);
    if (!wait_deadlines_.empty()) next = std::min(next, wait_deadlines_.begin()->first);
    if (next == LockClock::time_point::max()) {
      wake_.wait(lock);
    } else {
      wake_.wait_until(lock, next);
    }
    if (stopping_) break;
    const auto now = LockClock::now();
    Finished finished;
    try {
      // The waits whose deadlines passed end together: one withdrawal per domain.
      std::vector<std::vector<locks::RequestId>> expired(domains_.size());
      while (!wait_deadlines_.empty() && wait_deadlines_.begin()->first <= now) {
        const WaitKey key = wait_deadlines_.begin()->second;
        auto it = waiters_.find(key);
        const std::string file = it == waiters_.end() ? "" : it->second->file;
        const double waited = it == waiters_.end() ? 0.0 : -seconds_until(it->second->since, now);
        finish_waiter(key,
                      Error(ErrorCode::kDeadlineExceeded,
                            fmt::format("the lock on {} was not granted: it waited {:.1f} s, "
                                        "until its deadline, and it is held or waited for by "
                                        "another session",
                                        printable(file), waited)),
                      finished);
        expired[key.domain].push_back(key.request);
      }
      withdraw_locked(expired, finished);
      while (!leases_.empty() && leases_.begin()->first <= now) {
        const uint64_t id = leases_.begin()->second;
        auto s = sessions_.find(id);
        if (s == sessions_.end()) {
          leases_.erase(leases_.begin());
          continue;
        }
        spdlog::info("locks: session {} of {} {}: its locks are released", id, s->second->owner,
                     s->second->reattached ? "expired" : "did not re-attach after the restart");
        expire_locked(id,
                      Error(ErrorCode::kAborted,
                            fmt::format("the wait was cancelled: session {} expired", id))
                          .with_reason(kReasonSessionGone),
                      finished);
      }
    } catch (const std::exception& e) {
      // A domain that fails (the board does not answer) is retried a second later.
      spdlog::error("locks: {}", e.what());
      lock.unlock();
      run(finished);
      lock.lock();
      wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
      continue;
    }
    lock.unlock();
    run(finished);
    lock.lock();
  }
}

}  // namespace asn

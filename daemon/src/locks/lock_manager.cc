// The LockManager's sessions, locks and time (lock_manager.hpp); its start, stop and board
// resets are in lock_manager_start.cc, its reads in lock_manager_reads.cc, the releases no
// unlock asked for in lock_manager_release.cc.
#include "locks/lock_manager.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

std::vector<locks::ByteRange> subtract(std::vector<locks::ByteRange> from,
                                       const std::vector<locks::ByteRange>& minus) {
  for (const locks::ByteRange& m : minus) {
    std::vector<locks::ByteRange> next;
    for (const locks::ByteRange& r : from) {
      // end() is 128 bits wide: a range may end at 2^64.
      if (m.end() <= r.offset || r.end() <= m.offset) {
        next.push_back(r);
        continue;
      }
      if (r.offset < m.offset) next.push_back({r.offset, m.offset - r.offset});
      if (m.end() < r.end()) {
        const auto m_end = static_cast<uint64_t>(m.end());
        next.push_back({m_end, static_cast<uint64_t>(r.end() - m.end())});
      }
    }
    from = std::move(next);
  }
  return from;
}

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

// `n` bytes from the kernel's CSPRNG (getrandom(2), which blocks only until it is seeded).
std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::kInternal, fmt::format("getrandom: {}: no session secret can be made",
                                                    std::strerror(errno)));
    }
    got += static_cast<size_t>(r);
  }
  return out;
}

std::string sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) {
    throw Error(ErrorCode::kInternal, "SHA-256 failed (OpenSSL EVP_Digest)");
  }
  return std::string(reinterpret_cast<const char*>(md), len);
}

// Whether `secret` hashes to `expected`, in time that does not depend on where they differ.
bool secret_matches(const std::string& secret, const std::string& expected) {
  const std::string hash = sha256(secret);
  return !expected.empty() && hash.size() == expected.size() &&
         CRYPTO_memcmp(hash.data(), expected.data(), hash.size()) == 0;
}

}  // namespace

// ---- sessions -----------------------------------------------------------------------------

OpenedSession LockManager::open_session(const std::string& owner, const std::string& owner_key,
                                        const std::string& name, uint32_t ttl_seconds,
                                        const std::string& quota_key) {
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
  std::string secret = random_bytes(kSessionSecretBytes);
  std::lock_guard lock(mu_);
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  const std::string& principal = !quota_key.empty()   ? quota_key
                                 : !owner_key.empty() ? owner_key
                                                      : owner;
  if (auto u = use_.find(principal);
      u != use_.end() && u->second.sessions >= config_.max_sessions_per_principal) {
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("{} has {} lock sessions open, the most one principal may have "
                            "(locks.max_sessions_per_principal); close the sessions it no longer "
                            "uses, or raise the key",
                            principal, u->second.sessions));
  }
  state::v1::LockSessionLabel label;
  label.set_owner(owner);
  label.set_quota_key(principal);
  label.set_public_id(new_public_id());
  label.set_owner_key(owner_key);
  label.set_secret_sha256(sha256(secret));
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
  session->public_id = label.public_id();
  session->owner = owner;
  session->owner_key = owner_key;
  session->secret_sha256 = label.secret_sha256();
  session->quota_key = principal;
  session->name = name;
  session->ttl = ttl_seconds;
  session->switch_session = label.switch_session();
  session->expires = LockClock::now() + std::chrono::seconds(ttl_seconds);
  if (session->switch_session != 0) by_switch_session_[session->switch_session] = id;
  leases_.emplace(session->expires, id);
  by_public_id_.emplace(label.public_id(), id);
  count_session(principal, +1);
  sessions_.emplace(id, std::move(session));
  ++counters_.opened;
  spdlog::debug("locks: session {} opened by {} ({}), lease {} s", label.public_id(), owner, name,
                ttl_seconds);
  wake_.notify_all();
  return {label.public_id(), ttl_seconds, std::move(secret)};
}

void LockManager::count_session(const std::string& quota_key, int delta) {
  PrincipalUse& use = use_[quota_key];
  use.sessions = static_cast<size_t>(static_cast<std::ptrdiff_t>(use.sessions) + delta);
  if (use.sessions == 0 && use.waiting == 0) use_.erase(quota_key);
}

LockManager::Session* LockManager::find_session(uint64_t public_id) const {
  auto id = by_public_id_.find(public_id);
  if (id == by_public_id_.end()) return nullptr;
  auto it = sessions_.find(id->second);
  return it == sessions_.end() ? nullptr : it->second.get();
}

// Random, so that no client can guess another's session; never 0, never one in use.
uint64_t LockManager::new_public_id() const {
  for (;;) {
    uint64_t id = 0;
    const std::string bytes = random_bytes(sizeof id);
    std::memcpy(&id, bytes.data(), sizeof id);
    if (id != 0 && !by_public_id_.contains(id)) return id;
  }
}

LockManager::Session& LockManager::session_or_throw(uint64_t id, LockClock::time_point now,
                                                    bool lost_ok) {
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  Session* session = find_session(id);
  if (session == nullptr) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("session {} is not open: it expired, was closed or never existed, "
                            "and its locks are released; open a new session",
                            id))
        .with_reason(kReasonSessionGone);
  }
  // A session whose switch locks were lost is told so by its next call: KeepAlive (which
  // says locks_lost), a reclaim and CloseSession go on; any other call fails, and renews
  // nothing. So no lease outlives the loss grace unless its holder has heard of the loss
  // (the grace ends when every lease alive at the loss ran out).
  if (!lost_ok && in_loss_grace(now) && loss_.sessions.contains(session->id)) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("session {}: the switch lost its lock table (a board reset) and the "
                            "session's locks there with it; reclaim them (KeepAlive says so, "
                            "LockRequest.reclaim takes them again) and send reclaim_complete "
                            "before anything else",
                            id))
        .with_reason(kReasonLocksLost);
  }
  touch(*session, now);
  return *session;
}

void LockManager::touch(Session& session, LockClock::time_point now) {
  leases_.erase({session.expires, session.id});
  session.expires = now + std::chrono::seconds(session.ttl);
  leases_.emplace(session.expires, session.id);
}

void LockManager::check_owner(uint64_t id, const SessionCaller& caller) const {
  std::lock_guard lock(mu_);
  const Session* session = find_session(id);
  if (session == nullptr) return;
  const bool secret_ok = caller.secret.empty()
                             ? !caller.owner_key.empty()
                             : secret_matches(caller.secret, session->secret_sha256);
  const bool owner_ok = caller.owner_key.empty() || caller.owner_key == session->owner_key;
  if (secret_ok && owner_ok) return;
  throw Error(
      ErrorCode::kPermissionDenied,
      fmt::format("session {}: this caller may not use it: a client uses only the "
                  "sessions it opened{}",
                  id,
                  caller.owner_key.empty() ? ", with the secret OpenSession returned for it"
                                           : " (with the same certificate, or as the same uid)"));
}

KeptAlive LockManager::keep_alive(uint64_t id, bool reclaim_complete,
                                  const std::vector<locks::Token>* held) {
  Finished finished;
  KeptAlive out;
  {
    std::lock_guard lock(mu_);
    const auto now = LockClock::now();
    Session& session = session_or_throw(id, now, /*lost_ok=*/true);
    out.ttl_seconds = session.ttl;
    out.reattached = !session.reattached;
    if (out.reattached) spdlog::info("locks: session {} of {} re-attached", id, session.owner);
    session.reattached = true;
    out.locks_lost = in_loss_grace(now) && loss_.sessions.contains(session.id);
    if (out.locks_lost && reclaim_complete) {
      left_loss_grace(session.id);
      spdlog::info("locks: session {} of {} reclaimed its switch locks; {} sessions still may", id,
                   session.owner, loss_.sessions.size());
      out.locks_lost = false;
    }
    if (out.locks_lost) out.reclaim_seconds = seconds_until(loss_.until, now);
    if (session.confirm_held && held != nullptr) {
      out.released_unconfirmed = release_unconfirmed(session, *held, finished);
    }
    out.confirm_held = session.confirm_held;
  }
  // Releases may grant waiting requests: their calls finish outside the mutex.
  run(finished);
  return out;
}

SessionClosed LockManager::close_session(uint64_t id) {
  Finished finished;
  SessionClosed out;
  {
    std::lock_guard lock(mu_);
    Session& session = session_or_throw(id, LockClock::now(), /*lost_ok=*/true);
    out.cancelled = session.waiters.size();
    Error why(ErrorCode::kAborted,
              fmt::format("the wait was cancelled: session {} was closed", id));
    out.released = expire_locked(session.id, why, finished);
    ++counters_.closed;
  }
  run(finished);
  return out;
}

SessionRevoked LockManager::revoke_session(uint64_t id, const std::string& who) {
  Finished finished;
  SessionRevoked out;
  {
    std::lock_guard lock(mu_);
    const Session* session = find_session(id);
    if (session == nullptr) {
      throw Error(ErrorCode::kNotFound,
                  fmt::format("session {} is not open (it expired, was closed or never existed): "
                              "nothing revoked; `asnctl locks stats` lists the open sessions",
                              id));
    }
    out.cancelled = session->waiters.size();
    out.owner = session->owner;
    out.name = session->name;
    Error why = Error(ErrorCode::kAborted,
                      fmt::format("the wait was cancelled: session {} was revoked by an "
                                  "administrator; its locks are released",
                                  id))
                    .with_reason(kReasonRevoked);
    out.released = expire_locked(session->id, why, finished);
    ++counters_.revoked;
    spdlog::warn(
        "locks: {} revoked session {} of {} ({}): {} lock entries released, {} waiting "
        "requests cancelled",
        who, id, out.owner, text::quoted(out.name, 64), out.released, out.cancelled);
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
  left_loss_grace(id);
  count_session(session.quota_key, -1);
  by_public_id_.erase(session.public_id);
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
    Session& session = session_or_throw(call.session, now, /*lost_ok=*/call.reclaim);
    session.reattached = true;
    // A reclaim takes back a lock the session had, never one more: it may go first.
    if (session.confirm_held && !call.reclaim) {
      throw Error(ErrorCode::kFailedPrecondition,
                  fmt::format("session {} held locks when asnd restarted, and asnd cannot know "
                              "which of them reached the client: say which it holds (KeepAlive "
                              "with `held`, the tokens of its grants) before it locks again",
                              session.public_id))
          .with_reason(kReasonConfirmHeld);
    }
    if (call.reclaim) {
      const bool lost = in_loss_grace(now) && loss_.sessions.contains(session.id);
      if (!lost || !withheld(call.file, now)) ++counters_.reclaims_refused;
      if (!lost) {
        throw Error(ErrorCode::kFailedPrecondition,
                    fmt::format("reclaim: session {} has no lost switch locks to reclaim now (a "
                                "reclaim is for the loss grace after a board reset, before the "
                                "session says reclaim_complete); take a new lock instead",
                                session.public_id))
            .with_reason(kReasonNoReclaim);
      }
      if (!withheld(call.file, now)) {
        throw Error(ErrorCode::kFailedPrecondition,
                    fmt::format("reclaim: the switch held no locks on {} when it lost its table "
                                "(its locks, if any, are intact); take a new lock instead",
                                printable(call.file)))
            .with_reason(kReasonNoReclaim);
      }
      wait = locks::Wait::kTry;
    } else if (withheld(call.file, now)) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("the switch lost its lock table (a board reset) while {} had locks "
                              "there, which their holders may still be using: until they reclaim "
                              "them, only reclaims are granted on it; retry in {:.1f} s at most",
                              printable(call.file), seconds_until(loss_.until, now)))
          .with_reason(kReasonLossGrace);
    }
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
    if (call.reclaim) {
      ++(outcome.status == locks::Status::kGranted ? counters_.reclaims
                                                   : counters_.reclaims_refused);
    }
    switch (outcome.status) {
      case locks::Status::kGranted: {
        placement_[call.file] = d;
        note_token(d, outcome.grant->token);
        LockGranted granted{std::move(*outcome.grant), std::string(domains_[d]->name()), false};
        granted.grant.session = session.public_id;
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
  // Over a quota: the request is withdrawn and the call refused, naming the quota.
  std::optional<Error> over;
  PrincipalUse& use = use_[session.quota_key];
  if (session.waiters.size() >= config_.max_waiting_per_session) {
    over = Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and session {} has {} Lock calls waiting "
                             "already, the most one session may have "
                             "(locks.max_waiting_per_session); retry later",
                             session.public_id, session.waiters.size()));
  } else if (use.waiting >= config_.max_waiting_per_principal) {
    over = Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and {} has {} Lock calls waiting already, the "
                             "most one principal may have (locks.max_waiting_per_principal); "
                             "retry later",
                             session.quota_key, use.waiting));
  } else if (waiters_.size() >= config_.max_waiting) {
    over = Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and {} Lock calls are waiting already, the most "
                             "asnd keeps (locks.max_waiting); retry later",
                             waiters_.size()));
  }
  if (over) {
    apply(domain, domains_[domain]->cancel(request), finished);
    throw *over;
  }
  ++use.waiting;
  const WaitKey key{domain, request};
  auto waiter = std::make_unique<Waiter>();
  waiter->session = session.id;
  waiter->quota_key = session.quota_key;
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
  cancel_calls(std::span<const uint64_t>(&handle, 1), why);
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

// The calls of these waiting requests are finished (or about to be): takes the requests out
// of their domains, one withdrawal a domain. A domain that cannot be reached now (the board
// is being reset) leaves them there; should one be granted later, apply() releases the
// grant, which no call can receive. Never throws: it runs in gRPC's cancellation callbacks
// and in the timer thread.
void LockManager::withdraw_locked(const std::vector<std::vector<locks::RequestId>>& by_domain,
                                  Finished& finished) {
  for (int d = 0; d < static_cast<int>(by_domain.size()); ++d) {
    if (by_domain[d].empty()) continue;
    try {
      locks::Change change = domains_[d]->withdraw(by_domain[d]);
      if (change.error) {
        // Cannot be: the manager's waiters are the domains' (the domain failed otherwise).
        spdlog::error("locks: withdrawing {} waiting requests of the {} domain: {}",
                      by_domain[d].size(), domains_[d]->name(), change.error->what());
      }
      apply(d, change, finished);
    } catch (const std::exception& e) {
      spdlog::warn(
          "locks: withdrawing {} waiting requests of the {} domain: {} (a later grant "
          "of one is released)",
          by_domain[d].size(), domains_[d]->name(), e.what());
    }
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

// Grants of waiting requests finish their calls; a grant whose call is gone is released.
void LockManager::apply(int domain, const locks::Change& change, Finished& finished) {
  for (const locks::Grant& grant : change.granted) {
    note_token(domain, grant.token);
    const WaitKey key{domain, grant.request};
    auto it = waiters_.find(key);
    if (it == waiters_.end()) {
      // Its call failed (deadline, cancel, a domain that could not withdraw it then): the
      // grant reaches nobody, and a failed call grants nothing.
      release_orphan(domain, grant, finished);
      continue;
    }
    LockGranted granted{grant, std::string(domains_[domain]->name()), true};
    auto s = sessions_.find(it->second->session);
    granted.grant.session = s == sessions_.end() ? 0 : s->second->public_id;
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
  if (auto u = use_.find(waiter.quota_key); u != use_.end()) {
    --u->second.waiting;
    if (u->second.waiting == 0 && u->second.sessions == 0) use_.erase(u);
  }
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
        const uint64_t public_id = s->second->public_id;
        spdlog::info("locks: session {} of {} {}: its locks are released", public_id,
                     s->second->owner,
                     s->second->reattached ? "expired" : "did not re-attach after the restart");
        expire_locked(id,
                      Error(ErrorCode::kAborted,
                            fmt::format("the wait was cancelled: session {} expired", public_id))
                          .with_reason(kReasonSessionGone),
                      finished);
        ++counters_.expired;
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

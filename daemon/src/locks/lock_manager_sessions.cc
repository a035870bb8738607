// The LockManager's sessions (lock_manager.hpp): open, owner check, keep-alive, close, revoke
// and expiry. Locks and time are in lock_manager.cc, quotas in lock_manager_quotas.cc.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "asn/state/v1/state.pb.h"
#include "asn/text/text.hpp"
#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

namespace {

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

// Whether `caller` owns a session of `owner_key` and `secret_sha256` (check_owner()'s rule).
// A record with neither (a session never opened) is owned by nobody; the secret is hashed
// all the same, so the answer takes as long.
bool owns(const SessionCaller& caller, const std::string& owner_key,
          const std::string& secret_sha256) {
  const bool secret_ok = caller.secret.empty() ? !caller.owner_key.empty()
                                               : secret_matches(caller.secret, secret_sha256);
  const bool owner_ok = caller.owner_key.empty() || caller.owner_key == owner_key;
  return secret_ok && owner_ok && !(owner_key.empty() && secret_sha256.empty());
}

// The answer for a session the caller may not use, whether it is open (another's), ended or
// was never opened: the same words for each, so that no caller can tell them apart.
Error session_not_open() {
  return Error(ErrorCode::kFailedPrecondition,
               "the session is not open to this caller: it expired, was closed or never existed "
               "(its locks are released: open a new session), or another client opened it (a "
               "client uses only the sessions it opened: as the same uid or certificate "
               "subject, or with the secret OpenSession returned for it)")
      .with_reason(kReasonSessionGone);
}

// Ended sessions kept for their owners' next call: a client that missed its lease calls again
// within seconds or minutes; a flood of short sessions pushes the oldest out (their owners
// then get session_not_open(), which says as much, only less precisely).
constexpr size_t kEndedSessionsKept = 10000;
constexpr auto kEndedSessionKeptFor = std::chrono::minutes(15);

}  // namespace

// ---- sessions -----------------------------------------------------------------------------

OpenedSession LockManager::open_session(const std::string& owner, const std::string& owner_key,
                                        const std::string& name, uint32_t ttl_seconds,
                                        const std::string& quota_key) {
  if (name.size() > 256) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("name: {} bytes; at most 256 are accepted", name.size()));
  }
  std::string secret = random_bytes(kSessionSecretBytes);
  std::lock_guard lock(mu_);
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  // Under mu_: a SIGHUP may change the leases (set_limits).
  if (ttl_seconds == 0) ttl_seconds = config_.default_ttl_s;
  if (ttl_seconds > config_.max_ttl_s) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("ttl_seconds: {} is longer than the longest lease, {} s "
                            "(locks.max_ttl); keep the session alive instead",
                            ttl_seconds, config_.max_ttl_s));
  }
  const std::string& principal = !quota_key.empty()   ? quota_key
                                 : !owner_key.empty() ? owner_key
                                                      : owner;
  check_session_quota(principal);
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
  count_session(*session, +1);
  sessions_.emplace(id, std::move(session));
  ++counters_.opened;
  spdlog::debug("locks: session {} opened by {} ({}), lease {} s", label.public_id(), owner, name,
                ttl_seconds);
  wake_.notify_all();
  return {label.public_id(), ttl_seconds, std::move(secret)};
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
    if (id != 0 && !by_public_id_.contains(id) && !ended_.contains(id)) return id;
  }
}

LockManager::Session& LockManager::session_or_throw(uint64_t id, LockClock::time_point now,
                                                    bool lost_ok) {
  if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
  check_fence(now);  // a fenced switch renews no lease: its grants must run out
  Session* session = find_session(id);
  // check_owner() passed: the session ended since (the owner is told how by its next call).
  if (session == nullptr) throw session_not_open();
  if (session->ended) throw ended_error(id);  // its locks run out with its lease
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
  if (const Session* session = find_session(id)) {
    if (owns(caller, session->owner_key, session->secret_sha256)) return;
    throw session_not_open();
  }
  auto ended = ended_.find(id);
  if (ended == ended_.end() || LockClock::now() - ended->second.at > kEndedSessionKeptFor) {
    owns(caller, {}, {});  // as long as for a session that is open
    throw session_not_open();
  }
  const EndedSession& e = ended->second;
  if (!owns(caller, e.owner_key, e.secret_sha256)) throw session_not_open();
  throw ended_error(id);
}

Error LockManager::ended_error(uint64_t id) const {
  const auto ended = ended_.find(id);
  if (ended == ended_.end()) return session_not_open();
  const EndedSession& e = ended->second;
  return Error(ErrorCode::kFailedPrecondition,
               fmt::format("session {} ended at {:%Y-%m-%d %H:%M:%S} UTC ({:.0f} s ago): {}; its "
                           "locks are released and its waiting requests cancelled: open a new "
                           "session",
                           id, std::chrono::floor<std::chrono::seconds>(e.wall),
                           std::chrono::duration<double>(LockClock::now() - e.at).count(), e.how))
      .with_reason(kReasonSessionGone);
}

void LockManager::remember_ended(const Session& session, std::string how) {
  const auto now = LockClock::now();
  while (!ended_order_.empty() &&
         (ended_order_.size() >= kEndedSessionsKept ||
          now - ended_.at(ended_order_.front()).at > kEndedSessionKeptFor)) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
  // One entry in ended_order_ for each in ended_ (an id ends once; new ids avoid these).
  const bool fresh =
      ended_
          .insert_or_assign(session.public_id,
                            EndedSession{session.owner_key, session.secret_sha256, std::move(how),
                                         now, std::chrono::system_clock::now()})
          .second;
  if (fresh) ended_order_.push_back(session.public_id);
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
    out.released = expire_locked(session.id, why, "it was closed (CloseSession)", finished);
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
                              "nothing revoked; `asnctl lock stats` lists the open sessions",
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
    out.released = expire_locked(session->id, why, "an administrator revoked it", finished);
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
uint64_t LockManager::expire_locked(uint64_t id, const Error& why, std::string how,
                                    Finished& finished) {
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
  count_session(session, -1);
  by_public_id_.erase(session.public_id);
  remember_ended(session, session.ended ? *session.ended : std::move(how));
  sessions_.erase(it);
  return released;
}

locks::SessionId LockManager::domain_session(const Session& session, int domain) const {
  return domain == software_ ? session.id : session.switch_session;
}

Error LockManager::client_error(int domain, const locks::LockError& e) const {
  const Error error = error_of(e);
  return Error(error.code(), with_public_sessions(e.what(), [&](uint64_t sid) {
                 std::optional<uint64_t> out;
                 uint64_t id = sid;
                 if (domain != software_) {
                   auto it = by_switch_session_.find(sid);
                   if (it == by_switch_session_.end()) return out;
                   id = it->second;
                 }
                 if (auto s = sessions_.find(id); s != sessions_.end()) out = s->second->public_id;
                 return out;
               }));
}

}  // namespace asn

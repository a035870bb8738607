// The LockManager's quotas (issue 24): sessions, waiting Lock calls and lock entries, per
// principal and per session, so that one client at its quota never stops another from being
// served. A principal is whose quotas a session counts against (Session::quota_key).
//
// Entries are what a table is short of: held ranges, and the ranges of waiting requests. The
// manager counts them per session and domain without asking the domain on every call: a
// session's held count is a bound, raised by every grant and by what an unlock or downgrade
// may add by cutting a lock in two, and never lowered by a release (a domain does not say how
// many entries a cut added). Only when a bound says a request would go over a quota are the
// exact counts read from the domains (the software table: a lookup; the switch: one record
// of its session listing), and only a real excess refuses. So the common path costs no domain
// call, and the count a refusal names is exact. Waiting entries are the manager's own
// records, exact.
//
// An unlock is refused only when it would cut more locks in two than the quota leaves room
// for (as fcntl's ENOLCK): the cut is counted from the file's listing. Unlocking whole locks
// is never refused.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

namespace lock_manager_detail {

size_t entries_of(const locks::RangeSpec& ranges) {
  if (locks::validate(ranges)) return 0;
  if (const auto* strided = std::get_if<locks::Strided>(&ranges)) {
    return static_cast<size_t>(strided->count);
  }
  return std::get<std::vector<locks::ByteRange>>(ranges).size();
}

}  // namespace lock_manager_detail

namespace {

template <size_t N>
size_t sum(const std::array<size_t, N>& a) {
  return std::accumulate(a.begin(), a.end(), size_t{0});
}

}  // namespace

// ---- the limits a SIGHUP changes ----------------------------------------------------------

void LockManager::set_limits(const LocksConfig& config) {
  std::lock_guard lock(mu_);
  config_.default_ttl_s = config.default_ttl_s;
  config_.max_ttl_s = config.max_ttl_s;
  config_.max_waiting = config.max_waiting;
  config_.max_sessions_per_principal = config.max_sessions_per_principal;
  config_.max_waiting_per_principal = config.max_waiting_per_principal;
  config_.max_waiting_per_session = config.max_waiting_per_session;
  config_.max_entries_per_session = config.max_entries_per_session;
  config_.max_entries_per_principal = config.max_entries_per_principal;
  config_.max_switch_entries_per_principal = config.max_switch_entries_per_principal;
}

// ---- sessions and waiting calls -------------------------------------------------------------

LockManager::PrincipalUse& LockManager::use_of(const Session& session) {
  return use_[session.quota_key];
}

void LockManager::check_session_quota(const std::string& principal) const {
  auto u = use_.find(principal);
  if (u == use_.end() || u->second.sessions.size() < config_.max_sessions_per_principal) return;
  throw Error(ErrorCode::kResourceExhausted,
              fmt::format("{} has {} lock sessions open, the most one principal may have "
                          "(locks.max_sessions_per_principal); close the sessions it no longer "
                          "uses, or raise the key",
                          principal, u->second.sessions.size()));
}

// A session's entries count against its principal while it is open.
void LockManager::count_session(Session& session, int delta) {
  PrincipalUse& use = use_of(session);
  for (size_t d = 0; d < kMaxDomains; ++d) {
    const size_t mine = session.held_bound[d] + session.waiting_entries[d];
    use.entries[d] =
        delta > 0 ? use.entries[d] + mine : use.entries[d] - std::min(use.entries[d], mine);
  }
  if (delta > 0) {
    use.sessions.insert(session.id);
  } else {
    use.sessions.erase(session.id);
    if (use.sessions.empty() && use.waiting == 0) use_.erase(session.quota_key);
  }
}

std::optional<Error> LockManager::over_waiting_quota(const Session& session) const {
  auto u = use_.find(session.quota_key);
  const size_t principal_waiting = u == use_.end() ? 0 : u->second.waiting;
  if (session.waiters.size() >= config_.max_waiting_per_session) {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and session {} has {} Lock calls waiting "
                             "already, the most one session may have "
                             "(locks.max_waiting_per_session); retry later",
                             session.public_id, session.waiters.size()));
  }
  if (principal_waiting >= config_.max_waiting_per_principal) {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and {} has {} Lock calls waiting already, the "
                             "most one principal may have (locks.max_waiting_per_principal); "
                             "retry later",
                             session.quota_key, principal_waiting));
  }
  if (waiters_.size() >= config_.max_waiting) {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("the lock is taken, and {} Lock calls are waiting already, the most "
                             "asnd keeps (locks.max_waiting); retry later",
                             waiters_.size()));
  }
  return std::nullopt;
}

// A waiting call and its request's entries, for its session and principal.
void LockManager::count_waiting(const Waiter& waiter, int domain, int delta) {
  auto u = use_.find(waiter.quota_key);
  if (u == use_.end()) {
    if (delta < 0) return;
    u = use_.emplace(waiter.quota_key, PrincipalUse{}).first;
  }
  PrincipalUse& use = u->second;
  auto s = sessions_.find(waiter.session);
  Session* session = s == sessions_.end() ? nullptr : s->second.get();
  if (delta > 0) {
    ++use.waiting;
    use.entries[domain] += waiter.entries;
    if (session != nullptr) session->waiting_entries[domain] += waiter.entries;
  } else {
    --use.waiting;
    if (session != nullptr) {
      // A session that ended took its entries from the principal's count already.
      use.entries[domain] -= std::min(use.entries[domain], waiter.entries);
      session->waiting_entries[domain] -=
          std::min(session->waiting_entries[domain], waiter.entries);
    }
    if (use.sessions.empty() && use.waiting == 0) use_.erase(u);
  }
}

// ---- entries -------------------------------------------------------------------------------

bool LockManager::entries_fit(const Session& session, int domain, size_t need, std::string* why) {
  const PrincipalUse& use = use_of(session);
  const size_t mine = sum(session.held_bound) + sum(session.waiting_entries);
  if (mine + need > config_.max_entries_per_session) {
    if (why != nullptr) {
      *why = fmt::format(
          "session {} uses {} lock entries (held, and its waiting requests'), and "
          "one session may use {} (locks.max_entries_per_session)",
          session.public_id, mine, config_.max_entries_per_session);
    }
    return false;
  }
  const size_t theirs = sum(use.entries);
  if (theirs + need > config_.max_entries_per_principal) {
    if (why != nullptr) {
      *why = fmt::format(
          "{} uses {} lock entries over its {} sessions, and one principal may "
          "use {} (locks.max_entries_per_principal)",
          session.quota_key, theirs, use.sessions.size(), config_.max_entries_per_principal);
    }
    return false;
  }
  if (domain == switch_ && use.entries[domain] + need > config_.max_switch_entries_per_principal) {
    if (why != nullptr) {
      *why = fmt::format(
          "{} uses {} entries of the switch's lock table, and one principal may "
          "use {} (locks.max_switch_entries_per_principal)",
          session.quota_key, use.entries[domain], config_.max_switch_entries_per_principal);
    }
    return false;
  }
  return true;
}

void LockManager::read_held(Session& session) {
  PrincipalUse& use = use_of(session);
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    const locks::SessionId sid = domain_session(session, d);
    const size_t exact = sid == 0 ? 0 : domains_[d]->held_entries(sid);
    use.entries[d] = use.entries[d] - std::min(use.entries[d], session.held_bound[d]) + exact;
    session.held_bound[d] = exact;
  }
  session.held_exact = true;
}

// Reads the exact counts of the session, then of its principal's other sessions, only as far
// as the bounds say a quota is in the way.
void LockManager::check_entries(Session& session, int domain, size_t need, std::string_view what) {
  if (entries_fit(session, domain, need, nullptr)) return;
  if (!session.held_exact) read_held(session);
  if (entries_fit(session, domain, need, nullptr)) return;
  for (const uint64_t id : use_of(session).sessions) {
    auto other = sessions_.find(id);
    if (other != sessions_.end() && !other->second->held_exact) read_held(*other->second);
  }
  std::string why;
  if (entries_fit(session, domain, need, &why)) return;
  throw Error(ErrorCode::kResourceExhausted,
              fmt::format("{} needs {} lock entries more, and {}: unlock what is no longer "
                          "needed, or raise the key",
                          what, need, why));
}

bool LockManager::switch_share_left(Session& session, size_t need) {
  auto fits = [&] {
    return use_of(session).entries[switch_] + need <= config_.max_switch_entries_per_principal;
  };
  if (fits()) return true;
  for (const uint64_t id : use_of(session).sessions) {
    auto other = sessions_.find(id);
    if (other != sessions_.end() && !other->second->held_exact) read_held(*other->second);
  }
  return fits();
}

void LockManager::add_held(Session& session, int domain, size_t entries) {
  session.held_bound[domain] += entries;
  session.held_exact = false;
  use_of(session).entries[domain] += entries;
}

void LockManager::mark_changed(int domain, locks::SessionId sid) {
  uint64_t id = sid;
  if (domain == switch_) {
    auto it = by_switch_session_.find(sid);
    if (it == by_switch_session_.end()) return;
    id = it->second;
  }
  if (auto s = sessions_.find(id); s != sessions_.end()) s->second->held_exact = false;
}

// Per lock of the session on the file that the ranges touch: the pieces it leaves (an unlock:
// the parts outside the ranges; a downgrade of an exclusive lock: those, and a shared piece
// per range inside it) less the one entry it was.
ptrdiff_t LockManager::split_entries(int domain, locks::SessionId sid, const std::string& file,
                                     const locks::RangeSpec& spec, bool downgrade) {
  std::vector<locks::ByteRange> ranges;
  try {
    ranges = locks::sorted_ranges(spec);
  } catch (const locks::LockError&) {
    return 0;  // the domain refuses it, and says why
  }
  ptrdiff_t added = 0;
  for (const locks::HeldLock& held : domains_[domain]->list(file).held) {
    if (held.session != sid) continue;
    if (downgrade && held.mode != locks::Mode::kExclusive) continue;
    size_t inside = 0;
    for (const locks::ByteRange& r : ranges) {
      if (r.offset < held.range.end() && held.range.offset < r.end()) ++inside;
    }
    if (inside == 0) continue;
    const size_t outside = subtract({held.range}, ranges).size();
    added += static_cast<ptrdiff_t>(outside + (downgrade ? inside : 0)) - 1;
  }
  return added;
}

}  // namespace asn

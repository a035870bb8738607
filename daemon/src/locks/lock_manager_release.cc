// The LockManager's releases that no Unlock of the holder asked for: a grant that never
// reached its call (give_back, release_orphan; across a restart, release_unconfirmed), and an
// administrator's release of a file's bytes (release_locks). A failed call grants nothing
// (docs/api.md).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

void LockManager::give_back(uint64_t id, const std::string& file,
                            const std::vector<locks::ByteRange>& /*ranges*/, locks::Token token) {
  Finished finished;
  {
    std::lock_guard lock(mu_);
    Session* session = find_session(id);
    auto p = placement_.find(file);
    if (session == nullptr || p == placement_.end()) return;  // released already
    const int d = p->second;
    if (release_grant(d, domain_session(*session, d), file, token, finished)) {
      spdlog::info("locks: session {}'s grant (token {}) on {} did not reach its call: released",
                   id, token, printable(file));
    }
  }
  run(finished);
}

// Releases the bytes named from every session holding some of them: what the file's domain
// lists as held now, clipped to the bytes named, per session (overlapping entries of one
// session, a shared and an exclusive lock, merged).
LocksReleased LockManager::release_locks(const std::string& file,
                                         const std::vector<locks::ByteRange>& ranges, bool dry_run,
                                         const std::string& who) {
  if (auto e = locks::validate(ranges)) throw error_of(*e);
  Finished finished;
  LocksReleased out;
  {
    std::lock_guard lock(mu_);
    if (stopping_) throw Error(ErrorCode::kUnavailable, "asnd is stopping; retry when it is back");
    auto placed = placement_.find(file);
    const int d = placed == placement_.end() ? software_ : placed->second;
    std::map<locks::SessionId, std::vector<locks::ByteRange>> pieces;
    for (const locks::HeldLock& held : domains_[d]->list(file).held) {
      for (const locks::ByteRange& r : ranges) {
        const locks::uint128 start = std::max(held.range.offset, r.offset);
        const locks::uint128 end = std::min(held.range.end(), r.end());
        if (start >= end) continue;
        HeldView v{file, std::string(domains_[d]->name()), 0, "", "", held};
        v.lock.range = {static_cast<uint64_t>(start), static_cast<uint64_t>(end - start)};
        uint64_t id = held.session;
        if (d == switch_) {
          auto it = by_switch_session_.find(held.session);
          id = it == by_switch_session_.end() ? 0 : it->second;
        }
        if (auto s = sessions_.find(id); s != sessions_.end()) {
          v.session = s->second->public_id;
          v.owner = s->second->owner;
          v.session_name = s->second->name;
        }
        pieces[held.session].push_back(v.lock.range);
        out.released.push_back(std::move(v));
      }
    }
    if (dry_run) return out;
    for (auto& [sid, list] : pieces) {
      std::sort(list.begin(), list.end(),
                [](const auto& a, const auto& b) { return a.offset < b.offset; });
      std::vector<locks::ByteRange> merged;
      for (const auto& r : list) {
        if (!merged.empty() && r.offset <= merged.back().end()) {
          const locks::uint128 end = std::max(merged.back().end(), r.end());
          merged.back().length = static_cast<uint64_t>(end - merged.back().offset);
        } else {
          merged.push_back(r);
        }
      }
      for (size_t i = 0; i < merged.size(); i += locks::kDefaultMaxRanges) {
        const size_t n = std::min(merged.size() - i, locks::kDefaultMaxRanges);
        std::vector<locks::ByteRange> part(merged.begin() + static_cast<std::ptrdiff_t>(i),
                                           merged.begin() + static_cast<std::ptrdiff_t>(i + n));
        locks::Change change = domains_[d]->release(sid, file, part);
        if (change.error) throw client_error(d, *change.error);
        mark_changed(d, sid);
        out.granted += change.granted.size();
        apply(d, change, finished);
      }
    }
    if (!out.released.empty()) {
      spdlog::warn(
          "locks: {} released {} held locks of {} from {} sessions; {} waiting requests "
          "granted",
          who, out.released.size(), printable(file), pieces.size(), out.granted);
    }
  }
  run(finished);
  return out;
}

// After a restart (recover() noted the grants each session held then, `restored`), the client
// names the grants it received; the others are grants whose Lock call failed when the earlier
// asnd died. Only the grant's own bytes go (release_grant): a lock the client named that
// covers the same bytes keeps them. A grant named but not restored (a later one) is left.
// Tokens are compared alone, whatever the domain: a grant of one domain whose token a named
// grant of the other has too is kept, which can only leave a lock held, never take one.
uint64_t LockManager::release_unconfirmed(Session& session, const std::vector<locks::Token>& held,
                                          Finished& finished) {
  const std::set<locks::Token> named(held.begin(), held.end());
  uint64_t released = 0;
  for (const auto& [token, places] : session.restored) {
    if (named.contains(token)) continue;
    for (const auto& [in_switch, file] : places) {
      const int d = in_switch ? switch_ : software_;
      if (d < 0) continue;
      if (release_grant(d, domain_session(session, d), file, token, finished)) {
        ++released;
        spdlog::info(
            "locks: session {}'s grant (token {}) on {} did not reach its client before asnd "
            "restarted (the client does not hold it): released",
            session.public_id, token, printable(file));
      }
    }
  }
  session.restored.clear();
  session.confirm_held = false;
  spdlog::info("locks: session {} of {} said which locks it holds: {} grants released",
               session.public_id, session.owner, released);
  return released;
}

void LockManager::release_orphan(int domain, const locks::Grant& grant, Finished& finished) {
  if (release_grant(domain, grant.session, grant.file, grant.token, finished)) {
    spdlog::info("locks: request {} on {} was granted after its call ended: released",
                 grant.request, printable(grant.file));
  }
}

// A grant is its entries (the bytes granted under its token). release() takes every lock of
// the session on the bytes it names, so the bytes another lock of the same session also
// covers are left: that lock's unlock takes them with it. Never throws.
bool LockManager::release_grant(int domain, locks::SessionId sid, const std::string& file,
                                locks::Token token, Finished& finished) {
  try {
    std::vector<locks::ByteRange> mine, others;
    for (const locks::HeldLock& h : domains_[domain]->list(file).held) {
      if (h.session == sid) (h.token == token ? mine : others).push_back(h.range);
    }
    const std::vector<locks::ByteRange> free = subtract(mine, others);
    if (free.empty()) return false;
    locks::Change change = domains_[domain]->release(sid, file, free);
    if (change.error) throw client_error(domain, *change.error);
    mark_changed(domain, sid);
    apply(domain, change, finished);
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("locks: releasing the grant with token {} on {}: {}", token, printable(file),
                 e.what());
    return false;
  }
}

}  // namespace asn

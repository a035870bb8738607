// The LockManager's reads: the locks of a file or of all files, and the statistics.
#include <algorithm>
#include <map>

#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

// ---- reads --------------------------------------------------------------------------------

LockListView LockManager::list(const std::string& file, const std::string& after, size_t limit,
                               const std::optional<ListCursor>& from, size_t max_bytes) {
  std::lock_guard lock(mu_);
  LockListView out;
  size_t bytes = 0;
  auto owner_of = [&](int d, locks::SessionId sid, uint64_t& id) -> const Session* {
    id = sid;
    if (d == switch_) {
      auto it = by_switch_session_.find(sid);
      id = it == by_switch_session_.end() ? 0 : it->second;
    }
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    id = it->second->public_id;
    return it->second.get();
  };
  auto full = [&] {
    const size_t n = out.held.size() + out.waiting.size();
    return n >= limit || (n > 0 && bytes >= max_bytes);
  };
  // Adds the file's entries from `skip` on; false when the page filled first (`next` set).
  auto add_file = [&](int d, const std::string& name, uint64_t skip) {
    locks::FileLocks locks = domains_[d]->list(name);
    const std::string domain(domains_[d]->name());
    uint64_t index = 0;
    for (const auto& held : locks.held) {
      if (index++ < skip) continue;
      if (full()) {
        out.next = ListCursor{name, index - 1};
        return false;
      }
      HeldView v{name, domain, 0, "", "", held};
      if (const Session* s = owner_of(d, held.session, v.session)) {
        v.owner = s->owner;
        v.session_name = s->name;
      }
      // At least what the entry takes in a ListLocksResponse (its fixed fields: 70 bytes at
      // most with 64-bit numbers at their widest).
      bytes += 80 + name.size() + domain.size() + v.owner.size() + v.session_name.size();
      out.held.push_back(std::move(v));
    }
    for (const auto& w : locks.waiting) {
      if (index++ < skip) continue;
      if (full()) {
        out.next = ListCursor{name, index - 1};
        return false;
      }
      WaitingView v{name, domain, 0, "", w};
      if (const Session* s = owner_of(d, w.session, v.session)) v.owner = s->owner;
      bytes += 80 + name.size() + domain.size() + v.owner.size() + 24 * w.ranges.size();
      out.waiting.push_back(std::move(v));
    }
    return true;
  };
  if (!file.empty()) {
    auto it = placement_.find(file);
    if (it != placement_.end()) add_file(it->second, file, from ? from->skip : 0);
    return out;
  }
  // All files, merged across the domains in byte order.
  std::string start = after;
  if (from) {
    start = from->file;
    auto it = placement_.find(from->file);
    if (it != placement_.end() && !add_file(it->second, from->file, from->skip)) {
      out.next_after = from->file;
      return out;
    }
  }
  std::vector<std::pair<std::string, int>> files;
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    for (auto& name : domains_[d]->files(start, limit + 1)) files.emplace_back(std::move(name), d);
  }
  std::sort(files.begin(), files.end());
  std::string last = from ? from->file : "";
  for (const auto& [name, d] : files) {
    if (full()) {
      out.next_after = last;
      out.next = ListCursor{name, 0};
      break;
    }
    if (!add_file(d, name, 0)) {
      out.next_after = name;  // the rest of it: `next`
      break;
    }
    last = name;
  }
  return out;
}

std::map<uint64_t, uint64_t> LockManager::held_by_session() {
  std::map<uint64_t, uint64_t> held;
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    for (const DomainSession& s : domains_[d]->sessions()) {
      uint64_t id = s.id;
      if (d == switch_) {
        auto it = by_switch_session_.find(s.id);
        if (it == by_switch_session_.end()) continue;
        id = it->second;
      }
      held[id] += s.held_entries;
    }
  }
  return held;
}

SessionView LockManager::view_of(const Session& session, uint64_t held,
                                 LockClock::time_point now) const {
  SessionView v;
  v.session = session.public_id;
  v.owner = session.owner;
  v.name = session.name;
  v.ttl_seconds = session.ttl;
  v.expires_in_seconds = seconds_until(session.expires, now);
  v.held_entries = held;
  v.waiting_requests = session.waiters.size();
  v.reattached = session.reattached;
  v.confirm_held = session.confirm_held;
  return v;
}

LockStatsView LockManager::stats(size_t top) {
  std::lock_guard lock(mu_);
  LockStatsView out;
  const auto now = LockClock::now();
  for (const auto& domain : domains_)
    out.domains.push_back({std::string(domain->name()), domain->stats()});
  out.placement = config_.placement;
  out.waiting_calls = waiters_.size();
  out.grace_remaining_seconds = std::max(0.0, seconds_until(grace_until_, now));
  if (in_loss_grace(now)) {
    out.loss_grace_remaining_seconds = seconds_until(loss_.until, now);
    out.reclaiming_sessions = loss_.sessions.size();
  }
  out.counters = counters_;
  const std::map<uint64_t, uint64_t> held = held_by_session();
  struct Rank {
    uint64_t held;
    uint64_t waiting;
    uint64_t id;
  };
  std::vector<Rank> ranks;
  ranks.reserve(sessions_.size());
  for (const auto& [id, session] : sessions_) {
    auto it = held.find(id);
    const uint64_t h = it == held.end() ? 0 : it->second;
    ranks.push_back({h, session->waiters.size(), id});
    out.held_entries += h;
    out.waiting_requests += session->waiters.size();
    if (!session->reattached) ++out.not_reattached;
  }
  out.session_count = sessions_.size();
  const auto first = [](const Rank& a, const Rank& b) {
    if (a.held != b.held) return a.held > b.held;
    if (a.waiting != b.waiting) return a.waiting > b.waiting;
    return a.id < b.id;
  };
  const size_t n = std::min(top, ranks.size());
  std::partial_sort(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(n), ranks.end(),
                    first);
  for (size_t i = 0; i < n; ++i) {
    out.sessions.push_back(view_of(*sessions_.at(ranks[i].id), ranks[i].held, now));
  }
  return out;
}

SessionPage LockManager::sessions(uint64_t after, size_t limit) {
  std::lock_guard lock(mu_);
  SessionPage out;
  const auto now = LockClock::now();
  const std::map<uint64_t, uint64_t> held = held_by_session();
  // By the clients' (public) ids: `after` is one of them.
  for (auto it = by_public_id_.upper_bound(after); it != by_public_id_.end(); ++it) {
    if (out.sessions.size() >= limit) {
      out.more = true;
      break;
    }
    auto h = held.find(it->second);
    out.sessions.push_back(
        view_of(*sessions_.at(it->second), h == held.end() ? 0 : h->second, now));
  }
  return out;
}

}  // namespace asn

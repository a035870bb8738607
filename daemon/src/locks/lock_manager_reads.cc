// The LockManager's reads: the locks of a file or of all files, and the statistics.
#include <algorithm>
#include <map>

#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

// ---- reads --------------------------------------------------------------------------------

LockListView LockManager::list(const std::string& file, const std::string& after, size_t limit) {
  std::lock_guard lock(mu_);
  LockListView out;
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
  auto add_file = [&](int d, const std::string& name) {
    locks::FileLocks locks = domains_[d]->list(name);
    for (const auto& held : locks.held) {
      if (out.held.size() + out.waiting.size() >= limit) {
        out.next_after = name;  // this file has more than the limit
        return;
      }
      HeldView v{name, std::string(domains_[d]->name()), 0, "", "", held};
      if (const Session* s = owner_of(d, held.session, v.session)) {
        v.owner = s->owner;
        v.session_name = s->name;
      }
      out.held.push_back(std::move(v));
    }
    for (const auto& w : locks.waiting) {
      if (out.held.size() + out.waiting.size() >= limit) {
        out.next_after = name;
        return;
      }
      WaitingView v{name, std::string(domains_[d]->name()), 0, "", w};
      if (const Session* s = owner_of(d, w.session, v.session)) v.owner = s->owner;
      out.waiting.push_back(std::move(v));
    }
  };
  if (!file.empty()) {
    auto it = placement_.find(file);
    if (it != placement_.end()) add_file(it->second, file);
    return out;
  }
  // All files, merged across the domains in byte order, whole files up to `limit` entries.
  std::vector<std::pair<std::string, int>> files;
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    for (auto& name : domains_[d]->files(after, limit + 1)) files.emplace_back(std::move(name), d);
  }
  std::sort(files.begin(), files.end());
  for (const auto& [name, d] : files) {
    if (out.held.size() + out.waiting.size() >= limit) {
      out.next_after = out.held.empty() ? "" : out.held.back().file;
      if (!out.waiting.empty() && out.waiting.back().file > out.next_after) {
        out.next_after = out.waiting.back().file;
      }
      break;
    }
    add_file(d, name);
  }
  return out;
}

LockStatsView LockManager::stats() {
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
  std::map<uint64_t, uint64_t> held;  // entries per manager session
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
  for (const auto& [id, session] : sessions_) {
    SessionView v;
    v.session = session->public_id;
    v.owner = session->owner;
    v.name = session->name;
    v.ttl_seconds = session->ttl;
    v.expires_in_seconds = seconds_until(session->expires, now);
    v.held_entries = held[id];
    v.waiting_requests = session->waiters.size();
    v.reattached = session->reattached;
    out.sessions.push_back(std::move(v));
  }
  return out;
}

}  // namespace asn

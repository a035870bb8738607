// The LockManager's start (the domains, lock state from another boot, sessions coming back,
// the waiting requests of the previous asnd withdrawn), its stop, and board resets.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "asn/state/v1/state.pb.h"
#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"
#include "locks/software_domain.hpp"

namespace asn {

using namespace lock_manager_detail;

namespace {

namespace fs = std::filesystem;

// The boot this machine is in: lock state of another boot is void (lock_manager.hpp).
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

LockManager::LockManager(std::unique_ptr<LockDomain> switch_domain, const std::string& software_dir,
                         const LocksConfig& config)
    : config_(config), software_prefixes_(software_prefixes(config.placement)) {
  std::error_code ec;
  fs::create_directories(software_dir, ec);
  // Lock state from another boot of the host is void: the board memory of an emulated
  // switch is gone, and the tail of the software domain's log may be (it is not fsynced).
  const fs::path boot_file = fs::path(software_dir) / "boot_id";
  loss_file_ = (fs::path(software_dir) / "loss_grace").string();
  slots_file_ = (fs::path(software_dir) / "lock_slots").string();
  const std::string boot = boot_id();
  std::string recorded;
  {
    std::ifstream in(boot_file);
    std::getline(in, recorded);
  }
  const bool other_boot = !recorded.empty() && recorded != boot;
  if (other_boot) {
    spdlog::warn("locks: the lock state in {} is from another boot of this host: starting empty",
                 software_dir);
    fs::remove_all(fs::path(software_dir) / "software", ec);
    fs::remove(loss_file_, ec);
    fs::remove(slots_file_, ec);
  }
  if (switch_domain) {
    if (auto why = switch_domain->unusable()) {
      spdlog::error(
          "locks: the switch lock domain cannot be used: {}. Every file is placed in the "
          "software domain until then; the sessions that held locks in the switch may reclaim them "
          "during the loss grace.",
          *why);
      parked_switch_ = std::move(switch_domain);
    } else {
      switch_ = static_cast<int>(domains_.size());
      domains_.push_back(std::move(switch_domain));
    }
  }
  software_ = static_cast<int>(domains_.size());
  domains_.push_back(std::make_unique<SoftwareDomain>(
      (fs::path(software_dir) / "software").string(), config.software_entries));
  {
    std::ofstream out(boot_file, std::ios::trunc);
    out << boot << "\n";
  }
  next_token_.assign(domains_.size(), 0);
  recover();
  load_served_epochs();
  // A table may be new, or have lost its tokens (the board was reset while asnd was down):
  // no grant from now on may get a token at or below one granted before. Wall-clock
  // nanoseconds are above every token granted before this start, as no table grants more
  // than one token per nanosecond; the tables' own next tokens cover a clock set back. In a
  // fabric the clock plays no part: the first confirmed map raises them above every token
  // embedding an earlier etcd revision (lock_manager_fabric.cc).
  align_token_floors(wall_clock_ns());
  timer_ = std::thread([this] { timer_loop(); });
}

LockManager::~LockManager() { stop(); }

void LockManager::stop() {
  const auto start = LockClock::now();
  Finished finished;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    const Error why(ErrorCode::kUnavailable, "asnd is stopping; retry the lock when it is back");
    // All at once, one withdrawal per domain: a stop does not wait on the number of waits.
    std::vector<std::vector<locks::RequestId>> by_domain(domains_.size());
    for (const auto& [key, waiter] : waiters_) by_domain[key.domain].push_back(key.request);
    while (!waiters_.empty()) finish_waiter(waiters_.begin()->first, why, finished);
    for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
      if (by_domain[d].empty()) continue;
      try {
        domains_[d]->withdraw(by_domain[d]);
      } catch (const std::exception& e) {
        // The next start withdraws them.
        spdlog::warn("locks: withdrawing {} waiting requests: {}", by_domain[d].size(), e.what());
      }
    }
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
  const size_t ended = finished.size();
  run(finished);
  if (ended > 0) {
    spdlog::info("locks: {} waiting Lock calls ended and their requests withdrawn in {:.2f} s",
                 ended, -seconds_until(start, LockClock::now()));
  }
}

// ---- start --------------------------------------------------------------------------------

void LockManager::recover() {
  const auto now = LockClock::now();
  LockDomain& software = *domains_[software_];
  grace_until_ = now;
  if (!software.sessions().empty())
    grace_until_ = now + std::chrono::seconds(config_.grace_period_s);
  for (const DomainSession& s : software.sessions()) {
    state::v1::LockSessionLabel label;
    auto session = std::make_unique<Session>();
    session->id = s.id;
    if (label.ParseFromString(s.label)) {
      session->owner = label.owner();
      session->name = label.name();
      session->ttl = label.ttl_seconds();
      session->switch_session = label.switch_session();
      session->public_id = label.public_id();
      session->owner_key = label.owner_key();
      session->secret_sha256 = label.secret_sha256();
      session->quota_key = label.quota_key().empty()
                               ? (session->owner_key.empty() ? session->owner : session->owner_key)
                               : label.quota_key();
    }
    // A session of an asnd before ownership keeps its id, and no one can use it (it has no
    // owner key and no secret): it expires after the grace period.
    if (session->public_id == 0) session->public_id = s.id;
    by_public_id_[session->public_id] = s.id;
    session->reattached = false;
    // A client renews its lease every third of it or so, so one with a lease longer than
    // the grace period may not call within it: it has its lease, from now, to come back.
    session->expires = std::max(now + std::chrono::seconds(config_.grace_period_s),
                                now + std::chrono::seconds(std::max<uint32_t>(session->ttl, 1)));
    grace_until_ = std::max(grace_until_, session->expires);
    if (session->switch_session != 0) by_switch_session_[session->switch_session] = s.id;
    leases_.emplace(session->expires, s.id);
    session->held_bound[software_] = s.held_entries;
    count_session(*session, +1);
    sessions_.emplace(s.id, std::move(session));
  }
  load_loss_grace();
  // A session's switch half: the switch session labelled with its id (opened after a loss),
  // else the one its label names. One the switch no longer has lost its switch locks (the
  // board was reset while asnd was down, or its table is unusable): the session stays, and
  // the loss grace keeps what it may hold from others until it reclaims or its lease ends.
  // The table of a board reset counts sessions from 1 again, so the id an older session's
  // label names (from before the reset) may be the half of a session opened since: the
  // labelled halves go first, then the labels' ids, the newest session's first, each to one
  // session only. (Taking them in the table's order once gave a newer session's half to an
  // older one's stale label, and the half was then expired with its locks.)
  std::set<locks::SessionId> in_switch;
  if (switch_ >= 0) {
    const std::vector<DomainSession> halves = domains_[switch_]->sessions();
    std::map<uint64_t, locks::SessionId> relabelled;  // manager session -> its half
    for (const DomainSession& s : halves) {
      in_switch.insert(s.id);
      if (auto owner = switch_half_owner(s.label); owner && sessions_.contains(*owner)) {
        relabelled[*owner] = s.id;
      }
    }
    by_switch_session_.clear();
    for (const auto& [id, half] : relabelled) {
      sessions_[id]->switch_session = half;
      by_switch_session_[half] = id;
    }
    for (auto it = sessions_.rbegin(); it != sessions_.rend(); ++it) {
      Session& session = *it->second;
      if (relabelled.contains(it->first) || session.switch_session == 0) continue;
      // Taken: a stale id of a session whose half could not be opened again after a reset
      // (it had none then either; the loss grace file still holds it).
      if (!by_switch_session_.emplace(session.switch_session, it->first).second) {
        session.switch_session = 0;
      }
    }
    // What each session holds in the switch, for its quotas.
    for (const DomainSession& s : halves) {
      if (auto half = by_switch_session_.find(s.id); half != by_switch_session_.end()) {
        add_held(*sessions_[half->second], switch_, s.held_entries);
      }
    }
  }
  {
    Finished finished;
    size_t lost = 0;
    for (const auto& [id, session] : sessions_) {
      if (session->switch_session != 0 && !in_switch.contains(session->switch_session)) ++lost;
    }
    if (lost != 0) {
      spdlog::warn(
          "locks: the switch's lock table no longer has the locks of {} sessions (the board was "
          "reset, or its table is damaged): files not in the software domain are granted only "
          "to their reclaims until they reclaimed or their leases ran out",
          lost);
      start_loss_grace({}, true, &in_switch, finished);
    }
    run(finished);
  }
  // A switch session no manager session names was opened by an asnd that died before it
  // recorded it: nobody can reach its locks.
  for (locks::SessionId id : in_switch) {
    if (!by_switch_session_.contains(id)) domains_[switch_]->expire(id);
  }
  size_t withdrawn = 0;
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    std::vector<locks::RequestId> waiting;
    std::string after;
    for (;;) {
      auto files = domains_[d]->files(after, 1024);
      for (const auto& file : files) {
        placement_[file] = d;
        const locks::FileLocks locks = domains_[d]->list(file);
        for (const auto& w : locks.waiting) waiting.push_back(w.request);
        for (const auto& h : locks.held) note_restored(d, file, h);
      }
      if (files.size() < 1024) break;
      after = files.back();
    }
    // All in one withdrawal (one journal record), none of them granted by another's.
    if (!waiting.empty()) domains_[d]->withdraw(waiting);
    withdrawn += waiting.size();
  }
  placement_pruned_at_ = placement_.size();
  size_t confirming = 0;
  for (const auto& [id, session] : sessions_) {
    session->confirm_held = !session->restored.empty();
    confirming += session->confirm_held ? 1 : 0;
  }
  if (confirming != 0) {
    spdlog::info("locks: {} sessions hold locks; each says which it holds before it locks again",
                 confirming);
  }
  if (!sessions_.empty() || withdrawn != 0) {
    spdlog::info(
        "locks: {} sessions may re-attach within {} s; {} waiting requests of the "
        "previous asnd withdrawn",
        sessions_.size(), config_.grace_period_s, withdrawn);
  }
}

// A held entry found at start: its session's grant, until the session says it holds it.
void LockManager::note_restored(int domain, const std::string& file, const locks::HeldLock& held) {
  uint64_t id = held.session;
  if (domain == switch_) {
    auto it = by_switch_session_.find(held.session);
    if (it == by_switch_session_.end()) return;
    id = it->second;
  }
  auto s = sessions_.find(id);
  if (s == sessions_.end()) return;
  auto& places = s->second->restored[held.token];
  const std::pair<bool, std::string> place{domain == switch_, file};
  if (places.empty() || places.back() != place) places.push_back(place);
}

// ---- board resets -------------------------------------------------------------------------

std::string LockManager::reconcile(ReconcileCause cause) {
  Finished finished;
  std::string what;
  {
    std::lock_guard lock(mu_);
    if (cause == ReconcileCause::kBoardReset && parked_switch_) unpark_switch();
    if (cause != ReconcileCause::kBoardReset || switch_ < 0) {
      return fmt::format("{} sessions, {} files with locks", sessions_.size(), placement_.size());
    }
    domains_[switch_]->board_reset();
    // The switch's new table counts tokens from 1 again.
    align_token_floors(wall_clock_ns());
    std::set<std::string, std::less<>> files;
    for (const auto& [file, d] : placement_) {
      if (d == switch_) files.insert(file);
    }
    std::erase_if(placement_, [&](const auto& kv) { return kv.second == switch_; });
    start_loss_grace(files, false, nullptr, finished);
    what = fmt::format(
        "the board was reset, emptying the switch's lock table: {} files withheld for the "
        "reclaims of {} sessions for {:.0f} s at most",
        loss_.files.size(), loss_.sessions.size(), seconds_until(loss_.until, LockClock::now()));
    spdlog::warn("locks: {}", what);
  }
  run(finished);
  return what;
}

// ---- the loss grace ------------------------------------------------------------------------

namespace {

constexpr std::string_view kSwitchHalfLabel = "session ";

}  // namespace

std::optional<uint64_t> LockManager::switch_half_owner(std::string_view label) {
  if (!label.starts_with(kSwitchHalfLabel)) return std::nullopt;
  label.remove_prefix(kSwitchHalfLabel.size());
  uint64_t id = 0;
  const auto [end, ec] = std::from_chars(label.data(), label.data() + label.size(), id);
  if (ec != std::errc() || end != label.data() + label.size()) return std::nullopt;
  return id;
}

void LockManager::open_switch_half(Session& session) {
  if (session.switch_session != 0) by_switch_session_.erase(session.switch_session);
  // What it held there is gone with the table.
  PrincipalUse& use = use_of(session);
  use.entries[switch_] -= std::min(use.entries[switch_], session.held_bound[switch_]);
  session.held_bound[switch_] = 0;
  session.switch_session = 0;
  session.switch_session =
      domains_[switch_]->open_session(fmt::format("{}{}", kSwitchHalfLabel, session.id));
  by_switch_session_[session.switch_session] = session.id;
}

void LockManager::start_loss_grace(const std::set<std::string, std::less<>>& files, bool every_file,
                                   const std::set<locks::SessionId>* surviving,
                                   Finished& finished) {
  const auto now = LockClock::now();
  if (!in_loss_grace(now)) loss_ = LossGrace{};
  loss_.files.insert(files.begin(), files.end());
  loss_.every_file = loss_.every_file || every_file;
  // Their waits were in the lost table: they end, and may be retried (after the grace).
  std::vector<WaitKey> lost_waits;
  for (const auto& [key, waiter] : waiters_) {
    if (key.domain == switch_) lost_waits.push_back(key);
  }
  for (const WaitKey& key : lost_waits) {
    finish_waiter(key,
                  Error(ErrorCode::kUnavailable,
                        "the wait ended: the board was reset, which emptied the switch's lock "
                        "table; retry the lock (it is granted once the sessions that lost locks "
                        "reclaimed them)")
                      .with_reason(kReasonLossGrace),
                  finished);
  }
  for (const auto& [id, session] : sessions_) {
    if (surviving != nullptr && surviving->contains(session->switch_session)) continue;
    if (loss_.sessions.insert(id).second) ++counters_.locks_lost;
    loss_.until = std::max(loss_.until, session->expires);
    if (switch_ < 0) continue;
    try {
      open_switch_half(*session);
    } catch (const std::exception& e) {
      // Its next lock in the switch fails (no switch session); the session stays usable in
      // the software domain.
      spdlog::error("locks: opening session {} in the switch again: {}", id, e.what());
    }
  }
  if (loss_.sessions.empty()) loss_ = LossGrace{};
  save_loss_grace();
  wake_.notify_all();
}

// state.proto LockLossGrace. CLOCK_MONOTONIC counts on across an asnd restart within the
// boot (lock state of another boot is void, above).
void LockManager::save_loss_grace() {
  std::error_code ec;
  if (loss_.sessions.empty()) {
    fs::remove(loss_file_, ec);
    return;
  }
  state::v1::LockLossGrace saved;
  saved.set_until_steady_ns(
      std::chrono::duration_cast<std::chrono::nanoseconds>(loss_.until.time_since_epoch()).count());
  saved.set_every_file(loss_.every_file);
  for (uint64_t id : loss_.sessions) saved.add_sessions(id);
  for (const auto& file : loss_.files) saved.add_files(file);
  if (!write_whole(loss_file_, saved)) {
    spdlog::error("locks: cannot write {}: the loss grace would not survive an asnd restart",
                  loss_file_);
  }
}

void LockManager::left_loss_grace(uint64_t session) {
  if (loss_.sessions.erase(session) == 0) return;
  if (loss_.sessions.empty()) {
    save_loss_grace();  // removes it
    return;
  }
  state::v1::LockLossGrace done;
  done.add_done(session);
  std::ofstream out(loss_file_, std::ios::app | std::ios::binary);
  done.SerializeToOstream(&out);
}

void LockManager::load_loss_grace() {
  std::ifstream in(loss_file_, std::ios::binary);
  if (!in) return;
  state::v1::LockLossGrace saved;
  if (!saved.ParseFromIstream(&in)) {
    // Unreadable: the safe reading is that every session may have lost switch locks.
    spdlog::error(
        "locks: {} is damaged: every session is treated as having lost its switch "
        "locks",
        loss_file_);
    saved.Clear();
    saved.set_every_file(true);
    saved.set_until_steady_ns(std::numeric_limits<int64_t>::max());
    for (const auto& [id, session] : sessions_) saved.add_sessions(id);
  }
  LossGrace loaded;
  loaded.until = LockClock::time_point(std::chrono::duration_cast<LockClock::duration>(
      std::chrono::nanoseconds(saved.until_steady_ns())));
  loaded.every_file = saved.every_file();
  const std::set<uint64_t> done(saved.done().begin(), saved.done().end());
  for (uint64_t id : saved.sessions()) {
    if (!done.contains(id) && sessions_.contains(id)) {
      loaded.sessions.insert(id);
      // Its lease restarted with the restart; the grace must cover it.
      loaded.until = std::max(loaded.until, sessions_[id]->expires);
    }
  }
  for (const auto& file : saved.files()) loaded.files.insert(file);
  loss_ = std::move(loaded);
  if (!in_loss_grace(LockClock::now())) {
    save_loss_grace();
    return;
  }
  spdlog::warn(
      "locks: the loss grace of an earlier asnd goes on: {} files withheld for the "
      "reclaims of {} sessions for {:.0f} s at most",
      loss_.every_file ? std::string("all switch") : std::to_string(loss_.files.size()),
      loss_.sessions.size(), seconds_until(loss_.until, LockClock::now()));
}

bool LockManager::in_loss_grace(LockClock::time_point now) {
  if (loss_.sessions.empty() || now >= loss_.until) {
    if (!loss_.sessions.empty() || !loss_.files.empty() || loss_.every_file) {
      spdlog::info("locks: the loss grace ended: every file is granted again");
      loss_ = LossGrace{};
      save_loss_grace();  // removes it
    }
    return false;
  }
  return true;
}

bool LockManager::withheld(const std::string& file, LockClock::time_point now) {
  if (!in_loss_grace(now)) return false;
  if (loss_.files.contains(file)) return true;
  if (!loss_.every_file) return false;
  auto it = placement_.find(file);
  if (it != placement_.end()) return it->second != software_;
  // A file with no entry: the switch may have held it unless the prefix rule keeps it in
  // the software domain always (first fit may have put any file in the switch).
  return !std::any_of(software_prefixes_.begin(), software_prefixes_.end(),
                      [&](const auto& p) { return file.compare(0, p.size(), p) == 0; });
}

// ---- fencing tokens -----------------------------------------------------------------------

void LockManager::align_token_floors(locks::Token floor) {
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    floor = std::max({floor, next_token_[d], domains_[d]->raise_token_floor(floor)});
  }
  for (int d = 0; d < static_cast<int>(domains_.size()); ++d) {
    next_token_[d] = domains_[d]->raise_token_floor(floor);
  }
}

// A file that has no entry may have had locks in another table, with tokens this one has
// not reached: before its first grant here, this table's floor is raised above them.
void LockManager::catch_up_tokens(int domain) {
  const locks::Token top = *std::max_element(next_token_.begin(), next_token_.end());
  if (next_token_[domain] < top) next_token_[domain] = domains_[domain]->raise_token_floor(top);
}

void LockManager::note_token(int domain, locks::Token token) {
  next_token_[domain] = std::max(next_token_[domain], token + 1);
}

void LockManager::unpark_switch() {
  parked_switch_->board_reset();
  if (auto why = parked_switch_->unusable()) {
    spdlog::error("locks: the switch lock domain still cannot be used: {}", *why);
    return;
  }
  switch_ = static_cast<int>(domains_.size());
  domains_.push_back(std::move(parked_switch_));
  next_token_.push_back(0);
  spdlog::info("locks: the switch lock domain is usable again: new files are placed in it");
}

ManagerSummary LockManager::summary() const {
  std::lock_guard lock(mu_);
  ManagerSummary out;
  out.manager = "locks";
  out.status = fmt::format("{} sessions, {} Lock calls waiting", sessions_.size(), waiters_.size());
  if (parked_switch_) {
    out.status += "; the switch lock domain cannot be used: " +
                  parked_switch_->unusable().value_or("it was unusable at start");
    out.problem = true;
  }
  return out;
}

}  // namespace asn

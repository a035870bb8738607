// The LockManager's start (the domains, lock state from another boot, sessions coming back,
// the waiting requests of the previous asnd withdrawn), its stop, and board resets.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "asn/state/v1/state.pb.h"
#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"
#include "locks/software_domain.hpp"

namespace asn {

using namespace lock_manager_detail;

namespace {

namespace fs = std::filesystem;

// The boot this machine is in: lock state of another boot is void (lock_manager.hpp).
locks::Token wall_clock_ns() {
  return static_cast<locks::Token>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
}

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
  }
  if (switch_domain) {
    if (auto why = switch_domain->unusable()) {
      spdlog::error(
          "locks: the switch lock domain cannot be used: {}. Every file is placed in the "
          "software domain until then; the sessions that held locks in the switch end.",
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
  // A table may be new, or have lost its tokens (the board was reset while asnd was down):
  // no grant from now on may get a token at or below one granted before. Wall-clock
  // nanoseconds are above every token granted before this start, as no table grants more
  // than one token per nanosecond; the tables' own next tokens cover a clock set back.
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
    }
    session->reattached = false;
    // A client renews its lease every third of it or so, so one with a lease longer than
    // the grace period may not call within it: it has its lease, from now, to come back.
    session->expires = std::max(now + std::chrono::seconds(config_.grace_period_s),
                                now + std::chrono::seconds(std::max<uint32_t>(session->ttl, 1)));
    grace_until_ = std::max(grace_until_, session->expires);
    if (session->switch_session != 0) by_switch_session_[session->switch_session] = s.id;
    leases_.emplace(session->expires, s.id);
    sessions_.emplace(s.id, std::move(session));
  }
  // Sessions whose switch session is gone lost their switch locks: the switch's table is
  // unusable, or the board was reset while asnd was down. Another session may now be granted
  // those bytes, so these may not re-attach as if they still held them.
  std::set<locks::SessionId> in_switch;
  if (switch_ >= 0) {
    for (const DomainSession& s : domains_[switch_]->sessions()) in_switch.insert(s.id);
  }
  {
    Finished finished;
    std::vector<uint64_t> lost;
    for (const auto& [id, session] : sessions_) {
      if (session->switch_session != 0 && !in_switch.contains(session->switch_session)) {
        lost.push_back(id);
      }
    }
    for (uint64_t id : lost) {
      expire_locked(
          id,
          Error(ErrorCode::kAborted,
                "the session ended: the switch's lock table lost its locks (the board was "
                "reset, or its table in board DRAM is damaged)")
              .with_reason(kReasonSessionGone),
          finished);
    }
    if (!lost.empty()) {
      spdlog::warn(
          "locks: {} sessions ended: the switch's lock table no longer has their locks (the "
          "board was reset, or its table is damaged)",
          lost.size());
    }
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
        for (const auto& w : domains_[d]->list(file).waiting) waiting.push_back(w.request);
      }
      if (files.size() < 1024) break;
      after = files.back();
    }
    // All in one withdrawal (one journal record), none of them granted by another's.
    if (!waiting.empty()) domains_[d]->withdraw(waiting);
    withdrawn += waiting.size();
  }
  placement_pruned_at_ = placement_.size();
  if (!sessions_.empty() || withdrawn != 0) {
    spdlog::info(
        "locks: {} sessions may re-attach within {} s; {} waiting requests of the "
        "previous asnd withdrawn",
        sessions_.size(), config_.grace_period_s, withdrawn);
  }
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
    Error why(ErrorCode::kAborted,
              "the wait was cancelled: the board was reset, which emptied the switch's lock "
              "table; the session ended, open a new one");
    why.with_reason(kReasonSessionGone);
    std::vector<uint64_t> ended;
    for (const auto& [id, session] : sessions_) ended.push_back(id);
    for (uint64_t id : ended) expire_locked(id, why, finished);
    std::erase_if(placement_, [&](const auto& kv) { return kv.second == switch_; });
    what = fmt::format("the board was reset, emptying the switch's lock table: {} sessions ended",
                       ended.size());
    spdlog::warn("locks: {}", what);
  }
  run(finished);
  return what;
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

// The fabric's lock map (issue 25, item 6): a switch locks only the files whose slot the map
// gives it, hands the rest a redirect, takes a slot over only after every grant its earlier
// owner could have made has run out, and stops granting and renewing when it cannot confirm
// the map with etcd. The safety argument, end to end (docs/architecture.md "Locks across
// switches"):
//
// - A move of slot s from A to B commits in etcd at t_c; B learns it at t_b >= t_c and grants
//   on s only from t_b + takeover_grace.
// - A grants and renews only until map_valid_until_ = t_r + status_ttl, t_r being when it sent
//   the last linearizable read that found it still the owner. That read ordered before t_c, so
//   t_r < t_c: A grants nothing on s after t_c + status_ttl, and no lease it renewed outlives
//   t_c + status_ttl + locks.max_ttl.
// - takeover_grace = status_ttl + locks.max_ttl (+ a margin): B's first grant comes after
//   every grant of A has run out, whether A saw the move, was stopped, or was cut off.
// - A switch that sees a slot it served at epoch e now at another owner, or at another epoch,
//   drops the slot's grants and waits.
//
// Fencing tokens order the owners of a slot whatever the switches' clocks say. Standalone, a
// token is floored to the wall clock (lock_manager_start.cc), below 2^63. In a fabric it is
// fabric_token_floor(r) + c (fabric_token.hpp): bit 63, r a 40-bit etcd revision, c a 23-bit
// counter; compared as unsigned 64-bit numbers, by r first. Tokens are one counter per lock
// domain, not per file, so r cannot be a slot's epoch: it is token_revision_, the newest etcd
// revision at which this switch knew the map in force current (the map's mod_revision when
// it applies one, set_lock_map; the header revision of a linearizable read that returned it,
// confirm_lock_map). etcd's revision is global and only grows, a map deleted and re-created
// included (whose epochs restart).
// - Raising r raises every domain's floor to fabric_token_floor(r), and only after the map of
//   revision r is applied: the lost slots' waits are withdrawn and nothing is accepted on
//   them, so no grant on a slot that map took away carries r.
// - The counter never reaches the next revision: a request is refused (fenced) unless
//   next_token + margin < fabric_token_floor(r + 1), the margin (token_margin) covering the
//   grants the domain makes later to requests already waiting: locks.max_waiting, or the
//   number waiting if a SIGHUP lowered that below it, plus one. So every token this switch
//   grants on s embeds an r at which the map in etcd gave it s.
// - A moves s to B at revision R_move: A's map was current at each r it used, so r < R_move.
//   B grants on s only after applying a map of revision >= R_move, so its tokens on s embed
//   r' >= R_move > r: every token of B on s is above every token of A, whatever the clocks.
//   A switch that gains s back later is above B by the same argument.
// - A restart: tables keep their counters (a board reset re-floors from the others), and
//   the first grant waits for a confirmation, whose read revision is above every r used.
// - The counter: with 2^23 tokens per revision and etcd's revision moving only on writes, a
//   quiet etcd would fence a busy switch. When half is used (tokens_need_revision), the
//   fabric agent writes a key of its own before its next read (lock_map_agent.cc), so that
//   the read's revision, and the floor, move on. A revision above 2^40 - 1 is refused (the
//   map is not applied, or not confirmed: fenced). If etcd's revision goes back (a restore
//   from a snapshot), the counter is above the limit: fenced until the revision passes it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "asn/fabric_spec/lock_map.hpp"
#include "asn/state/v1/state.pb.h"
#include "locks/lock_manager.hpp"
#include "locks/lock_manager_internal.hpp"

namespace asn {

using namespace lock_manager_detail;

LockManager::SlotPlan LockManager::plan_slots(const std::optional<LockOwnership>& map,
                                              std::chrono::milliseconds takeover_grace,
                                              LockClock::time_point now) const {
  // Before the first map (await_lock_map) the table is what this switch granted alone.
  const bool alone = !lock_map_ || !lock_map_->known;
  SlotPlan plan;
  plan.lost.assign(fabric::kLockSlots, false);
  if (!map) return plan;  // no map any more: every file is this switch's again
  plan.slots.resize(fabric::kLockSlots);
  for (size_t i = 0; i < map->ranges.size(); ++i) {
    const LockOwnership::Range& r = map->ranges[i];
    for (uint32_t slot = r.first_slot; slot <= r.last_slot && slot < fabric::kLockSlots; ++slot) {
      plan.slots[slot].range = static_cast<int32_t>(i);
      plan.slots[slot].epoch = r.epoch;
    }
  }
  // After a start, what the table was granted at, where the slots file tells: a damaged
  // file, or one of another fabric or name, tells nothing but that every slot may be stale.
  const ServedEpochs* recorded = alone && served_before_ ? &*served_before_ : nullptr;
  const bool recorded_here =
      recorded != nullptr && recorded->fabric == map->fabric && recorded->self == map->self;
  for (uint32_t slot = 0; slot < fabric::kLockSlots; ++slot) {
    const SlotState* before = alone ? nullptr : &slots_[slot];
    // Served here before: no map (every file), or owned at some epoch.
    const bool was_ours = alone || (before->range >= 0 && owner_of(*before) == lock_map_->self);
    SlotState& s = plan.slots[slot];
    const bool ours = s.range >= 0 && map->ranges[static_cast<size_t>(s.range)].owner == map->self;
    // Kept: owned before at this very epoch. Without a map before, this switch granted on
    // every file, and so may every other switch have: nothing is kept but the table. The same
    // owner at a new epoch lost the slot in between: its table there is stale.
    const bool kept = ours && before != nullptr && was_ours && before->epoch == s.epoch;
    if (ours) {
      s.serve_from = kept ? before->serve_from : now + takeover_grace;
      plan.gained = plan.gained || !kept;
      plan.owned += 1;
    }
    // A slot served at another epoch than the one recorded moved away and back while asnd
    // was down: its grants were made beside its other owner's, whose clients may hold them.
    const bool stale_since_start =
        recorded != nullptr && (!recorded_here || recorded->epochs[slot] != s.epoch);
    plan.lost[slot] = was_ours && !kept && (!ours || before != nullptr || stale_since_start);
  }
  return plan;
}

const std::string& LockManager::owner_of(const SlotState& slot) const {
  return lock_map_->ranges[static_cast<size_t>(slot.range)].owner;
}

// Slots lost: a session that held a lock there loses it, and is ended for its owner, so that
// its client learns it at its next call (session-gone) rather than believe it still holds the
// bytes its successor may grant; other waits on those files end (moved). The ended session's
// locks on the files this switch keeps are not released at once: its client may believe it
// holds them until its next call, so they run out with its lease as last renewed (a lease is
// never cut short), as they would have had its client vanished. Returns the files dropped
// (set_lock_map then releases every lock on them).
std::vector<std::string> LockManager::drop_slots(const std::vector<bool>& lost,
                                                 Finished& finished) {
  std::vector<std::string> dropped;
  std::set<uint64_t> holders;
  for (const auto& [file, domain] : placement_) {
    if (!lost[fabric::lock_slot(file)]) continue;
    dropped.push_back(file);
    for (const locks::HeldLock& held : domains_[domain]->list(file).held) {
      uint64_t id = held.session;
      if (domain == switch_) {
        auto it = by_switch_session_.find(held.session);
        id = it == by_switch_session_.end() ? 0 : it->second;
      }
      if (id != 0) holders.insert(id);
    }
  }
  const std::string how =
      "it held locks on a file whose lock slot moved to another switch of the fabric; they "
      "were dropped: open a new session and lock at the file's owner";
  const Error ended = Error(ErrorCode::kAborted,
                            "the session held locks on a file whose lock slot moved to another "
                            "switch of the fabric: they were dropped, and the session with them")
                          .with_reason(kReasonMoved);
  // The waits first: a holder's end would grant them.
  std::vector<std::vector<locks::RequestId>> by_domain(domains_.size());
  std::vector<WaitKey> ended_waits;
  for (const auto& [key, waiter] : waiters_) {
    if (lost[fabric::lock_slot(waiter->file)] || holders.contains(waiter->session)) {
      ended_waits.push_back(key);
    }
  }
  for (const WaitKey& key : ended_waits) {
    const Waiter& waiter = *waiters_.at(key);
    if (!lost[fabric::lock_slot(waiter.file)]) {
      finish_waiter(key, ended, finished);  // a wait of an ended session, on a kept file
      by_domain[key.domain].push_back(key.request);
      continue;
    }
    // Where to wait now: the new owner, as a Lock of the file would be told (none: no-owner).
    const SlotState now_at = slots_.empty() ? SlotState{} : slots_[fabric::lock_slot(waiter.file)];
    Error moved(ErrorCode::kFailedPrecondition,
                fmt::format("this switch no longer owns the locks of {} (the fabric's lock map "
                            "changed): lock it again at its owner",
                            printable(waiter.file)));
    moved.with_reason(now_at.range >= 0 ? kReasonMoved : kReasonNoOwner);
    if (now_at.range >= 0) {
      moved.with_redirect(lock_map_->ranges[static_cast<size_t>(now_at.range)].endpoint);
    }
    finish_waiter(key, moved, finished);
    by_domain[key.domain].push_back(key.request);
  }
  withdraw_locked(by_domain, finished);
  for (const uint64_t id : holders) {
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second->ended) continue;
    it->second->ended = how;
    remember_ended(*it->second, how);
  }
  return dropped;
}

void LockManager::set_lock_map(std::optional<LockOwnership> map,
                               std::chrono::milliseconds takeover_grace) {
  Finished finished;
  std::vector<std::string> dropped;
  {
    std::lock_guard lock(mu_);
    if (map && lock_map_ && lock_map_->known && map->revision == lock_map_->revision) return;
    if (map && (map->revision <= 0 || map->revision > kMaxTokenRevision)) {
      throw Error(ErrorCode::kOutOfRange,
                  fmt::format("fabric '{}''s lock map is at etcd revision {}: fencing tokens "
                              "embed the revision in 40 bits, so it must be in [1, {}]; the "
                              "map in force stays",
                              map->fabric, map->revision, kMaxTokenRevision));
    }
    SlotPlan plan = plan_slots(map, takeover_grace, LockClock::now());
    if (map) {
      spdlog::info("locks: fabric '{}' lock map at etcd revision {}: switch {} owns {} slots",
                   map->fabric, map->revision, map->self, plan.owned);
    } else if (lock_map_ && lock_map_->known) {
      spdlog::info("locks: no lock map any more: this switch locks every file");
    }
    lock_map_ = std::move(map);
    slots_ = std::move(plan.slots);
    served_before_.reset();  // the first map after the start has judged the table
    save_served_epochs(plan.lost);
    dropped = drop_slots(plan.lost, finished);
    // Only now, the lost slots' waits withdrawn and no request on them accepted: no grant on
    // a slot this map took away carries its revision.
    if (lock_map_) raise_token_revision(lock_map_->revision);
  }
  run(finished);
  const std::vector<locks::ByteRange> whole = {{0, std::numeric_limits<uint64_t>::max()},
                                               {std::numeric_limits<uint64_t>::max(), 1}};
  for (const std::string& file : dropped) {
    try {
      release_locks(file, whole, false, "the fabric's lock map (the slot moved)");
    } catch (const Error& e) {
      spdlog::warn("locks: releasing {} after its slot moved: {}", printable(file), e.what());
    }
  }
  if (!dropped.empty()) {
    spdlog::warn(
        "locks: the locks of {} files whose slot this switch no longer owns were dropped; the "
        "sessions that held them ended (their other locks run out with their leases)",
        dropped.size());
  }
  std::lock_guard lock(mu_);
  save_served_epochs(std::vector<bool>(fabric::kLockSlots, false));
}

void LockManager::save_served_epochs(const std::vector<bool>& dropping) {
  std::error_code ec;
  if (!lock_map_ || !lock_map_->known) {
    std::filesystem::remove(slots_file_, ec);  // granted without a map from now on
    return;
  }
  state::v1::LockSlotEpochs saved;
  saved.set_fabric(lock_map_->fabric);
  saved.set_self(lock_map_->self);
  for (uint32_t slot = 0; slot < fabric::kLockSlots; ++slot) {
    const SlotState& s = slots_[slot];
    const bool ours = s.range >= 0 && owner_of(s) == lock_map_->self;
    saved.add_epochs(ours && !dropping[slot] ? s.epoch : 0);
  }
  if (!write_whole(slots_file_, saved)) {
    // The file there (if any) keeps an earlier map's epochs: a restart drops every slot whose
    // epoch changed since, which is safe. Removing it would make the table trusted.
    spdlog::error(
        "locks: cannot write {}: after a restart, the grants of every slot whose "
        "epoch changed since the last record are dropped",
        slots_file_);
  }
}

void LockManager::load_served_epochs() {
  std::ifstream in(slots_file_, std::ios::binary);
  if (!in) return;
  state::v1::LockSlotEpochs saved;
  ServedEpochs served;
  if (saved.ParseFromIstream(&in) && saved.epochs_size() == static_cast<int>(fabric::kLockSlots)) {
    served.fabric = saved.fabric();
    served.self = saved.self();
    served.epochs.assign(saved.epochs().begin(), saved.epochs().end());
  } else {
    // Unreadable: the safe reading is that every slot moved (fabric "" matches none).
    spdlog::error("locks: {} is damaged: the first lock map drops every slot's grants",
                  slots_file_);
    served.epochs.assign(fabric::kLockSlots, 0);
  }
  served_before_ = std::move(served);
}

void LockManager::await_lock_map(const std::string& fabric, const std::string& self) {
  std::lock_guard lock(mu_);
  LockOwnership unknown;
  unknown.fabric = fabric;
  unknown.self = self;
  unknown.revision = -1;
  unknown.known = false;
  lock_map_ = std::move(unknown);
  slots_.assign(fabric::kLockSlots, SlotState{});
}

void LockManager::confirm_lock_map(int64_t revision, int64_t read_revision,
                                   LockClock::time_point until) {
  std::lock_guard lock(mu_);
  if (!lock_map_ || !lock_map_->known || lock_map_->revision != revision) return;
  if (read_revision < revision || read_revision > kMaxTokenRevision) {
    spdlog::error(
        "locks: etcd read fabric '{}''s lock map (revision {}) at store revision {}: fencing "
        "tokens embed it in 40 bits, so it must be in [{}, {}]; the map is not confirmed",
        lock_map_->fabric, revision, read_revision, revision, kMaxTokenRevision);
    return;
  }
  map_valid_until_ = std::max(map_valid_until_, until);
  raise_token_revision(read_revision);
}

void LockManager::raise_token_revision(int64_t revision) {
  if (revision <= token_revision_) return;
  token_revision_ = revision;
  align_token_floors(fabric_token_floor(revision));
}

locks::Token LockManager::token_margin() const {
  // Every waiting request may be granted later, each with a token of its own, and this call
  // one more. Waiting calls are at most locks.max_waiting, but a SIGHUP may have lowered it
  // below the number already waiting (set_limits): the larger of the two.
  return locks::Token{std::max<size_t>(config_.max_waiting, waiters_.size())} + 1;
}

bool LockManager::tokens_need_revision() const {
  std::lock_guard lock(mu_);
  if (!lock_map_ || !lock_map_->known || token_revision_ <= 0) return false;
  // Half of what may be granted at this revision (check_token_budget: the window less the
  // margin) is used.
  const locks::Token floor = fabric_token_floor(token_revision_);
  const locks::Token window = locks::Token{1} << kTokenCounterBits;
  const locks::Token margin = token_margin();
  const locks::Token usable = margin < window ? window - margin : 0;
  return std::any_of(next_token_.begin(), next_token_.end(), [&](locks::Token next) {
    return next >= floor && (next - floor) * 2 >= usable;
  });
}

void LockManager::check_token_budget(int domain) const {
  if (!lock_map_ || !lock_map_->known || token_revision_ <= 0) return;
  // Counted from this revision's floor: the next revision's may be 2^64 (no overflow).
  const locks::Token floor = fabric_token_floor(token_revision_);
  const locks::Token next = next_token_[domain];
  const locks::Token window = locks::Token{1} << kTokenCounterBits;
  const locks::Token margin = token_margin();
  if (next < floor || next - floor + margin < window) return;
  if (next - floor >= window) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("switch {}'s next fencing token ({}) embeds etcd revision {}, above "
                            "revision {}, the newest at which it read fabric '{}''s lock map: "
                            "etcd's revision went back (restored from a snapshot, or a new "
                            "cluster?); it grants nothing until etcd's revision passes {}",
                            lock_map_->self, next, token_revision(next), token_revision_,
                            lock_map_->fabric, token_revision(next)))
        .with_reason(kReasonFenced);
  }
  throw Error(ErrorCode::kUnavailable,
              fmt::format("switch {} granted nearly 2^{} fencing tokens since etcd revision {}, "
                          "the newest at which it read fabric '{}''s lock map: it grants nothing "
                          "more until it reads the map at a newer revision (within a third of "
                          "the status lease); retry",
                          lock_map_->self, kTokenCounterBits, token_revision_, lock_map_->fabric))
      .with_reason(kReasonFenced);
}

void LockManager::check_fence(LockClock::time_point now) const {
  if (!lock_map_ || now < map_valid_until_) return;
  if (!lock_map_->known) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("switch {} has not read fabric '{}''s lock map from etcd yet: it "
                            "grants and renews nothing until it has; retry",
                            lock_map_->self, lock_map_->fabric))
        .with_reason(kReasonFenced);
  }
  throw Error(ErrorCode::kUnavailable,
              fmt::format("switch {} cannot confirm fabric '{}''s lock map with etcd now: it "
                          "grants and renews nothing until it can, so that no switch that takes "
                          "its files over ever grants beside it; retry",
                          lock_map_->self, lock_map_->fabric))
      .with_reason(kReasonFenced);
}

void LockManager::check_lock_map(const std::string& file, LockClock::time_point now) const {
  if (!lock_map_) return;
  const uint32_t slot = fabric::lock_slot(file);
  const SlotState& s = slots_[slot];
  if (s.range < 0) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("no switch of fabric '{}' owns the locks of {} (slot {}; lock map "
                            "at etcd revision {}): give the slot an owner in the fabric file's "
                            "locks.owners and apply it",
                            lock_map_->fabric, printable(file), slot, lock_map_->revision))
        .with_reason(kReasonNoOwner);
  }
  const LockOwnership::Range& range = lock_map_->ranges[static_cast<size_t>(s.range)];
  if (range.owner != lock_map_->self) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the locks of {} belong to switch {} at {} (fabric '{}', slot {}, "
                            "epoch {}): send the call there",
                            printable(file), range.owner, range.endpoint, lock_map_->fabric, slot,
                            range.epoch))
        .with_reason(kReasonMoved)
        .with_redirect(range.endpoint);
  }
  if (now < s.serve_from) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("switch {} took over slot {} (of {}) at epoch {} and grants nothing "
                            "on it until every lock its earlier owner could have granted has "
                            "run out: retry in {:.1f} s at most",
                            lock_map_->self, slot, printable(file), s.epoch,
                            seconds_until(s.serve_from, now)))
        .with_reason(kReasonTakeover);
  }
}

}  // namespace asn

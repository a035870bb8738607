// The LockManager's locks and time (lock_manager.hpp); its sessions are in
// lock_manager_sessions.cc, its quotas in lock_manager_quotas.cc, its start, stop and board
// resets in lock_manager_start.cc, its reads in lock_manager_reads.cc, the releases no unlock
// asked for in lock_manager_release.cc.
#include "locks/lock_manager.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>

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

bool write_whole(const std::string& path, const google::protobuf::MessageLite& message) {
  const std::string tmp = path + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!message.SerializeToOstream(&out) || !out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

namespace {

locks::Token system_clock_ns() {
  return static_cast<locks::Token>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
}

std::atomic<locks::Token (*)()> token_wall_clock{&system_clock_ns};

}  // namespace

locks::Token wall_clock_ns() { return token_wall_clock.load()(); }

}  // namespace lock_manager_detail

void set_token_wall_clock(locks::Token (*clock)()) {
  lock_manager_detail::token_wall_clock.store(
      clock != nullptr ? clock : &lock_manager_detail::system_clock_ns);
}

namespace lock_manager_detail {

std::string with_public_sessions(
    std::string_view text, const std::function<std::optional<uint64_t>(uint64_t)>& public_id) {
  constexpr std::string_view kFile = "file '", kSession = "session ";
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.substr(i, kFile.size()) == kFile) {  // copied as it is: a name may say anything
      size_t end = i + kFile.size();
      while (end < text.size() && text[end] != '\'') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    const bool word_start = i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]));
    if (word_start && text.substr(i, kSession.size()) == kSession && digit(i + kSession.size())) {
      size_t end = i + kSession.size();
      uint64_t id = 0;
      for (; digit(end); ++end) id = id * 10 + static_cast<uint64_t>(text[end] - '0');
      const std::optional<uint64_t> shown = public_id(id);
      out += shown ? fmt::format("session {}", *shown) : std::string("another session");
      i = end;
      continue;
    }
    out += text[i++];
  }
  return out;
}

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

}  // namespace

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
    check_lock_map(call.file, now);
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
    const size_t need = entries_of(call.ranges);
    const bool first_fit = fresh && d == switch_ && software_prefixes_.empty();
    // First fit: a new file goes to the software domain when the principal has used its
    // share of the switch's table, or (below) when the table has no room.
    if (first_fit && !switch_share_left(session, need)) d = software_;
    if (fresh) catch_up_tokens(d);
    check_token_budget(d);
    check_entries(session, d, need, "this lock");
    locks::Request request{domain_session(session, d), call.file, call.mode, call.ranges, wait};
    locks::Outcome outcome = domains_[d]->request(request);
    if (outcome.status == locks::Status::kTableFull && first_fit && d == switch_) {
      d = software_;
      catch_up_tokens(d);
      check_token_budget(d);
      check_entries(session, d, need, "this lock");
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
        add_held(session, d, outcome.grant->ranges.size());
        LockGranted granted{std::move(*outcome.grant), std::string(domains_[d]->name()), false};
        granted.grant.session = session.public_id;
        finished.emplace_back(std::move(done), std::move(granted));
        break;
      }
      case locks::Status::kQueued:
        handle = enqueue(session, d, outcome.request, call.file, need, deadline, std::move(done),
                         finished);
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
        if (outcome.error) throw client_error(d, *outcome.error).with_reason(kReasonConflict);
        throw Error(ErrorCode::kInternal, "a lock domain refused a request without saying why");
      case locks::Status::kInvalid:
        if (outcome.error) throw client_error(d, *outcome.error);
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
// finishes it. Over a waiting quota (or locks.max_waiting), withdraws the request and refuses
// the call instead, naming the quota.
uint64_t LockManager::enqueue(Session& session, int domain, locks::RequestId request,
                              const std::string& file, size_t entries,
                              std::optional<LockClock::time_point> deadline, LockDone done,
                              Finished& finished) {
  if (std::optional<Error> over = over_waiting_quota(session)) {
    apply(domain, domains_[domain]->cancel(request), finished);
    throw *over;
  }
  const WaitKey key{domain, request};
  auto waiter = std::make_unique<Waiter>();
  waiter->session = session.id;
  waiter->quota_key = session.quota_key;
  waiter->call = next_call_++;
  waiter->file = file;
  waiter->deadline = deadline;
  waiter->since = LockClock::now();
  waiter->done = std::move(done);
  waiter->entries = entries;
  count_waiting(*waiter, domain, +1);
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
    // A cut adds an entry: one a range strictly inside a lock makes, two for a downgrade.
    size_t added = entries_of(ranges) * (downgrade ? 2 : 1);
    if (!entries_fit(session, d, added, nullptr)) {
      const ptrdiff_t cut = split_entries(d, sid, file, ranges, downgrade);
      added = static_cast<size_t>(std::max<ptrdiff_t>(cut, 0));
      if (added > 0) {
        check_entries(session, d, added,
                      downgrade ? "this downgrade, which cuts locks in two,"
                                : "this unlock, which cuts locks in two,");
      }
    }
    locks::Change change = downgrade ? domains_[d]->downgrade(sid, file, ranges)
                                     : domains_[d]->release(sid, file, ranges);
    if (change.error) throw with_not_held(client_error(d, *change.error));
    add_held(session, d, added);
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
  count_waiting(waiter, key.domain, -1);
  if (auto s = sessions_.find(waiter.session); s != sessions_.end()) {
    s->second->waiters.erase(key);
    if (const auto* granted = std::get_if<LockGranted>(&result)) {
      add_held(*s->second, key.domain, granted->grant.ranges.size());
    }
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
                      s->second->reattached
                          ? fmt::format("its lease expired (no call for {} s)", s->second->ttl)
                          : std::string("it did not re-attach after asnd restarted"),
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

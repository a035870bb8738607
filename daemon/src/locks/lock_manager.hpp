// The lock manager (issue 9): sessions with leases, the two lock domains and which file lives
// in which, and the Lock calls that wait. The Locks service (services/lock_service.cc) is a
// thin layer over it.
//
// - Sessions are opened in both domains; the software domain's journal keeps the session's
//   owner, name, lease and switch session (state.proto LockSessionLabel), so sessions come
//   back after an asnd restart. They then have the grace period to re-attach (any call of
//   the session does); one that does not is expired, and its locks released.
// - A file lives wholly in one domain: the placement policy (config locks.placement) picks
//   it when the file has no entry anywhere, and it stays there while it has entries.
// - A waiting Lock call holds no thread: it is a record here, finished by a later grant, its
//   deadline, its cancellation or the end of its session, from whichever thread sees it.
//   Every waiter's callback is called exactly once, never under the manager's mutex.
// - Lock calls of an earlier asnd died with it, so the waiting requests found in the domains
//   at start are withdrawn, all at once (LockDomain::withdraw(): no withdrawal grants another
//   of them). Many waits that end together (a Batch stream ended, deadlines that passed
//   together, asnd stopping) are withdrawn the same way, one call per domain.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "asn/locks/lock_table.hpp"
#include "config.hpp"
#include "error.hpp"
#include "locks/lock_domain.hpp"
#include "state/reconciler.hpp"

namespace asn {

using LockClock = std::chrono::steady_clock;

// Error::reason() of what the lock manager refuses, where the status code alone does not tell
// a client what happened (the Locks service sends them as trailing metadata).
inline constexpr char kReasonSessionGone[] = "session-gone";  // its locks are released
inline constexpr char kReasonConflict[] = "conflict";         // TryLock met a holder or waiter
inline constexpr char kReasonNotHeld[] = "not-held";          // unlock of bytes not held

struct LockCall {
  uint64_t session = 0;
  std::string file;
  locks::Mode mode = locks::Mode::kExclusive;
  locks::RangeSpec ranges;
};

struct LockGranted {
  locks::Grant grant;  // grant.session is the manager's session id
  std::string domain;
  bool waited = false;
};

using LockResult = std::variant<LockGranted, Error>;
using LockDone = std::function<void(LockResult)>;

struct OpenedSession {
  uint64_t session = 0;
  uint32_t ttl_seconds = 0;
};

struct SessionClosed {
  uint64_t released = 0;
  uint64_t cancelled = 0;
};

struct UnlockDone {
  uint64_t released = 0;
  uint64_t granted = 0;
};

struct SessionView {
  uint64_t session = 0;
  std::string owner;
  std::string name;
  uint32_t ttl_seconds = 0;
  double expires_in_seconds = 0;
  uint64_t held_entries = 0;
  uint64_t waiting_requests = 0;
  bool reattached = true;
};

struct DomainView {
  std::string name;
  locks::Stats stats;
};

struct LockStatsView {
  std::vector<DomainView> domains;
  std::string placement;
  std::vector<SessionView> sessions;  // the `top` holding the most entries (stats())
  uint64_t session_count = 0;         // all open sessions
  uint64_t not_reattached = 0;
  uint64_t held_entries = 0;  // of all sessions
  uint64_t waiting_requests = 0;
  uint64_t waiting_calls = 0;
  double grace_remaining_seconds = 0;
};

struct SessionPage {
  std::vector<SessionView> sessions;  // by id
  bool more = false;                  // sessions with greater ids follow
};

struct HeldView {
  std::string file;
  std::string domain;
  uint64_t session = 0;  // the manager's id (0: a session of no manager record)
  std::string owner;
  std::string session_name;
  locks::HeldLock lock;
};

struct WaitingView {
  std::string file;
  std::string domain;
  uint64_t session = 0;
  std::string owner;
  locks::WaitingRequest request;
};

// Where a listing goes on: entry `skip` (held first, then waiting) of `file`.
struct ListCursor {
  std::string file;
  uint64_t skip = 0;
};

struct LockListView {
  std::vector<HeldView> held;
  std::vector<WaitingView> waiting;
  // Not empty: more files, after this one (all files; a file cut by the page is this one, and
  // the rest of it is skipped: `next` goes on within it).
  std::string next_after;
  std::optional<ListCursor> next;  // more entries: where the next page starts
};

// Takes part in the reconciler for board resets: a reset empties the switch's lock table, so
// every session (each has a switch half) has lost locks it may hold there. They are ended,
// their waits aborted, so that their clients learn it (FAILED_PRECONDITION at their next
// call) instead of believing they hold what the switch may grant again.
class LockManager final : public Reconcilable {
 public:
  // `switch_domain` may be null (a board without a lock engine): every file then lives in
  // the software domain. `software_dir` holds the software domain's journal.
  LockManager(std::unique_ptr<LockDomain> switch_domain, const std::string& software_dir,
              const LocksConfig& config);
  ~LockManager() override;
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  std::string_view kind() const override { return "locks"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;

  // asnd is stopping: every waiting Lock call finishes with UNAVAILABLE (its request is
  // withdrawn), and new calls are refused, so that the server's shutdown waits for none of
  // them. Sessions and held locks stay for the next start. Also done by the destructor.
  void stop();

  OpenedSession open_session(const std::string& owner, const std::string& name,
                             uint32_t ttl_seconds);
  // Throws kPermissionDenied unless `principal` opened the session (a session that is not
  // open passes: the call itself then says so). For callers whose principal is verified (a
  // client certificate): a lock client must not release, or renew, another's locks.
  void check_owner(uint64_t session, const std::string& principal) const;

  // Renews the lease; returns the lease and whether this call re-attached the session after
  // a restart.
  std::pair<uint32_t, bool> keep_alive(uint64_t session);
  SessionClosed close_session(uint64_t session);

  // Grants the lock, or refuses it, or queues it: `done` is then called later, from another
  // thread, with the grant or why it failed (deadline, cancel_call(), the session's end).
  // `done` may be called before lock() returns. Returns a handle for cancel_call().
  uint64_t lock(const LockCall& call, locks::Wait wait,
                std::optional<LockClock::time_point> deadline, LockDone done);
  // The client gave up (the RPC was cancelled): withdraws the waiting request and finishes
  // it with `why`. Nothing happens for a call that already finished.
  void cancel_call(uint64_t handle, const Error& why);
  // cancel_call() of many calls (a Batch stream ended): their requests are withdrawn at once,
  // one LockDomain::withdraw() per domain, in O(calls) rather than a cancel each.
  void cancel_calls(std::span<const uint64_t> handles, const Error& why);

  UnlockDone unlock(uint64_t session, const std::string& file, const locks::RangeSpec& ranges);
  UnlockDone downgrade(uint64_t session, const std::string& file, const locks::RangeSpec& ranges);

  // Held and waiting locks of one file, or of all files (after `after`, or from `from` on),
  // at most `limit` entries and about `max_bytes` of them as the Locks service sends them (at
  // least one entry a page): a page ends within a file if it must, and `next` says where
  // the next one starts.
  LockListView list(const std::string& file, const std::string& after, size_t limit,
                    const std::optional<ListCursor>& from = std::nullopt,
                    size_t max_bytes = SIZE_MAX);
  // The domains, the session totals and the `top` sessions holding the most entries (then
  // with the most waiting requests, then by id).
  LockStatsView stats(size_t top = 20);
  // The sessions with ids above `after`, at most `limit`, by id: a page of all of them.
  SessionPage sessions(uint64_t after, size_t limit);

 private:
  struct Session;
  struct Waiter;
  struct WaitKey {
    int domain = 0;  // index into domains_
    locks::RequestId request = 0;
    auto operator<=>(const WaitKey&) const = default;
  };
  using Finished = std::vector<std::pair<LockDone, LockResult>>;

  void recover();
  Session& session_or_throw(uint64_t session, LockClock::time_point now);
  void touch(Session& session, LockClock::time_point now);
  int place(const std::string& file, bool& fresh);
  int domain_index(std::string_view name) const;
  UnlockDone carve(uint64_t session, const std::string& file, const locks::RangeSpec& ranges,
                   bool downgrade);
  uint64_t enqueue(Session& session, int domain, locks::RequestId request, const std::string& file,
                   std::optional<LockClock::time_point> deadline, LockDone done,
                   Finished& finished);
  void apply(int domain, const locks::Change& change, Finished& finished);
  // Withdraws the requests of each domain (indexed as domains_) whose calls are finished.
  void withdraw_locked(const std::vector<std::vector<locks::RequestId>>& by_domain,
                       Finished& finished);
  void finish_waiter(const WaitKey& key, LockResult result, Finished& finished);
  uint64_t expire_locked(uint64_t session, const Error& why, Finished& finished);
  locks::SessionId domain_session(const Session& session, int domain) const;
  void prune_placement();
  // Fencing tokens grow per file across tables (tokens.cc in lock_manager_start.cc).
  void align_token_floors(locks::Token floor);
  void catch_up_tokens(int domain);
  void note_token(int domain, locks::Token token);
  // The parked switch domain became usable (a board reset formatted its table): use it.
  void unpark_switch();
  void timer_loop();
  // Held entries per manager session, over the domains.
  std::map<uint64_t, uint64_t> held_by_session();
  SessionView view_of(const Session& session, uint64_t held, LockClock::time_point now) const;
  static void run(Finished& finished);

  LocksConfig config_;
  // config_.placement's "software-prefix:" prefixes, parsed once; empty for first fit.
  std::vector<std::string> software_prefixes_;
  std::vector<std::unique_ptr<LockDomain>> domains_;  // [switch,] software
  int software_ = 0;                                  // index of the software domain
  int switch_ = -1;                                   // index of the switch domain or -1
  // A switch domain that was unusable at start (its DRAM table damaged): not in domains_
  // until a board reset makes it usable.
  std::unique_ptr<LockDomain> parked_switch_;
  std::vector<locks::Token> next_token_;  // per domain: above every token it has granted

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;
  std::map<locks::SessionId, uint64_t> by_switch_session_;
  std::set<std::pair<LockClock::time_point, uint64_t>> leases_;  // expiry, session
  std::map<WaitKey, std::unique_ptr<Waiter>> waiters_;
  std::set<std::pair<LockClock::time_point, WaitKey>> wait_deadlines_;
  std::map<uint64_t, WaitKey> calls_;  // handle -> waiting request
  uint64_t next_call_ = 1;
  std::map<std::string, int, std::less<>> placement_;  // file -> domain
  size_t placement_pruned_at_ = 0;
  LockClock::time_point grace_until_{};
  std::thread timer_;
};

}  // namespace asn

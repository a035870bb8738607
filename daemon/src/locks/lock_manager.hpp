// The lock manager (issue 9): sessions with leases, the two lock domains and which file lives
// in which, and the Lock calls that wait. The Locks service (services/lock_service.cc) is a
// thin layer over it.
//
// - Sessions are opened in both domains; the software domain's journal keeps the session's
//   owner, name, lease and switch session (state.proto LockSessionLabel), so sessions come
//   back after an asnd restart. They then have the grace period to re-attach (any call of
//   the session does); one that does not is expired, and its locks released.
// - A failed call grants nothing, across a restart too. An asnd killed after a grant and
//   before its answer reached the client leaves the grant with the session, and only the
//   client knows which grants it received. So after a restart every session that holds locks
//   must say which it holds (keep_alive()'s `held`: their tokens) before it locks again
//   (kReasonConfirmHeld); the grants of the earlier asnd it does not name are released. This
//   is the reclaim of NFS and Lustre turned around: the locks stay (no client that holds
//   them loses them for not knowing the protocol), and the client names what it holds rather
//   than what it lost. A request id kept with each grant (retries answered with the grant)
//   would not do: a client that does not retry still leaks.
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

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
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
#include "locks/fabric_token.hpp"
#include "locks/lock_domain.hpp"
#include "state/reconciler.hpp"

namespace asn {

using LockClock = std::chrono::steady_clock;

// Error::reason() of what the lock manager refuses, where the status code alone does not tell
// a client what happened (the Locks service sends them as trailing metadata).
inline constexpr char kReasonSessionGone[] = "session-gone";  // its locks are released
inline constexpr char kReasonConflict[] = "conflict";         // TryLock met a holder or waiter
inline constexpr char kReasonNotHeld[] = "not-held";          // unlock of bytes not held
// The switch lost its lock table (a board reset): only reclaims are granted on the files it
// held until the sessions that may hold them reclaimed or their leases ran out (UNAVAILABLE).
inline constexpr char kReasonLossGrace[] = "grace";
// A reclaim outside a loss grace, or by a session that lost nothing (FAILED_PRECONDITION).
inline constexpr char kReasonNoReclaim[] = "no-reclaim";
// A call of a session whose switch locks were lost and that has not reclaimed them yet
// (FAILED_PRECONDITION): KeepAlive tells it, reclaim, then reclaim_complete.
inline constexpr char kReasonLocksLost[] = "locks-lost";
inline constexpr char kReasonRevoked[] = "revoked";  // an admin revoked the session (its waits)
// A Lock or TryLock of a session that held locks when asnd restarted and has not said which it
// holds yet (FAILED_PRECONDITION): KeepAlive with `held`, then lock.
inline constexpr char kReasonConfirmHeld[] = "confirm-held";

// A fabric's lock map gives the file to another switch (FAILED_PRECONDITION; the error's
// redirect() is the owner's API address): send the call there.
inline constexpr char kReasonMoved[] = "moved";
// A fabric's lock map gives the file to no switch (FAILED_PRECONDITION).
inline constexpr char kReasonNoOwner[] = "no-owner";
// This switch got the file's slot lately and grants nothing on it until every grant its
// earlier owner could have made has run out; or it cannot confirm the map with etcd now
// (UNAVAILABLE: retry; the message says how long at most, where it knows).
inline constexpr char kReasonTakeover[] = "takeover";
inline constexpr char kReasonFenced[] = "fenced";

// The fabric's lock map as this switch serves it (issue 25; lock_manager_fabric.cc).
struct LockOwnership {
  struct Range {
    uint32_t first_slot = 0;
    uint32_t last_slot = 0;  // inclusive
    std::string owner;       // switch name
    std::string endpoint;    // its API address
    uint64_t epoch = 0;
  };
  std::string fabric;
  std::string self;           // this switch's name
  int64_t revision = 0;       // the map's etcd revision
  std::vector<Range> ranges;  // ascending, disjoint
  // False until the map was read from etcd once (await_lock_map()): nothing is granted.
  bool known = true;
};

// The bytes of a session's secret (OpenSessionResponse.secret).
inline constexpr size_t kSessionSecretBytes = 32;

// Who makes a call naming a session (the Locks service finds out, lock_ops.cc).
struct SessionCaller {
  // The caller's verified principal: "cert <subject>" (mutual TLS), "uid <uid>" (the Unix
  // socket); empty where the listener cannot tell (plain TCP): the secret is required then.
  std::string owner_key;
  std::string secret;  // as the call carried it; empty: none
};

struct LockCall {
  uint64_t session = 0;
  std::string file;
  locks::Mode mode = locks::Mode::kExclusive;
  locks::RangeSpec ranges;
  // A lock the session held in the switch before it lost its table, taken again during the
  // loss grace: granted now or refused (it never waits), with a new, higher token.
  bool reclaim = false;
};

struct KeptAlive {
  uint32_t ttl_seconds = 0;
  bool reattached = false;  // the first call of the session after an asnd restart
  // The switch lost its lock table since the session's locks there were granted: they are
  // gone. Reclaim them (LockCall::reclaim) within `reclaim_seconds`, then say so
  // (reclaim_complete); until then the session keeps this state.
  bool locks_lost = false;
  double reclaim_seconds = 0;
  // The session held locks when asnd restarted and has not said which it holds: it may not
  // lock until it does (keep_alive()'s `held`).
  bool confirm_held = false;
  uint64_t released_unconfirmed = 0;  // grants this call released: `held` did not name them
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
  std::string secret;  // kSessionSecretBytes random bytes; asnd keeps only their SHA-256
};

struct SessionRevoked {
  uint64_t released = 0;
  uint64_t cancelled = 0;
  std::string owner;
  std::string name;
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
  bool confirm_held = false;
};

struct DomainView {
  std::string name;
  locks::Stats stats;
};

// How sessions ended and what board resets took, since asnd started: a clean close is not an
// expiry (an expiry is the sign of a hung or dead client).
struct SessionCounters {
  uint64_t opened = 0;
  uint64_t closed = 0;
  uint64_t expired = 0;     // the lease ran out (or it did not re-attach after a restart)
  uint64_t revoked = 0;     // by an administrator
  uint64_t locks_lost = 0;  // sessions whose switch locks a board reset took
  uint64_t reclaims = 0;    // reclaims granted
  uint64_t reclaims_refused = 0;
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
  // > 0: the switch lost its lock table; its files are granted only to reclaims for so long
  // at most, or until `reclaiming_sessions` reach 0.
  double loss_grace_remaining_seconds = 0;
  uint64_t reclaiming_sessions = 0;
  SessionCounters counters;
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

struct LocksReleased {
  std::vector<HeldView> released;  // lock.range: the part released
  uint64_t granted = 0;
};

// Takes part in the reconciler for board resets: a reset empties the switch's lock table, so
// every session (each has a switch half) may have lost locks it held there, and its holder
// may go on using them until it learns so. Nothing conflicting may be granted meanwhile:
// the loss grace (start_loss_grace()) grants the files the switch held only to reclaims of
// the sessions that lost them, until each of those reclaimed (or ended), or until every
// lease alive at the reset has run out — whichever is first. Sessions stay open; their
// waits in the switch end (UNAVAILABLE, reason "grace"), and their next call tells them
// their switch locks are gone.
class LockManager final : public Reconcilable {
 public:
  // `switch_domain` may be null (a board without a lock engine): every file then lives in
  // the software domain. `software_dir` holds the software domain's journal.
  LockManager(std::unique_ptr<LockDomain> switch_domain, const std::string& software_dir,
              const LocksConfig& config);
  ~LockManager() override;
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // As given at construction (the services read their own keys of it: locks.batch_*).
  const LocksConfig& config() const { return config_; }
  // SIGHUP (config_reload.hpp): the limits that may change while asnd runs, the leases and
  // the quotas; the other fields of `config` are not read. A session keeps the lease it
  // opened with; a quota lowered below what a client holds refuses only its next request.
  void set_limits(const LocksConfig& config);

  std::string_view kind() const override { return "locks"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  // None: the lock tables hold sessions' grants, not a document asnd writes; a table a reset
  // emptied is the loss grace's (start_loss_grace()), one damaged is found at the start.
  std::string drift() override { return ""; }

  // asnd is stopping: every waiting Lock call finishes with UNAVAILABLE (its request is
  // withdrawn), and new calls are refused, so that the server's shutdown waits for none of
  // them. Sessions and held locks stay for the next start. Also done by the destructor.
  void stop();

  // A fabric's lock map (lock_manager_fabric.cc): from now on only files whose slot the map
  // gives this switch are locked here (nullopt: every file, as without a fabric). Slots it
  // no longer owns at the same epoch end their waits (FAILED_PRECONDITION, reason "moved")
  // and release their grants (the new owner waits them out); slots it gained grant nothing
  // for `takeover_grace`, the longest a grant of their earlier owner can live.
  void set_lock_map(std::optional<LockOwnership> map, std::chrono::milliseconds takeover_grace);
  // A member of a fabric grants and renews nothing until it has read the fabric's lock map
  // (or found it has none): its table may hold slots that moved while it was down.
  void await_lock_map(const std::string& fabric, const std::string& self);
  // The map in force (at `revision`) was read back from etcd as current by a linearizable
  // read sent at `sent`, whose header said the store's revision was `read_revision`:
  // sessions may be renewed and locks granted until `until`, and the tokens of grants embed
  // `read_revision` from now on. Past `until` (etcd out of reach) the switch grants and renews
  // nothing (UNAVAILABLE, reason "fenced"): an owner that can no longer learn of a move must
  // not outlive the grace its successor waits.
  void confirm_lock_map(int64_t revision, int64_t read_revision, LockClock::time_point until);
  // Whether the token counter has used half of what the revision its tokens embed allows
  // (2^23 less the room kept for locks.max_waiting waiting requests): the
  // fabric agent then writes to etcd, so that its next confirmation reads a newer revision
  // (lock_manager_fabric.cc, "the counter").
  bool tokens_need_revision() const;

  // `owner` names the client for people (logs, lists); `owner_key` is its verified
  // principal (SessionCaller::owner_key), empty on plain TCP. The session's id is random
  // (never 0), and so is its secret.
  // `quota_key`: whose quotas the session counts against (locks.max_*_per_principal); empty:
  // owner_key, or `owner` when that is empty too.
  OpenedSession open_session(const std::string& owner, const std::string& owner_key,
                             const std::string& name, uint32_t ttl_seconds,
                             const std::string& quota_key = {});
  // Throws unless `caller` may use the session: a secret it gives must be the session's
  // (compared in constant time); without one it must have a principal, and with a principal
  // it must be the session's owner. A caller that is not the owner is answered exactly as
  // for a session that was never opened (kFailedPrecondition, kReasonSessionGone, a message
  // naming no session), so that nobody can probe which ids are alive. The owner of a session
  // that ended lately (kept: kEndedSessionsKept, for kEndedSessionKeptFor) is told when and
  // how it ended.
  void check_owner(uint64_t session, const SessionCaller& caller) const;
  // Admin: ends the session as if it expired, its waits finishing with ABORTED, reason
  // "revoked". Throws kNotFound for a session that is not open. `who` is logged.
  SessionRevoked revoke_session(uint64_t session, const std::string& who);
  // Admin: releases `ranges` of the file from every session that holds some of them, each
  // what it holds; with `dry_run` only says what that would release. `who` is logged.
  LocksReleased release_locks(const std::string& file, const std::vector<locks::ByteRange>& ranges,
                              bool dry_run, const std::string& who);

  // Renews the lease; says whether this call re-attached the session after a restart and
  // whether the session's switch locks were lost. `reclaim_complete`: the session reclaimed
  // what it wanted of them (or gives them up); it no longer holds the loss grace open.
  // `held`: the tokens of the grants the session holds, as its client received them: after a
  // restart (KeptAlive::confirm_held) the grants of the earlier asnd not among them are
  // released, and the session may lock again. Null: nothing said.
  KeptAlive keep_alive(uint64_t session, bool reclaim_complete = false,
                       const std::vector<locks::Token>* held = nullptr);
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
  // Releases a grant (`token`) that never reached its caller, if the session still holds
  // those bytes under that token. Never throws (it runs in gRPC callbacks).
  void give_back(uint64_t session, const std::string& file,
                 const std::vector<locks::ByteRange>& ranges, locks::Token token);
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
  static constexpr size_t kMaxDomains = 2;  // the switch and the software domain

  void recover();
  void note_restored(int domain, const std::string& file, const locks::HeldLock& held);
  // By the public id; null when it is not open.
  Session* find_session(uint64_t public_id) const;
  uint64_t new_public_id() const;
  // Renews the lease. `lost_ok`: the call may be made while the session's switch locks are
  // lost and it has not said reclaim_complete (else kFailedPrecondition, kReasonLocksLost).
  Session& session_or_throw(uint64_t session, LockClock::time_point now, bool lost_ok = false);
  void touch(Session& session, LockClock::time_point now);
  int place(const std::string& file, bool& fresh);
  int domain_index(std::string_view name) const;
  UnlockDone carve(uint64_t session, const std::string& file, const locks::RangeSpec& ranges,
                   bool downgrade);
  uint64_t enqueue(Session& session, int domain, locks::RequestId request, const std::string& file,
                   size_t entries, std::optional<LockClock::time_point> deadline, LockDone done,
                   Finished& finished);
  void apply(int domain, const locks::Change& change, Finished& finished);
  void release_orphan(int domain, const locks::Grant& grant, Finished& finished);
  // The session said which grants it holds (keep_alive()): releases those of the earlier asnd
  // it did not name. Returns how many.
  uint64_t release_unconfirmed(Session& session, const std::vector<locks::Token>& held,
                               Finished& finished);
  bool release_grant(int domain, locks::SessionId sid, const std::string& file, locks::Token token,
                     Finished& finished);
  // Withdraws the requests of each domain (indexed as domains_) whose calls are finished.
  void withdraw_locked(const std::vector<std::vector<locks::RequestId>>& by_domain,
                       Finished& finished);
  void finish_waiter(const WaitKey& key, LockResult result, Finished& finished);
  // Ends the session; `how` ("its lease expired", ...) is for its owner's next call.
  uint64_t expire_locked(uint64_t session, const Error& why, std::string how, Finished& finished);
  locks::SessionId domain_session(const Session& session, int domain) const;
  // A domain's refusal as the client hears it: the sessions its message names by the
  // domain's ids named by their public ids.
  Error client_error(int domain, const locks::LockError& e) const;
  void prune_placement();
  // Fencing tokens grow per file across tables (tokens.cc in lock_manager_start.cc).
  void align_token_floors(locks::Token floor);
  void catch_up_tokens(int domain);
  void note_token(int domain, locks::Token token);
  // The parked switch domain became usable (a board reset formatted its table): use it.
  void unpark_switch();
  // The switch's table lost its locks (board reset; found empty at start): every session
  // whose switch half is not in `surviving` (null: none is) may have held some, and gets a
  // new switch half. `files`: the files the switch held; `every_file`: not known, every
  // file not in the software domain.
  void start_loss_grace(const std::set<std::string, std::less<>>& files, bool every_file,
                        const std::set<locks::SessionId>* surviving, Finished& finished);
  bool in_loss_grace(LockClock::time_point now);
  // The loss grace survives an asnd restart (it is in memory, the leases it waits for are
  // not): kept in `loss_file_`, written whole when it starts, a line appended as each
  // session leaves it, removed when it ends.
  void save_loss_grace();
  void load_loss_grace();
  void left_loss_grace(uint64_t session);
  // Whether the loss grace withholds `file` from requests that are not reclaims.
  bool withheld(const std::string& file, LockClock::time_point now);
  void open_switch_half(Session& session);
  // The manager session a switch session's label names ("session N"), if any.
  static std::optional<uint64_t> switch_half_owner(std::string_view label);
  void timer_loop();
  // Throws unless the lock map (if any) lets this switch lock `file` now.
  void check_lock_map(const std::string& file, LockClock::time_point now) const;
  // Throws kReasonFenced when a lock map is in force and not confirmed lately.
  void check_fence(LockClock::time_point now) const;
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
  // By the software domain's session id; clients know each by its random public id.
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;
  std::map<uint64_t, uint64_t> by_public_id_;  // public id -> software domain's id
  // Sessions that ended lately, by public id, with who owned them: check_owner() tells their
  // owner how they ended, and nobody else. The oldest first in ended_order_.
  struct EndedSession {
    std::string owner_key;
    std::string secret_sha256;
    std::string how;
    LockClock::time_point at{};
    std::chrono::system_clock::time_point wall{};
  };
  std::map<uint64_t, EndedSession> ended_;
  std::deque<uint64_t> ended_order_;
  void remember_ended(const Session& session, std::string how);
  // What a call on ended session `id` (public) is told: when and how it ended.
  Error ended_error(uint64_t id) const;
  std::map<locks::SessionId, uint64_t> by_switch_session_;
  std::set<std::pair<LockClock::time_point, uint64_t>> leases_;  // expiry, session
  std::map<WaitKey, std::unique_ptr<Waiter>> waiters_;
  std::set<std::pair<LockClock::time_point, WaitKey>> wait_deadlines_;
  std::map<uint64_t, WaitKey> calls_;  // handle -> waiting request
  uint64_t next_call_ = 1;
  std::map<std::string, int, std::less<>> placement_;  // file -> domain
  size_t placement_pruned_at_ = 0;
  LockClock::time_point grace_until_{};
  // The fabric's lock map (set_lock_map): per slot, the index of its range in lock_map_ (-1:
  // no owner), and until when a slot this switch gained grants nothing.
  struct SlotState {
    int32_t range = -1;
    uint64_t epoch = 0;
    LockClock::time_point serve_from{};
  };
  std::optional<LockOwnership> lock_map_;
  std::vector<SlotState> slots_;
  // What a new map makes of each slot: its state, whether it is lost here (its locks to be
  // dropped), and whether any was gained.
  struct SlotPlan {
    std::vector<SlotState> slots;
    std::vector<bool> lost;
    bool gained = false;
    uint32_t owned = 0;
  };
  SlotPlan plan_slots(const std::optional<LockOwnership>& map,
                      std::chrono::milliseconds takeover_grace, LockClock::time_point now) const;
  // The slot epochs this switch serves, kept in `slots_file_` so that they outlive an asnd
  // restart: the first map after a start drops the table's grants on every slot whose epoch
  // is not the one recorded (it moved away and back while asnd was down). Read at the start
  // (`served_before_`, nullopt: no record, the table was granted without a map), written on
  // every map: first with the slots being dropped at 0, and again once their grants are gone,
  // so that a crash in between drops them again at the next start.
  struct ServedEpochs {
    std::string fabric;
    std::string self;
    std::vector<uint64_t> epochs;  // per slot; 0: not served
  };
  std::optional<ServedEpochs> served_before_;
  std::string slots_file_;
  void load_served_epochs();
  void save_served_epochs(const std::vector<bool>& dropping);
  const std::string& owner_of(const SlotState& slot) const;
  std::vector<std::string> drop_slots(const std::vector<bool>& lost, Finished& finished);
  LockClock::time_point map_valid_until_{};
  // The newest etcd revision at which the map in force was known current (0: none yet): the
  // tokens granted embed it, and stay below fabric_token_floor(token_revision_ + 1).
  int64_t token_revision_ = 0;
  void raise_token_revision(int64_t revision);
  // Throws kReasonFenced when a grant in `domain` now could, with the grants its waiting
  // requests may get later, reach the next revision's tokens.
  void check_token_budget(int domain) const;
  // The tokens that may be granted later without passing check_token_budget() again.
  locks::Token token_margin() const;
  // The loss grace (class comment): the sessions that may still hold lost switch locks and
  // have not reclaimed, the files withheld from others, and when every lease alive at the
  // loss has run out.
  struct LossGrace {
    LockClock::time_point until{};
    std::set<uint64_t> sessions;
    std::set<std::string, std::less<>> files;
    bool every_file = false;
  };
  LossGrace loss_;
  SessionCounters counters_;
  // Quotas (lock_manager_quotas.cc): what each principal uses of them.
  struct PrincipalUse {
    std::set<uint64_t> sessions;  // open, by the software domain's id
    size_t waiting = 0;           // Lock calls waiting
    // Per domain: its sessions' held bounds and waiting entries (Session::held_bound).
    std::array<size_t, kMaxDomains> entries{};
  };
  std::map<std::string, PrincipalUse, std::less<>> use_;
  PrincipalUse& use_of(const Session& session);
  void check_session_quota(const std::string& principal) const;
  void count_session(Session& session, int delta);
  // Why one more waiting call of the session is over a quota (or locks.max_waiting).
  std::optional<Error> over_waiting_quota(const Session& session) const;
  void count_waiting(const Waiter& waiter, int domain, int delta);
  // Throws kResourceExhausted naming the quota unless `need` more entries in `domain` keep the
  // session and its principal within their entry quotas, by the exact counts (read from the
  // domains) where the bounds do not tell. `what` needs them, for the message.
  void check_entries(Session& session, int domain, size_t need, std::string_view what);
  bool entries_fit(const Session& session, int domain, size_t need, std::string* why);
  // Whether the principal has `need` entries left of its share of the switch's table; over
  // it, a new file goes to the software domain instead (first fit).
  bool switch_share_left(Session& session, size_t need);
  void add_held(Session& session, int domain, size_t entries);
  // A release of the domain session's: its held entries may be fewer (or, by a cut, more)
  // than its bound says.
  void mark_changed(int domain, locks::SessionId domain_session);
  void read_held(Session& session);
  // What an unlock (or downgrade) of `ranges` adds to the session's entries by cutting its
  // locks in two, from the file's listing (exact for an unlock, a bound for a downgrade).
  ptrdiff_t split_entries(int domain, locks::SessionId sid, const std::string& file,
                          const locks::RangeSpec& ranges, bool downgrade);
  std::string loss_file_;
  std::thread timer_;
};

}  // namespace asn

// The lock table both lock domains share (issue 9): byte-range locks on files, granted to
// sessions, as the switch of 004 L1226 keeps them "in the local memory of the active
// switch". Pure and single-threaded: the caller (the lock engine model, asnd's software
// domain) serialises calls and owns time (leases), names and transport.
//
// Rules:
// - A request names a file (an opaque id, 1..128 bytes), shared or exclusive mode, and its
//   ranges as a list or a strided pattern (range.hpp). All its ranges are granted together,
//   with one fencing token, or none is: a request never holds part of what it asked for.
// - Conflict: two locks of different sessions on overlapping bytes, at least one exclusive.
//   A session's own locks never conflict with its new requests (as POSIX and OFD locks,
//   whose owner's locks never block it). Unlike POSIX, a grant does not replace or merge
//   with the session's earlier locks on the same bytes: each grant keeps its own entries,
//   request id and token, so a token always names exactly the bytes it was granted for.
//   release() removes all of the session's locks on the bytes it names. An upgrade is a new
//   exclusive request over the session's shared lock; it waits for the other sharers.
// - FIFO per conflict (Lustre LDLM, etcd): a request that conflicts with an earlier waiting
//   request waits behind it (or fails at once in try mode) even where the held locks would
//   allow it; a request that conflicts with no earlier waiter is not held back by them.
// - Grants after a release (downgrade, cancel, expiry) are issued in file-offset order, by
//   each request's first range, and take their tokens in that order (004 L1226: the request
//   "is loaded to the wait-request-queue and the lock is issued in order according to the
//   availability ... in the order of file offset", the order two-phase locking imposes,
//   004 L1202). As every request is granted whole, a waiter holds nothing of what it
//   waits for, so the table itself forms no deadlock. A session that holds locks and then
//   waits for more (an upgrade, or locking in two requests) can deadlock with another doing
//   the same, as with OFD locks, which detect no deadlock either: use try mode, cancel() or
//   a lease.
// - Fencing: every grant carries a token from one table-wide counter, so tokens increase
//   per file (and across files, as etcd's revision does). A lock keeps its token when it
//   is split by a partial release or downgraded.
// - Sessions are opened by the table and end by expire() (the lease ran out, or the client
//   closed): all their locks are released and their waiters cancelled in the same call,
//   so a waiter of an ended session is never granted. A request or unlock of a session
//   that is not open is refused.
// - Capacity: a fixed number of entries. An entry is a held range or a waiting range (the
//   switch's lock table keeps waiters in its entries too: lock_table.waiting). A request
//   that would exceed the capacity is refused as table full with nothing granted or
//   queued; a partial release or downgrade that splits a lock needs the extra entry and is
//   refused the same way when there is none (as fcntl fails with ENOLCK).
// - Every refused operation changes nothing.
//
// Costs: conflict checks walk an interval index per file (disjoint segments in a std::map by
// offset) in O(log n + k) per range, n the entries of the file and k those overlapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/locks/error.hpp"
#include "asn/locks/range.hpp"

namespace asn::locks {

using SessionId = uint64_t;
using RequestId = uint64_t;
using Token = uint64_t;

// The longest file id a request may name.
inline constexpr size_t kMaxFileIdBytes = 128;
// The longest label a session may carry (open_session()).
inline constexpr size_t kMaxSessionLabelBytes = 1024;
// Entries of a table unless configured: the LOCK table of the largest board (lock_entries).
inline constexpr size_t kDefaultCapacity = 16384;

struct TableLimits {
  size_t capacity = kDefaultCapacity;     // entries: held ranges plus waiting ranges
  size_t max_ranges = kDefaultMaxRanges;  // ranges (or strided blocks) per request
};

enum class Wait : uint8_t {
  kBlock,  // queue behind the conflict
  kTry,    // fail at once on a conflict
};

struct Request {
  SessionId session = 0;
  std::string file;  // opaque, 1..kMaxFileIdBytes bytes
  Mode mode = Mode::kShared;
  RangeSpec ranges;
  Wait wait = Wait::kBlock;
};

// A granted request: all its ranges, in file-offset order, under one token.
struct Grant {
  RequestId request = 0;
  SessionId session = 0;
  std::string file;
  Mode mode = Mode::kShared;
  Token token = 0;
  std::vector<ByteRange> ranges;
};

enum class Status : uint8_t {
  kGranted,    // grant holds the lock
  kQueued,     // waiting; granted later by release(), downgrade(), cancel() or expire()
  kConflict,   // try mode and a conflict (held, or an earlier waiter): nothing changed
  kTableFull,  // no room for the request's entries: nothing changed
  kInvalid,    // a bad request or a session that is not open: nothing changed
};

// "granted", "queued", "conflict", "table full", "invalid".
std::string_view name(Status status);

struct Outcome {
  Status status = Status::kInvalid;
  RequestId request = 0;           // granted or queued: the request's id (0 if refused)
  std::optional<Grant> grant;      // granted
  std::optional<LockError> error;  // refused: what and why (the conflict, the range, ...)
};

// What a release, downgrade, cancel or expiry did.
struct Change {
  std::optional<LockError> error;    // refused: nothing changed
  std::vector<Grant> granted;        // waiters granted by the change: by file id, then in
                                     // file-offset order (the order of their tokens)
  std::vector<RequestId> cancelled;  // waiting requests withdrawn (cancel, expire), by id
  size_t released = 0;               // held entries removed (a split lock counts once)

  bool ok() const { return !error.has_value(); }
};

// One held entry, as list() shows it.
struct HeldLock {
  SessionId session = 0;
  RequestId request = 0;
  Mode mode = Mode::kShared;
  Token token = 0;
  ByteRange range;

  friend bool operator==(const HeldLock&, const HeldLock&) = default;
};

struct WaitingRequest {
  RequestId request = 0;
  SessionId session = 0;
  Mode mode = Mode::kShared;
  std::vector<ByteRange> ranges;  // file-offset order
};

struct FileLocks {
  std::vector<HeldLock> held;           // by offset, then end, then token
  std::vector<WaitingRequest> waiting;  // FIFO
};

struct Stats {
  size_t capacity = 0;
  size_t entries_in_use = 0;  // held_entries + waiting_entries
  size_t held_entries = 0;
  size_t waiting_entries = 0;
  size_t waiting_requests = 0;
  size_t files = 0;     // files with a held or waiting entry
  size_t sessions = 0;  // open sessions
  // Counters since the table was made (the lock block's registers count the same events).
  uint64_t grants = 0;      // requests granted, at once or after waiting
  uint64_t queued = 0;      // requests that waited
  uint64_t releases = 0;    // release() calls that released something
  uint64_t table_full = 0;  // requests refused for want of entries
  uint64_t conflicts = 0;   // try-mode requests refused on a conflict
  uint64_t cancelled = 0;   // waiting requests withdrawn by cancel() or expire()
  uint64_t expired = 0;     // sessions ended by expire()
};

// An open session, as sessions() shows it.
struct SessionInfo {
  SessionId id = 0;
  std::string label;        // as given to open_session()
  size_t held_entries = 0;  // entries it holds
  size_t waiting_requests = 0;

  friend bool operator==(const SessionInfo&, const SessionInfo&) = default;
};

class DurableTable;

class LockTable {
 public:
  explicit LockTable(TableLimits limits = {});
  ~LockTable();
  LockTable(LockTable&&) noexcept;
  LockTable& operator=(LockTable&&) noexcept;

  // A new session, open until expire(); ids count up from 1 and are never reused. The label
  // (at most kMaxSessionLabelBytes: a longer one throws LockError kInvalidArgument and opens
  // nothing) is kept with the session and in save()'s snapshot: the owner and its lease.
  SessionId open_session(std::string_view label = {});

  // Grants the request, queues it, or refuses it (see Status).
  Outcome request(const Request& request);

  // Releases the session's locks on the bytes of `ranges` (validated as a request's ranges),
  // splitting a lock that covers more. Every byte named must be held by the session (by
  // any of its locks, in any mode): otherwise (a double unlock) a failed-precondition error
  // names the first byte range not held, and nothing changes.
  Change release(SessionId session, std::string_view file, const RangeSpec& ranges);

  // Turns the session's exclusive locks on the bytes of `ranges` into shared ones in place
  // (same request, same token), splitting a lock that covers more, and grants the waiters
  // this lets through. Every byte named must be held exclusively by the session.
  Change downgrade(SessionId session, std::string_view file, const RangeSpec& ranges);

  // Withdraws a waiting request; the requests waiting behind it may be granted. A request
  // that is not waiting (granted, refused, already cancelled) is an error.
  Change cancel(RequestId request);

  // Withdraws many waiting requests at once (a client's stream ended, asnd stops or starts):
  // the result is the one cancel() of each, latest first, gives (so that no withdrawal
  // grants another of them), except that the grants it lets through are issued together, by
  // file id and then in file-offset order, as one change's. Costs O(r log r) for r requests
  // plus the index entries under their ranges, where r cancel() calls could each look at
  // every waiter of the bytes. Every id must be waiting (an id given twice counts once):
  // otherwise cancel()'s error for the first that is not, and nothing changes. `cancelled`
  // lists them in increasing order.
  Change withdraw(std::span<const RequestId> requests);

  // Ends a session: releases all its locks, cancels its waiters (in `cancelled`) and
  // grants the waiters of other sessions this lets through.
  Change expire(SessionId session);

  // Makes every later grant's fencing token at least `floor`; returns the token the next
  // grant gets. Tokens grow per table; asnd raises the floor when a table is new (a board
  // reset emptied the switch's) and when a file changes tables, so that a file's tokens grow
  // across tables too (lock_manager_start.cc).
  Token raise_token_floor(Token floor);
  Token next_token() const;

  // The held locks and the waiters of a file (empty for a file nobody locks).
  FileLocks list(std::string_view file) const;

  Stats stats() const;
  const TableLimits& limits() const;

  // The open sessions, by id.
  std::vector<SessionInfo> sessions() const;
  // One open session (nullopt: not open), without listing the others.
  std::optional<SessionInfo> session(SessionId id) const;

  // The files with a held or waiting entry, in byte order of their ids, strictly after
  // `after` (empty: from the first), at most `limit` of them: a page of a listing.
  std::vector<std::string> files(std::string_view after, size_t limit) const;

  // A snapshot of the whole state: the sessions with their labels, the held entries, the
  // waiters in FIFO order, the next session, request and token ids and the counters of
  // stats(), with the limits it had (for information). Versioned and checksummed. The
  // same state gives the same bytes.
  std::vector<uint8_t> save() const;

  // The table of a snapshot, under `limits` (the capacity may differ from the saved one if
  // the state fits it): it behaves as the saved table would for any sequence of operations
  // that follows (the same ids, tokens, grants in the same order, errors and counters).
  // Throws LockError kInvalidArgument naming what is wrong for bytes that are not a
  // snapshot this build reads (magic, version, checksum, truncation) or that describe an
  // impossible state (conflicting held entries, a lock of a session not open, more entries
  // than `limits.capacity`, ...). Counts are checked against the bytes left before anything
  // is allocated for them.
  static LockTable load(std::span<const uint8_t> bytes, TableLimits limits);

 private:
  friend class DurableTable;  // checks a request as request() would before logging it
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace asn::locks

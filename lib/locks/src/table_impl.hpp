// The inside of LockTable: the entries, the per-file interval indexes, the waiters and the
// sessions. lock_table.cc has requests, queries and the bookkeeping; lock_table_change.cc
// has what frees bytes (release, downgrade, cancel, expire) and the grants that follow.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "asn/locks/lock_table.hpp"
#include "segment_index.hpp"

namespace asn::locks {

struct FileState;

// A held range: one entry of the table. Free slots have session 0.
struct Entry {
  uint64_t first = 0;  // inclusive
  uint64_t last = 0;   // inclusive
  SessionId session = 0;
  RequestId request = 0;
  Token token = 0;
  FileState* file = nullptr;
  Mode mode = Mode::kShared;
};

// A waiting request; each of its ranges is an entry of the table too.
struct Waiter {
  RequestId id = 0;
  SessionId session = 0;
  FileState* file = nullptr;
  Mode mode = Mode::kShared;
  std::vector<ByteRange> ranges;  // file-offset order
};

// Shared never conflicts with shared, so a shared request looks only at the exclusive
// indexes: it never walks the shared holders and waiters, which may be many on one range
// (granting W shared waiters at once would otherwise cost O(W^2)).
struct FileState {
  std::string name;
  detail::SegmentIndex held;               // entry ids (slot + 1)
  detail::SegmentIndex held_exclusive;     // the exclusive entries of `held`
  detail::SegmentIndex waiting;            // waiting request ids
  detail::SegmentIndex waiting_exclusive;  // the exclusive requests of `waiting`
  std::set<RequestId> waiters;             // FIFO: request ids count up

  // The indexes a request of mode `mode` can conflict with.
  const detail::SegmentIndex& held_for(Mode mode) const {
    return mode == Mode::kShared ? held_exclusive : held;
  }
  const detail::SegmentIndex& waiting_for(Mode mode) const {
    return mode == Mode::kShared ? waiting_exclusive : waiting;
  }
};

struct SessionState {
  std::string label;
  std::unordered_set<uint64_t> entries;
  std::set<RequestId> waiters;
};

// Bytes [first, last] whose locks changed: the waiters overlapping them may now be granted.
struct Span {
  uint64_t first = 0;
  uint64_t last = 0;
};

// What keeps a request from being granted: a held entry or an earlier waiter (one is set),
// found for the request's range `range` (an index into the sorted ranges).
struct Blocker {
  size_t range = 0;
  uint64_t entry = 0;
  RequestId waiter = 0;
};

namespace detail {
// The limits a snapshot (LockTable::save()) was saved with; throws as LockTable::load().
TableLimits snapshot_limits(std::span<const uint8_t> bytes);

// A request's outcome when it is refused with `status` for `error`.
inline Outcome refused(Status status, LockError error) {
  Outcome out;
  out.status = status;
  out.error = std::move(error);
  return out;
}
}  // namespace detail

inline constexpr RequestId kAnyWaiter = ~RequestId{0};

class LockTable::Impl {
 public:
  explicit Impl(TableLimits limits) : limits_(limits) {}

  SessionId open_session(std::string_view label);
  Outcome request(const Request& request);
  // request() for a request precheck() accepted (DurableTable checks before it logs).
  Outcome request_checked(const Request& request);
  Change release(SessionId session, std::string_view file, const RangeSpec& ranges,
                 bool checked = false) {
    return carve(session, file, ranges, false, checked);
  }
  Change downgrade(SessionId session, std::string_view file, const RangeSpec& ranges,
                   bool checked = false) {
    return carve(session, file, ranges, true, checked);
  }
  Change cancel(RequestId request);
  Change withdraw(std::span<const RequestId> requests);
  Change expire(SessionId session);
  FileLocks list(std::string_view file) const;
  Stats stats() const;
  Token raise_token_floor(Token floor) {
    next_token_ = std::max(next_token_, floor);
    return next_token_;
  }
  Token next_token() const { return next_token_; }
  const TableLimits& limits() const { return limits_; }
  std::vector<SessionInfo> sessions() const;
  std::optional<SessionInfo> session(SessionId id) const;
  std::vector<std::string> files(std::string_view after, size_t limit) const;

  // snapshot.cc
  std::vector<uint8_t> save() const;
  static std::unique_ptr<Impl> load(std::span<const uint8_t> bytes, TableLimits limits);

  // The errors that refuse an operation before it looks at any lock, so that it changes
  // nothing, counters included (what DurableTable need not log): request()'s kInvalid,
  // release() and downgrade()'s checks of the file, session and ranges, cancel() and
  // expire()'s only errors.
  static std::optional<LockError> check_label(std::string_view label);
  std::optional<LockError> precheck(const Request& request) const;
  std::optional<LockError> precheck(SessionId session, std::string_view file,
                                    const RangeSpec& ranges) const;
  std::optional<LockError> precheck_cancel(RequestId request) const;
  // `requests` sorted, without repeats.
  std::optional<LockError> precheck_withdraw(std::span<const RequestId> requests) const;
  std::optional<LockError> precheck_expire(SessionId session) const;

 private:
  // lock_table.cc
  std::optional<LockError> check_file(std::string_view file) const;
  std::optional<LockError> check_session(SessionId session) const;
  size_t entries_in_use() const { return held_ + waiting_entries_; }
  size_t entries_free() const;
  LockError table_full(size_t needed, std::string_view what) const;
  FileState* find_file(std::string_view file) const;
  FileState& file_state(std::string_view file);
  void drop_if_empty(FileState* file);
  uint64_t held_conflict(const FileState& file, SessionId session, Mode mode, uint64_t first,
                         uint64_t last) const;
  RequestId waiting_conflict(const FileState& file, SessionId session, Mode mode, uint64_t first,
                             uint64_t last, RequestId before) const;
  std::optional<Blocker> first_conflict(const FileState& file, SessionId session, Mode mode,
                                        std::span<const ByteRange> ranges, RequestId before) const;
  // Whether anything keeps waiter `w` waiting: first_conflict() without naming the blocker,
  // so it stops at the first conflict it sees (pump() asks it of every candidate).
  bool blocked(const FileState& file, const Waiter& w) const;
  LockError conflict_error(const Blocker& blocker, const Request& request,
                           std::span<const ByteRange> ranges) const;
  uint64_t add_entry(const Entry& entry);
  Entry remove_entry(uint64_t id);
  std::vector<uint64_t> hold(FileState& file, const Waiter& request, Token token);
  void enqueue(Waiter waiter);
  Waiter dequeue(RequestId id);

  // lock_table_change.cc
  Change carve(SessionId session, std::string_view file, const RangeSpec& ranges, bool downgrade,
               bool checked);
  // The first bytes of [first, last] the session does not hold (exclusively, if asked).
  std::optional<Span> first_gap(const FileState* file, SessionId session, uint64_t first,
                                uint64_t last, bool exclusive) const;
  std::optional<LockError> check_held(const FileState* file, SessionId session,
                                      std::span<const ByteRange> ranges, bool exclusive,
                                      std::string_view name) const;
  std::vector<uint64_t> session_entries(const FileState& file, SessionId session,
                                        std::span<const ByteRange> ranges, bool exclusive) const;
  // Grants the waiters above `above` (request ids) overlapping `changed` that nothing blocks
  // now. A withdrawal of waiters only can let through none of those before the earliest one
  // withdrawn (a waiter waits for no later one), so it passes that id and the rest are not
  // looked at.
  std::vector<Grant> pump(FileState& file, const std::vector<Span>& changed, RequestId above = 0);
  // What a change freed in one file.
  struct Freed {
    FileState* file = nullptr;
    std::vector<Span> spans;
    RequestId above = 0;  // pump()'s: 0 once held bytes were freed in it
  };
  using FreedFiles = std::map<std::string_view, Freed>;  // by file id
  // Takes the waiting requests `ids` (sorted, each waiting) out of the table in one pass per
  // file (SegmentIndex::remove_all), adding what they freed to `freed`.
  void dequeue_all(std::span<const RequestId> ids, FreedFiles& freed);
  // pump() of every file of `freed`, the grants appended to `out` by file id; drops the files
  // left empty.
  void pump_all(FreedFiles& freed, Change& out);

  TableLimits limits_;
  std::vector<Entry> entries_;  // entry id = index + 1; at most limits_.capacity
  std::vector<uint64_t> free_;  // free entry ids
  std::map<std::string, std::unique_ptr<FileState>, std::less<>> files_;
  std::unordered_map<RequestId, Waiter> waiters_;
  std::unordered_map<SessionId, SessionState> sessions_;
  SessionId next_session_ = 1;
  RequestId next_request_ = 1;
  Token next_token_ = 1;
  size_t held_ = 0;
  size_t waiting_entries_ = 0;
  Stats counters_;
};

}  // namespace asn::locks

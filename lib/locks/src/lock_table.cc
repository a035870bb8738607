// Requests, queries and the bookkeeping of the lock table (the rules are in lock_table.hpp).
#include "asn/locks/lock_table.hpp"

#include <algorithm>

#include "format.hpp"
#include "table_impl.hpp"

namespace asn::locks {
namespace {

using detail::cat;
using detail::quote;

// An entry lies within one request's range, so its length fits 64 bits.
std::string describe(const Entry& e) { return to_string(ByteRange{e.first, e.last - e.first + 1}); }

// The index of `range` in the request as the client wrote it.
size_t index_in(const RangeSpec& spec, const ByteRange& range) {
  if (const auto* s = std::get_if<Strided>(&spec)) {
    return s->count > 1 ? static_cast<size_t>((range.offset - s->offset) / s->stride) : 0;
  }
  const auto& list = std::get<std::vector<ByteRange>>(spec);
  return static_cast<size_t>(std::find(list.begin(), list.end(), range) - list.begin());
}

}  // namespace

std::string_view name(Status status) {
  switch (status) {
    case Status::kGranted:
      return "granted";
    case Status::kQueued:
      return "queued";
    case Status::kConflict:
      return "conflict";
    case Status::kTableFull:
      return "table full";
    case Status::kInvalid:
      return "invalid";
  }
  return "unknown";
}

// ---- checks and bookkeeping ------------------------------------------------------------

std::optional<LockError> LockTable::Impl::check_file(std::string_view file) const {
  if (file.empty()) {
    return LockError(
        ErrorKind::kInvalidArgument,
        cat("file id is empty: a file is named by an id of 1 to ", kMaxFileIdBytes, " bytes"));
  }
  if (file.size() > kMaxFileIdBytes) {
    return LockError(ErrorKind::kInvalidArgument,
                     cat("file id ", quote(file), " is ", file.size(), " bytes; at most ",
                         kMaxFileIdBytes, " are accepted"));
  }
  return std::nullopt;
}

std::optional<LockError> LockTable::Impl::check_session(SessionId session) const {
  if (sessions_.contains(session)) return std::nullopt;
  if (session != 0 && session < next_session_) {
    return LockError(ErrorKind::kFailedPrecondition,
                     cat("session ", session,
                         " has ended (expired or closed): its locks were released and its "
                         "requests cancelled; open a new session"));
  }
  return LockError(ErrorKind::kNotFound, cat("session ", session, " was never opened"));
}

size_t LockTable::Impl::entries_free() const {
  return limits_.capacity > entries_in_use() ? limits_.capacity - entries_in_use() : 0;
}

LockError LockTable::Impl::table_full(size_t needed, std::string_view what) const {
  return LockError(ErrorKind::kResourceExhausted,
                   cat("table full: ", what, " needs ", needed, needed == 1 ? " entry" : " entries",
                       "; ", entries_free(), " of ", limits_.capacity, " are free (", held_,
                       " held, ", waiting_entries_, " waiting); nothing changed"));
}

FileState* LockTable::Impl::find_file(std::string_view file) const {
  auto it = files_.find(file);
  return it == files_.end() ? nullptr : it->second.get();
}

FileState& LockTable::Impl::file_state(std::string_view file) {
  auto it = files_.find(file);
  if (it != files_.end()) return *it->second;
  auto state = std::make_unique<FileState>();
  state->name = std::string(file);
  FileState& out = *state;
  files_.emplace(out.name, std::move(state));
  return out;
}

void LockTable::Impl::drop_if_empty(FileState* file) {
  if (file == nullptr || !file->held.empty() || !file->waiting.empty()) return;
  files_.erase(files_.find(file->name));
}

uint64_t LockTable::Impl::add_entry(const Entry& entry) {
  uint64_t id;
  if (free_.empty()) {
    entries_.push_back(entry);
    id = entries_.size();
  } else {
    id = free_.back();
    free_.pop_back();
    entries_[id - 1] = entry;
  }
  entry.file->held.add(entry.first, entry.last, id);
  if (entry.mode == Mode::kExclusive) entry.file->held_exclusive.add(entry.first, entry.last, id);
  sessions_.at(entry.session).entries.insert(id);
  ++held_;
  return id;
}

Entry LockTable::Impl::remove_entry(uint64_t id) {
  Entry entry = entries_[id - 1];
  entry.file->held.remove(entry.first, entry.last, id);
  if (entry.mode == Mode::kExclusive) {
    entry.file->held_exclusive.remove(entry.first, entry.last, id);
  }
  if (auto it = sessions_.find(entry.session); it != sessions_.end()) {
    it->second.entries.erase(id);
  }
  entries_[id - 1] = Entry{};
  free_.push_back(id);
  --held_;
  return entry;
}

std::vector<uint64_t> LockTable::Impl::hold(FileState& file, const Waiter& request, Token token) {
  std::vector<uint64_t> ids;
  ids.reserve(request.ranges.size());
  for (const ByteRange& r : request.ranges) {
    ids.push_back(add_entry(
        Entry{r.offset, r.last(), request.session, request.id, token, &file, request.mode}));
  }
  return ids;
}

void LockTable::Impl::enqueue(Waiter waiter) {
  const bool exclusive = waiter.mode == Mode::kExclusive;
  for (const ByteRange& r : waiter.ranges) {
    waiter.file->waiting.add(r.offset, r.last(), waiter.id);
    if (exclusive) waiter.file->waiting_exclusive.add(r.offset, r.last(), waiter.id);
  }
  waiter.file->waiters.insert(waiter.id);
  sessions_.at(waiter.session).waiters.insert(waiter.id);
  waiting_entries_ += waiter.ranges.size();
  RequestId id = waiter.id;
  waiters_.emplace(id, std::move(waiter));
}

Waiter LockTable::Impl::dequeue(RequestId id) {
  auto it = waiters_.find(id);
  Waiter waiter = std::move(it->second);
  waiters_.erase(it);
  const bool exclusive = waiter.mode == Mode::kExclusive;
  for (const ByteRange& r : waiter.ranges) {
    waiter.file->waiting.remove(r.offset, r.last(), id);
    if (exclusive) waiter.file->waiting_exclusive.remove(r.offset, r.last(), id);
  }
  waiter.file->waiters.erase(id);
  if (auto s = sessions_.find(waiter.session); s != sessions_.end()) s->second.waiters.erase(id);
  waiting_entries_ -= waiter.ranges.size();
  return waiter;
}

// ---- conflicts ---------------------------------------------------------------------------

uint64_t LockTable::Impl::held_conflict(const FileState& file, SessionId session, Mode mode,
                                        uint64_t first, uint64_t last) const {
  // Of the conflicting entries of the first segment that has one, the one granted first
  // (the lowest token): the choice depends on the locks, not on the entry slots they took,
  // so a table restored from a snapshot names the same lock.
  uint64_t found = 0;
  file.held_for(mode).any(first, last, [&](uint64_t, uint64_t, const detail::IdSet& ids) {
    ids.any([&](uint64_t id) {
      const Entry& e = entries_[id - 1];
      if (e.session == session || compatible(mode, e.mode)) return false;
      if (found == 0 || e.token < entries_[found - 1].token) found = id;
      return false;
    });
    return found != 0;
  });
  return found;
}

RequestId LockTable::Impl::waiting_conflict(const FileState& file, SessionId session, Mode mode,
                                            uint64_t first, uint64_t last, RequestId before) const {
  // Of the first segment's conflicting waiters, the earliest (as for held_conflict()): the
  // ids come in increasing order, so the first that conflicts, and none from `before` on.
  RequestId found = 0;
  file.waiting_for(mode).any(first, last, [&](uint64_t, uint64_t, const detail::IdSet& ids) {
    ids.any([&](uint64_t id) {
      if (id >= before) return true;
      const Waiter& w = waiters_.at(id);
      if (w.session == session || compatible(mode, w.mode)) return false;
      found = id;
      return true;
    });
    return found != 0;
  });
  return found;
}

std::optional<Blocker> LockTable::Impl::first_conflict(const FileState& file, SessionId session,
                                                       Mode mode, std::span<const ByteRange> ranges,
                                                       RequestId before) const {
  for (size_t i = 0; i < ranges.size(); ++i) {
    uint64_t first = ranges[i].offset;
    uint64_t last = ranges[i].last();
    if (uint64_t entry = held_conflict(file, session, mode, first, last)) {
      return Blocker{i, entry, 0};
    }
    if (RequestId waiter = waiting_conflict(file, session, mode, first, last, before)) {
      return Blocker{i, 0, waiter};
    }
  }
  return std::nullopt;
}

bool LockTable::Impl::blocked(const FileState& file, const Waiter& w) const {
  const detail::SegmentIndex& held = file.held_for(w.mode);
  const detail::SegmentIndex& waiting = file.waiting_for(w.mode);
  auto conflicting_entry = [&](uint64_t id) {
    const Entry& e = entries_[id - 1];
    return e.session != w.session && !compatible(w.mode, e.mode);
  };
  for (const ByteRange& r : w.ranges) {
    if (held.any(r.offset, r.last(), [&](uint64_t, uint64_t, const detail::IdSet& ids) {
          return ids.any(conflicting_entry);
        })) {
      return true;
    }
    bool found = false;
    waiting.any(r.offset, r.last(), [&](uint64_t, uint64_t, const detail::IdSet& ids) {
      ids.any([&](uint64_t id) {
        if (id >= w.id) return true;  // only an earlier waiter counts
        const Waiter& other = waiters_.at(id);
        found = other.session != w.session && !compatible(w.mode, other.mode);
        return found;
      });
      return found;
    });
    if (found) return true;
  }
  return false;
}

LockError LockTable::Impl::conflict_error(const Blocker& blocker, const Request& request,
                                          std::span<const ByteRange> ranges) const {
  const ByteRange& range = ranges[blocker.range];
  size_t index = index_in(request.ranges, range);
  std::string what = cat("range ", index, " ", to_string(range), " of file ", quote(request.file),
                         " conflicts with ");
  if (blocker.entry != 0) {
    const Entry& e = entries_[blocker.entry - 1];
    what += cat("session ", e.session, "'s ", name(e.mode), " lock on ", describe(e), " (request ",
                e.request, ", token ", e.token, ")");
  } else {
    const Waiter& w = waiters_.at(blocker.waiter);
    what += cat("request ", w.id, " of session ", w.session, " (", name(w.mode),
                "), waiting before it: a request never overtakes an earlier conflicting "
                "waiter");
  }
  return LockError(ErrorKind::kFailedPrecondition, what + "; nothing was granted", index);
}

// ---- requests and queries ----------------------------------------------------------------

std::optional<LockError> LockTable::Impl::check_label(std::string_view label) {
  if (label.size() <= kMaxSessionLabelBytes) return std::nullopt;
  return LockError(ErrorKind::kInvalidArgument,
                   cat("session label is ", label.size(), " bytes; at most ", kMaxSessionLabelBytes,
                       " are accepted: no session was opened"));
}

std::optional<LockError> LockTable::Impl::precheck(const Request& r) const {
  if (auto error = check_file(r.file)) return error;
  if (auto error = check_session(r.session)) return error;
  return validate(r.ranges, limits_.max_ranges);
}

std::optional<LockError> LockTable::Impl::precheck(SessionId session, std::string_view file,
                                                   const RangeSpec& ranges) const {
  if (auto error = check_file(file)) return error;
  if (auto error = check_session(session)) return error;
  return validate(ranges, limits_.max_ranges);
}

SessionId LockTable::Impl::open_session(std::string_view label) {
  if (auto error = check_label(label)) throw *error;
  SessionId id = next_session_++;
  sessions_.emplace(id, SessionState{std::string(label), {}, {}});
  return id;
}

Outcome LockTable::Impl::request(const Request& r) {
  if (auto error = precheck(r)) return detail::refused(Status::kInvalid, *error);
  return request_checked(r);
}

Outcome LockTable::Impl::request_checked(const Request& r) {
  std::vector<ByteRange> ranges = sorted_ranges(r.ranges, limits_.max_ranges);
  std::optional<Blocker> blocker;
  if (const FileState* file = find_file(r.file)) {
    blocker = first_conflict(*file, r.session, r.mode, ranges, kAnyWaiter);
  }
  if (blocker && r.wait == Wait::kTry) {
    ++counters_.conflicts;
    return detail::refused(Status::kConflict, conflict_error(*blocker, r, ranges));
  }
  if (ranges.size() > entries_free()) {
    ++counters_.table_full;
    return detail::refused(Status::kTableFull, table_full(ranges.size(), "the request"));
  }
  FileState& file = file_state(r.file);
  Waiter waiter{next_request_++, r.session, &file, r.mode, std::move(ranges)};
  Outcome out;
  out.request = waiter.id;
  if (blocker) {
    ++counters_.queued;
    out.status = Status::kQueued;
    enqueue(std::move(waiter));
    return out;
  }
  ++counters_.grants;
  Token token = next_token_++;
  hold(file, waiter, token);
  out.status = Status::kGranted;
  out.grant = Grant{waiter.id, r.session, r.file, r.mode, token, std::move(waiter.ranges)};
  return out;
}

FileLocks LockTable::Impl::list(std::string_view name) const {
  FileLocks out;
  const FileState* file = find_file(name);
  if (file == nullptr) return out;
  file->held.any(0, detail::kLastByte, [&](uint64_t first, uint64_t, const detail::IdSet& ids) {
    ids.any([&](uint64_t id) {
      const Entry& e = entries_[id - 1];
      if (e.first == first) {  // an entry's first segment starts where it does
        out.held.push_back(
            {e.session, e.request, e.mode, e.token, {e.first, e.last - e.first + 1}});
      }
      return false;
    });
    return false;
  });
  std::sort(out.held.begin(), out.held.end(), [](const HeldLock& a, const HeldLock& b) {
    if (a.range.offset != b.range.offset) return a.range.offset < b.range.offset;
    if (a.range.end() != b.range.end()) return a.range.end() < b.range.end();
    return a.token < b.token;
  });
  for (RequestId id : file->waiters) {
    const Waiter& w = waiters_.at(id);
    out.waiting.push_back({w.id, w.session, w.mode, w.ranges});
  }
  return out;
}

Stats LockTable::Impl::stats() const {
  Stats out = counters_;
  out.capacity = limits_.capacity;
  out.entries_in_use = entries_in_use();
  out.held_entries = held_;
  out.waiting_entries = waiting_entries_;
  out.waiting_requests = waiters_.size();
  out.files = files_.size();
  out.sessions = sessions_.size();
  return out;
}

std::vector<SessionInfo> LockTable::Impl::sessions() const {
  std::vector<SessionInfo> out;
  out.reserve(sessions_.size());
  for (const auto& [id, state] : sessions_) {
    out.push_back({id, state.label, state.entries.size(), state.waiters.size()});
  }
  std::sort(out.begin(), out.end(),
            [](const SessionInfo& a, const SessionInfo& b) { return a.id < b.id; });
  return out;
}

std::optional<SessionInfo> LockTable::Impl::session(SessionId id) const {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  return SessionInfo{id, it->second.label, it->second.entries.size(), it->second.waiters.size()};
}

std::vector<std::string> LockTable::Impl::files(std::string_view after, size_t limit) const {
  std::vector<std::string> out;
  for (auto it = files_.upper_bound(after); it != files_.end() && out.size() < limit; ++it) {
    out.push_back(it->first);
  }
  return out;
}

// ---- the public face ---------------------------------------------------------------------

LockTable::LockTable(TableLimits limits) : impl_(std::make_unique<Impl>(limits)) {}
LockTable::~LockTable() = default;
LockTable::LockTable(LockTable&&) noexcept = default;
LockTable& LockTable::operator=(LockTable&&) noexcept = default;

SessionId LockTable::open_session(std::string_view label) { return impl_->open_session(label); }
Outcome LockTable::request(const Request& request) { return impl_->request(request); }
Change LockTable::release(SessionId session, std::string_view file, const RangeSpec& ranges) {
  return impl_->release(session, file, ranges);
}
Change LockTable::downgrade(SessionId session, std::string_view file, const RangeSpec& ranges) {
  return impl_->downgrade(session, file, ranges);
}
Change LockTable::cancel(RequestId request) { return impl_->cancel(request); }
Change LockTable::withdraw(std::span<const RequestId> requests) {
  return impl_->withdraw(requests);
}
Change LockTable::expire(SessionId session) { return impl_->expire(session); }
FileLocks LockTable::list(std::string_view file) const { return impl_->list(file); }
Token LockTable::raise_token_floor(Token floor) { return impl_->raise_token_floor(floor); }

Token LockTable::next_token() const { return impl_->next_token(); }

Stats LockTable::stats() const { return impl_->stats(); }
const TableLimits& LockTable::limits() const { return impl_->limits(); }
std::vector<SessionInfo> LockTable::sessions() const { return impl_->sessions(); }
std::optional<SessionInfo> LockTable::session(SessionId id) const { return impl_->session(id); }
std::vector<std::string> LockTable::files(std::string_view after, size_t limit) const {
  return impl_->files(after, limit);
}
std::vector<uint8_t> LockTable::save() const { return impl_->save(); }
LockTable LockTable::load(std::span<const uint8_t> bytes, TableLimits limits) {
  LockTable table(limits);
  table.impl_ = Impl::load(bytes, limits);
  return table;
}

}  // namespace asn::locks

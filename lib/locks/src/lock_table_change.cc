// What frees bytes in the lock table (release, downgrade, cancel, expire) and the grants
// that follow, in file-offset order (004 L1226).
#include <algorithm>
#include <limits>

#include "format.hpp"
#include "table_impl.hpp"

namespace asn::locks {
namespace {

using detail::cat;
using detail::quote;

// A piece of a held entry left by a release or a downgrade.
struct Piece {
  uint64_t first = 0;
  uint64_t last = 0;
  Mode mode = Mode::kShared;
};

// What is left of entry `e` once the bytes of `ranges` (sorted, disjoint) are released
// (downgrade false) or made shared (downgrade true). Touching pieces of one mode are one.
std::vector<Piece> pieces_of(const Entry& e, std::span<const ByteRange> ranges, bool downgrade) {
  std::vector<Piece> out;
  auto push = [&](uint64_t first, uint64_t last, Mode mode) {
    if (!out.empty() && out.back().mode == mode && out.back().last + 1 == first) {
      out.back().last = last;
    } else {
      out.push_back({first, last, mode});
    }
  };
  auto it = std::partition_point(ranges.begin(), ranges.end(),
                                 [&](const ByteRange& r) { return r.last() < e.first; });
  uint64_t pos = e.first;
  for (; it != ranges.end() && it->offset <= e.last; ++it) {
    uint64_t lo = std::max(it->offset, e.first);
    uint64_t hi = std::min(it->last(), e.last);
    if (lo > pos) push(pos, lo - 1, e.mode);
    if (downgrade) push(lo, hi, Mode::kShared);
    if (hi == e.last) return out;
    pos = hi + 1;
  }
  push(pos, e.last, e.mode);
  return out;
}

void add_spans(std::vector<Span>& out, std::span<const ByteRange> ranges) {
  for (const ByteRange& r : ranges) out.push_back({r.offset, r.last()});
}

// The spans sorted, with overlapping or touching ones joined.
std::vector<Span> coalesced(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.first < b.first; });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (!out.empty() && (out.back().last >= s.first || out.back().last + 1 == s.first)) {
      out.back().last = std::max(out.back().last, s.last);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

std::string span_text(uint64_t first, uint64_t last) {
  return to_string(ByteRange{first, last - first + 1});
}

}  // namespace

// ---- release and downgrade ---------------------------------------------------------------

std::optional<Span> LockTable::Impl::first_gap(const FileState* file, SessionId session,
                                               uint64_t first, uint64_t last,
                                               bool exclusive) const {
  std::optional<Span> gap;
  bool covered = false;
  uint64_t pos = first;  // the bytes before it are held by the session
  if (file != nullptr) {
    file->held.any(first, last, [&](uint64_t seg_first, uint64_t seg_last, const auto& ids) {
      uint64_t lo = std::max(seg_first, first);
      bool mine = ids.any([&](uint64_t id) {
        const Entry& e = entries_[id - 1];
        return e.session == session && (!exclusive || e.mode == Mode::kExclusive);
      });
      if (lo > pos) {
        gap = Span{pos, lo - 1};  // nobody holds these bytes
      } else if (!mine) {
        gap = Span{lo, std::min(seg_last, last)};  // others do
      } else if (seg_last >= last) {
        covered = true;
      } else {
        pos = seg_last + 1;
      }
      return gap || covered;
    });
  }
  if (covered) return std::nullopt;
  return gap ? gap : Span{pos, last};
}

std::optional<LockError> LockTable::Impl::check_held(const FileState* file, SessionId session,
                                                     std::span<const ByteRange> ranges,
                                                     bool exclusive, std::string_view name) const {
  for (size_t i = 0; i < ranges.size(); ++i) {
    std::optional<Span> gap =
        first_gap(file, session, ranges[i].offset, ranges[i].last(), exclusive);
    if (!gap) continue;
    std::string where = cat(" bytes ", span_text(gap->first, gap->last), " of file ", quote(name),
                            " (range ", i, " ", to_string(ranges[i]), ")");
    return LockError(ErrorKind::kFailedPrecondition,
                     exclusive ? cat("session ", session, " holds no exclusive lock on", where,
                                     ": only an exclusive lock can be downgraded; nothing "
                                     "changed")
                               : cat("session ", session, " holds no lock on", where,
                                     ": released already, or never granted; nothing was "
                                     "released"),
                     i);
  }
  return std::nullopt;
}

std::vector<uint64_t> LockTable::Impl::session_entries(const FileState& file, SessionId session,
                                                       std::span<const ByteRange> ranges,
                                                       bool exclusive) const {
  std::vector<uint64_t> out;
  for (const ByteRange& r : ranges) {
    file.held.any(r.offset, r.last(), [&](uint64_t, uint64_t, const detail::IdSet& ids) {
      ids.any([&](uint64_t id) {
        const Entry& e = entries_[id - 1];
        if (e.session == session && (!exclusive || e.mode == Mode::kExclusive)) {
          out.push_back(id);
        }
        return false;
      });
      return false;
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Change LockTable::Impl::carve(SessionId session, std::string_view name, const RangeSpec& spec,
                              bool downgrade, bool checked) {
  Change out;
  if (!checked) out.error = precheck(session, name, spec);
  if (out.error) return out;
  std::vector<ByteRange> ranges = sorted_ranges(spec, limits_.max_ranges);
  const auto* list = std::get_if<std::vector<ByteRange>>(&spec);
  FileState* file = find_file(name);
  out.error = check_held(file, session, list ? *list : ranges, downgrade, name);
  if (out.error) return out;

  std::vector<uint64_t> ids = session_entries(*file, session, ranges, downgrade);
  std::vector<std::vector<Piece>> pieces;
  size_t after = 0;
  for (uint64_t id : ids) {
    pieces.push_back(pieces_of(entries_[id - 1], ranges, downgrade));
    after += pieces.back().size();
  }
  if (after > ids.size() && after - ids.size() > entries_free()) {
    out.error = table_full(after - ids.size(), downgrade ? "this downgrade splits a lock and"
                                                         : "this release splits a lock and");
    return out;
  }
  std::vector<Entry> removed;
  for (uint64_t id : ids) removed.push_back(remove_entry(id));
  for (size_t k = 0; k < removed.size(); ++k) {
    for (const Piece& p : pieces[k]) {
      Entry entry = removed[k];
      entry.first = p.first;
      entry.last = p.last;
      entry.mode = p.mode;
      add_entry(entry);
    }
  }
  if (!downgrade) {
    out.released = ids.size();
    ++counters_.releases;
  }
  std::vector<Span> changed;
  add_spans(changed, ranges);
  out.granted = pump(*file, changed);
  drop_if_empty(file);
  return out;
}

// ---- cancel and expire -------------------------------------------------------------------

std::optional<LockError> LockTable::Impl::precheck_cancel(RequestId id) const {
  if (waiters_.contains(id)) return std::nullopt;
  if (id != 0 && id < next_request_) {
    return LockError(ErrorKind::kFailedPrecondition,
                     cat("request ", id,
                         " is not waiting (granted, cancelled, or ended with its "
                         "session): nothing to cancel; a granted lock is released "
                         "with release()"));
  }
  return LockError(ErrorKind::kNotFound, cat("request ", id, " does not exist"));
}

std::optional<LockError> LockTable::Impl::precheck_expire(SessionId session) const {
  if (sessions_.contains(session)) return std::nullopt;
  return check_session(session);
}

Change LockTable::Impl::cancel(RequestId id) {
  Change out;
  out.error = precheck_cancel(id);
  if (out.error) return out;
  Waiter waiter = dequeue(id);
  ++counters_.cancelled;
  out.cancelled.push_back(id);
  std::vector<Span> changed;
  add_spans(changed, waiter.ranges);
  out.granted = pump(*waiter.file, changed, id);
  drop_if_empty(waiter.file);
  return out;
}

std::optional<LockError> LockTable::Impl::precheck_withdraw(
    std::span<const RequestId> requests) const {
  for (RequestId id : requests) {
    if (auto error = precheck_cancel(id)) return error;
  }
  return std::nullopt;
}

void LockTable::Impl::dequeue_all(std::span<const RequestId> ids, FreedFiles& freed) {
  std::map<FileState*, std::vector<detail::SegmentIndex::Cover>> covers;
  std::map<FileState*, std::vector<detail::SegmentIndex::Cover>> exclusive_covers;
  for (RequestId id : ids) {
    auto it = waiters_.find(id);
    Waiter& waiter = it->second;
    FileState* file = waiter.file;
    Freed& f = freed[file->name];
    if (f.file == nullptr) f = Freed{file, {}, id};
    f.above = std::min(f.above, id);
    auto& mine = covers[file];
    for (const ByteRange& r : waiter.ranges) {
      mine.push_back({r.offset, r.last(), id});
      if (waiter.mode == Mode::kExclusive)
        exclusive_covers[file].push_back({r.offset, r.last(), id});
      f.spans.push_back({r.offset, r.last()});
    }
    file->waiters.erase(id);
    if (auto s = sessions_.find(waiter.session); s != sessions_.end()) s->second.waiters.erase(id);
    waiting_entries_ -= waiter.ranges.size();
    waiters_.erase(it);
  }
  for (auto& [file, list] : covers) file->waiting.remove_all(std::move(list));
  for (auto& [file, list] : exclusive_covers) file->waiting_exclusive.remove_all(std::move(list));
}

void LockTable::Impl::pump_all(FreedFiles& freed, Change& out) {
  for (auto& [name, f] : freed) {
    std::vector<Grant> granted = pump(*f.file, f.spans, f.above);
    std::move(granted.begin(), granted.end(), std::back_inserter(out.granted));
  }
  for (auto& [name, f] : freed) drop_if_empty(f.file);
}

Change LockTable::Impl::withdraw(std::span<const RequestId> requests) {
  Change out;
  std::vector<RequestId> ids(requests.begin(), requests.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  out.error = precheck_withdraw(ids);
  if (out.error || ids.empty()) return out;
  FreedFiles freed;
  dequeue_all(ids, freed);
  counters_.cancelled += ids.size();
  out.cancelled = std::move(ids);
  pump_all(freed, out);
  return out;
}

Change LockTable::Impl::expire(SessionId session) {
  Change out;
  auto it = sessions_.find(session);
  if (it == sessions_.end()) {
    out.error = check_session(session);
    return out;
  }
  // The session goes first, so none of its waiters can be granted by what follows.
  SessionState state = std::move(it->second);
  sessions_.erase(it);
  out.cancelled.assign(state.waiters.begin(), state.waiters.end());  // increasing
  FreedFiles freed;
  dequeue_all(out.cancelled, freed);
  for (uint64_t id : state.entries) {
    Entry entry = remove_entry(id);
    Freed& f = freed[entry.file->name];
    f.file = entry.file;
    f.spans.push_back({entry.first, entry.last});
    f.above = 0;
    ++out.released;
  }
  pump_all(freed, out);
  counters_.cancelled += out.cancelled.size();
  ++counters_.expired;
  return out;
}

// ---- grants after a change ---------------------------------------------------------------

std::vector<Grant> LockTable::Impl::pump(FileState& file, const std::vector<Span>& changed,
                                         RequestId above) {
  // Only a waiter overlapping the changed bytes can have lost its conflicts: a waiter granted
  // here conflicts as a holder with whatever it conflicted with as a waiter.
  std::vector<RequestId> candidates;
  for (const Span& span : coalesced(changed)) {
    file.waiting.any(span.first, span.last, [&](uint64_t, uint64_t, const detail::IdSet& ids) {
      ids.any_above(above, [&](uint64_t id) {
        candidates.push_back(id);
        return false;
      });
      return false;
    });
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());

  struct Granted {
    Waiter waiter;
    std::vector<uint64_t> entries;
  };
  // A waiter granted here holds its bytes at once, so that the later candidates see it as a
  // holder; it leaves the waiting index only after the loop, with the others granted, in one
  // pass (one by one, each would rewrite the id set of a segment that many waiters share).
  // Meanwhile a later candidate that conflicts with it finds its held entry first.
  std::vector<RequestId> granted_ids;
  std::vector<std::vector<uint64_t>> granted_entries;
  for (RequestId id : candidates) {  // FIFO: an earlier waiter is decided first
    const Waiter& w = waiters_.at(id);
    if (blocked(file, w)) continue;
    granted_entries.push_back(hold(file, w, 0));
    granted_ids.push_back(id);
  }
  std::vector<Granted> granted;
  granted.reserve(granted_ids.size());
  std::vector<detail::SegmentIndex::Cover> covers;
  std::vector<detail::SegmentIndex::Cover> exclusive_covers;
  for (size_t i = 0; i < granted_ids.size(); ++i) {
    auto it = waiters_.find(granted_ids[i]);
    Waiter& w = it->second;
    for (const ByteRange& r : w.ranges) {
      covers.push_back({r.offset, r.last(), w.id});
      if (w.mode == Mode::kExclusive) exclusive_covers.push_back({r.offset, r.last(), w.id});
    }
    file.waiters.erase(w.id);
    if (auto s = sessions_.find(w.session); s != sessions_.end()) s->second.waiters.erase(w.id);
    waiting_entries_ -= w.ranges.size();
    granted.push_back({std::move(w), std::move(granted_entries[i])});
    waiters_.erase(it);
  }
  file.waiting.remove_all(std::move(covers));
  file.waiting_exclusive.remove_all(std::move(exclusive_covers));
  // Issued in file-offset order: the tokens follow it.
  std::sort(granted.begin(), granted.end(), [](const Granted& a, const Granted& b) {
    uint64_t ao = a.waiter.ranges.front().offset;
    uint64_t bo = b.waiter.ranges.front().offset;
    return ao != bo ? ao < bo : a.waiter.id < b.waiter.id;
  });
  std::vector<Grant> out;
  for (Granted& g : granted) {
    Token token = next_token_++;
    for (uint64_t entry : g.entries) entries_[entry - 1].token = token;
    out.push_back(Grant{g.waiter.id, g.waiter.session, file.name, g.waiter.mode, token,
                        std::move(g.waiter.ranges)});
  }
  counters_.grants += out.size();
  return out;
}

}  // namespace asn::locks

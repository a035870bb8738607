// LockTable::save() and load(): the whole state of a table as bytes (the checkpoint of a
// DurableTable).
//
// Layout: a 32-byte header, then the payload.
//   header: magic "ASNLOCKS", u32 version, u32 0, u64 payload bytes, u64 checksum64(payload)
//   payload (varints unless said otherwise):
//     saved capacity, saved max_ranges, next session id, next request id, next token,
//     the counters of Stats (grants, queued, releases, table_full, conflicts, cancelled,
//     expired),
//     sessions: count, then each: id - previous id, label (length, bytes)
//     files: count, then each in byte order of its id: id (length, bytes),
//       held entries: count, then each in (offset, end, token) order: offset - previous
//         offset, length - 1, mode (byte), session, request, token
//       waiters: count, then each in FIFO (id) order: id - previous id, session, mode
//         (byte), range count, then each range in offset order: offset, length - 1
// Entry slots are not saved: no outcome depends on them (held_conflict() names the lowest
// token of a segment, not the first slot), so the loaded table numbers its entries afresh.
#include <algorithm>

#include "codec.hpp"
#include "format.hpp"
#include "table_impl.hpp"

namespace asn::locks {
namespace {

using detail::cat;
using detail::quote;

constexpr char kSnapshotMagic[8] = {'A', 'S', 'N', 'L', 'O', 'C', 'K', 'S'};
constexpr uint32_t kSnapshotVersion = 1;
constexpr size_t kSnapshotHeaderBytes = 32;

LockError bad(const std::string& message) {
  return LockError(ErrorKind::kInvalidArgument, "lock table snapshot: " + message);
}

std::string range_text(uint64_t first, uint64_t last) {
  return to_string(ByteRange{first, last - first + 1});
}

}  // namespace

std::vector<uint8_t> LockTable::Impl::save() const {
  std::vector<uint8_t> out(kSnapshotHeaderBytes);
  out.reserve(kSnapshotHeaderBytes + 64 + sessions_.size() * 8 + held_ * 14 + waiting_entries_ * 6);
  detail::Writer w(out);
  w.varint(limits_.capacity);
  w.varint(limits_.max_ranges);
  w.varint(next_session_);
  w.varint(next_request_);
  w.varint(next_token_);
  for (uint64_t counter :
       {counters_.grants, counters_.queued, counters_.releases, counters_.table_full,
        counters_.conflicts, counters_.cancelled, counters_.expired}) {
    w.varint(counter);
  }

  std::vector<SessionId> ids;
  ids.reserve(sessions_.size());
  for (const auto& [id, state] : sessions_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  w.varint(ids.size());
  SessionId previous = 0;
  for (SessionId id : ids) {
    w.varint(id - previous);
    previous = id;
    w.bytes(sessions_.at(id).label);
  }

  w.varint(files_.size());
  std::vector<uint64_t> held;
  for (const auto& [name, file] : files_) {
    w.bytes(name);
    held.clear();
    file->held.any(0, detail::kLastByte, [&](uint64_t first, uint64_t, const detail::IdSet& set) {
      set.any([&](uint64_t id) {
        if (entries_[id - 1].first == first) held.push_back(id);  // its first segment
        return false;
      });
      return false;
    });
    std::sort(held.begin(), held.end(), [&](uint64_t a, uint64_t b) {
      const Entry& x = entries_[a - 1];
      const Entry& y = entries_[b - 1];
      if (x.first != y.first) return x.first < y.first;
      if (x.last != y.last) return x.last < y.last;
      return x.token < y.token;
    });
    w.varint(held.size());
    uint64_t offset = 0;
    for (uint64_t id : held) {
      const Entry& e = entries_[id - 1];
      w.varint(e.first - offset);
      offset = e.first;
      w.varint(e.last - e.first);
      w.u8(static_cast<uint8_t>(e.mode));
      w.varint(e.session);
      w.varint(e.request);
      w.varint(e.token);
    }
    w.varint(file->waiters.size());
    RequestId before = 0;
    for (RequestId id : file->waiters) {
      const Waiter& waiter = waiters_.at(id);
      w.varint(id - before);
      before = id;
      w.varint(waiter.session);
      w.u8(static_cast<uint8_t>(waiter.mode));
      w.varint(waiter.ranges.size());
      for (const ByteRange& r : waiter.ranges) {
        w.varint(r.offset);
        w.varint(r.length - 1);
      }
    }
  }

  std::memcpy(out.data(), kSnapshotMagic, 8);
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(kSnapshotVersion >> (8 * i));
  detail::put64(out.data() + 16, out.size() - kSnapshotHeaderBytes);
  detail::put64(out.data() + 24, detail::checksum64(std::span(out).subspan(kSnapshotHeaderBytes)));
  return out;
}

namespace {

// The header checked; the payload.
std::span<const uint8_t> payload_of(std::span<const uint8_t> bytes) {
  if (bytes.size() < kSnapshotHeaderBytes) {
    throw bad(cat(bytes.size(), " bytes are shorter than the ", kSnapshotHeaderBytes,
                  "-byte header: not a snapshot, or truncated"));
  }
  if (std::memcmp(bytes.data(), kSnapshotMagic, 8) != 0) {
    throw bad("the bytes do not start with \"ASNLOCKS\": not a lock table snapshot");
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= uint32_t{bytes[8 + i]} << (8 * i);
  if (version != kSnapshotVersion || detail::get64(bytes.data() + 8) >> 32 != 0) {
    throw bad(cat("version ", version, "; this build reads version ", kSnapshotVersion));
  }
  uint64_t length = detail::get64(bytes.data() + 16);
  if (length != bytes.size() - kSnapshotHeaderBytes) {
    throw bad(cat("the header names ", length, " bytes of payload but ",
                  bytes.size() - kSnapshotHeaderBytes, " follow it: truncated or padded"));
  }
  std::span<const uint8_t> payload = bytes.subspan(kSnapshotHeaderBytes);
  if (detail::checksum64(payload) != detail::get64(bytes.data() + 24)) {
    throw bad("checksum mismatch: the bytes are damaged");
  }
  return payload;
}

}  // namespace

namespace detail {

// The limits a snapshot was saved with (its header checked).
TableLimits snapshot_limits(std::span<const uint8_t> bytes) {
  detail::Reader r(payload_of(bytes), "lock table snapshot");
  TableLimits limits;
  limits.capacity = static_cast<size_t>(r.varint("capacity"));
  limits.max_ranges = static_cast<size_t>(r.varint("max_ranges"));
  return limits;
}

}  // namespace detail

std::unique_ptr<LockTable::Impl> LockTable::Impl::load(std::span<const uint8_t> bytes,
                                                       TableLimits limits) {
  detail::Reader r(payload_of(bytes), "lock table snapshot");
  auto table = std::make_unique<Impl>(limits);
  Impl& t = *table;
  r.varint("saved capacity");
  r.varint("saved max_ranges");
  t.next_session_ = r.varint("next session id");
  t.next_request_ = r.varint("next request id");
  t.next_token_ = r.varint("next token");
  if (t.next_session_ == 0 || t.next_request_ == 0 || t.next_token_ == 0) {
    r.fail("a next id or token is 0 (they count from 1)");
  }
  for (uint64_t* counter :
       {&t.counters_.grants, &t.counters_.queued, &t.counters_.releases, &t.counters_.table_full,
        &t.counters_.conflicts, &t.counters_.cancelled, &t.counters_.expired}) {
    *counter = r.varint("a counter");
  }

  size_t sessions = r.count("session count", 2);
  SessionId session = 0;
  for (size_t i = 0; i < sessions; ++i) {
    uint64_t step = r.varint("session id");
    if (step == 0 || step >= t.next_session_ - session) {
      r.fail(
          cat("session ", i, ": ids must increase and stay below the next id ", t.next_session_));
    }
    session += step;
    std::string_view label = r.bytes("session label", kMaxSessionLabelBytes);
    t.sessions_.emplace(session, SessionState{std::string(label), {}, {}});
  }

  auto check_session = [&](SessionId id, std::string_view what) {
    if (!t.sessions_.contains(id)) {
      r.fail(cat(what, " belongs to session ", id, ", which is not open"));
    }
  };
  auto check_mode = [&](uint8_t mode) {
    if (mode > 1) r.fail(cat("mode ", unsigned{mode}, " is neither shared (0) nor exclusive (1)"));
    return static_cast<Mode>(mode);
  };
  auto check_room = [&](size_t entries) {
    if (entries > t.entries_free()) {
      r.fail(cat("the state holds more entries than the capacity of ", limits.capacity));
    }
  };

  size_t files = r.count("file count", 4);
  std::string previous_name;
  for (size_t i = 0; i < files; ++i) {
    std::string_view file_id = r.bytes("file id", kMaxFileIdBytes);
    if (file_id.empty() || (i > 0 && file_id <= previous_name)) {
      r.fail(cat("file ", i, " ", quote(file_id),
                 ": file ids must be nonempty and in increasing byte order"));
    }
    previous_name = file_id;
    FileState& file = t.file_state(file_id);

    size_t held = r.count("held entry count", 6);
    check_room(held);
    uint64_t offset = 0;
    for (size_t k = 0; k < held; ++k) {
      uint64_t step = r.varint("held entry offset");
      if (step > detail::kLastByte - offset) r.fail("a held entry starts past 2^64");
      Entry e;
      e.first = offset + step;
      offset = e.first;
      uint64_t span = r.varint("held entry length");
      if (span > detail::kLastByte - e.first || span == detail::kLastByte)
        r.fail("a held entry ends past 2^64");
      e.last = e.first + span;
      e.mode = check_mode(r.u8("held entry mode"));
      e.session = r.varint("held entry session");
      e.request = r.varint("held entry request");
      e.token = r.varint("held entry token");
      e.file = &file;
      std::string what =
          cat("held entry ", range_text(e.first, e.last), " of file ", quote(file_id));
      check_session(e.session, what);
      if (e.request == 0 || e.request >= t.next_request_ || e.token == 0 ||
          e.token >= t.next_token_) {
        r.fail(cat(what, " has request ", e.request, " and token ", e.token,
                   ": they must be nonzero and below the next ones"));
      }
      if (uint64_t other = t.held_conflict(file, e.session, e.mode, e.first, e.last)) {
        const Entry& o = t.entries_[other - 1];
        r.fail(cat(what, " (session ", e.session, ", ", name(e.mode),
                   ") conflicts with the held entry ", range_text(o.first, o.last), " (session ",
                   o.session, ", ", name(o.mode), "): an impossible state"));
      }
      t.add_entry(e);
    }

    size_t waiting = r.count("waiter count", 5);
    RequestId id = 0;
    for (size_t k = 0; k < waiting; ++k) {
      uint64_t step = r.varint("waiter id");
      if (step == 0 || step >= t.next_request_ - id) {
        r.fail(cat("waiter ", k, " of file ", quote(file_id),
                   ": ids must increase and stay below the next request id"));
      }
      id += step;
      if (t.waiters_.contains(id)) r.fail(cat("request ", id, " waits on two files"));
      Waiter waiter;
      waiter.id = id;
      waiter.session = r.varint("waiter session");
      check_session(waiter.session, cat("waiting request ", id));
      waiter.mode = check_mode(r.u8("waiter mode"));
      waiter.file = &file;
      size_t n = r.count("waiter range count", 2);
      if (n == 0) r.fail(cat("waiting request ", id, " has no range"));
      check_room(n);
      waiter.ranges.reserve(n);
      uint128 end = 0;
      for (size_t j = 0; j < n; ++j) {
        ByteRange range;
        range.offset = r.varint("waiter range offset");
        uint64_t span = r.varint("waiter range length");
        if (span > detail::kLastByte - range.offset || span == detail::kLastByte)
          r.fail("a waiting range ends past 2^64");
        range.length = span + 1;
        if (range.offset < end) {
          r.fail(cat("the ranges of waiting request ", id, " overlap or are out of offset order"));
        }
        end = range.end();
        waiter.ranges.push_back(range);
      }
      t.enqueue(std::move(waiter));
    }
    if (held == 0 && waiting == 0) r.fail(cat("file ", quote(file_id), " has no entry"));
  }
  if (!r.done()) r.fail(cat(r.remaining(), " bytes follow the last file"));
  return table;
}

}  // namespace asn::locks

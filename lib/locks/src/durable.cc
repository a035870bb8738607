// DurableTable: a LockTable whose operations are logged to a JournalMedium before they are
// applied (see durable.hpp for the record encoding).
#include "asn/locks/durable.hpp"

#include <algorithm>

#include "codec.hpp"
#include "format.hpp"
#include "table_impl.hpp"

namespace asn::locks {
namespace {

using detail::cat;

enum class Op : uint8_t {
  kOpenSession = 1,
  kRequest = 2,
  kRelease = 3,
  kDowngrade = 4,
  kCancel = 5,
  kExpire = 6,
  kRaiseTokenFloor = 7,
  kWithdraw = 8,
};

void put_ranges(detail::Writer& w, const RangeSpec& spec) {
  if (const auto* s = std::get_if<Strided>(&spec)) {
    w.u8(1);
    w.varint(s->offset);
    w.varint(s->block_length);
    w.varint(s->stride);
    w.varint(s->count);
    return;
  }
  const auto& list = std::get<std::vector<ByteRange>>(spec);
  w.u8(0);
  w.varint(list.size());
  for (const ByteRange& r : list) {
    w.varint(r.offset);
    w.varint(r.length);
  }
}

RangeSpec get_ranges(detail::Reader& r) {
  uint8_t kind = r.u8("range kind");
  if (kind == 1) {
    Strided s;
    s.offset = r.varint("strided offset");
    s.block_length = r.varint("strided block length");
    s.stride = r.varint("strided stride");
    s.count = r.varint("strided count");
    return s;
  }
  if (kind != 0)
    r.fail(cat("range kind ", unsigned{kind}, " is neither a list (0) nor strided (1)"));
  std::vector<ByteRange> list(r.count("range count", 2));
  for (ByteRange& range : list) {
    range.offset = r.varint("range offset");
    range.length = r.varint("range length");
  }
  return list;
}

Change failed(LockError error) {
  Change out;
  out.error = std::move(error);
  return out;
}

bool same(const TableLimits& a, const TableLimits& b) {
  return a.capacity == b.capacity && a.max_ranges == b.max_ranges;
}

// Applies one logged record to `table`; `number` counts the records of the log from 1.
void apply(LockTable& table, std::span<const uint8_t> record, size_t number) {
  detail::Reader r(record, cat("lock journal record ", number, " after the checkpoint"));
  auto op = static_cast<Op>(r.u8("operation"));
  switch (op) {
    case Op::kOpenSession: {
      std::string_view label = r.bytes("session label", kMaxSessionLabelBytes);
      if (!r.done()) break;
      table.open_session(label);
      return;
    }
    case Op::kRequest: {
      Request request;
      request.session = r.varint("session");
      request.file = std::string(r.bytes("file id", kMaxFileIdBytes));
      uint8_t flags = r.u8("mode and wait");
      if (flags > 3) r.fail(cat("mode and wait flags ", unsigned{flags}, " are not 0..3"));
      request.mode = (flags & 1) ? Mode::kExclusive : Mode::kShared;
      request.wait = (flags & 2) ? Wait::kTry : Wait::kBlock;
      request.ranges = get_ranges(r);
      if (!r.done()) break;
      table.request(request);
      return;
    }
    case Op::kRelease:
    case Op::kDowngrade: {
      SessionId session = r.varint("session");
      std::string file(r.bytes("file id", kMaxFileIdBytes));
      RangeSpec ranges = get_ranges(r);
      if (!r.done()) break;
      if (op == Op::kRelease) {
        table.release(session, file, ranges);
      } else {
        table.downgrade(session, file, ranges);
      }
      return;
    }
    case Op::kCancel: {
      RequestId request = r.varint("request");
      if (!r.done()) break;
      table.cancel(request);
      return;
    }
    case Op::kWithdraw: {
      std::vector<RequestId> ids(r.count("withdrawn request count", 1));
      RequestId id = 0;
      for (RequestId& out : ids) {
        id += r.varint("withdrawn request");
        out = id;
      }
      if (!r.done()) break;
      table.withdraw(ids);
      return;
    }
    case Op::kExpire: {
      SessionId session = r.varint("session");
      if (!r.done()) break;
      table.expire(session);
      return;
    }
    case Op::kRaiseTokenFloor: {
      Token floor = r.varint("token floor");
      if (!r.done()) break;
      table.raise_token_floor(floor);
      return;
    }
    default:
      r.fail(cat("unknown operation ", unsigned{static_cast<uint8_t>(op)}));
  }
  r.fail(cat(r.remaining(), " bytes follow the operation"));
}

}  // namespace

struct DurableTable::Impl {
  Impl(JournalMedium& m, TableLimits limits, size_t after)
      : medium(m), table(limits), checkpoint_after(after) {}

  // Starts a record of `op` in `record`.
  detail::Writer start(Op op) {
    record.clear();
    detail::Writer w(record);
    w.u8(static_cast<uint8_t>(op));
    return w;
  }

  // Logs `record`: nullopt once it is logged, or why there is no room (nothing logged).
  std::optional<LockError> log() {
    if (!medium.fits(record.size())) {
      try_checkpoint();
      if (!medium.fits(record.size())) {
        return LockError(ErrorKind::kResourceExhausted,
                         cat("the lock journal has no room for this operation's record of ",
                             record.size(), " bytes (", medium.log_bytes(),
                             " bytes of log since the last checkpoint, and a checkpoint did "
                             "not make room): nothing changed"));
      }
    }
    medium.append(record);
    ++logged;
    return std::nullopt;
  }

  // After an operation is applied.
  void applied() {
    ++changes;
    if (medium.log_bytes() > checkpoint_after) try_checkpoint();
  }

  void checkpoint() {
    std::vector<uint8_t> bytes = table.save();
    medium.write_checkpoint(bytes);
    ++checkpoints;
  }

  // A checkpoint, unless one already failed for room with the table as it is now.
  bool try_checkpoint() {
    if (failed_at == changes) return false;
    try {
      checkpoint();
      return true;
    } catch (const LockError& error) {
      if (error.kind() != ErrorKind::kResourceExhausted) throw;
      failed_at = changes;
      return false;
    }
  }

  JournalMedium& medium;
  LockTable table;
  size_t checkpoint_after;
  std::vector<uint8_t> record;
  uint64_t changes = 0;  // operations applied
  std::optional<uint64_t> failed_at;
  uint64_t logged = 0;
  uint64_t checkpoints = 0;
};

DurableTable::DurableTable(JournalMedium& medium, TableLimits limits, size_t checkpoint_after)
    : impl_(std::make_unique<Impl>(medium, limits, checkpoint_after)) {
  std::vector<uint8_t> checkpoint = medium.read_checkpoint();
  bool fresh = checkpoint.empty();
  if (!fresh) {
    impl_->table = LockTable::load(checkpoint, detail::snapshot_limits(checkpoint));
  }
  checkpoint.clear();
  checkpoint.shrink_to_fit();
  size_t number = 0;
  medium.replay([&](std::span<const uint8_t> record) { apply(impl_->table, record, ++number); });
  bool moved = !same(impl_->table.limits(), limits);
  if (moved) impl_->table = LockTable::load(impl_->table.save(), limits);
  if (fresh || moved) impl_->checkpoint();
}

DurableTable::~DurableTable() = default;

SessionId DurableTable::open_session(std::string_view label) {
  if (auto error = LockTable::Impl::check_label(label)) throw *error;
  detail::Writer w = impl_->start(Op::kOpenSession);
  w.bytes(label);
  if (auto error = impl_->log()) throw *error;
  SessionId id = impl_->table.open_session(label);
  impl_->applied();
  return id;
}

Outcome DurableTable::request(const Request& request) {
  if (auto error = impl_->table.impl_->precheck(request)) {
    return detail::refused(Status::kInvalid, *error);
  }
  detail::Writer w = impl_->start(Op::kRequest);
  w.varint(request.session);
  w.bytes(request.file);
  w.u8(static_cast<uint8_t>((request.mode == Mode::kExclusive ? 1 : 0) |
                            (request.wait == Wait::kTry ? 2 : 0)));
  put_ranges(w, request.ranges);
  if (auto error = impl_->log()) return detail::refused(Status::kTableFull, *error);
  Outcome out = impl_->table.impl_->request_checked(request);
  impl_->applied();
  return out;
}

Change DurableTable::release(SessionId session, std::string_view file, const RangeSpec& ranges) {
  if (auto error = impl_->table.impl_->precheck(session, file, ranges)) return failed(*error);
  detail::Writer w = impl_->start(Op::kRelease);
  w.varint(session);
  w.bytes(file);
  put_ranges(w, ranges);
  if (auto error = impl_->log()) return failed(*error);
  Change out = impl_->table.impl_->release(session, file, ranges, true);
  impl_->applied();
  return out;
}

Change DurableTable::downgrade(SessionId session, std::string_view file, const RangeSpec& ranges) {
  if (auto error = impl_->table.impl_->precheck(session, file, ranges)) return failed(*error);
  detail::Writer w = impl_->start(Op::kDowngrade);
  w.varint(session);
  w.bytes(file);
  put_ranges(w, ranges);
  if (auto error = impl_->log()) return failed(*error);
  Change out = impl_->table.impl_->downgrade(session, file, ranges, true);
  impl_->applied();
  return out;
}

Change DurableTable::cancel(RequestId request) {
  if (auto error = impl_->table.impl_->precheck_cancel(request)) return failed(*error);
  detail::Writer w = impl_->start(Op::kCancel);
  w.varint(request);
  if (auto error = impl_->log()) return failed(*error);
  Change out = impl_->table.cancel(request);
  impl_->applied();
  return out;
}

Change DurableTable::withdraw(std::span<const RequestId> requests) {
  std::vector<RequestId> ids(requests.begin(), requests.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (auto error = impl_->table.impl_->precheck_withdraw(ids)) return failed(*error);
  if (ids.empty()) return {};
  detail::Writer w = impl_->start(Op::kWithdraw);
  w.varint(ids.size());
  RequestId last = 0;
  for (RequestId id : ids) {  // increasing: each as its distance from the one before
    w.varint(id - last);
    last = id;
  }
  if (auto error = impl_->log()) return failed(*error);
  Change out = impl_->table.withdraw(ids);
  impl_->applied();
  return out;
}

Change DurableTable::expire(SessionId session) {
  if (auto error = impl_->table.impl_->precheck_expire(session)) return failed(*error);
  detail::Writer w = impl_->start(Op::kExpire);
  w.varint(session);
  if (auto error = impl_->log()) return failed(*error);
  Change out = impl_->table.expire(session);
  impl_->applied();
  return out;
}

Token DurableTable::raise_token_floor(Token floor) {
  if (floor <= impl_->table.next_token()) return impl_->table.next_token();
  detail::Writer w = impl_->start(Op::kRaiseTokenFloor);
  w.varint(floor);
  if (auto error = impl_->log()) throw *error;
  Token next = impl_->table.raise_token_floor(floor);
  impl_->applied();
  return next;
}

const LockTable& DurableTable::table() const { return impl_->table; }

void DurableTable::checkpoint() { impl_->checkpoint(); }

uint64_t DurableTable::records_logged() const { return impl_->logged; }
uint64_t DurableTable::checkpoints_written() const { return impl_->checkpoints; }

}  // namespace asn::locks

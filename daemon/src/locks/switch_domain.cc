#include "locks/switch_domain.hpp"

#include <fmt/format.h>

#include <thread>

#include "error.hpp"

namespace asn {
namespace {

namespace l = regs::lock;
using Kind = LockRecordKind;

bool terminal(LockOpCode op, Kind kind) {
  switch (op) {
    case LockOpCode::kRequest:
      return kind >= Kind::kGranted && kind <= Kind::kInvalid;
    case LockOpCode::kOpenSession:
      return kind == Kind::kSession || kind == Kind::kEnd;
    case LockOpCode::kListSessions:
    case LockOpCode::kListFiles:
    case LockOpCode::kListFile:
      return kind == Kind::kEnd;
    default:
      return kind == Kind::kDone || kind == Kind::kRefused;
  }
}

std::optional<locks::LockError> error_of(const LockCompletion& c) {
  if (c.error == 0) return std::nullopt;
  std::optional<size_t> index;
  if (c.has_index) index = static_cast<size_t>(c.value);
  return locks::LockError(static_cast<locks::ErrorKind>(c.error - 1), c.message, index);
}

locks::Mode mode_of(const LockCompletion& c) {
  return c.exclusive ? locks::Mode::kExclusive : locks::Mode::kShared;
}

locks::Grant grant_of(const LockCompletion& c) {
  locks::Grant g;
  g.request = c.request;
  g.session = c.session;
  g.file = c.file;
  g.mode = mode_of(c);
  g.token = c.token;
  g.ranges = c.ranges;
  return g;
}

// An operation the engine could not carry out (its DRAM journal is full or damaged): the
// medium failed, not the request.
[[noreturn]] void engine_failed(const LockCompletion& c, std::string_view what) {
  throw Error(ErrorCode::kUnavailable,
              fmt::format("the switch lock engine could not {}: {}", what, c.message));
}

}  // namespace

SwitchDomain::SwitchDomain(Device& device, Options options)
    : device_(device), rings_(device), options_(options) {
  board_reset();  // records a previous asnd left behind: their callers are gone
}

void SwitchDomain::board_reset() {
  rings_.enable();
  // What a stalled engine posts from its backlog now: its callers are gone too.
  while (!rings_.drain().empty()) rings_.acknowledge();
}

std::optional<SwitchDomain::Trimmed> SwitchDomain::set_ranges(LockDescriptor& d,
                                                              const locks::RangeSpec& ranges) {
  if (const auto* strided = std::get_if<locks::Strided>(&ranges)) {
    d.strided = *strided;
    return std::nullopt;
  }
  const auto& list = std::get<std::vector<locks::ByteRange>>(ranges);
  d.ranges = list;
  if (list.size() <= locks::kDefaultMaxRanges) return std::nullopt;
  d.ranges = d.ranges.first(locks::kDefaultMaxRanges + 1);
  auto trimmed = locks::validate(d.ranges);
  auto whole = locks::validate(list);
  if (!trimmed || !whole) return std::nullopt;  // cannot be: both are too long
  return Trimmed{trimmed->what(), *whole};
}

void SwitchDomain::untrim(const std::optional<Trimmed>& trimmed,
                          std::optional<locks::LockError>& error) {
  if (trimmed && error && trimmed->error == error->what()) error = trimmed->whole;
}

std::vector<LockCompletion> SwitchDomain::call(LockDescriptor d) {
  d.tag = next_tag_++;
  if (next_tag_ == 0) next_tag_ = 1;
  rings_.post(d);  // and the doorbell
  std::vector<LockCompletion> mine;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // from the last record
  for (;;) {
    std::vector<LockCompletion> records = rings_.drain();
    for (auto& r : records) {
      if (r.tag != d.tag) continue;  // a record of an operation whose caller is gone
      const bool last = terminal(d.op, r.kind);
      mine.push_back(std::move(r));
      // The slots go back to the engine with the next request.
      if (last) return mine;
    }
    if (!records.empty()) {
      rings_.acknowledge();  // an engine stalled on a full completion ring goes on
      deadline.reset();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!deadline) deadline = now + options_.timeout;
    if (now >= *deadline) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("the switch lock engine did not answer within {} ms: no "
                              "completion in lock.completion (producer index {}) for the "
                              "request in lock.request",
                              options_.timeout.count(), rings_.completion_producer()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

locks::SessionId SwitchDomain::open_session(std::string_view label) {
  LockDescriptor d;
  d.op = LockOpCode::kOpenSession;
  d.file = label;
  const auto records = call(d);
  const LockCompletion& last = records.back();
  if (last.kind != Kind::kSession) engine_failed(last, "open a session");
  return last.session;
}

locks::Outcome SwitchDomain::request(const locks::Request& request) {
  LockDescriptor d;
  d.op = LockOpCode::kRequest;
  d.session = request.session;
  d.file = request.file;
  d.exclusive = request.mode == locks::Mode::kExclusive;
  d.try_mode = request.wait == locks::Wait::kTry;
  const auto trimmed = set_ranges(d, request.ranges);
  const auto records = call(d);
  const LockCompletion& c = records.back();
  locks::Outcome o;
  o.status = static_cast<locks::Status>(static_cast<uint8_t>(c.kind) - 1);
  o.request = c.request;
  if (c.kind == Kind::kGranted) o.grant = grant_of(c);
  o.error = error_of(c);
  untrim(trimmed, o.error);
  return o;
}

locks::Change SwitchDomain::change(LockDescriptor d, const std::optional<Trimmed>& trimmed) {
  locks::Change change;
  for (const auto& c : call(d)) {
    switch (c.kind) {
      case Kind::kGrantedLater:
        change.granted.push_back(grant_of(c));
        break;
      case Kind::kCancelled:
        change.cancelled.push_back(c.request);
        break;
      case Kind::kDone:
        change.released = static_cast<size_t>(c.value);
        break;
      case Kind::kRefused:
        change.error = error_of(c);
        break;
      default:
        break;
    }
  }
  untrim(trimmed, change.error);
  return change;
}

locks::Change SwitchDomain::release(locks::SessionId session, std::string_view file,
                                    const locks::RangeSpec& ranges) {
  LockDescriptor d;
  d.op = LockOpCode::kRelease;
  d.session = session;
  d.file = file;
  const auto trimmed = set_ranges(d, ranges);
  return change(d, trimmed);
}

locks::Change SwitchDomain::downgrade(locks::SessionId session, std::string_view file,
                                      const locks::RangeSpec& ranges) {
  LockDescriptor d;
  d.op = LockOpCode::kDowngrade;
  d.session = session;
  d.file = file;
  const auto trimmed = set_ranges(d, ranges);
  return change(d, trimmed);
}

locks::Change SwitchDomain::cancel(locks::RequestId request) {
  LockDescriptor d;
  d.op = LockOpCode::kCancel;
  d.session = request;
  return change(d);
}

locks::Change SwitchDomain::expire(locks::SessionId session) {
  LockDescriptor d;
  d.op = LockOpCode::kExpire;
  d.session = session;
  return change(d);
}

locks::Token SwitchDomain::raise_token_floor(locks::Token floor) {
  LockDescriptor d;
  d.op = LockOpCode::kRaiseTokenFloor;
  d.session = floor;
  const auto records = call(d);
  const LockCompletion& last = records.back();
  if (last.kind != Kind::kDone) engine_failed(last, "raise its fencing token floor");
  return last.token;
}

std::optional<std::string> SwitchDomain::unusable() {
  Device::ReadBatch b;
  const size_t ready = b.add(l::kStatusReady);
  const size_t error = b.add(l::kStatusError);
  device_.read(b);
  if (b[error] != 0) {
    return "its lock table in board DRAM is damaged (lock.status.error): the engine "
           "consumes no request until a board reset (asnctl board reset --yes) formats it "
           "again";
  }
  if (b[ready] == 0) return "the engine is not ready (lock.status.ready is 0)";
  return std::nullopt;
}

std::vector<DomainSession> SwitchDomain::sessions() {
  std::vector<DomainSession> out;
  LockDescriptor d;
  d.op = LockOpCode::kListSessions;
  for (const auto& c : call(d)) {
    if (c.kind == Kind::kSession) {
      out.push_back({c.session, c.file, static_cast<size_t>(c.value), c.waiting});
    }
    if (c.kind == Kind::kEnd && c.error != 0) engine_failed(c, "list its sessions");
  }
  return out;
}

// One record of the session listing: the first session after `session - 1`.
size_t SwitchDomain::held_entries(locks::SessionId session) {
  if (session == 0) return 0;
  LockDescriptor d;
  d.op = LockOpCode::kListSessions;
  d.session = session - 1;
  d.limit = 1;
  size_t held = 0;
  for (const auto& c : call(d)) {
    if (c.kind == Kind::kSession && c.session == session) held = static_cast<size_t>(c.value);
    if (c.kind == Kind::kEnd && c.error != 0) engine_failed(c, "list a session");
  }
  return held;
}

std::vector<std::string> SwitchDomain::files(std::string_view after, size_t limit) {
  std::vector<std::string> out;
  if (limit == 0) return out;
  LockDescriptor d;
  d.op = LockOpCode::kListFiles;
  d.file = after;
  d.limit = static_cast<uint32_t>(std::min<size_t>(limit, UINT32_MAX));
  for (auto& c : call(d)) {
    if (c.kind == Kind::kFile) out.push_back(std::move(c.file));
    if (c.kind == Kind::kEnd && c.error != 0) engine_failed(c, "list its files");
  }
  return out;
}

locks::FileLocks SwitchDomain::list(std::string_view file) {
  locks::FileLocks out;
  LockDescriptor d;
  d.op = LockOpCode::kListFile;
  d.file = file;
  for (auto& c : call(d)) {
    if (c.kind == Kind::kHeld && !c.ranges.empty()) {
      out.held.push_back({c.session, c.request, mode_of(c), c.token, c.ranges.front()});
    } else if (c.kind == Kind::kWaiting) {
      out.waiting.push_back({c.request, c.session, mode_of(c), std::move(c.ranges)});
    } else if (c.kind == Kind::kEnd && c.error != 0) {
      engine_failed(c, "list a file");
    }
  }
  return out;
}

locks::Stats SwitchDomain::stats() {
  Device::ReadBatch b;
  const size_t in_use = b.add(l::kEntriesInUseCount);
  const size_t held = b.add(l::kHeldEntriesCount);
  const size_t waiting = b.add(l::kWaitingEntriesCount);
  const size_t waiting_requests = b.add(l::kWaitingRequestsCount);
  const size_t files = b.add(l::kFilesCount);
  const size_t sessions = b.add(l::kSessionsCount);
  const size_t grants = b.add64(l::kGrants);
  const size_t queued = b.add64(l::kQueued);
  const size_t releases = b.add64(l::kReleases);
  const size_t table_full = b.add64(l::kTableFull);
  const size_t conflicts = b.add64(l::kConflicts);
  const size_t cancelled = b.add64(l::kCancelled);
  const size_t expired = b.add64(l::kExpired);
  device_.read(b);
  locks::Stats s;
  s.capacity = device_.layout()->caps.get(regmap::Cap::kLockEntries);
  s.entries_in_use = b[in_use];
  s.held_entries = b[held];
  s.waiting_entries = b[waiting];
  s.waiting_requests = b[waiting_requests];
  s.files = b[files];
  s.sessions = b[sessions];
  s.grants = b[grants];
  s.queued = b[queued];
  s.releases = b[releases];
  s.table_full = b[table_full];
  s.conflicts = b[conflicts];
  s.cancelled = b[cancelled];
  s.expired = b[expired];
  return s;
}

}  // namespace asn

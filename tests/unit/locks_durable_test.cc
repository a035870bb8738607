// The durable lock table (lib/locks/durable.hpp) and LockTable's snapshots: a table restored
// from its journal or a snapshot behaves as the original; bad bytes are refused; a crash at
// any store into a region leaves the old or the new state; a full region refuses and
// changes nothing.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

#include "../../lib/locks/src/codec.hpp"  // white-box: crafted snapshots need the checksum
#include "asn/locks/durable.hpp"
#include "support.hpp"

namespace asn::locks {
namespace {

using Bytes = std::vector<uint8_t>;

// An 8-aligned region of zeros.
struct Region {
  explicit Region(size_t bytes) : words((bytes + 7) / 8) {}
  std::span<std::byte> span() {
    return {reinterpret_cast<std::byte*>(words.data()), words.size() * 8};
  }
  std::vector<uint64_t> words;
};

std::string text(const std::optional<LockError>& e) {
  if (!e) return "-";
  return std::string(name(e->kind())) + ":" + e->what() + ":" +
         (e->index() ? std::to_string(*e->index()) : "");
}

std::string text(const Grant& g) {
  std::ostringstream out;
  out << "grant{r" << g.request << " s" << g.session << " " << g.file << " " << name(g.mode) << " t"
      << g.token;
  for (const ByteRange& r : g.ranges) out << " " << to_string(r);
  out << "}";
  return out.str();
}

std::string text(const Outcome& o) {
  return std::string(name(o.status)) + " r" + std::to_string(o.request) + " " +
         (o.grant ? text(*o.grant) : "") + " " + text(o.error);
}

std::string text(const Change& c) {
  std::string out = text(c.error) + " released " + std::to_string(c.released);
  for (const Grant& g : c.granted) out += " " + text(g);
  for (RequestId id : c.cancelled) out += " x" + std::to_string(id);
  return out;
}

std::string text(const Stats& s) {
  std::ostringstream out;
  out << s.capacity << " " << s.entries_in_use << " " << s.held_entries << " " << s.waiting_entries
      << " " << s.waiting_requests << " " << s.files << " " << s.sessions << " " << s.grants << " "
      << s.queued << " " << s.releases << " " << s.table_full << " " << s.conflicts << " "
      << s.cancelled << " " << s.expired;
  return out.str();
}

// Everything a reader can see of a table.
std::string view(const LockTable& t) {
  std::ostringstream out;
  out << text(t.stats()) << "\n";
  for (const SessionInfo& s : t.sessions()) {
    out << "s" << s.id << " '" << s.label << "' " << s.held_entries << " " << s.waiting_requests
        << "\n";
  }
  for (const std::string& f : t.files("", ~size_t{0})) {
    FileLocks locks = t.list(f);
    out << f << ":";
    for (const HeldLock& h : locks.held) {
      out << " s" << h.session << "r" << h.request << name(h.mode)[0] << "t" << h.token
          << to_string(h.range);
    }
    out << " |";
    for (const WaitingRequest& w : locks.waiting) {
      out << " r" << w.request << "s" << w.session << name(w.mode)[0];
      for (const ByteRange& r : w.ranges) out << to_string(r);
    }
    out << "\n";
  }
  return out.str();
}

// ---- random operations -----------------------------------------------------------------

struct Op {
  enum Kind { kOpen, kRequest, kRelease, kDowngrade, kCancel, kExpire } kind = kOpen;
  std::string label;
  Request request;
  SessionId session = 0;
  std::string file;
  RangeSpec ranges;
  RequestId id = 0;
};

const char* const kFiles[] = {"a", "b", "c", "d/e"};

RangeSpec random_ranges(std::mt19937_64& rng) {
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  if (pick(4) == 0) {
    return Strided{pick(64), 1 + pick(4), 4 + pick(8), 1 + pick(4)};
  }
  std::vector<ByteRange> list;
  uint64_t offset = pick(48);
  for (uint64_t n = 1 + pick(3); n > 0; --n) {
    uint64_t length = 1 + pick(12);
    list.push_back({offset, length});
    offset += length + pick(8);
  }
  if (pick(30) == 0) list.push_back({offset, 0});  // invalid
  if (list.size() > 1 && pick(2) == 0) std::swap(list.front(), list.back());
  return list;
}

// An operation, mostly valid for `ref`'s state.
Op random_op(std::mt19937_64& rng, const LockTable& ref) {
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  std::vector<SessionInfo> sessions = ref.sessions();
  Stats stats = ref.stats();
  auto any_session = [&]() -> SessionId {
    if (sessions.empty() || pick(25) == 0) return pick(stats.sessions + 8);
    return sessions[pick(sessions.size())].id;
  };
  Op op;
  uint64_t roll = pick(100);
  if (sessions.size() < 2 || roll < 6) {
    op.kind = Op::kOpen;
    op.label = pick(3) == 0 ? "" : "owner-" + std::to_string(pick(1000));
  } else if (roll < 55) {
    op.kind = Op::kRequest;
    op.request.session = any_session();
    op.request.file = pick(40) == 0 ? "" : kFiles[pick(4)];
    op.request.mode = pick(2) ? Mode::kExclusive : Mode::kShared;
    op.request.wait = pick(3) == 0 ? Wait::kTry : Wait::kBlock;
    op.request.ranges = random_ranges(rng);
  } else if (roll < 80) {
    op.kind = pick(4) == 0 ? Op::kDowngrade : Op::kRelease;
    op.file = kFiles[pick(4)];
    FileLocks locks = ref.list(op.file);
    if (!locks.held.empty() && pick(6) != 0) {
      const HeldLock& h = locks.held[pick(locks.held.size())];
      op.session = h.session;
      uint64_t skip = pick(h.range.length);
      op.ranges = std::vector<ByteRange>{{h.range.offset + skip, 1 + pick(h.range.length - skip)}};
    } else {
      op.session = any_session();
      op.ranges = random_ranges(rng);
    }
  } else if (roll < 90) {
    op.kind = Op::kCancel;
    op.id = pick(stats.grants + stats.queued + stats.conflicts + 4);
    for (const std::string& f : ref.files("", 8)) {
      FileLocks locks = ref.list(f);
      if (!locks.waiting.empty() && pick(2))
        op.id = locks.waiting[pick(locks.waiting.size())].request;
    }
  } else {
    op.kind = Op::kExpire;
    op.session = any_session();
  }
  return op;
}

template <typename Table>
std::string run(Table& t, const Op& op) {
  switch (op.kind) {
    case Op::kOpen:
      return "session " + std::to_string(t.open_session(op.label));
    case Op::kRequest:
      return text(t.request(op.request));
    case Op::kRelease:
      return text(t.release(op.session, op.file, op.ranges));
    case Op::kDowngrade:
      return text(t.downgrade(op.session, op.file, op.ranges));
    case Op::kCancel:
      return text(t.cancel(op.id));
    case Op::kExpire:
      return text(t.expire(op.session));
  }
  return "";
}

constexpr TableLimits kSmall{40, 16};

// ---- restore equals original ---------------------------------------------------------------

TEST(LocksDurable, RegionRestoreEqualsOriginal) {
  std::mt19937_64 rng(20240601);
  Region region(48 << 10);
  LockTable plain(kSmall);
  auto journal = std::make_unique<RegionJournal>(region.span());
  auto durable = std::make_unique<DurableTable>(*journal, kSmall, 1500);
  size_t reopened = 0;
  uint64_t checkpoints = 0;
  for (int i = 0; i < 3000; ++i) {
    Op op = random_op(rng, plain);
    std::string expected = run(plain, op);
    ASSERT_EQ(run(*durable, op), expected) << "operation " << i;
    if (rng() % 40 == 0) {
      checkpoints += durable->checkpoints_written();
      durable.reset();
      journal = std::make_unique<RegionJournal>(region.span());
      durable = std::make_unique<DurableTable>(*journal, kSmall, 1500);
      ++reopened;
      ASSERT_EQ(durable->table().save(), plain.save()) << "operation " << i;
    }
    ASSERT_EQ(view(durable->table()), view(plain)) << "operation " << i;
  }
  EXPECT_GT(reopened, 30u);
  EXPECT_GT(plain.stats().grants, 300u);
  EXPECT_GT(plain.stats().queued, 50u);
  EXPECT_GT(plain.stats().table_full, 0u);
  EXPECT_GT(checkpoints, 50u);
}

TEST(LocksDurable, FileRestoreEqualsOriginal) {
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  std::mt19937_64 rng(77);
  LockTable plain(kSmall);
  auto journal = std::make_unique<FileJournal>(dir);
  auto durable = std::make_unique<DurableTable>(*journal, kSmall, 4000);
  for (int i = 0; i < 800; ++i) {
    Op op = random_op(rng, plain);
    std::string expected = run(plain, op);
    ASSERT_EQ(run(*durable, op), expected) << "operation " << i;
    if (rng() % 25 == 0) {
      durable.reset();
      journal.reset();
      journal = std::make_unique<FileJournal>(dir);
      durable = std::make_unique<DurableTable>(*journal, kSmall, 4000);
      ASSERT_EQ(durable->table().save(), plain.save()) << "operation " << i;
    }
  }
  EXPECT_GT(durable->checkpoints_written() + journal->generation(), 1u);
}

TEST(LocksDurable, ARaisedTokenFloorIsLoggedAndTokensGrowFromIt) {
  Region region(48 << 10);
  auto journal = std::make_unique<RegionJournal>(region.span());
  auto durable = std::make_unique<DurableTable>(*journal, kSmall, 1500);
  const SessionId s = durable->open_session();
  Request r{s, "f", Mode::kExclusive, std::vector<ByteRange>{{0, 10}}, Wait::kTry};
  const Outcome first = durable->request(r);
  ASSERT_EQ(first.status, Status::kGranted);
  const uint64_t logged = durable->records_logged();
  EXPECT_EQ(durable->raise_token_floor(first.grant->token), first.grant->token + 1);  // below
  EXPECT_EQ(durable->records_logged(), logged);
  EXPECT_EQ(durable->raise_token_floor(1'000'000), 1'000'000u);
  EXPECT_EQ(durable->records_logged(), logged + 1);
  // The floor outlives a restart (it is in the log, then in the checkpoint).
  durable.reset();
  journal = std::make_unique<RegionJournal>(region.span());
  durable = std::make_unique<DurableTable>(*journal, kSmall, 1500);
  EXPECT_EQ(durable->table().next_token(), 1'000'000u);
  r.ranges = std::vector<ByteRange>{{20, 10}};
  const Outcome second = durable->request(r);
  ASSERT_EQ(second.status, Status::kGranted);
  EXPECT_EQ(second.grant->token, 1'000'000u);
  durable->checkpoint();
  durable.reset();
  journal = std::make_unique<RegionJournal>(region.span());
  durable = std::make_unique<DurableTable>(*journal, kSmall, 1500);
  EXPECT_EQ(durable->table().next_token(), 1'000'001u);
}

// ---- snapshots -------------------------------------------------------------------------------

TEST(LocksSnapshot, RoundTripBehavesIdentically) {
  std::mt19937_64 rng(5);
  LockTable original(kSmall);
  for (int i = 0; i < 5000 && (i < 400 || original.stats().waiting_requests == 0); ++i) {
    run(original, random_op(rng, original));
  }
  ASSERT_GT(original.stats().waiting_requests, 0u);
  Bytes bytes = original.save();
  LockTable copy = LockTable::load(bytes, kSmall);
  EXPECT_EQ(copy.save(), bytes);
  EXPECT_EQ(view(copy), view(original));
  std::mt19937_64 a(99), b(99);
  for (int i = 0; i < 1500; ++i) {
    Op op = random_op(a, original);
    Op same = random_op(b, copy);
    ASSERT_EQ(run(copy, same), run(original, op)) << "operation " << i;
    ASSERT_EQ(view(copy), view(original)) << "operation " << i;
  }
  // A larger capacity is fine; one the state does not fit is refused.
  LockTable bigger = LockTable::load(bytes, {1000, 16});
  EXPECT_EQ(bigger.stats().capacity, 1000u);
  EXPECT_EQ(bigger.stats().entries_in_use, LockTable::load(bytes, kSmall).stats().entries_in_use);
}

TEST(LocksSnapshot, SessionsLabelsAndFilePaging) {
  LockTable t;
  SessionId s1 = t.open_session("client-1 lease 30s");
  SessionId s2 = t.open_session();
  EXPECT_THROW(t.open_session(std::string(kMaxSessionLabelBytes + 1, 'x')), LockError);
  for (const char* f : {"b", "a", "c", "\xff", "ab"}) {
    ASSERT_EQ(t.request({s1, f, Mode::kShared, std::vector<ByteRange>{{0, 10}}}).status,
              Status::kGranted);
  }
  ASSERT_EQ(t.request({s2, "a", Mode::kExclusive, std::vector<ByteRange>{{5, 1}, {8, 1}}}).status,
            Status::kQueued);
  std::vector<SessionInfo> sessions = t.sessions();
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0], (SessionInfo{s1, "client-1 lease 30s", 5, 0}));
  EXPECT_EQ(sessions[1], (SessionInfo{s2, "", 0, 1}));
  EXPECT_EQ(t.files("", 2), (std::vector<std::string>{"a", "ab"}));
  EXPECT_EQ(t.files("ab", 2), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(t.files("c", 5), (std::vector<std::string>{"\xff"}));
  EXPECT_TRUE(t.files("\xff", 5).empty());
  LockTable copy = LockTable::load(t.save(), {});
  EXPECT_EQ(copy.sessions(), sessions);
}

void expect_refused(const Bytes& bytes, const std::string& words, TableLimits limits = kSmall) {
  try {
    LockTable::load(bytes, limits);
    ADD_FAILURE() << "loaded; expected an error with " << words;
  } catch (const LockError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// A snapshot of a made-up payload, with a good header.
Bytes snapshot(const Bytes& payload) {
  Bytes out(32);
  std::memcpy(out.data(), "ASNLOCKS", 8);
  out[8] = 1;
  detail::put64(out.data() + 16, payload.size());
  detail::put64(out.data() + 24, detail::checksum64(payload));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// The payload up to the files: limits, next ids 10, counters 0, sessions 1 and 2.
Bytes prefix(size_t sessions = 2) {
  Bytes p;
  detail::Writer w(p);
  for (uint64_t v : {40, 16, 10, 10, 10}) w.varint(v);
  for (int i = 0; i < 7; ++i) w.varint(0);
  w.varint(sessions);
  for (size_t i = 0; i < sessions; ++i) {
    w.varint(1);
    w.bytes("");
  }
  return p;
}

void held(detail::Writer& w, uint64_t offset, uint64_t length, int mode, uint64_t session,
          uint64_t request, uint64_t token) {
  w.varint(offset);
  w.varint(length - 1);
  w.u8(static_cast<uint8_t>(mode));
  w.varint(session);
  w.varint(request);
  w.varint(token);
}

TEST(LocksSnapshot, BadBytesAreRefused) {
  LockTable t(kSmall);
  SessionId s = t.open_session("x");
  t.request({s, "f", Mode::kExclusive, std::vector<ByteRange>{{0, 100}}});
  Bytes good = t.save();

  expect_refused({}, "shorter than the 32-byte header");
  Bytes bad = good;
  bad[0] = 'X';
  expect_refused(bad, "not a lock table snapshot");
  bad = good;
  bad[8] = 2;
  expect_refused(bad, "version 2; this build reads version 1");
  bad = good;
  bad.back() ^= 1;
  expect_refused(bad, "checksum mismatch");
  for (size_t cut = 0; cut < good.size(); ++cut) {
    expect_refused(Bytes(good.begin(), good.begin() + static_cast<long>(cut)), "");
  }
  expect_refused(good, "more entries than the capacity of 0", {0, 16});

  {  // two exclusive locks of two sessions on the same bytes
    Bytes p = prefix();
    detail::Writer w(p);
    w.varint(1);
    w.bytes("f");
    w.varint(2);
    held(w, 0, 10, 1, 1, 1, 1);
    held(w, 5, 10, 1, 2, 2, 2);
    w.varint(0);
    expect_refused(snapshot(p), "conflicts with the held entry [0, 10)");
  }
  {  // a lock of a session that is not open
    Bytes p = prefix(1);
    detail::Writer w(p);
    w.varint(1);
    w.bytes("f");
    w.varint(1);
    held(w, 0, 10, 0, 7, 1, 1);
    w.varint(0);
    expect_refused(snapshot(p), "belongs to session 7, which is not open");
  }
  {  // counts far beyond the bytes: refused before anything is allocated
    Bytes p;
    detail::Writer w(p);
    for (uint64_t v : {40, 16, 10, 10, 10}) w.varint(v);
    for (int i = 0; i < 7; ++i) w.varint(0);
    w.varint(uint64_t{1} << 60);
    expect_refused(snapshot(p), "is more than the");
  }
  {  // a file with no entry, and bytes after the last file
    Bytes p = prefix();
    detail::Writer w(p);
    w.varint(1);
    w.bytes("f");
    w.varint(0);
    w.varint(0);
    expect_refused(snapshot(p), "has no entry");
    p.pop_back();
    p.pop_back();
    w.varint(1);
    held(w, 0, 10, 0, 1, 1, 1);
    w.varint(0);
    w.u8(0);
    expect_refused(snapshot(p), "1 bytes follow the last file");
  }
  {  // a waiter with overlapping ranges, and one waiting twice
    Bytes p = prefix();
    detail::Writer w(p);
    w.varint(1);
    w.bytes("f");
    w.varint(0);
    w.varint(1);
    w.varint(3);
    w.varint(1);
    w.u8(1);
    w.varint(2);
    w.varint(0);
    w.varint(9);
    w.varint(5);
    w.varint(0);
    expect_refused(snapshot(p), "overlap or are out of offset order");
  }
  {  // random damage never crashes: refused or loaded
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) {
      Bytes p = prefix();
      detail::Writer w(p);
      w.varint(1);
      w.bytes("f");
      w.varint(1);
      held(w, 0, 10, 1, 1, 1, 1);
      w.varint(0);
      for (int k = 0; k < 3; ++k) p[rng() % p.size()] = static_cast<uint8_t>(rng());
      try {
        LockTable::load(snapshot(p), kSmall);
      } catch (const LockError&) {
      }
    }
  }
}

// ---- RegionJournal ---------------------------------------------------------------------------

TEST(LocksRegionJournal, SizesAndClearErrors) {
  Region tiny(512);
  try {
    RegionJournal journal(tiny.span());
    ADD_FAILURE();
  } catch (const LockError& e) {
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
  }
  Region junk(4096);
  junk.words[0] = 0x1234;
  EXPECT_THROW(RegionJournal(junk.span()), LockError);
  Region region(8192);
  { RegionJournal journal(region.span()); }
  EXPECT_THROW(RegionJournal(region.span().first(4096)), LockError);  // smaller than formatted

  for (size_t capacity : {size_t{1}, size_t{16384}, size_t{1} << 20}) {
    size_t bytes = RegionJournal::bytes_for(capacity);
    EXPECT_EQ(bytes % 4096, 0u);
    EXPECT_GE(bytes, capacity * 220 * 8 / 3);
  }
  std::printf("bytes_for(16384) = %zu, bytes_for(1048576) = %zu\n", RegionJournal::bytes_for(16384),
              RegionJournal::bytes_for(1 << 20));
}

// Opens the region as a table and returns its view, or the error it refused with.
std::string open_view(std::span<std::byte> region) {
  try {
    RegionJournal journal(region);
    DurableTable table(journal, kSmall, 1500);
    return view(table.table());
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(LocksRegionJournal, TornRecordIsDiscarded) {
  Region region(16384);
  std::string before;
  size_t end_before = 0;
  {
    RegionJournal journal(region.span());
    DurableTable table(journal, kSmall, 1 << 20);
    SessionId s = table.open_session("a");
    table.request({s, "f", Mode::kShared, std::vector<ByteRange>{{0, 10}}});
    before = view(table.table());
    end_before = journal.log_bytes();
    table.request({s, "f", Mode::kShared, std::vector<ByteRange>{{20, 10}}});
    ASSERT_NE(view(table.table()), before);
    // The last record's first payload byte, damaged: its checksum no longer matches.
    size_t log_offset = 64 + 2 * (journal.checkpoint_capacity() + 24);
    region.span()[log_offset + end_before + 16] ^= std::byte{0x40};
  }
  EXPECT_EQ(open_view(region.span()), before);
  {  // and the log goes on from there
    RegionJournal journal(region.span());
    EXPECT_EQ(journal.log_bytes(), end_before);
    DurableTable table(journal, kSmall, 1 << 20);
    table.request({1, "g", Mode::kShared, std::vector<ByteRange>{{0, 1}}});
    before = view(table.table());
  }
  EXPECT_EQ(open_view(region.span()), before);
}

TEST(LocksRegionJournal, UndecodableRecordIsNamed) {
  Region region(16384);
  {
    RegionJournal journal(region.span());
    DurableTable table(journal, kSmall);
  }
  {
    RegionJournal journal(region.span());
    uint8_t open[] = {1, 0};
    uint8_t junk[] = {0x99, 1, 2};
    journal.append(open);
    journal.append(junk);
  }
  RegionJournal journal(region.span());
  try {
    DurableTable table(journal, kSmall);
    ADD_FAILURE();
  } catch (const LockError& e) {
    EXPECT_NE(std::string(e.what()).find("record 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown operation 153"), std::string::npos);
  }
}

// Runs `action` on the table in `region` with a hook that copies the region after every
// store and opens the copy; each copy must show `before` or the state after the action, and
// must go on working: a further operation `next` on it, reopened, shows what it should.
// `action` pushes the view of the table after each operation it makes (the last: after).
void crash_everywhere(Region& region,
                      const std::function<void(DurableTable&, std::vector<std::string>&)>& action,
                      const Op& next, size_t* points_out = nullptr, size_t stride = 1) {
  std::string before = open_view(region.span());
  std::vector<std::string> seen;
  bool busy = false;
  Region copy(region.words.size() * 8);
  size_t stores = 0;
  RegionJournal::set_store_hook([&] {
    if (busy || stores++ % stride != 0) return;
    busy = true;
    copy.words = region.words;
    std::string after_next;
    {
      RegionJournal journal(copy.span());
      DurableTable table(journal, kSmall, 1500);
      seen.push_back(view(table.table()));
      // The state the crash left goes on working: one more operation, then reopened.
      LockTable expected = LockTable::load(table.table().save(), kSmall);
      EXPECT_EQ(run(table, next), run(expected, next));
      after_next = view(expected);
      EXPECT_EQ(view(table.table()), after_next);
    }
    EXPECT_EQ(open_view(copy.span()), after_next);
    busy = false;
  });
  std::vector<std::string> states{before};
  {
    RegionJournal journal(region.span());
    DurableTable table(journal, kSmall, 1500);
    action(table, states);
  }
  RegionJournal::set_store_hook({});
  std::string after = states.back();
  // Each crash leaves the state before or after one of the operations, in order.
  size_t at = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    while (at < states.size() && seen[i] != states[at]) ++at;
    ASSERT_LT(at, states.size()) << "store " << i << " left a state no operation made:\n"
                                 << seen[i];
  }
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), before);
  if (stride == 1) {
    EXPECT_EQ(seen.back(), after);  // the commit or switch: the last store
  }
  if (points_out) *points_out = seen.size();
  EXPECT_EQ(open_view(region.span()), after);
}

TEST(LocksRegionJournal, CrashAtEveryStoreLeavesOldOrNewState) {
  Region region(24 << 10);
  std::mt19937_64 rng(11);
  LockTable plain(kSmall);
  {
    RegionJournal journal(region.span());
    DurableTable table(journal, kSmall, 1500);
    for (int i = 0; i < 60; ++i) {
      Op op = random_op(rng, plain);
      run(plain, op);
      run(table, op);
    }
  }
  Op next;
  next.kind = Op::kOpen;
  next.label = "after the crash";
  size_t points = 0;
  // An append of a request with a few ranges.
  Op op;
  op.kind = Op::kRequest;
  op.request = {1, "zz", Mode::kExclusive, std::vector<ByteRange>{{0, 3}, {10, 3}, {20, 3}}};
  crash_everywhere(
      region,
      [&](DurableTable& t, std::vector<std::string>& states) {
        op.request.session = t.table().sessions().back().id;
        run(t, op);
        states.push_back(view(t.table()));
      },
      next, &points);
  EXPECT_GT(points, 15u);  // the bytes of a short record, its checksum, the next word, the commit
  // A checkpoint.
  crash_everywhere(
      region,
      [](DurableTable& t, std::vector<std::string>& states) {
        t.checkpoint();
        states.push_back(view(t.table()));
      },
      next, &points);
  EXPECT_GT(points, 100u);
  // Operations until one passes checkpoint_after and checkpoints on its own.
  crash_everywhere(
      region,
      [&](DurableTable& t, std::vector<std::string>& states) {
        for (uint64_t before = t.checkpoints_written(); t.checkpoints_written() == before;) {
          t.open_session(std::string(100, 'l'));
          states.push_back(view(t.table()));
        }
      },
      next, &points, 7);  // every 7th store: the two above try every one
}

TEST(LocksRegionJournal, FullRegionRefusesAndChangesNothing) {
  Region region(4096);
  RegionJournal journal(region.span());
  DurableTable table(journal, {1000, 16});
  SessionId s = table.open_session();
  std::string label(200, 'q');
  bool refused = false;
  for (int i = 0; i < 100 && !refused; ++i) {
    try {
      table.open_session(label);
    } catch (const LockError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kResourceExhausted);
      refused = true;
    }
  }
  ASSERT_TRUE(refused);
  // Small records still fit for a while; then they are refused too.
  Outcome out;
  for (uint64_t i = 0; i < 1000 && out.status != Status::kTableFull; ++i) {
    out = table.request({s, "f", Mode::kShared, std::vector<ByteRange>{{2 * i, 1}}});
  }
  std::string before = view(table.table());
  Bytes saved = table.table().save();
  out = table.request({s, "f", Mode::kShared, std::vector<ByteRange>{{1, 1}}});
  EXPECT_EQ(out.status, Status::kTableFull);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->kind(), ErrorKind::kResourceExhausted);
  EXPECT_NE(std::string(out.error->what()).find("nothing changed"), std::string::npos);
  Change change = table.expire(s);
  ASSERT_TRUE(change.error);
  EXPECT_EQ(change.error->kind(), ErrorKind::kResourceExhausted);
  EXPECT_EQ(table.table().save(), saved);
  EXPECT_EQ(view(table.table()), before);
  // An invalid request is refused as invalid: it needs no log.
  EXPECT_EQ(table.request({s, "", Mode::kShared, std::vector<ByteRange>{{0, 1}}}).status,
            Status::kInvalid);
  RegionJournal reopened(region.span());
  DurableTable again(reopened, {1000, 16});
  EXPECT_EQ(again.table().save(), saved);
}

// ---- FileJournal -----------------------------------------------------------------------------

TEST(LocksFileJournal, ReopenAfterCheckpointAndTornTail) {
  namespace fs = std::filesystem;
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  std::string state;
  {
    FileJournal journal(dir);
    DurableTable table(journal, kSmall, 200);
    SessionId s = table.open_session("asnd");
    for (uint64_t i = 0; i < 30; ++i) {
      table.request({s, "f", Mode::kExclusive, std::vector<ByteRange>{{i * 10, 5}}});
    }
    EXPECT_GT(table.checkpoints_written(), 2u);
    state = view(table.table());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "checkpoint");
  EXPECT_TRUE(names[1].starts_with("log."));
  std::ofstream(dir + "/checkpoint.tmp") << "left by a crash";
  std::ofstream(dir + "/log.00000000000000ff") << "a stale log";
  std::string log = dir + "/" + names[1];
  size_t log_size;
  {
    FileJournal journal(dir);
    DurableTable table(journal, kSmall, 1 << 20);
    EXPECT_EQ(view(table.table()), state);
    log_size = journal.log_bytes();
    table.request({1, "g", Mode::kShared, std::vector<ByteRange>{{0, 1}}});
  }
  EXPECT_FALSE(fs::exists(dir + "/checkpoint.tmp"));
  EXPECT_FALSE(fs::exists(dir + "/log.00000000000000ff"));
  // The last record torn: cut off at open, and the log goes on after the one before.
  fs::resize_file(log, fs::file_size(log) - 3);
  {
    FileJournal journal(dir);
    EXPECT_EQ(journal.log_bytes(), log_size);
    DurableTable table(journal, kSmall, 1 << 20);
    EXPECT_EQ(view(table.table()), state);
    table.request({1, "h", Mode::kShared, std::vector<ByteRange>{{0, 1}}});
    state = view(table.table());
  }
  {
    FileJournal journal(dir);
    DurableTable table(journal, kSmall, 1 << 20);
    EXPECT_EQ(view(table.table()), state);
  }
  // A damaged checkpoint is an error, not an empty table.
  {
    std::fstream f(dir + "/checkpoint", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  try {
    FileJournal journal(dir);
    ADD_FAILURE();
  } catch (const LockError& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  }
}

// The log is stored through a mapped window of its file: a log of many windows comes back,
// a process killed between records leaves the window's zeros after the last one (cut at
// open), and a file that cannot grow for the next window refuses the operation, changing
// nothing.
constexpr size_t kPage = 4096;
constexpr TableLimits kRoomy{4096, 16};

// Applies request i of a fixed sequence (each ~40 bytes of log) to `table`.
template <typename Table>
void apply_request(Table& table, SessionId s, uint64_t i) {
  table.request({s, "f" + std::to_string(i % 7), i % 3 == 0 ? Mode::kShared : Mode::kExclusive,
                 std::vector<ByteRange>{{i * 10, 5}}});
}

TEST(LocksFileJournal, ALogOfManyWindowsComesBack) {
  namespace fs = std::filesystem;
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  LockTable plain(kRoomy);
  SessionId ps = plain.open_session("asnd");
  size_t log_bytes = 0;
  {
    FileJournal journal(dir, kPage);
    DurableTable table(journal, kRoomy, size_t{1} << 30);
    SessionId s = table.open_session("asnd");
    for (uint64_t i = 0; i < 1000; ++i) {
      apply_request(table, s, i);
      apply_request(plain, ps, i);
    }
    log_bytes = journal.log_bytes();
    EXPECT_GT(log_bytes, 3 * kPage);  // records in several windows, some across their ends
    EXPECT_EQ(view(table.table()), view(plain));
  }
  std::string log;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with("log.")) log = e.path();
  }
  EXPECT_EQ(fs::file_size(log), log_bytes);  // a clean close cuts the window's zeros
  FileJournal journal(dir, kPage);
  EXPECT_EQ(journal.log_bytes(), log_bytes);
  DurableTable table(journal, kRoomy, size_t{1} << 30);
  EXPECT_EQ(view(table.table()), view(plain));
}

TEST(LocksFileJournal, RecordsLargerThanAWindowComeBack) {
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  std::vector<Bytes> records;
  for (size_t size : {100u, 3 * 4096u + 5, 50u, 4096u, 1u, 9000u}) {
    Bytes r(size);
    for (size_t i = 0; i < size; ++i) r[i] = static_cast<uint8_t>(i * 7 + size);
    records.push_back(std::move(r));
  }
  {
    FileJournal journal(dir, kPage);
    for (const Bytes& r : records) journal.append(r);
  }
  FileJournal journal(dir, kPage);
  std::vector<Bytes> replayed;
  journal.replay([&](std::span<const uint8_t> r) { replayed.emplace_back(r.begin(), r.end()); });
  EXPECT_EQ(replayed, records);
}

TEST(LocksFileJournal, AKilledProcessLeavesEveryRecordItAppended) {
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  constexpr uint64_t kRequests = 150;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // appends, then dies as kill -9 would: no destructor runs
    FileJournal journal(dir, kPage);
    DurableTable table(journal, kRoomy, size_t{1} << 30);
    SessionId s = table.open_session("asnd");
    for (uint64_t i = 0; i < kRequests; ++i) apply_request(table, s, i);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  LockTable plain(kRoomy);
  SessionId ps = plain.open_session("asnd");
  for (uint64_t i = 0; i < kRequests; ++i) apply_request(plain, ps, i);
  FileJournal journal(dir, kPage);
  DurableTable table(journal, kRoomy, size_t{1} << 30);
  EXPECT_EQ(view(table.table()), view(plain));
}

TEST(LocksFileJournal, AFileThatCannotGrowRefusesAndChangesNothing) {
  test::TempDir tmp;
  const std::string dir = tmp.file("journal");
  const std::string state_file = tmp.file("state");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The file size limit stands for a full disk: the log's next window cannot be reserved.
    ::signal(SIGXFSZ, SIG_IGN);
    FileJournal journal(dir, kPage);
    DurableTable table(journal, kRoomy, size_t{1} << 30);  // its first checkpoint: < 1 page
    rlimit unlimited{};
    if (::getrlimit(RLIMIT_FSIZE, &unlimited) != 0) ::_exit(10);
    rlimit limit{3 * kPage, unlimited.rlim_max};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    SessionId s = table.open_session("asnd");
    std::string before;
    uint64_t i = 0;
    try {
      for (; i < 1000; ++i) {
        before = view(table.table());
        apply_request(table, s, i);
      }
      ::_exit(11);  // never refused
    } catch (const std::system_error& e) {
      if (std::string(e.what()).find("cannot extend") == std::string::npos) ::_exit(12);
    }
    if (view(table.table()) != before) ::_exit(13);  // the refused request changed the table
    try {
      apply_request(table, s, i);  // still refused, still nothing changed
      ::_exit(14);
    } catch (const std::system_error&) {
    }
    if (view(table.table()) != before) ::_exit(15);
    if (::setrlimit(RLIMIT_FSIZE, &unlimited) != 0) ::_exit(10);
    std::ofstream(state_file) << before;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "10: setrlimit failed, 11: never refused, 12: not the "
                                       "window's error, 13-15: a refused request changed the table";
  std::stringstream before;
  before << std::ifstream(state_file).rdbuf();
  FileJournal journal(dir, kPage);  // the records before the refusal, no more
  DurableTable table(journal, kRoomy, size_t{1} << 30);
  EXPECT_EQ(view(table.table()), before.str());
}

TEST(LocksFileJournal, UnusableDirectoryIsAClearError) {
  test::TempDir tmp;
  const std::string file = tmp.file("not_a_dir");
  std::ofstream(file) << "x";
  try {
    FileJournal journal(file);
    ADD_FAILURE();
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos) << e.what();
  }
  try {
    FileJournal journal(file + "/sub");
    ADD_FAILURE();
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot make directory"), std::string::npos) << e.what();
  }
}

// ---- rates (printed, not asserted; ASN_LOCKS_PERF=1 for the full sizes) --------------------

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <typename Table>
double pairs_per_second(Table& table, SessionId s, size_t pairs) {
  Request r{s, "file-1", Mode::kExclusive, std::vector<ByteRange>{{4096, 4096}}};
  RangeSpec range = std::vector<ByteRange>{{4096, 4096}};
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < pairs; ++i) {
    Outcome out = table.request(r);
    if (out.status != Status::kGranted) std::abort();
    if (!table.release(s, r.file, range).ok()) std::abort();
  }
  return static_cast<double>(pairs) / seconds_since(start);
}

TEST(LocksDurablePerf, PrintsRates) {
  bool full = std::getenv("ASN_LOCKS_PERF") != nullptr;
  size_t pairs = full ? 2000000 : 5000;
  size_t entries = full ? 1000000 : 5000;
  {
    LockTable plain;
    SessionId s = plain.open_session();
    std::printf("plain LockTable: %.0f lock+unlock pairs/s\n", pairs_per_second(plain, s, pairs));
  }
  {
    size_t bytes = RegionJournal::bytes_for(kDefaultCapacity);
    void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    RegionJournal journal({static_cast<std::byte*>(map), bytes});
    DurableTable table(journal, {});
    SessionId s = table.open_session();
    std::printf(
        "DurableTable over RegionJournal (%zu-byte region): %.0f pairs/s, %llu "
        "checkpoints\n",
        bytes, pairs_per_second(table, s, pairs),
        static_cast<unsigned long long>(table.checkpoints_written()));
    ::munmap(map, bytes);
  }
  {
    LockTable t({entries + 16, kDefaultMaxRanges});
    std::vector<SessionId> sessions;
    for (int i = 0; i < 1000; ++i)
      sessions.push_back(t.open_session("client " + std::to_string(i)));
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < entries; ++i) {
      Request r{sessions[i % 1000], "file-" + std::to_string(i % 100), Mode::kExclusive,
                std::vector<ByteRange>{{(i / 100) * 8192, 4096}}};
      if (t.request(r).status != Status::kGranted) std::abort();
    }
    double fill = seconds_since(start);
    start = std::chrono::steady_clock::now();
    Bytes bytes = t.save();
    double save = seconds_since(start);
    start = std::chrono::steady_clock::now();
    LockTable copy = LockTable::load(bytes, t.limits());
    double load = seconds_since(start);
    EXPECT_EQ(copy.stats().held_entries, entries);
    std::printf(
        "%zu held entries (filled in %.3f s): save %.3f s, load %.3f s, %zu bytes "
        "(%.1f per entry)\n",
        entries, fill, save, load, bytes.size(),
        static_cast<double>(bytes.size()) / static_cast<double>(entries));
  }
}

}  // namespace
}  // namespace asn::locks

// The switch's lock engine (LOCK block version 2) end to end on the emulated board: through
// its rings with LockRings, and as a lock domain with SwitchDomain, whose results must be
// those of a plain locks::LockTable. The table lives in the board memory file's DRAM: it
// survives closing and reopening the board (an asnd restart) and a board reset empties it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

#include "asn/locks/durable.hpp"
#include "asn/locks/lock_table.hpp"
#include "asn/regmap/regs.hpp"
#include "bus/emulated_bus.hpp"
#include "counting_bus.hpp"
#include "device/device.hpp"
#include "device/lock_rings.hpp"
#include "error.hpp"
#include "locks/switch_domain.hpp"
#include "support.hpp"

namespace asn {
namespace {

namespace l = regs::lock;
using locks::ByteRange;
using locks::Mode;
using locks::Status;

class LockEngineTest : public ::testing::Test {
 protected:
  void open(const std::string& profile = "netfpga-1g", bool reset = false) {
    domain_.reset();
    device_.reset();
    bus_.reset();
    EmulatedBusOptions options;
    options.board_name = name_;
    options.profile = profile;
    options.shm_dir = dir_.path();
    options.run_clock = false;
    options.power_on_reset = reset;
    bus_ = std::make_unique<EmulatedBus>(options);
    device_ = std::make_unique<Device>(*bus_);
    domain_ = std::make_unique<SwitchDomain>(*device_);
  }
  void SetUp() override { open(); }

  locks::Request req(locks::SessionId s, const std::string& file, Mode mode,
                     std::vector<ByteRange> ranges, locks::Wait wait = locks::Wait::kBlock) {
    locks::Request r;
    r.session = s;
    r.file = file;
    r.mode = mode;
    r.ranges = std::move(ranges);
    r.wait = wait;
    return r;
  }

  test::TempDir dir_;
  std::string name_ = test::unique_name("lock");
  std::unique_ptr<EmulatedBus> bus_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<SwitchDomain> domain_;
};

TEST_F(LockEngineTest, GrantsQueuesAndRefusesThroughTheRings) {
  EXPECT_EQ(device_->read(l::kStatusReady), 1u);
  EXPECT_EQ(device_->read(l::kStatusRestored), 0u);
  const auto a = domain_->open_session("client-a");
  const auto b = domain_->open_session("client-b");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);

  auto granted = domain_->request(req(a, "f", Mode::kExclusive, {{0, 100}, {200, 50}}));
  ASSERT_EQ(granted.status, Status::kGranted);
  ASSERT_TRUE(granted.grant);
  EXPECT_EQ(granted.grant->file, "f");
  EXPECT_EQ(granted.grant->ranges, (std::vector<ByteRange>{{0, 100}, {200, 50}}));
  EXPECT_EQ(granted.grant->token, 1u);

  auto conflict = domain_->request(req(b, "f", Mode::kShared, {{50, 10}}, locks::Wait::kTry));
  EXPECT_EQ(conflict.status, Status::kConflict);
  ASSERT_TRUE(conflict.error);
  EXPECT_EQ(conflict.error->kind(), locks::ErrorKind::kFailedPrecondition);

  auto queued = domain_->request(req(b, "f", Mode::kShared, {{50, 10}}));
  EXPECT_EQ(queued.status, Status::kQueued);

  auto invalid = domain_->request(req(b, "f", Mode::kShared, {{0, 10}, {5, 10}}));
  EXPECT_EQ(invalid.status, Status::kInvalid);
  ASSERT_TRUE(invalid.error && invalid.error->index());
  EXPECT_EQ(*invalid.error->index(), 1u);

  std::vector<ByteRange> many;
  for (uint64_t i = 0; i < 5000; ++i) many.push_back({1000000 + i * 10, 5});
  auto full = domain_->request(req(a, "g", Mode::kShared, many));  // 4096 entries
  EXPECT_EQ(full.status, Status::kTableFull);

  // A session's held entries and waiting requests come with the list of sessions.
  auto before = domain_->sessions();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].id, a);
  EXPECT_EQ(before[0].label, "client-a");
  EXPECT_EQ(before[0].held_entries, 2u);
  EXPECT_EQ(before[0].waiting_requests, 0u);
  EXPECT_EQ(before[1].held_entries, 0u);
  EXPECT_EQ(before[1].waiting_requests, 1u);

  // The release lets the waiter through: a "granted later" record of the release.
  auto change = domain_->release(a, "f", std::vector<ByteRange>{{0, 100}});
  ASSERT_TRUE(change.ok());
  ASSERT_EQ(change.granted.size(), 1u);
  EXPECT_EQ(change.granted[0].request, queued.request);
  EXPECT_EQ(change.granted[0].session, b);
  EXPECT_EQ(change.granted[0].token, 2u);
  EXPECT_EQ(change.granted[0].ranges, (std::vector<ByteRange>{{50, 10}}));

  auto sessions = domain_->sessions();
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[1].label, "client-b");
  EXPECT_EQ(sessions[0].held_entries, 1u);
  EXPECT_EQ(sessions[1].held_entries, 1u);
  EXPECT_EQ(sessions[1].waiting_requests, 0u);
  EXPECT_EQ(domain_->files("", 10), (std::vector<std::string>{"f"}));
  const auto stats = domain_->stats();
  EXPECT_EQ(stats.capacity, 4096u);
  EXPECT_EQ(stats.grants, 2u);
  EXPECT_EQ(stats.conflicts, 1u);
  EXPECT_EQ(stats.table_full, 1u);
  EXPECT_EQ(device_->read(l::kGrants), 2u);
  EXPECT_NE(device_->read(regs::id::kIrqStatusLockCompletion), 0u);
}

// A list of 600 held entries: 601 records through a ring of 256 slots. The engine stalls
// with the rest in its backlog, consumes no further request meanwhile, and goes on as the
// consumer index moves.
TEST_F(LockEngineTest, AFullCompletionRingStallsAndResumes) {
  const auto s = domain_->open_session("s");
  for (uint64_t i = 0; i < 600; ++i) {
    ASSERT_EQ(domain_->request(req(s, "f", Mode::kShared, {{i * 10, 5}})).status, Status::kGranted);
  }
  LockRings rings(*device_);
  LockDescriptor list;
  list.op = LockOpCode::kListFile;
  list.file = "f";
  list.tag = 77;
  rings.post(list, LockRings::Doorbell::kLater);
  LockDescriptor open;
  open.op = LockOpCode::kOpenSession;
  open.tag = 78;
  rings.post(open, LockRings::Doorbell::kLater);
  rings.ring_doorbell();
  EXPECT_EQ(device_->read(l::kStatusStalled), 1u);
  EXPECT_GT(device_->read(l::kBacklogRecords), 0u);
  EXPECT_EQ(device_->read(l::kRequestConsumerIndex), device_->read(l::kRequestProducerIndex) - 1);

  std::vector<LockCompletion> all;
  for (int round = 0; round < 10; ++round) {
    // A slow reader. The domain's last record is still in the ring: it hands its slots back
    // with its next request.
    for (auto& r : rings.drain(100)) {
      if (r.tag == 77 || r.tag == 78) all.push_back(std::move(r));
    }
    rings.acknowledge();
  }
  ASSERT_EQ(all.size(), 602u);
  EXPECT_EQ(all[0].kind, LockRecordKind::kHeld);
  EXPECT_EQ(all[599].ranges.front(), (ByteRange{5990, 5}));
  EXPECT_EQ(all[600].kind, LockRecordKind::kEnd);
  EXPECT_EQ(all[601].kind, LockRecordKind::kSession);
  EXPECT_EQ(all[601].tag, 78u);
  EXPECT_EQ(device_->read(l::kStatusStalled), 0u);

  // The domain takes the rings back (as after another owner) and lists the file itself:
  // it hands the slots back while it waits for the rest of the records.
  domain_->board_reset();
  EXPECT_EQ(domain_->list("f").held.size(), 600u);
  EXPECT_EQ(device_->read(l::kStatusStalled), 0u);
}

// The rings' own indices stay with asnd: a granted lock is one write (the descriptor, its
// data, the producer index and the doorbell) and two reads (the completion producer with the
// slot of the next record, then the record's data); the slot goes back to the engine with the
// next request. (It was six: the indices were read before every post and drain, and the consumer
// written after.)
TEST_F(LockEngineTest, ALockOperationTakesThreeBusTransactions) {
  test::CountingBus counting(*bus_);
  Device device(counting);
  SwitchDomain domain(device);
  const auto s = domain.open_session("s");
  counting.transactions = 0;
  ASSERT_EQ(domain.request(req(s, "f", Mode::kExclusive, {{0, 10}})).status, Status::kGranted);
  EXPECT_EQ(counting.transactions, 3);
  const uint32_t handed_back = device.read(l::kCompletionConsumerIndex);
  counting.transactions = 0;
  EXPECT_EQ(domain.release(s, "f", std::vector<ByteRange>{{0, 10}}).released, 1u);
  EXPECT_EQ(counting.transactions, 2);  // its done record has no data
  EXPECT_EQ(device.read(l::kCompletionConsumerIndex),
            (handed_back + 1) % device.entries(l::kCompletion.window));
}

// Requests the engine has not consumed yet fill the ring: the next post is refused with
// RESOURCE_EXHAUSTED and writes nothing; once the engine consumes, posting goes on.
TEST_F(LockEngineTest, AFullRequestRingRefusesThePost) {
  LockRings rings(*device_);
  const uint32_t slots = rings.request_entries();
  LockDescriptor open;
  open.op = LockOpCode::kOpenSession;
  open.file = "s";
  for (uint32_t i = 0; i + 1 < slots; ++i) {
    open.tag = 1000 + i;
    rings.post(open, LockRings::Doorbell::kLater);  // the engine sees none of them yet
  }
  const uint32_t producer = device_->read(l::kRequestProducerIndex);
  open.tag = 1;
  try {
    rings.post(open);
    FAIL() << "a post into a full request ring succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
    EXPECT_NE(std::string(e.what()).find("is full"), std::string::npos) << e.what();
  }
  EXPECT_EQ(device_->read(l::kRequestProducerIndex), producer);
  rings.ring_doorbell();
  size_t sessions = 0;
  for (auto records = rings.drain(); !records.empty(); records = rings.drain()) {
    sessions += static_cast<size_t>(std::count_if(records.begin(), records.end(), [](auto& r) {
      return r.kind == LockRecordKind::kSession;
    }));
    rings.acknowledge();
  }
  EXPECT_EQ(sessions, slots - 1);
  rings.post(open);  // room again
}

// asnd reads the request consumer index only when the ring or request_data looks full: both
// wrap around many times, and every request is still read from where it was written.
TEST_F(LockEngineTest, TheRequestRingAndItsDataWrapAround) {
  const auto s = domain_->open_session("s");
  const uint32_t slots = device_->entries(l::kRequest.window);
  for (uint32_t i = 0; i < 2 * slots + 3; ++i) {
    const std::vector<ByteRange> r{{uint64_t{i} * 100, 50}};
    ASSERT_EQ(domain_->request(req(s, "f" + std::to_string(i % 7), Mode::kExclusive, r)).status,
              Status::kGranted);
    ASSERT_EQ(domain_->release(s, "f" + std::to_string(i % 7), r).released, 1u);
  }
  // Requests of 1,000 ranges: 4,000 words of data each, request_data filled many times over.
  const uint32_t data_words = device_->entries(l::kRequestData);
  std::vector<ByteRange> many;
  for (uint64_t i = 0; i < 1000; ++i) many.push_back({i * 10, 5});
  const uint32_t rounds = 3 * data_words / 4000 + 1;
  for (uint32_t i = 0; i < rounds; ++i) {
    many.back().length = 1 + i % 4;  // each request its own, so a stale one would show
    const auto granted = domain_->request(req(s, "many", Mode::kShared, many));
    ASSERT_EQ(granted.status, Status::kGranted) << "round " << i;
    ASSERT_EQ(granted.grant->ranges, many) << "round " << i;
    ASSERT_EQ(domain_->release(s, "many", many).released, 1000u) << "round " << i;
  }
  EXPECT_EQ(domain_->stats().held_entries, 0u);
}

// A board reset under asnd sets the ring indices back to 0 and stops the engine. Until asnd
// has set the rings up again an operation fails at once, and the request it posted is not
// run later, when the engine is enabled again.
TEST_F(LockEngineTest, AfterABoardResetTheRingsAreSetUpAgain) {
  const auto a = domain_->open_session("a");
  ASSERT_EQ(domain_->request(req(a, "f", Mode::kExclusive, {{0, 10}})).status, Status::kGranted);
  device_->reset_board();
  const auto started = std::chrono::steady_clock::now();
  try {
    domain_->open_session("lost");
    FAIL() << "an operation on the reset board's rings succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("board was reset"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));

  // The failed operation left its (stale) indices in the reset board: setting the rings up
  // drops them, and reads no record that is not there.
  LockRings rings(*device_);
  rings.enable();
  EXPECT_TRUE(rings.drain().empty());
  EXPECT_EQ(device_->read(l::kCompletionConsumerIndex), 0u);
  EXPECT_EQ(device_->read(l::kRequestProducerIndex), device_->read(l::kRequestConsumerIndex));

  domain_->board_reset();                     // what the reconciler does when it sees the reset
  EXPECT_EQ(domain_->open_session("b"), 1u);  // "lost" never ran
  EXPECT_EQ(domain_->stats().sessions, 1u);
  EXPECT_EQ(domain_->request(req(1, "f", Mode::kExclusive, {{0, 10}})).status, Status::kGranted);
}

TEST_F(LockEngineTest, TheTableSurvivesAReopenAndABoardResetEmptiesIt) {
  const auto a = domain_->open_session("a");
  const auto b = domain_->open_session("b");
  ASSERT_EQ(domain_->request(req(a, "f", Mode::kExclusive, {{0, 10}})).status, Status::kGranted);
  const auto waiting = domain_->request(req(b, "f", Mode::kExclusive, {{0, 10}}));
  ASSERT_EQ(waiting.status, Status::kQueued);

  open();  // asnd restarts: the board memory file is opened again
  EXPECT_EQ(device_->read(l::kStatusRestored), 1u);
  const auto held = domain_->list("f");
  ASSERT_EQ(held.held.size(), 1u);
  EXPECT_EQ(held.held[0].session, a);
  ASSERT_EQ(held.waiting.size(), 1u);
  EXPECT_EQ(held.waiting[0].request, waiting.request);
  auto change = domain_->expire(a);
  ASSERT_EQ(change.granted.size(), 1u);
  EXPECT_EQ(change.granted[0].token, 2u);  // tokens go on
  EXPECT_EQ(domain_->open_session("c"), 3u);

  device_->reset_board();
  domain_ = std::make_unique<SwitchDomain>(*device_);
  EXPECT_TRUE(domain_->list("f").held.empty());
  EXPECT_EQ(domain_->stats().sessions, 0u);
  EXPECT_EQ(domain_->open_session("d"), 1u);
}

// The same random operations on the switch and on a plain LockTable: the same results.
void expect_same(const locks::Grant& a, const locks::Grant& b) {
  EXPECT_EQ(a.request, b.request);
  EXPECT_EQ(a.session, b.session);
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.token, b.token);
  EXPECT_EQ(a.ranges, b.ranges);
}

void expect_same(const std::optional<locks::LockError>& a,
                 const std::optional<locks::LockError>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->kind(), b->kind());
  EXPECT_EQ(a->index(), b->index());
  EXPECT_STREQ(a->what(), b->what());
}

void expect_same(const locks::Change& a, const locks::Change& b) {
  expect_same(a.error, b.error);
  ASSERT_EQ(a.granted.size(), b.granted.size());
  for (size_t i = 0; i < a.granted.size(); ++i) expect_same(a.granted[i], b.granted[i]);
  EXPECT_EQ(a.cancelled, b.cancelled);
  EXPECT_EQ(a.released, b.released);
}

TEST_F(LockEngineTest, TheSwitchDomainGivesLockTableResults) {
  locks::TableLimits limits;
  limits.capacity = 4096;
  locks::LockTable plain(limits);
  std::mt19937 rng(9);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  std::vector<locks::SessionId> sessions;
  std::vector<locks::RequestId> requests;
  const std::vector<std::string> files = {"a", "b", std::string(128, 'x')};
  auto ranges = [&]() -> locks::RangeSpec {
    if (pick(4) == 0) {
      return locks::Strided{pick(100), 1 + pick(8), 10, 1 + pick(6)};
    }
    std::vector<ByteRange> list;
    const uint32_t n = 1 + pick(3);
    for (uint32_t i = 0; i < n; ++i) list.push_back({pick(120), pick(30)});  // some invalid
    return list;
  };
  for (int step = 0; step < 1500; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const uint32_t what = sessions.empty() ? 0 : pick(10);
    if (what == 0) {
      const auto s = domain_->open_session("s");
      ASSERT_EQ(s, plain.open_session());
      sessions.push_back(s);
    } else if (what <= 4) {
      auto r = req(sessions[pick(sessions.size())], files[pick(files.size())],
                   pick(2) ? Mode::kExclusive : Mode::kShared, {},
                   pick(3) == 0 ? locks::Wait::kTry : locks::Wait::kBlock);
      r.ranges = ranges();
      const auto x = domain_->request(r);
      const auto y = plain.request(r);
      ASSERT_EQ(x.status, y.status);
      EXPECT_EQ(x.request, y.request);
      ASSERT_EQ(x.grant.has_value(), y.grant.has_value());
      if (x.grant) expect_same(*x.grant, *y.grant);
      expect_same(x.error, y.error);
      if (y.request) requests.push_back(y.request);
    } else if (what <= 6) {
      const auto s = sessions[pick(sessions.size())];
      const auto& f = files[pick(files.size())];
      const auto spec = ranges();
      if (pick(2)) {
        expect_same(domain_->release(s, f, spec), plain.release(s, f, spec));
      } else {
        expect_same(domain_->downgrade(s, f, spec), plain.downgrade(s, f, spec));
      }
    } else if (what == 7 && !requests.empty()) {
      const auto id = requests[pick(requests.size())];
      expect_same(domain_->cancel(id), plain.cancel(id));
    } else if (what == 8) {
      const auto s = sessions[pick(sessions.size())];
      expect_same(domain_->expire(s), plain.expire(s));
    } else {
      const auto& f = files[pick(files.size())];
      const auto x = domain_->list(f);
      const auto y = plain.list(f);
      EXPECT_EQ(x.held, y.held);
      ASSERT_EQ(x.waiting.size(), y.waiting.size());
      for (size_t i = 0; i < x.waiting.size(); ++i) {
        EXPECT_EQ(x.waiting[i].request, y.waiting[i].request);
        EXPECT_EQ(x.waiting[i].ranges, y.waiting[i].ranges);
      }
    }
  }
  const auto xs = domain_->sessions();
  const auto ys = plain.sessions();
  ASSERT_EQ(xs.size(), ys.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(xs[i].id, ys[i].id);
    EXPECT_EQ(xs[i].held_entries, ys[i].held_entries);
    EXPECT_EQ(xs[i].waiting_requests, ys[i].waiting_requests);
  }
  const auto x = domain_->stats();
  const auto y = plain.stats();
  EXPECT_EQ(x.entries_in_use, y.entries_in_use);
  EXPECT_EQ(x.waiting_requests, y.waiting_requests);
  EXPECT_EQ(x.files, y.files);
  EXPECT_EQ(x.sessions, y.sessions);
  EXPECT_EQ(x.grants, y.grants);
  EXPECT_EQ(x.queued, y.queued);
  EXPECT_EQ(x.releases, y.releases);
  EXPECT_EQ(x.conflicts, y.conflicts);
  EXPECT_EQ(x.cancelled, y.cancelled);
  EXPECT_EQ(x.expired, y.expired);
}

// Measured, not asserted: printed for the record, when asked for (ASN_LOCKS_PERF=1), as
// speed belongs to benchmarks (bench/locks_bench.cc has the engine in-core and the service).
TEST_F(LockEngineTest, Throughput) {
  if (std::getenv("ASN_LOCKS_PERF") == nullptr) GTEST_SKIP() << "set ASN_LOCKS_PERF=1 to measure";
  const auto s = domain_->open_session("bench");
  auto rate = [](int n, auto&& body) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) body(i);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return n / took.count();
  };
  const double pairs = rate(2000, [&](int i) {
    const std::vector<ByteRange> r{{uint64_t(i) * 100, 50}};
    domain_->request(req(s, "f", Mode::kExclusive, r));
    domain_->release(s, "f", r);
  });
  std::vector<ByteRange> sixteen;
  for (uint64_t i = 0; i < 16; ++i) sixteen.push_back({i * 1000, 100});
  const double multi = rate(1000, [&](int) {
    domain_->request(req(s, "f", Mode::kShared, sixteen));
    domain_->release(s, "f", sixteen);
  });
  std::printf(
      "[ measure  ] SwitchDomain on the emulated bus: %.0f single-range lock+unlock "
      "pairs/s, %.0f 16-range lock+unlock pairs/s\n",
      pairs, multi);
  locks::LockTable plain;
  const auto ps = plain.open_session();
  const double table = rate(20000, [&](int i) {
    const std::vector<ByteRange> r{{uint64_t(i) * 100, 50}};
    plain.request(req(ps, "f", Mode::kExclusive, r));
    plain.release(ps, "f", r);
  });
  std::printf("[ measure  ] plain LockTable: %.0f pairs/s\n", table);

  // The engine's table alone, in core: a DurableTable over a RegionJournal the size of the
  // DRAM a netfpga-1g engine gets, in ordinary memory (every operation logged first).
  std::vector<uint64_t> dram(locks::RegionJournal::bytes_for(4096) / sizeof(uint64_t));
  locks::RegionJournal journal(std::as_writable_bytes(std::span(dram)));
  locks::TableLimits limits;
  limits.capacity = 4096;
  locks::DurableTable durable(journal, limits);
  const auto ds = durable.open_session("bench");
  const double engine = rate(200000, [&](int i) {
    const std::vector<ByteRange> r{{uint64_t(i) * 100, 50}};
    durable.request(req(ds, "f", Mode::kExclusive, r));
    durable.release(ds, "f", r);
  });
  const double engine16 = rate(50000, [&](int) {
    durable.request(req(ds, "f", Mode::kShared, sixteen));
    durable.release(ds, "f", sixteen);
  });
  std::printf(
      "[ measure  ] engine alone (DurableTable over RegionJournal, in core): %.0f "
      "single-range lock+unlock pairs/s, %.0f 16-range lock+unlock pairs/s (%llu records, "
      "%llu checkpoints)\n",
      engine, engine16, static_cast<unsigned long long>(durable.records_logged()),
      static_cast<unsigned long long>(durable.checkpoints_written()));

  open("netfpga-sume", true);
  struct stat st {};
  ASSERT_EQ(::stat(bus_->board().path().c_str(), &st), 0);
  std::printf(
      "[ measure  ] netfpga-sume board memory file: %lld bytes apparent, %lld bytes "
      "allocated\n",
      static_cast<long long>(st.st_size), static_cast<long long>(st.st_blocks) * 512);
}

}  // namespace
}  // namespace asn

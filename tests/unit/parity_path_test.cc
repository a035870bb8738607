// The parity data path of the emulated board (STRIPE block version 2, issue 10, 004 L1131):
// groups programmed through register writes as asnd programs them, files written and read
// back byte-exactly through EmulatedBoard::stripe_*, the member stores checked against a
// straightforward parity of the test's own (XOR; Q by shift-and-reduce in GF(2^8), poly
// 0x11D, generator 2), degraded reads, rebuilds, counters, board reset and reopening.
#include <gtest/gtest.h>
#include <isa-l/raid.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "asn/stripe/geometry.hpp"
#include "board_access.hpp"
#include "parity_path_fixture.hpp"
#include "support.hpp"

namespace asn::model {
namespace {

StripeError::Kind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StripeError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no StripeError";
  return StripeError::Kind::kStorageIo;
}

// ---- round trips --------------------------------------------------------------------------

// Sizes of 0, less than a unit and not multiples of the stripe; overwrites at mid-stripe
// offsets and appends; after each step the file reads back byte-exactly, whole and in
// random ranges, and at the end the member stores hold the data and parity the test
// computes itself.
class RoundTrip : public ParityPathTest,
                  public ::testing::WithParamInterface<std::tuple<stripe::Raid, unsigned>> {};

TEST_P(RoundTrip, ReadsBackWhatWasWrittenAndParityIsRight) {
  const auto [raid, unit_log2] = GetParam();
  const GroupSpec s = spec(raid, unit_log2, 3);
  program(3, s);
  std::mt19937_64 rng(unit_log2 * 10 + static_cast<unsigned>(raid));
  const uint64_t stripe_bytes = s.geometry().stripe_bytes();
  const uint64_t u = s.geometry().unit_bytes;
  Bytes file;
  EXPECT_EQ(board_->stripe_file_size(3), 0u);
  EXPECT_TRUE(read_all(3).empty());
  board_->stripe_write(3, 0, {});
  EXPECT_EQ(board_->stripe_file_size(3), 0u);

  // A first file, then overwrites and appends at awkward offsets.
  const std::vector<std::pair<uint64_t, uint64_t>> steps = {
      {0, stripe_bytes * 2 + u / 2 + 5},     // ends mid-unit of a third stripe
      {u + 7, 100},                          // mid-stripe, inside one unit
      {stripe_bytes - 3, u + 6},             // across a stripe boundary
      {stripe_bytes * 2 + u, stripe_bytes},  // past the end: appends, partly
      {stripe_bytes * 5 + 11, 33},           // past the end with a hole
      {0, stripe_bytes},                     // one whole stripe
  };
  for (const auto& [offset, length] : steps) {
    write(3, file, offset, random_bytes(rng, length));
    ASSERT_EQ(board_->stripe_file_size(3), file.size());
    ASSERT_EQ(read_all(3), file) << "after a write of " << length << " at " << offset;
    for (int i = 0; i < 4; ++i) {
      const uint64_t at = rng() % (file.size() + 1);
      Bytes part(rng() % (2 * stripe_bytes));
      part.resize(board_->stripe_read(3, at, part));
      const uint64_t end = std::min<uint64_t>(file.size(), at + part.capacity());
      ASSERT_EQ(part, Bytes(file.begin() + static_cast<ptrdiff_t>(at),
                            file.begin() + static_cast<ptrdiff_t>(std::max(at, end))));
    }
  }
  expect_stores(3, s, file);
}

INSTANTIATE_TEST_SUITE_P(Layouts, RoundTrip,
                         ::testing::Combine(::testing::Values(stripe::Raid::k4, stripe::Raid::k5,
                                                              stripe::Raid::k6),
                                            ::testing::Values(12u, 16u, 20u)),
                         [](const auto& info) {
                           return "Raid" +
                                  std::to_string(static_cast<int>(std::get<0>(info.param))) +
                                  "Unit" + std::to_string(1u << std::get<1>(info.param));
                         });

TEST_F(ParityPathTest, RandomWritesMatchAPlainFile) {
  const GroupSpec s = spec(stripe::Raid::k6, 12, 4);
  program(0, s);
  std::mt19937_64 rng(7);
  Bytes file;
  for (int i = 0; i < 40; ++i) {
    const uint64_t offset = rng() % (file.size() + 20000);
    write(0, file, offset, random_bytes(rng, rng() % 40000));
  }
  ASSERT_EQ(read_all(0), file);
  expect_stores(0, s, file);
}

// ---- failures ---------------------------------------------------------------------------

// A failed member: the entry's failed mask set (as asnd sets it) and its store dropped;
// reads rebuild its units, and a rebuild restores its store byte-exactly.
TEST_F(ParityPathTest, DegradedReadsRebuildEverySingleMemberOfRaid5) {
  const GroupSpec s = spec(stripe::Raid::k5, 12, 3);
  program(1, s);
  std::mt19937_64 rng(11);
  Bytes file;
  write(1, file, 0, random_bytes(rng, 7 * s.geometry().stripe_bytes() + 1234));
  for (unsigned port : s.ports()) {
    const Bytes before = store(port, 1);
    program(1, s, {port});
    board_->stripe_fail_member(1, port);
    EXPECT_TRUE(store(port, 1).empty());
    ASSERT_EQ(read_all(1), file) << "port " << port << " failed";
    board_->stripe_rebuild_member(1, port);
    program(1, s);
    EXPECT_EQ(store(port, 1), before) << "port " << port << " rebuilt";
  }
  EXPECT_GT(counter(st::kUnitsRebuilt), 0u);
}

TEST_F(ParityPathTest, DegradedReadsRebuildEveryPairOfRaid6) {
  const GroupSpec s = spec(stripe::Raid::k6, 12, 4);
  program(2, s);
  std::mt19937_64 rng(13);
  Bytes file;
  write(2, file, 0, random_bytes(rng, 6 * s.geometry().stripe_bytes() + 999));
  const auto ports = s.ports();
  std::vector<Bytes> before;
  for (unsigned p : ports) before.push_back(store(p, 2));
  for (size_t a = 0; a < ports.size(); ++a) {
    for (size_t b = a; b < ports.size(); ++b) {
      std::vector<unsigned> failed = {ports[a]};
      if (b != a) failed.push_back(ports[b]);
      program(2, s, failed);
      for (unsigned p : failed) board_->stripe_fail_member(2, p);
      ASSERT_EQ(read_all(2), file) << "ports " << ports[a] << ", " << ports[b] << " failed";
      std::vector<uint64_t> progress;
      for (unsigned p : failed) {
        board_->stripe_rebuild_member(2, p, [&](uint64_t done, uint64_t total) {
          EXPECT_LE(done, total);
          progress.push_back(done);
        });
      }
      EXPECT_FALSE(progress.empty());
      program(2, s);
      for (size_t i = 0; i < ports.size(); ++i) ASSERT_EQ(store(ports[i], 2), before[i]);
    }
  }
}

// Writes while members are failed skip them; parity covers their data, so reads rebuild it,
// and a rebuild makes the stores those of a healthy group.
TEST_F(ParityPathTest, DegradedWritesAreReadBackAndRebuilt) {
  for (stripe::Raid raid : {stripe::Raid::k5, stripe::Raid::k6}) {
    const GroupSpec s = spec(raid, 13, 3, 10);
    program(4, s);
    std::mt19937_64 rng(17);
    Bytes file;
    const uint64_t stripe_bytes = s.geometry().stripe_bytes();
    write(4, file, 0, random_bytes(rng, 3 * stripe_bytes + 100));
    const auto ports = s.ports();
    std::vector<unsigned> failed = {ports[1]};
    if (raid == stripe::Raid::k6) failed.push_back(ports.back());
    program(4, s, failed);
    for (unsigned p : failed) board_->stripe_fail_member(4, p);
    write(4, file, stripe_bytes / 2 + 3, random_bytes(rng, 9000));  // reconstruct-write
    write(4, file, file.size() - 10, random_bytes(rng, stripe_bytes * 2));
    ASSERT_EQ(read_all(4), file);
    for (unsigned p : failed) EXPECT_TRUE(store(p, 4).empty()) << "port " << p << " was sent units";
    for (unsigned p : failed) board_->stripe_rebuild_member(4, p);
    program(4, s);
    ASSERT_EQ(read_all(4), file);
    expect_stores(4, s, file);
    board_->stripe_discard(4);
  }
}

TEST_F(ParityPathTest, MoreFailedMembersThanParityAreRefusedAndCounted) {
  const GroupSpec s6 = spec(stripe::Raid::k6, 12, 3);
  const GroupSpec s5 = spec(stripe::Raid::k5, 12, 3, 20);
  program(0, s6);
  program(1, s5);
  Bytes out(100);
  board_->stripe_write(0, 0, Bytes(50000, 1));
  board_->stripe_write(1, 0, Bytes(50000, 2));
  const auto p6 = s6.ports();
  const auto p5 = s5.ports();
  program(0, s6, {p6[0], p6[2], p6[4]});
  program(1, s5, {p5[1], p5[3]});
  EXPECT_EQ(counter(st::kErrors), 0u);
  EXPECT_EQ(kind_of([&] { board_->stripe_read(0, 0, out); }), StripeError::Kind::kTooManyFailed);
  EXPECT_EQ(kind_of([&] { board_->stripe_read(1, 0, out); }), StripeError::Kind::kTooManyFailed);
  EXPECT_EQ(kind_of([&] { board_->stripe_write(1, 0, out); }), StripeError::Kind::kTooManyFailed);
  EXPECT_EQ(kind_of([&] { board_->stripe_rebuild_member(1, p5[1]); }),
            StripeError::Kind::kTooManyFailed);
  EXPECT_EQ(counter(st::kErrors), 4u);
}

TEST_F(ParityPathTest, RequestsToNoGroupOrNoMemberAreRefusedAndCounted) {
  Bytes out(10);
  EXPECT_EQ(kind_of([&] { board_->stripe_write(5, 0, out); }), StripeError::Kind::kNoGroup);
  EXPECT_EQ(kind_of([&] { board_->stripe_read(5, 0, out); }), StripeError::Kind::kNoGroup);
  EXPECT_EQ(kind_of([&] { board_->stripe_file_size(5); }), StripeError::Kind::kNoGroup);
  EXPECT_EQ(kind_of([&] { board_->stripe_read(4000, 0, out); }), StripeError::Kind::kNoGroup);
  const GroupSpec s = spec(stripe::Raid::k5, 12, 3);
  program(5, s);
  board_->stripe_write(5, 0, out);
  // A half-written entry (valid cleared) is no group.
  ASSERT_TRUE(board_->write32(entry(*board_, st::kGroupTable, 5, 0), 0));
  EXPECT_EQ(kind_of([&] { board_->stripe_read(5, 0, out); }), StripeError::Kind::kNoGroup);
  program(5, s);
  EXPECT_EQ(kind_of([&] { board_->stripe_fail_member(5, 63); }), StripeError::Kind::kBadRequest);
  EXPECT_EQ(kind_of([&] { board_->stripe_rebuild_member(5, 63); }), StripeError::Kind::kBadRequest);
  // RAID 6 with one parity port is no group either.
  GroupSpec bad = s;
  bad.raid = stripe::Raid::k6;
  program(6, bad);
  EXPECT_EQ(kind_of([&] { board_->stripe_read(6, 0, out); }), StripeError::Kind::kBadGroup);
  EXPECT_EQ(counter(st::kErrors), 8u);
  EXPECT_EQ(board_->stripe_read(5, 0, out), out.size());
}

TEST_F(ParityPathTest, WithoutStorageServersEveryRequestIsRefused) {
  board_.reset();
  options_.storage_dir.clear();
  open();
  program(0, spec(stripe::Raid::k5, 12, 3));
  Bytes out(10);
  EXPECT_EQ(kind_of([&] { board_->stripe_write(0, 0, out); }), StripeError::Kind::kNoStorage);
  EXPECT_EQ(kind_of([&] { board_->stripe_discard(0); }), StripeError::Kind::kNoStorage);
  EXPECT_EQ(counter(st::kErrors), 2u);
}

// ---- counters, reset, restart -------------------------------------------------------------

TEST_F(ParityPathTest, CountersAddUp) {
  const GroupSpec s = spec(stripe::Raid::k6, 12, 4);
  program(0, s);
  const stripe::Geometry g = s.geometry();
  std::mt19937_64 rng(3);
  board_->stripe_write(0, 0, random_bytes(rng, 5 * g.stripe_bytes()));  // whole stripes
  EXPECT_EQ(counter(st::kDataUnits), 5u * 4);
  EXPECT_EQ(counter(st::kParityUnits), 5u * 2);
  EXPECT_EQ(counter(st::kBytesStriped), 5 * g.stripe_bytes());
  for (unsigned p : s.ports()) {
    EXPECT_EQ(member_counter(p, st::kMemberCountersUnitsLo.word), 5u) << "port " << p;
    EXPECT_EQ(member_counter(p, st::kMemberCountersBytesLo.word), 5u * g.unit_bytes);
  }
  board_->stripe_write(0, 100, random_bytes(rng, 10));  // one data unit and the parity
  EXPECT_EQ(counter(st::kDataUnits), 5u * 4 + 1);
  EXPECT_EQ(counter(st::kParityUnits), 5u * 2 + 2);
  EXPECT_EQ(counter(st::kBytesStriped), 5 * g.stripe_bytes() + 10);

  Bytes out(3 * g.stripe_bytes());
  EXPECT_EQ(board_->stripe_read(0, 1000, out), out.size());
  EXPECT_EQ(counter(st::kBytesRead), out.size());
  const unsigned failed = s.ports()[0];
  program(0, s, {failed});
  board_->stripe_fail_member(0, failed);
  board_->stripe_rebuild_member(0, failed);
  EXPECT_EQ(counter(st::kUnitsRebuilt), 5u);

  uint64_t units = 0, bytes = 0;
  for (unsigned p = 0; p < 64; ++p) {
    units += member_counter(p, st::kMemberCountersUnitsLo.word);
    bytes += member_counter(p, st::kMemberCountersBytesLo.word);
  }
  EXPECT_EQ(units, counter(st::kDataUnits) + counter(st::kParityUnits));
  EXPECT_EQ(bytes, units * g.unit_bytes);
}

TEST_F(ParityPathTest, BoardResetClearsGroupsAndCountersNotTheStoredData) {
  const GroupSpec s = spec(stripe::Raid::k5, 14, 3);
  program(7, s);
  std::mt19937_64 rng(5);
  Bytes file;
  write(7, file, 0, random_bytes(rng, 200000));
  board_->board_reset();
  EXPECT_EQ(counter(st::kBytesStriped), 0u);
  EXPECT_EQ(rd_at(*board_, entry(*board_, st::kGroupTable, 7, 0)), 0u);
  EXPECT_EQ(kind_of([&] { board_->stripe_file_size(7); }), StripeError::Kind::kNoGroup);
  program(7, s);
  EXPECT_EQ(read_all(7), file);
}

TEST_F(ParityPathTest, ReopeningTheBoardAndStorageReadsTheSameData) {
  const GroupSpec s = spec(stripe::Raid::k6, 15, 5);
  program(9, s);
  std::mt19937_64 rng(9);
  Bytes file;
  write(9, file, 0, random_bytes(rng, 777777));
  const uint64_t striped = counter(st::kBytesStriped);
  open();  // as an asnd restart: the board memory and the stores are kept
  EXPECT_EQ(counter(st::kBytesStriped), striped);
  EXPECT_EQ(board_->stripe_file_size(9), file.size());
  EXPECT_EQ(read_all(9), file);
  write(9, file, 777000, random_bytes(rng, 5000));
  EXPECT_EQ(read_all(9), file);
  board_->stripe_discard(9);
  EXPECT_EQ(board_->stripe_file_size(9), 0u);
  EXPECT_TRUE(store(s.ports()[0], 9).empty());
}

// asnd killed (kill -9) while it streams a file: every stripe it completed is whole, and the
// length kept with the storage never names bytes no stripe holds. The file is written in
// whole stripes, so the one stripe a kill may tear lies past that length (a stripe torn
// inside the file is the write hole, README).
TEST_F(ParityPathTest, AKilledWriterLeavesEveryCompletedStripeWhole) {
  const GroupSpec s = spec(stripe::Raid::k6, 16, 3);
  program(8, s);
  const uint64_t chunk = 8 * s.geometry().stripe_bytes();
  std::mt19937_64 rng(8);
  const Bytes file = random_bytes(rng, 40 * chunk);
  board_.reset();  // the child opens the board, as the next asnd would
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto board =
        EmulatedBoard::open("board0", *EmulatedBoard::find_profile("emulated-64port"), options_);
    for (uint64_t at = 0; at < file.size(); at += chunk) {
      board->stripe_write(8, at, std::span(file).subspan(at, chunk));
    }
    std::_Exit(0);
  }
  const std::string size_file = options_.storage_dir + "/group-8.size";
  for (int i = 0; i < 10000; ++i) {  // until a few chunks are in (at most 10 s: sanitizers)
    std::ifstream in(size_file);
    uint64_t size = 0;
    if (in >> size && size >= 4 * chunk) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  open();
  const uint64_t size = board_->stripe_file_size(8);
  EXPECT_GT(size, 0u);
  EXPECT_EQ(size % chunk, 0u);
  std::printf("killed with %llu of %zu bytes in\n", static_cast<unsigned long long>(size),
              file.size());
  const Bytes prefix(file.begin(), file.begin() + static_cast<ptrdiff_t>(size));
  EXPECT_EQ(read_all(8), prefix);
  expect_stores(8, s, prefix);
}

// Clients of two groups at once, while the clock runs and software reads the counters: the
// requests take turns on the engine, and the board's lock is free between their stripes.
TEST_F(ParityPathTest, ConcurrentClientsClockAndRegisterAccess) {
  const GroupSpec a = spec(stripe::Raid::k5, 12, 3);
  const GroupSpec b = spec(stripe::Raid::k6, 13, 4, 20);
  program(0, a);
  program(1, b);
  std::mt19937_64 rng(4);
  const Bytes fa = random_bytes(rng, 3 << 20), fb = random_bytes(rng, (2 << 20) + 77);
  std::atomic<bool> done{false};
  std::thread clock([&] {
    while (!done) {
      board_->advance(1000);
      rd64(*board_, st::kBytesStriped);
    }
  });
  auto client = [&](uint16_t group, const Bytes& file) {
    for (size_t at = 0; at < file.size(); at += 100000) {
      board_->stripe_write(group, at,
                           std::span(file).subspan(at, std::min<size_t>(100000, file.size() - at)));
    }
  };
  std::thread ta(client, 0, std::cref(fa)), tb(client, 1, std::cref(fb));
  ta.join();
  tb.join();
  done = true;
  clock.join();
  EXPECT_EQ(read_all(0), fa);
  EXPECT_EQ(read_all(1), fb);
  EXPECT_EQ(counter(st::kBytesStriped), fa.size() + fb.size());
}

// Two boards striping into one storage directory would corrupt each other's files.
TEST_F(ParityPathTest, AStorageDirectoryServesOneBoardAtATime) {
  try {
    EmulatedBoard::open("board1", *EmulatedBoard::find_profile("emulated-64port"), options_);
    ADD_FAILURE() << "a second board attached the same storage servers";
  } catch (const BoardError& e) {
    EXPECT_NE(std::string(e.what()).find("another board uses it"), std::string::npos) << e.what();
  }
}

// The engine's throughput for a 256 MiB file (64 KiB units, RAID 6 on 6+2 members): only
// when asked (ASN_STRIPE_PERF=1), as speed is the benchmarks' concern.
TEST_F(ParityPathTest, Throughput) {
  if (std::getenv("ASN_STRIPE_PERF") == nullptr) GTEST_SKIP() << "set ASN_STRIPE_PERF=1";
  for (stripe::Raid raid : {stripe::Raid::k5, stripe::Raid::k6}) {
    const GroupSpec s = spec(raid, 16, 6);
    program(1, s);
    std::mt19937_64 rng(1);
    const Bytes file = random_bytes(rng, 256u << 20);
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    constexpr size_t kChunk = 4u << 20;  // as a client streams it
    for (size_t at = 0; at < file.size(); at += kChunk) {
      board_->stripe_write(1, at, std::span(file).subspan(at, std::min(kChunk, file.size() - at)));
    }
    const auto t1 = clock::now();
    Bytes out(file.size());
    for (size_t at = 0; at < out.size(); at += kChunk) {
      board_->stripe_read(1, at, std::span(out).subspan(at, std::min(kChunk, out.size() - at)));
    }
    const auto t2 = clock::now();
    ASSERT_EQ(out, file);
    const double mib = static_cast<double>(file.size()) / (1 << 20);
    std::printf(
        "RAID %d, 6 data members, 64 KiB units, 256 MiB: write %.0f MiB/s, read %.0f MiB/s\n",
        static_cast<int>(raid), mib / std::chrono::duration<double>(t1 - t0).count(),
        mib / std::chrono::duration<double>(t2 - t1).count());
    board_->stripe_discard(1);
  }
}

}  // namespace
}  // namespace asn::model

// Striping with parity end to end, as an operator uses it: the real asnctl creates groups in
// the real asnd and streams files through the emulated board's parity path into its storage
// servers and back, byte-exactly, for RAID 4, 5 and 6 and files of every awkward size; a
// failed member is read around and rebuilt; groups and files survive an asnd restart and a
// board reset; a write cut off by a SIGKILL of asnd leaves every byte asnd acknowledged
// intact, and nothing of what it sent past that shows under a later sparse write; a unit
// corrupted behind asnd's back is found by `stripe check` and set right by `stripe repair`.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(out.data() + i, &v, 8);
  }
  for (; i < n; ++i) out[i] = static_cast<char>(rng());
  return out;
}

class StripeTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("stripe")};

  void SetUp() override { start(); }

  void start() {
    ASSERT_TRUE(asnd_.start()) << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
                               << asnd_.log();
  }

  CommandResult ok(const std::vector<std::string>& args) {
    CommandResult r = asnd_.asnctl(args);
    std::string command = "asnctl";
    for (const auto& a : args) command += " " + a;
    EXPECT_EQ(r.exit_code, 0) << command << ":\n" << r.all();
    return r;
  }

  void create(const std::string& group, const std::string& raid, const std::string& data,
              const std::string& parity, const std::string& unit) {
    ok({"stripe", "create", group, "--raid", raid, "--data", data, "--parity", parity, "--unit",
        unit});
  }

  // Writes `bytes` through asnctl stripe write; returns asnctl's result.
  CommandResult write(const std::string& group, const std::string& bytes,
                      const std::string& offset = "0") {
    const std::string file = dir_.file("in-" + group);
    write_file(file, bytes);
    return asnd_.asnctl({"stripe", "write", group, file, "--offset", offset});
  }

  // The group's file read back through asnctl stripe read.
  std::string read(const std::string& group, const std::vector<std::string>& extra = {}) {
    const std::string file = dir_.file("out-" + group);
    std::vector<std::string> argv = {"stripe", "read", group, "--out", file};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CommandResult r = asnd_.asnctl(argv);
    EXPECT_EQ(r.exit_code, 0) << r.all();
    return r.exit_code == 0 ? read_file(file) : "<read failed: " + r.err + ">";
  }

  // Streams `data` over the group's file from offset 0 through asnctl, fed through a FIFO as
  // fast as asnd takes it, and kills asnd (SIGKILL) once `kill_at` bytes are fed, while the
  // feeding goes on: asnd is then in the middle of the stream, writing stripes. Returns what
  // the write acknowledged.
  uint64_t write_killed(const std::string& group, const std::string& data, size_t kill_at) {
    signal(SIGPIPE, SIG_IGN);  // the FIFO's reader dies with asnd's connection
    const std::string fifo = dir_.file("fifo-" + group + "-" + std::to_string(kill_at));
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    auto writer = std::async(std::launch::async, [&] {
      return asnd_.asnctl({"stripe", "write", group, fifo});
    });
    const int fd = open(fifo.c_str(), O_WRONLY);
    EXPECT_GE(fd, 0);
    std::atomic<size_t> fed = 0;
    auto feeder = std::async(std::launch::async, [&] {
      for (size_t at = 0; at < data.size(); at += 1 << 20) {
        if (::write(fd, data.data() + at, 1 << 20) != (1 << 20)) break;
        fed = at + (1 << 20);
      }
      close(fd);
    });
    while (fed < kill_at &&
           feeder.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) {
    }
    asnd_.signal(SIGKILL);
    while (asnd_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    feeder.get();
    const CommandResult cut = writer.get();
    if (cut.exit_code == 0) return data.size();  // it ended before the kill reached asnd
    // "bytes 0 to N of group G's file were acknowledged written and are intact" (none: 0)
    const size_t at = cut.err.find("bytes 0 to ");
    return at == std::string::npos ? 0 : std::stoull(cut.err.substr(at + 11));
  }
};

TEST_F(StripeTest, FilesRoundTripByteExactlyForRaid456) {
  struct Layout {
    std::string raid, data, parity, unit;
    size_t stripe;
  };
  const Layout layouts[] = {{"4", "0,1,2", "3", "4K", 3 * 4096},
                            {"5", "3,1,0", "5", "64K", 3 * 65536},
                            {"6", "0,1", "2,3", "8K", 2 * 8192}};
  std::mt19937 rng(20261122);
  int group = 0;
  for (const auto& l : layouts) {
    // Empty, one byte, one short of a stripe, whole stripes, and random sizes that are not.
    std::vector<size_t> sizes = {0, 1, l.stripe - 1, 2 * l.stripe};
    sizes.push_back(std::uniform_int_distribution<size_t>(1, 3 << 20)(rng) | 1);
    for (size_t size : sizes) {
      const std::string g = std::to_string(group++);
      create(g, l.raid, l.data, l.parity, l.unit);
      const std::string data = random_bytes(size, static_cast<uint32_t>(group));
      const CommandResult w = write(g, data);
      ASSERT_EQ(w.exit_code, 0) << w.all();
      EXPECT_THAT(squeezed(w.out), HasSubstr("file size: " + std::to_string(size)));
      const std::string back = read(g);
      EXPECT_EQ(back.size(), size) << "RAID " << l.raid << " group " << g;
      EXPECT_TRUE(back == data) << "RAID " << l.raid << ", " << size << " bytes differ";
    }
  }
  const CommandResult list = ok({"-o", "json", "stripe", "list"});
  EXPECT_EQ(json_numbers(list.out, "stripe_bytes").size(), 15u);
  EXPECT_THAT(list.out, HasSubstr("\"data_path\": true"));
  // A part of a file: offset and length.
  const std::string part = read("4", {"--offset", "1000", "--length", "5000"});
  EXPECT_EQ(part.size(), 5000u);
}

// Issue 28: every stripe command names its group first; write and read still take
// `--group G`, their form before, so that scripts written then keep working.
TEST_F(StripeTest, TheGroupComesFirstAndGroupOptionStillWorks) {
  create("1", "5", "0,1,2", "3", "4K");
  const std::string data = random_bytes(10000, 3);
  const std::string in = dir_.file("old-in");
  write_file(in, data);
  ok({"stripe", "write", in, "--group", "1"});
  const std::string out = dir_.file("old-out");
  ok({"stripe", "read", "--group", "1", "--out", out});
  EXPECT_TRUE(read_file(out) == data);
  EXPECT_TRUE(read("1") == data);

  const CommandResult twice = asnd_.asnctl({"stripe", "write", "1", in, "--group", "1"});
  EXPECT_EQ(twice.exit_code, 2) << twice.all();
  EXPECT_THAT(twice.err, HasSubstr("the group is given twice"));
  const CommandResult no_file = asnd_.asnctl({"stripe", "write", "1"});
  EXPECT_EQ(no_file.exit_code, 2) << no_file.all();
  EXPECT_THAT(no_file.err, HasSubstr("FILE is required: asnctl stripe write GROUP FILE"));
  const CommandResult read_twice =
      asnd_.asnctl({"stripe", "read", "1", "--group", "1", "--out", out});
  EXPECT_EQ(read_twice.exit_code, 2) << read_twice.all();
  EXPECT_THAT(read_twice.err, HasSubstr("the group is given twice"));
  const CommandResult no_group = asnd_.asnctl({"stripe", "read", "--out", out});
  EXPECT_EQ(no_group.exit_code, 2) << no_group.all();
  EXPECT_THAT(no_group.err, HasSubstr("GROUP is required: asnctl stripe read GROUP --out FILE"));
  const CommandResult not_group = asnd_.asnctl({"stripe", "write", in, in});
  EXPECT_EQ(not_group.exit_code, 2) << not_group.all();
  EXPECT_THAT(not_group.err, HasSubstr("is not a group number"));
}

// `stripe show GROUP`: what the group is; `stripe stats` adds the counters.
TEST_F(StripeTest, ShowDescribesAGroup) {
  create("4", "6", "0,1", "2,3", "8K");
  ok({"stripe", "fail-member", "4", "1"});
  const std::string show = squeezed(ok({"stripe", "show", "4"}).out);
  EXPECT_THAT(show, HasSubstr("layout: RAID 6, 2 data + 2 parity, unit 8K, stripe 16K"));
  EXPECT_THAT(show, HasSubstr("1 data failed"));
  EXPECT_THAT(show, HasSubstr("3 parity ok"));
  EXPECT_THAT(show, Not(HasSubstr("switch-wide")));
  EXPECT_THAT(show, Not(HasSubstr("UNITS")));
  const CommandResult json = ok({"-j", "stripe", "show", "4"});
  EXPECT_THAT(json.out, HasSubstr("\"failed_ports\": ["));
  EXPECT_EQ(json_number(json.out, "stripe_bytes"), 16384u);
  const CommandResult missing = asnd_.asnctl({"stripe", "show", "9"});
  EXPECT_EQ(missing.exit_code, 1) << missing.all();
  EXPECT_THAT(missing.err, HasSubstr("stripe group 9 does not exist"));
}

TEST_F(StripeTest, AFailedMemberIsReadAroundAndRebuilt) {
  create("2", "5", "0,1,2", "3", "16K");
  const std::string data = random_bytes((1 << 20) + 12345, 7);
  ASSERT_EQ(write("2", data).exit_code, 0);
  const CommandResult failed = ok({"stripe", "fail-member", "2", "1"});
  EXPECT_THAT(failed.out, HasSubstr("port 1 failed"));
  EXPECT_TRUE(read("2") == data) << "degraded read";
  const CommandResult second = asnd_.asnctl({"stripe", "fail-member", "2", "0"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("tolerates 1"));
  const CommandResult stats = ok({"stripe", "stats", "2"});
  EXPECT_THAT(squeezed(stats.out), HasSubstr("1 data failed"));
  // Degraded: status and show warn, with why and what to run (issue 27 item 5).
  const CommandResult status = ok({"status"});
  EXPECT_THAT(status.out, HasSubstr("running, 1 warning"));
  EXPECT_THAT(status.out, HasSubstr("group 2 degraded: port 1 (fail-member) failed"));
  EXPECT_THAT(ok({"stripe", "show", "2"}).out,
              HasSubstr("port 1 failed (fail-member): replace its storage, then asnctl stripe "
                        "rebuild-member 2 1"));
  ok({"stripe", "rebuild-member", "2", "1"});
  EXPECT_TRUE(read("2") == data) << "after the rebuild";
  EXPECT_THAT(ok({"status"}).out, HasSubstr("running, all well"));
  const CommandResult after = ok({"-o", "json", "stripe", "stats", "2"});
  EXPECT_THAT(after.out, Not(HasSubstr("\"failed\": true")));
  EXPECT_GT(json_number(after.out, "units_rebuilt").value_or(0), 0u);
}

// The group table or the engine's enable written behind asnd's back: status names them, and a
// restart of asnd puts the board back.
TEST_F(StripeTest, StatusSaysWhenTheBoardsGroupTableDiffers) {
  create("2", "5", "0,1", "2", "4K");
  EXPECT_THAT(ok({"status"}).out, HasSubstr("running, all well"));
  ok({"regs", "write", "stripe.config.enable=0", "stripe.group_table[5].w0=1"});
  const CommandResult status = ok({"status"});
  EXPECT_THAT(status.out, HasSubstr("stripe state: differs from the board"));
  EXPECT_THAT(status.out, HasSubstr("stripe.group_table[5] holds an entry of no group"));
  EXPECT_THAT(status.out, HasSubstr("stripe.config.enable is 0, not 1"));
  ok({"regs", "write", "stripe.config.enable=1", "stripe.group_table[5].w0=0",
      "stripe.group_table[2].w0=0"});
  EXPECT_THAT(ok({"status"}).out, HasSubstr("stripe.group_table[2] is not group 2's entry"));
  ASSERT_EQ(asnd_.stop(), 0);
  start();
  EXPECT_THAT(ok({"status"}).out, HasSubstr("running, all well"));
}

TEST_F(StripeTest, GroupsAndFilesSurviveARestartAndABoardReset) {
  create("1", "6", "0,1,2", "3,4", "4K");
  ok({"stripe", "update", "1", "--durability", "fsync"});
  create("9", "4", "4,5", "0", "1M");
  const std::string one = random_bytes(300001, 1);
  const std::string nine = random_bytes(2 << 20, 9);
  ASSERT_EQ(write("1", one).exit_code, 0);
  ASSERT_EQ(write("9", nine).exit_code, 0);
  ok({"stripe", "fail-member", "1", "4"});
  ASSERT_EQ(asnd_.stop(), 0);
  start();
  EXPECT_TRUE(read("1") == one);
  EXPECT_TRUE(read("9") == nine);
  ok({"board", "reset", "--yes"});
  const CommandResult list = ok({"stripe", "list"});
  EXPECT_THAT(squeezed(list.out), HasSubstr("1 6 4K fsync 0,1,2 3,4 0,1,2,3,4 4 300001 in force"));
  EXPECT_THAT(squeezed(list.out), HasSubstr("9 4 1M none 4,5 0 4,5,0 - 2097152 in force"));
  EXPECT_TRUE(read("1") == one);
  EXPECT_TRUE(read("9") == nine);
}

TEST_F(StripeTest, AWriteCutOffByAKillKeepsEveryAcknowledgedByte) {
  create("3", "5", "0,1,2", "3", "64K");
  const std::string data = random_bytes(48 << 20, 3);
  // A FIFO as the file: the test decides how much asnctl can send before asnd dies.
  signal(SIGPIPE, SIG_IGN);  // the FIFO's reader dies with asnd's connection
  const std::string fifo = dir_.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto writer = std::async(std::launch::async, [&] {
    return asnd_.asnctl({"stripe", "write", fifo, "--group", "3"});
  });
  const int fd = open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  // The file arrives in 1 MiB pieces a few milliseconds apart, so asnd is killed in the
  // middle of the stream; the feeder stops when asnctl, its reader, is gone.
  auto feeder = std::async(std::launch::async, [&] {
    for (size_t at = 0; at < data.size(); at += 1 << 20) {
      if (::write(fd, data.data() + at, 1 << 20) != (1 << 20)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    close(fd);
  });
  // Until asnd has acknowledged a good part of it.
  for (int i = 0; i < 500; ++i) {
    const CommandResult list = asnd_.asnctl({"-o", "json", "stripe", "list"});
    if (json_number(list.out, "file_size").value_or(0) >= (8u << 20)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const CommandResult cut = writer.get();
  feeder.get();
  EXPECT_NE(cut.exit_code, 0) << cut.all();
  // "bytes 0 to N of group 3's file were acknowledged written and are intact"
  const size_t at = cut.err.find("bytes 0 to ");
  ASSERT_NE(at, std::string::npos) << cut.all();
  const uint64_t acked = std::stoull(cut.err.substr(at + 11));
  EXPECT_GE(acked, 8u << 20);
  EXPECT_LT(acked, data.size());  // cut off indeed
  RecordProperty("acknowledged", std::to_string(acked));
  start();
  const std::string back = read("3", {"--length", std::to_string(acked)});
  ASSERT_EQ(back.size(), acked);
  EXPECT_TRUE(back == data.substr(0, acked)) << "an acknowledged byte differs";

  // Issue 27: what the killed write sent past the length it last published is not the
  // file's; a sparse write past it leaves a hole of zeros, healthy and degraded. Whether the
  // kill leaves such bytes depends on where it lands (between two of asnd's write calls it
  // leaves none: this test passed before the fix), so it only guards the real asnd end to
  // end; stripe_integrity_test reproduces the leftovers deterministically.
  const uint64_t size =
      json_number(ok({"-o", "json", "stripe", "list"}).out, "file_size").value_or(0);
  ASSERT_GE(size, acked);
  const uint64_t far = data.size() + (1 << 20);
  ASSERT_EQ(write("3", "0123456789", std::to_string(far)).exit_code, 0);
  const std::string whole = read("3");
  ASSERT_EQ(whole.size(), far + 10);
  EXPECT_TRUE(whole.compare(0, size, data, 0, size) == 0) << "a byte of the file differs";
  EXPECT_EQ(whole.find_first_not_of('\0', size), far) << "stale bytes in the hole";
  ok({"stripe", "fail-member", "3", "0"});
  EXPECT_TRUE(read("3") == whole) << "the degraded read differs";
}

// Issue 27 item 2: asnd killed by SIGKILL in the middle of overwriting a file, at several
// points, RAID 5 and RAID 6. Once asnd is back, `stripe check` (its first request) finds every
// stripe's parity matching its data, the write-intent bitmap's resync having run before it
// was served, and every byte the killed write acknowledged reads back. The kill is placed by
// amounts (bytes fed to asnctl), not by time. Failed before the bitmap: the check found the
// stripes the kills tore ("mismatches: 1").
TEST_F(StripeTest, KillsInTheMiddleOfOverwritesLeaveEveryStripesParityRight) {
  // 4 KiB units: a stripe is many small writes to the members, so a kill is likely to land
  // between two of them.
  create("5", "5", "0,1,2", "3", "4K");
  create("6", "6", "0,1,2,3", "4,5", "4K");
  ok({"stripe", "update", "6", "--durability", "fsync"});
  constexpr size_t kFile = 16 << 20;
  uint32_t seed = 50;
  for (const std::string group : {"5", "6"}) {
    ASSERT_EQ(write(group, random_bytes(kFile, seed++)).exit_code, 0);
    for (size_t kill_at = 1 << 20; kill_at < kFile; kill_at += 2 << 20) {
      const std::string data = random_bytes(kFile, seed++);
      const uint64_t acked = write_killed(group, data, kill_at);
      start();
      const std::string where = "group " + group + ", killed at " + std::to_string(kill_at);
      const CommandResult check = asnd_.asnctl({"stripe", "check", group});
      EXPECT_EQ(check.exit_code, 0) << where << ":\n" << check.all();
      EXPECT_THAT(squeezed(check.out), HasSubstr("mismatches: 0")) << where;
      if (acked == 0) continue;  // killed before the first acknowledgment (fsync's is later)
      const std::string back = read(group, {"--length", std::to_string(acked)});
      EXPECT_TRUE(back == data.substr(0, acked)) << where << ": an acknowledged byte differs";
    }
  }
  // Bad input: a durability asnctl does not know; nothing changed.
  const CommandResult bad = asnd_.asnctl({"stripe", "update", "5", "--durability", "always"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("--durability: 'always' is not one of none, fsync"));
  EXPECT_THAT(squeezed(ok({"stripe", "list"}).out), HasSubstr("5 5 4K none"));
  EXPECT_THAT(squeezed(ok({"stripe", "stats", "6"}).out), HasSubstr("durability: fsync"));
}

// Issue 27 item 4: a unit rots on a storage server's disk (its store file written behind
// asnd's back); check finds the stripe and fails (exit 1), repair's dry run writes nothing,
// repair sets it right (RAID 6: whichever unit of the stripe port 2 holds, P and Q tell it
// is that one), and the file reads back as written.
TEST_F(StripeTest, CheckFindsACorruptUnitAndRepairSetsItRight) {
  create("4", "6", "0,1,2", "3,4", "4K");
  const std::string data = random_bytes(10 * 3 * 4096 + 99, 4);
  ASSERT_EQ(write("4", data).exit_code, 0);
  const CommandResult clean = ok({"stripe", "check", "4"});
  EXPECT_THAT(squeezed(clean.out), HasSubstr("stripes checked: 11"));
  EXPECT_THAT(squeezed(clean.out), HasSubstr("mismatches: 0"));

  const std::string store = dir_.file("state/storage/port-2/group-4.data");
  const int fd = ::open(store.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << store;
  const char rot[] = "bit rot";
  ASSERT_EQ(::pwrite(fd, rot, sizeof rot, 3 * 4096 + 17), static_cast<ssize_t>(sizeof rot));
  ::close(fd);

  const CommandResult found = asnd_.asnctl({"stripe", "check", "4"});
  EXPECT_EQ(found.exit_code, 1) << found.all();
  EXPECT_THAT(squeezed(found.out), HasSubstr("STRIPE OFFSET PORT FAULT ACTION"));
  EXPECT_THAT(squeezed(found.out), HasSubstr("3 36864 2 "));
  EXPECT_THAT(squeezed(found.out), HasSubstr("mismatches: 1"));
  const CommandResult json = asnd_.asnctl({"-o", "json", "stripe", "check", "4"});
  EXPECT_EQ(json.exit_code, 1) << json.all();
  EXPECT_EQ(json_number(json.out, "mismatches"), 1u);
  EXPECT_EQ(json_number(json.out, "stripe"), 3u);
  EXPECT_EQ(json_number(json.out, "port"), 2u);

  const CommandResult dry = asnd_.asnctl({"stripe", "repair", "4", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 1) << "a dry run leaves the mismatch: " << dry.all();
  EXPECT_THAT(squeezed(dry.out), HasSubstr("no (dry run)"));
  EXPECT_EQ(asnd_.asnctl({"stripe", "check", "4"}).exit_code, 1) << "the dry run wrote";

  const CommandResult repaired = ok({"-o", "json", "stripe", "repair", "4"});
  EXPECT_EQ(json_number(repaired.out, "repaired"), 1u);
  EXPECT_THAT(repaired.out, HasSubstr("\"repaired\": true"));
  EXPECT_EQ(json_number(ok({"-o", "json", "stripe", "check", "4"}).out, "mismatches"), 0u);
  EXPECT_TRUE(read("4") == data) << "the file after the repair";

  // Bad input: a group that does not exist.
  const CommandResult unknown = asnd_.asnctl({"stripe", "check", "12"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("stripe group 12 does not exist"));
}

}  // namespace
}  // namespace asn::test

// End to end: the real asnd on an emulated board, driven by the real asnctl.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "asn/v1/device.grpc.pb.h"
#include "asn/v1/locks.grpc.pb.h"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

class AsndTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("it")};

  void start(const std::vector<std::string>& extra = {}) {
    ASSERT_TRUE(asnd_.start(extra)) << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
                                    << asnd_.log();
  }

  uint64_t read_value(const std::string& name) {
    auto r = asnd_.asnctl({"--output", "json", "regs", "read", name});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    auto value = json_number(r.out, "value");
    EXPECT_TRUE(value.has_value()) << r.out;
    return value.value_or(~0ull);
  }
};

// A port enable written behind asnd's back (`regs write`): status no longer says all is well,
// names each port and both states, and a `port set` puts the board back.
TEST_F(AsndTest, StatusSaysWhereTheBoardDiffersFromTheDesiredState) {
  start();
  ASSERT_EQ(asnd_.asnctl({"port", "set", "3", "down"}).exit_code, 0);
  EXPECT_THAT(asnd_.asnctl({"status"}).out, HasSubstr("running, all well"));
  auto r = asnd_.asnctl({"regs", "write", "port[2].control.enable=0", "port[3].control.enable=1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  r = asnd_.asnctl({"status"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("running, 1 warning"));
  EXPECT_THAT(r.out, HasSubstr("ports state: differs from the board"));
  EXPECT_THAT(r.out, HasSubstr("port 2 is down on the board, up in the desired state; port 3 is "
                               "up on the board, down in the desired state"));
  EXPECT_THAT(asnd_.asnctl({"-o", "json", "status"}).out, HasSubstr("differs from the board"));
  ASSERT_EQ(asnd_.asnctl({"port", "set", "2", "up"}).exit_code, 0);
  EXPECT_THAT(asnd_.asnctl({"status"}).out, HasSubstr("running, all well"));
  EXPECT_EQ(read_value("port[3].control.enable"), 0u);
}

// Issue 28 finding 13: `asnctl version` shows both sides, as kubectl does; without asnd, its
// own version and then why it could not ask (exit 3).
TEST_F(AsndTest, VersionShowsAsnctlAndAsnd) {
  start();
  auto r = asnd_.asnctl({"version"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, ::testing::MatchesRegex("asnctl  [0-9][^\n]*\nasnd    [0-9][^\n]* \\(at "
                                             "unix:[^\n]*\\)\n"));
  r = asnd_.asnctl({"-o", "json", "version"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("\"match\": true"));
  TempDir elsewhere;
  r = run_command({ASNCTL_PATH, "--socket", elsewhere.file("none.sock"), "version"});
  EXPECT_EQ(r.exit_code, 3) << r.all();
  EXPECT_THAT(r.out, HasSubstr("asnctl  "));
  EXPECT_THAT(r.err, HasSubstr("cannot reach asnd"));
}

// Issue 28 finding 13: a server without our services (a bare gRPC server here) got only
// "UNIMPLEMENTED: Method not found!"; asnctl now says what that means.
TEST(AsnctlTest, AServerWithoutOurServicesIsNamedNotAsndOrAnotherVersion) {
  TempDir dir;
  const std::string socket = dir.file("bare.sock");
  // A server needs a service: one whose every method is unimplemented, and not Device's.
  v1::Locks::Service none;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&none);
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server != nullptr);
  const CommandResult r = run_command({ASNCTL_PATH, "--socket", socket, "status"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("does not know this call: it is not asnd, or an asnd of "
                               "another version than this asnctl"));
  EXPECT_THAT(r.err, HasSubstr("`asnctl version` shows both"));
  server->Shutdown();
}

// asnctl said "asnd did not answer within 10 s (--timeout)" for every DEADLINE_EXCEEDED, also
// for asnd's own (a TDM swap that did not come): asnd's message is kept; only the call's own
// deadline is told as --timeout. A stand-in Device service answers both ways.
TEST(AsnctlTest, OnlyTheCallsOwnDeadlineIsToldAsTimeout) {
  class SlowOrRefusing final : public v1::Device::Service {
   public:
    grpc::Status GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest*,
                         v1::DeviceInfo*) override {
      if (calls_++ == 0) {
        return {grpc::StatusCode::DEADLINE_EXCEEDED,
                "the board did not swap to the new schedule within 9 ms"};
      }
      while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return grpc::Status::CANCELLED;
    }

   private:
    std::atomic<int> calls_{0};
  } service;
  TempDir dir;
  const std::string socket = dir.file("device.sock");
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server != nullptr);
  CommandResult r = run_command({ASNCTL_PATH, "--socket", socket, "status"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("DEADLINE_EXCEEDED: the board did not swap"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("--timeout")));
  r = run_command({ASNCTL_PATH, "--socket", socket, "--timeout", "0.5", "status"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("asnd did not answer within 0.5 s (--timeout)"));
  server->Shutdown(std::chrono::system_clock::now());
}

TEST_F(AsndTest, StatusShowsTheBoard) {
  start();
  auto r = asnd_.asnctl({"status"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr(asnd_.board()));
  EXPECT_THAT(r.out, HasSubstr("netfpga-1g"));
  auto info = asnd_.asnctl({"info"});
  EXPECT_EQ(info.exit_code, 0) << info.all();
  EXPECT_THAT(info.out, HasSubstr("port[5]"));
  EXPECT_THAT(info.out, HasSubstr("aurora"));
  EXPECT_EQ(asnd_.stop(), 0) << asnd_.log();
  EXPECT_FALSE(std::filesystem::exists(asnd_.socket())) << "asnd left its socket behind";
}

TEST_F(AsndTest, WritingAReadOnlyRegisterIsReportedAndChangesNothing) {
  start();
  auto r = asnd_.asnctl({"regs", "write", "id.magic=0x1"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.all(), HasSubstr("id.magic is read-only (RO)"));
  EXPECT_EQ(read_value("id.magic"), 0x41534e31u);
  EXPECT_EQ(read_value("id.ro_write_count"), 0u) << "the write reached the board";
}

TEST_F(AsndTest, BadInputNamesTheThing) {
  start();
  auto unknown = asnd_.asnctl({"regs", "read", "id.sratch"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.all();
  EXPECT_THAT(unknown.all(), HasSubstr("did you mean 'scratch'?"));
  auto outside = asnd_.asnctl({"regs", "read", "0x7ffffff0"});
  EXPECT_EQ(outside.exit_code, 1) << outside.all();
  EXPECT_THAT(outside.all(), HasSubstr("outside the register map"));
  auto wide = asnd_.asnctl({"regs", "write", "port[0].control.enable=2"});
  EXPECT_EQ(wide.exit_code, 1) << wide.all();
  EXPECT_THAT(wide.all(), HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(wide.all(), HasSubstr("does not fit port[0].control.enable (1 bits"));
  auto usage = asnd_.asnctl({"regs", "write", "id.scratch"});
  EXPECT_EQ(usage.exit_code, 2) << usage.all();
  EXPECT_EQ(read_value("id.scratch"), 0u);
}

TEST_F(AsndTest, BoardMemorySurvivesARestartAndBoardResetClearsIt) {
  start();
  uint64_t generation = read_value("id.generation");
  auto w = asnd_.asnctl({"regs", "write", "id.scratch=0x1234abcd"});
  ASSERT_EQ(w.exit_code, 0) << w.all();
  ASSERT_EQ(asnd_.stop(), 0) << asnd_.log();

  start();
  EXPECT_EQ(read_value("id.scratch"), 0x1234abcdu);
  EXPECT_EQ(read_value("id.generation"), generation);

  auto reset = asnd_.asnctl({"board", "reset", "--yes"});
  EXPECT_EQ(reset.exit_code, 0) << reset.all();
  EXPECT_EQ(read_value("id.scratch"), 0u);
  EXPECT_EQ(read_value("id.generation"), generation + 1);
}

TEST_F(AsndTest, ResetBoardFlagStartsFromAFreshBoard) {
  start();
  uint64_t generation = read_value("id.generation");
  ASSERT_EQ(asnd_.asnctl({"regs", "write", "id.scratch=5"}).exit_code, 0);
  ASSERT_EQ(asnd_.stop(), 0);
  start({"--reset-board"});
  EXPECT_EQ(read_value("id.scratch"), 0u);
  EXPECT_EQ(read_value("id.generation"), generation + 1);
}

TEST_F(AsndTest, BoardResetNeedsConfirmationWithoutATerminal) {
  start();
  auto r = asnd_.asnctl({"board", "reset"});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("--yes"));
}

TEST_F(AsndTest, BadConfigExitsNonZeroNamingTheKey) {
  bool started = asnd_.start({}, "log_level: info\nbackend:\n  profil: netfpga-1g\n");
  EXPECT_FALSE(started);
  EXPECT_EQ(asnd_.exit_code(), 2);
  EXPECT_THAT(asnd_.log(), HasSubstr(asnd_.config_path() + ":3: backend.profil: unknown key"));
  EXPECT_THAT(asnd_.log(), HasSubstr("did you mean 'backend.emulated.profile'?"));
}

TEST_F(AsndTest, SecondAsndOnTheSameBoardIsRefused) {
  start();
  TempDir other_dir;
  AsndProcess second(other_dir, asnd_.board());
  second.use_shm_dir(asnd_.shm_dir());  // the same board memory, another socket
  bool started = second.start();
  EXPECT_FALSE(started);
  EXPECT_EQ(second.exit_code(), 1);
  EXPECT_THAT(second.log(), HasSubstr("in use"));
}

TEST_F(AsndTest, SecondAsndOnTheSameSocketIsRefused) {
  start();
  TempDir other_dir;
  AsndProcess second(other_dir, unique_name("it"));
  second.use_socket(asnd_.socket());
  bool started = second.start();
  EXPECT_FALSE(started);
  EXPECT_THAT(second.log(), HasSubstr(asnd_.socket() + " is already being served (the socket "
                                                       "belongs to uid"));
  // The first one still serves.
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);
}

TEST_F(AsndTest, StaleSocketOfACrashedAsndIsReplaced) {
  start();
  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::filesystem::exists(asnd_.socket()));
  start();
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);
}

// Waits until asnd's log has `text` (a SIGHUP is handled on asnd's main thread).
bool log_shows(const AsndProcess& asnd, const std::string& text) {
  auto deadline = std::chrono::steady_clock::now() + scaled(std::chrono::seconds(30));
  while (asnd.log().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST_F(AsndTest, SighupRereadsTheLogLevel) {
  start();
  write_file(asnd_.config_path(), "log_level: debug\n");
  asnd_.signal(SIGHUP);
  EXPECT_TRUE(log_shows(asnd_, "SIGHUP: log_level: debug (was the default)")) << asnd_.log();
  ASSERT_EQ(asnd_.asnctl({"regs", "write", "id.scratch=1"}).exit_code, 0);
  EXPECT_EQ(asnd_.stop(), 0);
  EXPECT_THAT(asnd_.log(), HasSubstr("register write: id.scratch"));
}

// Issue 28, finding 15: SIGHUP re-read only log_level. Now the lock leases and quotas take
// effect at once, and a key that needs a restart is named and keeps its running value.
TEST_F(AsndTest, SighupAppliesTheLockLimitsAndNamesWhatNeedsARestart) {
  ASSERT_TRUE(asnd_.start({}, "locks:\n  max_ttl: 60\nlisten:\n  max_threads: 16\n"))
      << asnd_.log();
  const std::vector<std::string> acquire = {"lock",  "acquire", "f1",     "0:10",
                                            "--ttl", "100",     "--hold", "0"};
  auto r = asnd_.asnctl(acquire);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("longer than the longest lease, 60 s (locks.max_ttl)"));

  write_file(asnd_.config_path(), "locks:\n  max_ttl: 2m\nlisten:\n  max_threads: 8\n");
  asnd_.signal(SIGHUP);
  ASSERT_TRUE(log_shows(asnd_, "SIGHUP: locks.max_ttl: 2m (was 60)")) << asnd_.log();
  EXPECT_TRUE(log_shows(asnd_,
                        "SIGHUP: listen.max_threads: 8 (was 16): takes effect at the "
                        "next restart"))
      << asnd_.log();
  r = asnd_.asnctl(acquire);
  EXPECT_EQ(r.exit_code, 0) << r.all();

  // A bad file changes nothing: the 2-minute lease still stands.
  write_file(asnd_.config_path(), "locks:\n  max_ttl: 1\n  no_such_key: 1\n");
  asnd_.signal(SIGHUP);
  ASSERT_TRUE(log_shows(asnd_, "SIGHUP: keeping the running configuration")) << asnd_.log();
  EXPECT_THAT(asnd_.log(), HasSubstr("no_such_key"));
  r = asnd_.asnctl(acquire);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(asnd_.stop(), 0);
}

TEST_F(AsndTest, DumpListsRegisters) {
  start();
  auto r = asnd_.asnctl({"regs", "dump", "--block", "id"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("id.magic"));
  EXPECT_THAT(r.out, HasSubstr("41534e31"));
  auto json = asnd_.asnctl({"-o", "json", "regs", "dump", "--block", "port[1]"});
  EXPECT_EQ(json.exit_code, 0) << json.all();
  EXPECT_THAT(json.out, HasSubstr("\"port[1].aldfb_threshold\""));
}

TEST_F(AsndTest, TcpClientsReadButMayNotWriteUnlessAllowed) {
  std::string address = "127.0.0.1:" + std::to_string(free_tcp_port());
  start({"--tcp", address});
  auto read = run_command({ASNCTL_PATH, "--address", address, "regs", "read", "id.magic"});
  EXPECT_EQ(read.exit_code, 0) << read.all();
  EXPECT_THAT(read.out, HasSubstr("0x41534e31"));
  auto write = run_command({ASNCTL_PATH, "--address", address, "regs", "write", "id.scratch=1"});
  EXPECT_EQ(write.exit_code, 1) << write.all();
  EXPECT_THAT(write.all(), HasSubstr("PERMISSION_DENIED"));
  EXPECT_EQ(read_value("id.scratch"), 0u);
}

TEST_F(AsndTest, CheckConfigValidatesWithoutStarting) {
  write_file(dir_.file("good.yaml"), "log_level: warn\nbackend:\n  profile: emulated-64port\n");
  auto good = run_command({ASND_PATH, "--config", dir_.file("good.yaml"), "--check-config"});
  EXPECT_EQ(good.exit_code, 0) << good.all();
  EXPECT_THAT(good.out, HasSubstr("configuration is valid"));
  write_file(dir_.file("bad.yaml"), "listen:\n  socket_mode: rw\n");
  auto bad = run_command({ASND_PATH, "--config", dir_.file("bad.yaml"), "--check-config"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_THAT(bad.err, HasSubstr("bad.yaml:2: listen.socket_mode"));
}

// Issue 28, finding 5: a file that is not there is never called valid. Given with --config
// it is an error; the default one missing means the defaults (exit 0), and says so.
TEST_F(AsndTest, CheckConfigSaysAMissingFileIsMissing) {
  auto given = run_command({ASND_PATH, "--config", dir_.file("absent.yaml"), "--check-config"});
  EXPECT_EQ(given.exit_code, 2) << given.all();
  EXPECT_THAT(given.err, HasSubstr("absent.yaml: cannot read the configuration file: it does "
                                   "not exist"));
  EXPECT_THAT(given.all(), ::testing::Not(HasSubstr("valid")));

  if (access("/etc/asn/asnd.yaml", F_OK) == 0) {
    GTEST_SKIP() << "/etc/asn/asnd.yaml exists here: its absence cannot be tested";
  }
  auto fallback = run_command({ASND_PATH, "--check-config"});
  EXPECT_EQ(fallback.exit_code, 0) << fallback.all();
  EXPECT_THAT(fallback.out, HasSubstr("/etc/asn/asnd.yaml: no such file: asnd would start with "
                                      "the built-in defaults"));
  EXPECT_THAT(fallback.all(), ::testing::Not(HasSubstr("valid")));
}

// Issue 28, finding 11: `-j` is `-o json`, as `ip -j`.
TEST_F(AsndTest, DashJIsOutputJson) {
  start();
  auto j = asnd_.asnctl({"regs", "read", "id.magic", "-j"});
  EXPECT_EQ(j.exit_code, 0) << j.all();
  EXPECT_EQ(j.out, asnd_.asnctl({"-o", "json", "regs", "read", "id.magic"}).out);
  EXPECT_EQ(json_number(j.out, "value"), 0x41534e31u);
  auto both = asnd_.asnctl({"-j", "-o", "table", "status"});
  EXPECT_EQ(both.exit_code, 2) << both.all();
  EXPECT_THAT(both.err, HasSubstr("-j is -o json"));
}

TEST(Asnctl, WithoutAsndSaysHowToStartIt) {
  TempDir dir;
  auto r = run_command({ASNCTL_PATH, "--socket", dir.file("nobody.sock"), "status"});
  EXPECT_EQ(r.exit_code, 3) << r.all();
  EXPECT_THAT(r.all(), HasSubstr("cannot reach asnd"));
  EXPECT_THAT(r.all(), HasSubstr("hint"));
}

}  // namespace
}  // namespace asn::test

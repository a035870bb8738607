// asnd against hostile clients, hostile local users, damaged board memory and hostile
// configuration files: every way asnd was once stopped, locked up or turned against root,
// each reproduced against the real asnd.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "asn/v1/device.grpc.pb.h"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A raw connection that sends nothing, as a flooding client holds them.
int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  return fd;
}

class HardeningTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("hd")};

  void start(const std::vector<std::string>& extra = {}, const std::string& config = "") {
    ASSERT_TRUE(asnd_.start(extra, config))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }
  std::string board_file() const { return asnd_.shm_dir() + "/asn-board-" + asnd_.board(); }
};

// Out of file descriptors, gRPC's own listener once stopped accepting for good. asnd's
// accept loop sheds what it cannot take and accepts again as soon as it can.
TEST_F(HardeningTest, RunningOutOfDescriptorsNeverWedgesTheListener) {
  asnd_.set_fd_limit(64);
  start({}, "listen:\n  max_connections: 5000\n  max_connections_per_peer: 5000\n");
  std::vector<int> flood;
  for (int i = 0; i < 200; ++i) flood.push_back(connect_unix(asnd_.socket()));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int fd : flood) ::close(fd);
  // asnd accepts again once the flood is gone.
  EXPECT_TRUE(wait_until([&] { return asnd_.asnctl({"status"}).exit_code == 0; })) << asnd_.log();
  EXPECT_TRUE(wait_until([&] {
    return asnd_.log().find("for want of file descriptors") != std::string::npos;
  })) << asnd_.log();
  EXPECT_TRUE(asnd_.running());
}

// What asnd's refusal warnings add up to: each covers a 10 s window, and a flood that
// straddles two accept passes is told in two lines.
int refusals_logged(const std::string& log) {
  static const std::regex line("refused ([0-9]+) connections? in the last");
  int total = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) {
    total += std::stoi((*it)[1]);
  }
  return total;
}

// One peer may hold only so many connections; everyone else is still served.
TEST_F(HardeningTest, APeerOverItsCapIsRefusedAndOthersServed) {
  const int port = free_tcp_port();
  start({"--tcp", "127.0.0.1:" + std::to_string(port)}, "listen:\n  max_connections_per_peer: 3\n");
  std::vector<int> mine;
  for (int i = 0; i < 6; ++i) mine.push_back(connect_tcp("127.0.0.2", port));
  // Waits on the refusals themselves (the second window's warning comes 10 s after the
  // first), not on how fast asnd accepts: a busy machine once split them across windows.
  EXPECT_TRUE(wait_until([&] { return refusals_logged(asnd_.log()) >= 3; },
                         std::chrono::seconds(30)))
      << asnd_.log();
  int refused = 0;
  for (int fd : mine) refused += closed_by_server(fd, std::chrono::milliseconds(0));
  EXPECT_EQ(refused, 3);
  EXPECT_EQ(refusals_logged(asnd_.log()), 3) << asnd_.log();
  // Another address (and the Unix socket) are served meanwhile.
  auto other =
      run_command({ASNCTL_PATH, "--address", "127.0.0.1:" + std::to_string(port), "status"});
  EXPECT_EQ(other.exit_code, 0) << other.all();
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);
  for (int fd : mine) ::close(fd);
}

// Dumps whose clients never read once pinned a thread each (and gigabytes): now they wait
// without a thread, up to the listener's cap, and are cancelled after the write timeout.
TEST_F(HardeningTest, StalledStreamsHoldNoThreadsAndAreCancelled) {
  const int port = free_tcp_port();
  start({"--tcp", "127.0.0.1:" + std::to_string(port)},
        "listen:\n  max_streams: 300\n  stream_write_timeout: 2s\n");
  const uint64_t threads_before = proc_status(asnd_.pid(), "Threads");
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8192);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::vector<std::unique_ptr<v1::Device::Stub>> stubs;
  for (int c = 0; c < 10; ++c) {
    stubs.push_back(v1::Device::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args)));
  }
  v1::DumpRegistersRequest request;
  request.set_include_tables(true);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::RegisterValue>>> readers;
  for (int i = 0; i < 200; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    readers.push_back(stubs[i % stubs.size()]->DumpRegisters(contexts.back().get(), request));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const uint64_t threads_stalled = proc_status(asnd_.pid(), "Threads");
  EXPECT_LT(threads_stalled, threads_before + 40) << "before " << threads_before;
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);  // everyone else is served
  // Cancelled after the write timeout.
  auto cancelled = [&] {
    size_t n = 0;
    for (size_t at = asnd_.log().find("cancelled it"); at != std::string::npos;
         at = asnd_.log().find("cancelled it", at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_TRUE(wait_until([&] { return cancelled() >= 200; }, std::chrono::seconds(20)))
      << cancelled();
  for (auto& context : contexts) context->TryCancel();
  v1::RegisterValue value;
  for (auto& reader : readers) {
    while (reader->Read(&value)) {
    }
    reader->Finish();
  }
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);
}

// A socket directory another user could change is refused: a user who owned it once made
// asnd chmod a root-only file through a planted link.
TEST_F(HardeningTest, ASocketDirectoryOthersMayChangeIsRefused) {
  const std::string open_dir = dir_.file("open");
  fs::create_directory(open_dir);
  fs::permissions(open_dir, fs::perms::all | fs::perms::sticky_bit);  // as /tmp
  asnd_.use_socket(open_dir + "/asnd.sock");
  EXPECT_FALSE(asnd_.start());
  EXPECT_EQ(asnd_.exit_code(), 1);
  EXPECT_THAT(asnd_.log(), HasSubstr("is writable by everyone"));
  EXPECT_THAT(asnd_.log(), HasSubstr("/run/asn"));
  if (::geteuid() == 0) {
    const std::string theirs = dir_.file("theirs");
    fs::create_directory(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    asnd_.use_socket(theirs + "/asnd.sock");
    EXPECT_FALSE(asnd_.start());
    EXPECT_THAT(asnd_.log(), HasSubstr("belongs to uid 65534"));
  }
}

// The socket has its mode from the moment it exists (no chmod by path afterwards).
TEST_F(HardeningTest, TheSocketHasItsModeFromTheStart) {
  start({}, "listen:\n  socket_mode: \"0600\"\n");
  struct stat st {};
  ASSERT_EQ(::stat(asnd_.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A FIFO as the configuration once hung asnd --check-config, deaf to SIGTERM.
TEST_F(HardeningTest, AFifoAsTheConfigurationIsRefusedAtOnce) {
  const std::string fifo = dir_.file("fifo.yaml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = run_command({ASND_PATH, "--check-config", "-c", fifo});
  EXPECT_LT(std::chrono::steady_clock::now() - start, test::scaled(std::chrono::seconds(5)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a regular file"));
  auto zero = run_command({ASND_PATH, "--check-config", "-c", "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 2);
  auto dir = run_command({ASND_PATH, "--check-config", "-c", dir_.path()});
  EXPECT_EQ(dir.exit_code, 2);
}

// SIGHUP with a huge configuration once made a running asnd exit.
TEST_F(HardeningTest, AReloadOfABadFileKeepsTheRunningConfiguration) {
  start();
  write_file(asnd_.config_path(), "log_level: debug\n" + std::string(2 << 20, '#'));
  asnd_.signal(SIGHUP);
  EXPECT_TRUE(wait_until([&] {
    return asnd_.log().find("keeping the running configuration") != std::string::npos;
  })) << asnd_.log();
  EXPECT_TRUE(asnd_.running());
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 0);
}

// Truncating the board's memory once crashed asnd with SIGBUS; removing it left asnd
// serving an orphan. Both are now a failed board, reported, with the watchdog withheld.
TEST_F(HardeningTest, ATruncatedBoardMemoryIsAFailedBoardNotACrash) {
  asnd_.set_env("NOTIFY_SOCKET", dir_.file("notify"));  // nobody listens: pings go nowhere
  asnd_.set_env("WATCHDOG_USEC", "400000");
  start();
  ASSERT_EQ(::truncate(board_file().c_str(), 8192), 0);
  EXPECT_TRUE(wait_until([&] { return asnd_.log().find("the board failed") != std::string::npos; }))
      << asnd_.log();
  EXPECT_TRUE(asnd_.running());
  auto status = asnd_.asnctl({"status"});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_THAT(status.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(status.err, HasSubstr("has failed"));
  EXPECT_TRUE(wait_until([&] {
    return asnd_.log().find("withholding the watchdog ping") != std::string::npos;
  })) << asnd_.log();
}

TEST_F(HardeningTest, ARemovedBoardMemoryIsReported) {
  start();
  ASSERT_EQ(::unlink(board_file().c_str()), 0);
  EXPECT_TRUE(wait_until([&] {
    return asnd_.log().find("was removed while in use") != std::string::npos;
  })) << asnd_.log();
  EXPECT_TRUE(asnd_.running());
  EXPECT_EQ(asnd_.asnctl({"status"}).exit_code, 1);
}

// A board memory file planted by someone else is not adopted.
TEST_F(HardeningTest, APlantedBoardMemoryIsRefused) {
  write_file(board_file(), "");
  ::chmod(board_file().c_str(), 0666);
  EXPECT_FALSE(asnd_.start());
  EXPECT_EQ(asnd_.exit_code(), 1);
  EXPECT_THAT(asnd_.log(), HasSubstr("is writable by others (mode 0666)"));
}

}  // namespace
}  // namespace asn::test

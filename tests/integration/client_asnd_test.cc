// libasnclient against the real asnd (issue 9, part 6): a session with a scoped lock and its
// fencing token, a conflict seen by another session, a waiting lock granted when the guard
// lets go, and a session that holds a lock while asnd is killed with SIGKILL: the library
// reconnects, re-attaches the session within the grace period, and the lock is still held.
// A lock granted just before asnd is killed, whose answer never reached the client, is not
// left with the session once it re-attached (a failed call grants nothing).
// The test links the client library and no generated gRPC code of its own (one process must
// not hold two copies of it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "asn/client/locks.hpp"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
namespace client = asn::client;

// A Unix-socket proxy in front of asnd that can stop passing asnd's bytes to the clients
// connected through it: asnd has answered a call (its response is in the proxy's socket
// buffer), and the client has not received it. Each connection has a thread of its own.
class ReplyGate {
 public:
  ReplyGate(std::string listen_path, std::string upstream_path)
      : listen_path_(std::move(listen_path)), upstream_path_(std::move(upstream_path)) {
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un addr = address(listen_path_);
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "the proxy cannot listen on " << listen_path_ << ": "
                    << std::strerror(errno);
    }
    accepter_ = std::thread([this] { accept_loop(); });
  }
  ~ReplyGate() {
    stop_ = true;
    accepter_.join();
    std::lock_guard lock(mu_);
    for (auto& t : pumps_) t.join();
    ::close(listen_fd_);
  }

  const std::string& path() const { return listen_path_; }
  // asnd's bytes to the connections open now stay in the proxy's socket buffer.
  void hold() { holding_ = true; }
  // Closes every connection open now, dropping what was held; later ones pass everything.
  void cut() {
    ++generation_;
    std::lock_guard lock(mu_);
    for (auto& t : pumps_) t.join();
    pumps_.clear();
    holding_ = false;
  }

 private:
  static sockaddr_un address(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    return addr;
  }

  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      const int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const sockaddr_un addr = address(upstream_path_);
      if (server < 0 ||
          ::connect(server, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(client);  // asnd is down: the client connects again later
        if (server >= 0) ::close(server);
        continue;
      }
      std::lock_guard lock(mu_);
      pumps_.emplace_back(
          [this, client, server, gen = generation_.load()] { pump(client, server, gen); });
    }
  }

  void pump(int client, int server, uint64_t gen) {
    char buffer[16384];
    auto pass = [&](int from, int to) {
      const ssize_t n = ::read(from, buffer, sizeof buffer);
      if (n <= 0) return false;
      for (ssize_t done = 0; done < n;) {
        // MSG_NOSIGNAL: a peer gone (asnd killed) is an EPIPE here, not a SIGPIPE that ends
        // the test.
        const ssize_t w =
            ::send(to, buffer + done, static_cast<size_t>(n - done), MSG_NOSIGNAL);
        if (w <= 0) return false;
        done += w;
      }
      return true;
    };
    while (!stop_ && generation_ == gen) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, static_cast<short>(holding_ ? 0 : POLLIN), 0}};
      if (::poll(p, 2, 20) <= 0) continue;
      if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pass(client, server)) break;
      if (!holding_ && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && !pass(server, client)) {
        break;
      }
    }
    ::close(client);
    ::close(server);
  }

  std::string listen_path_;
  std::string upstream_path_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> holding_{false};
  std::atomic<uint64_t> generation_{0};
  std::mutex mu_;
  std::vector<std::thread> pumps_;
  std::thread accepter_;
};

class ClientAsndTest : public ::testing::Test {
 protected:
  void SetUp() override { start(); }
  void start() {
    ASSERT_TRUE(asnd_.start({}, "locks:\n  grace_period: 5s\n"))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }
  client::LockClient connect(const std::string& socket = "") {
    client::ClientOptions options;
    options.initial_backoff = 50ms;
    options.max_backoff = 200ms;
    return client::LockClient("unix:" + (socket.empty() ? asnd_.socket() : socket), options);
  }
  // Whether `asnctl locks list` shows `session` holding (or, `waiting`, waiting for) `file`.
  bool listed(const std::string& file, uint64_t session, bool waiting) {
    const std::string out = asnd_.asnctl({"locks", "list"}).out;
    const size_t split = out.find("waiting:");
    const std::string part =
        waiting ? (split == std::string::npos ? "" : out.substr(split)) : out.substr(0, split);
    size_t at = 0;
    while ((at = part.find(file + " ", at)) != std::string::npos) {
      const size_t end = part.find('\n', at);
      if (part.substr(at, end - at).find(std::to_string(session)) != std::string::npos) {
        return true;
      }
      at = end;
    }
    return false;
  }

  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("client")};
};

TEST_F(ClientAsndTest, AGuardHoldsTheLockAndAnotherSessionWaitsForIt) {
  auto lib = connect();
  auto writer = lib.open_session(10s, "writer");
  auto reader = lib.open_session(10s, "reader");
  std::future<client::Grant> waited;
  uint64_t token = 0;
  {
    client::LockGuard guard(writer, "/data/x", {0, 4096}, client::Mode::kExclusive, 5s);
    token = guard.token();
    EXPECT_GT(token, 0u);
    EXPECT_THROW(reader.try_lock("/data/x", {100, 10}, client::Mode::kShared), client::Conflict);
    EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("/data/x"));
    waited = std::async(std::launch::async, [&] {
      return reader.lock("/data/x", {100, 10}, client::Mode::kShared, 10s);
    });
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(waited.wait_for(0s), std::future_status::timeout);
  }  // the guard unlocks
  const client::Grant grant = waited.get();
  EXPECT_TRUE(grant.waited);
  EXPECT_GT(grant.token, token);
}

TEST_F(ClientAsndTest, ASessionHoldingALockComesBackAfterAsndIsKilled) {
  auto lib = connect();
  auto holder = lib.open_session(3s, "holder");
  auto other = lib.open_session(30s, "other");
  client::LockGuard guard(holder, "/data/kept", {0, 100}, client::Mode::kExclusive, 5s);

  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(20ms);
  start();
  // Within the grace period the library re-attaches the session by itself.
  EXPECT_TRUE(test::wait_until([&] { return holder.reattach_count() >= 1; }));
  EXPECT_FALSE(holder.lost());
  // Past the grace period the lock is still held, the other session still refused.
  std::this_thread::sleep_for(5500ms);
  EXPECT_FALSE(holder.lost());
  EXPECT_THROW(other.try_lock("/data/kept", {0, 1}, client::Mode::kShared), client::Conflict);
  guard.unlock();
  const auto grant = other.try_lock("/data/kept", {0, 1}, client::Mode::kShared);
  EXPECT_GT(grant.token, guard.token());
}

// A Lock granted by asnd, whose answer asnd is killed before the client received: the client's
// call fails (UNAVAILABLE), so the session must not keep the lock. After the restart the
// library re-attaches the session and says what it holds (KeepAliveRequest.held): asnd
// releases the grant the client never got, and keeps the one it did get.
TEST_F(ClientAsndTest, ALockWhoseAnswerDiedWithAsndIsNotHeldAfterTheReattach) {
  ReplyGate gate(dir_.path() + "/gate.sock", asnd_.socket());
  auto gated = connect(gate.path());
  auto direct = connect();
  auto victim = gated.open_session(30s, "victim");
  auto other = direct.open_session(30s, "other");
  const auto kept = victim.try_lock("/data/kept", {0, 10}, client::Mode::kExclusive);
  other.try_lock("/data/leak", {0, 100}, client::Mode::kExclusive);
  auto call = std::async(std::launch::async, [&] {
    return victim.lock("/data/leak", {0, 100}, client::Mode::kExclusive, test::scaled(60s));
  });
  ASSERT_TRUE(test::wait_until([&] { return listed("/data/leak", victim.id(), true); }));
  gate.hold();
  other.unlock("/data/leak", {0, 100});  // asnd grants the victim's wait and answers it
  ASSERT_TRUE(test::wait_until([&] { return listed("/data/leak", victim.id(), false); }));
  asnd_.signal(SIGKILL);
  ASSERT_TRUE(test::wait_until([&] { return !asnd_.running(); }));
  gate.cut();
  EXPECT_THROW(call.get(), client::Error);  // the answer never came
  start();
  ASSERT_TRUE(test::wait_until([&] { return victim.reattach_count() >= 1; }));
  // The grant the victim never received is released; the one it did is still its own.
  EXPECT_TRUE(test::wait_until([&] {
    try {
      other.try_lock("/data/leak", {0, 100}, client::Mode::kExclusive);
      return true;
    } catch (const client::Conflict&) {
      return false;
    }
  })) << "the lock whose answer was lost is still held:\n"
      << asnd_.asnctl({"locks", "list"}).out;
  EXPECT_THROW(other.try_lock("/data/kept", {0, 10}, client::Mode::kShared), client::Conflict);
  EXPECT_FALSE(victim.lost());
  victim.unlock("/data/kept", {0, 10});
  EXPECT_GT(other.try_lock("/data/kept", {0, 10}, client::Mode::kShared).token, kept.token);
  // The victim goes on locking.
  EXPECT_NO_THROW(victim.try_lock("/data/other", {0, 1}, client::Mode::kExclusive));
}

// A board reset empties the switch's lock table. The holder's session lives on and takes its
// locks back by itself (new, higher tokens) before anyone else may have those bytes; a
// blocking lock of another client waits the loss grace out.
TEST_F(ClientAsndTest, ABoardResetIsOutlivedByTheHoldersLocks) {
  auto lib = connect();
  auto holder = lib.open_session(3s, "holder");
  std::atomic<int> told{0};
  client::LocksLost report;
  holder.on_locks_lost([&](const client::LocksLost& lost) {
    report = lost;
    ++told;
  });
  const auto exclusive = holder.try_lock("/data/reset", {0, 10}, client::Mode::kExclusive);
  holder.unlock("/data/reset", {5, 5});
  const auto shared = holder.try_lock("/data/reset2", {0, 10}, client::Mode::kShared);
  ASSERT_EQ(exclusive.domain, "switch");
  auto other = lib.open_session(3s, "other");
  const auto reset = asnd_.asnctl({"board", "reset", "--yes"});
  ASSERT_EQ(reset.exit_code, 0) << reset.all();
  // The holder's next call learns of the loss (before its KeepAlive would have): the
  // library reclaims, tells the application, and makes the call again.
  EXPECT_NO_THROW(holder.try_lock("/data/elsewhere", {0, 1}, client::Mode::kExclusive));
  EXPECT_EQ(told.load(), 1);
  // A blocking shared lock on the holder's shared bytes waits out the grace, then shares.
  auto reader = std::async(std::launch::async, [&] {
    return other.lock("/data/reset2", {0, 10}, client::Mode::kShared, 20s);
  });
  // The holder's exclusive bytes are never granted to `other`: withheld (while a session that
  // lost locks has not reclaimed yet), then held again.
  int withheld = 0;
  bool conflict = false;
  for (int i = 0; i < 200 && !conflict; ++i) {
    try {
      other.try_lock("/data/reset", {0, 5}, client::Mode::kExclusive);
      ADD_FAILURE() << "granted the holder's bytes after a board reset";
      break;
    } catch (const client::Conflict&) {
      conflict = true;
    } catch (const client::Error& e) {
      EXPECT_EQ(e.code(), client::StatusCode::kUnavailable) << e.what();
      ++withheld;
      std::this_thread::sleep_for(50ms);
    }
  }
  EXPECT_TRUE(conflict) << withheld << " times withheld";
  EXPECT_EQ(told.load(), 1);
  EXPECT_EQ(report.reclaimed, 2u);
  EXPECT_EQ(report.lost, 0u);
  EXPECT_EQ(holder.locks_lost_count(), 1u);
  EXPECT_FALSE(holder.lost());
  const auto read = reader.get();
  EXPECT_GT(read.token, shared.token);
  // The bytes the holder had unlocked before the reset are free; the reclaimed ones are the
  // holder's to unlock.
  EXPECT_NO_THROW(other.try_lock("/data/reset", {5, 5}, client::Mode::kExclusive));
  EXPECT_NO_THROW(holder.unlock("/data/reset", {0, 5}));
  EXPECT_NO_THROW(other.try_lock("/data/reset", {0, 5}, client::Mode::kExclusive));
  EXPECT_THAT(asnd_.log(), HasSubstr("the loss grace ended"));
}

}  // namespace
}  // namespace asn::test

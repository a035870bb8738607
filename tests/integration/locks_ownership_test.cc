// Lock sessions belong to who opened them, on every listener (issue 24), through the real asnd
// on its Unix socket and plain TCP: a caller on TCP without the session's secret cannot renew,
// unlock or close another's session; asnctl over TCP uses its own; an admin revokes a session
// and force-releases bytes with the real asnctl; after a SIGKILL and restart a session is still
// owned (a wrong secret refused, the right one re-attaches).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void with_deadline(grpc::ClientContext& context) {
  context.set_deadline(deadline_in(std::chrono::seconds(30)));
}

class LocksOwnershipTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("owners")};
  std::string address_ = "127.0.0.1:" + std::to_string(free_tcp_port());

  void SetUp() override { start(); }

  void start() {
    ASSERT_TRUE(asnd_.start({"--tcp", address_}, "locks:\n  grace_period: 3s\n"))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }

  std::unique_ptr<v1::Locks::Stub> tcp() {
    return v1::Locks::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  }
  std::unique_ptr<v1::Locks::Stub> unix_socket() {
    return v1::Locks::NewStub(
        grpc::CreateChannel("unix:" + asnd_.socket(), grpc::InsecureChannelCredentials()));
  }

  std::future<CommandResult> acquire(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"lock", "acquire"};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::async(std::launch::async, [this, argv] { return asnd_.asnctl(argv); });
  }

  // The session holding a lock on `file`, once `locks list` shows one (0: none in time).
  uint64_t holder_of(const std::string& file) {
    uint64_t holder = 0;
    wait_until([&] {
      const auto json = asnd_.asnctl({"-o", "json", "locks", "list", "--file", file});
      holder = json_number(json.out, "session").value_or(0);
      return holder != 0;
    });
    return holder;
  }

  static grpc::Status keep_alive(v1::Locks::Stub& stub, uint64_t session, const std::string& secret,
                                 bool* reattached = nullptr) {
    grpc::ClientContext c;
    with_deadline(c);
    v1::KeepAliveRequest r;
    r.set_session(session);
    r.set_secret(secret);
    v1::KeepAliveResponse response;
    grpc::Status status = stub.KeepAlive(&c, r, &response);
    if (reattached) *reattached = response.reattached();
    return status;
  }
};

TEST_F(LocksOwnershipTest, AStrangerOnTcpCannotUseAnotherCallersSession) {
  auto holder = acquire({"/data/mine", "0:4096", "--hold", "4", "--ttl", "3"});
  const uint64_t session = holder_of("/data/mine");
  ASSERT_NE(session, 0u);

  auto stranger = tcp();
  const grpc::Status renew = keep_alive(*stranger, session, "");
  // Refused as a session that is not open: a stranger cannot tell it is alive.
  EXPECT_EQ(renew.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << renew.error_message();
  EXPECT_THAT(renew.error_message(), HasSubstr("not open to this caller"));
  EXPECT_THAT(renew.error_message(), Not(::testing::ContainsRegex("uid [0-9]")));  // the owner
  {
    grpc::ClientContext c;
    with_deadline(c);
    v1::UnlockRequest r;
    r.set_session(session);
    r.set_file("/data/mine");
    r.add_ranges()->set_length(4096);
    v1::UnlockResponse response;
    EXPECT_EQ(stranger->Unlock(&c, r, &response).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  {
    grpc::ClientContext c;
    with_deadline(c);
    v1::CloseSessionRequest r;
    r.set_session(session);
    r.set_secret(std::string(32, 'x'));
    v1::CloseSessionResponse response;
    EXPECT_EQ(stranger->CloseSession(&c, r, &response).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("/data/mine"));
  const auto held = holder.get();
  EXPECT_EQ(held.exit_code, 0) << held.all();

  // asnctl over plain TCP uses its session with its secret: it locks, keeps the session
  // alive, and its close releases the lock.
  const auto remote = run_command({ASNCTL_PATH, "--address", address_, "lock", "acquire",
                                   "/data/remote", "0:10", "--hold", "1.5", "--ttl", "3"});
  EXPECT_EQ(remote.exit_code, 0) << remote.all();
  EXPECT_THAT(remote.out, HasSubstr("released"));
  const auto json = asnd_.asnctl({"-o", "json", "locks", "stats"});
  EXPECT_EQ(json_number(json.out, "sessions").value_or(0), 0u) << json.out;
}

TEST_F(LocksOwnershipTest, AnAdminRevokesASessionWithAsnctl) {
  auto holder = acquire({"/data/revoked", "0:4096", "--hold", "20", "--ttl", "3"});
  const uint64_t session = holder_of("/data/revoked");
  ASSERT_NE(session, 0u);

  const auto unknown = asnd_.asnctl({"locks", "revoke", "12345"});
  EXPECT_EQ(unknown.exit_code, 1) << unknown.all();
  EXPECT_THAT(unknown.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(unknown.err, HasSubstr("12345"));
  const auto bad = asnd_.asnctl({"locks", "revoke", "twelve"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  // A lock client (plain TCP) may not revoke.
  const auto refused =
      run_command({ASNCTL_PATH, "--address", address_, "locks", "revoke", std::to_string(session)});
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_THAT(refused.err, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("/data/revoked"));

  const auto revoked = asnd_.asnctl({"locks", "revoke", std::to_string(session)});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.all();
  EXPECT_THAT(revoked.out, HasSubstr("revoked session " + std::to_string(session)));
  EXPECT_THAT(revoked.out, HasSubstr("1 lock entries released"));
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("no locks are held"));
  EXPECT_THAT(asnd_.log(), HasSubstr("revoked session " + std::to_string(session)));
  // The holder learns it at its next KeepAlive: the session is gone.
  const auto lost = holder.get();
  EXPECT_EQ(lost.exit_code, 1) << lost.all();
  EXPECT_THAT(lost.err, HasSubstr("the session was lost"));
}

TEST_F(LocksOwnershipTest, AnAdminReleasesBytesFromEverySessionHoldingThem) {
  auto a = acquire({"/data/shared", "0:100", "--shared", "--hold", "20", "--ttl", "3"});
  ASSERT_NE(holder_of("/data/shared"), 0u);
  auto b = acquire({"/data/shared", "50:100", "--shared", "--hold", "20", "--ttl", "3"});
  ASSERT_TRUE(wait_until([&] {
    return squeezed(asnd_.asnctl({"locks", "list"}).out).find("[50, 150)") != std::string::npos;
  }));
  auto waiter = acquire({"/data/shared", "0:60", "--wait", "20", "--hold", "0.1"});

  const auto usage = asnd_.asnctl({"locks", "release", "/data/shared", "60"});
  EXPECT_EQ(usage.exit_code, 2) << usage.all();
  EXPECT_THAT(usage.err, HasSubstr("OFFSET:LENGTH"));
  const auto empty = asnd_.asnctl({"locks", "release", "/data/shared", "0:0"});
  EXPECT_EQ(empty.exit_code, 1) << empty.all();
  EXPECT_THAT(empty.err, HasSubstr("INVALID_ARGUMENT"));

  const auto dry = asnd_.asnctl({"locks", "release", "/data/shared", "0:60", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_THAT(dry.out, HasSubstr("would release"));
  EXPECT_THAT(squeezed(dry.out), HasSubstr("[0, 60) shared"));
  EXPECT_THAT(squeezed(dry.out), HasSubstr("[50, 60) shared"));
  EXPECT_THAT(squeezed(asnd_.asnctl({"locks", "list"}).out), HasSubstr("[0, 100) shared"));

  const auto released = asnd_.asnctl({"-o", "json", "locks", "release", "/data/shared", "0:60"});
  ASSERT_EQ(released.exit_code, 0) << released.all();
  EXPECT_EQ(json_number(released.out, "granted"), 1u) << released.out;
  const auto waited = waiter.get();
  EXPECT_EQ(waited.exit_code, 0) << waited.all();
  const auto list = squeezed(asnd_.asnctl({"locks", "list", "--file", "/data/shared"}).out);
  EXPECT_THAT(list, HasSubstr("[60, 100) shared"));
  EXPECT_THAT(list, HasSubstr("[60, 150) shared"));
  EXPECT_THAT(list, Not(HasSubstr("[0, 100)")));
  EXPECT_THAT(asnd_.log(), HasSubstr("released 2 held locks"));
  // The holders are revoked, which ends them.
  const auto json = asnd_.asnctl({"-o", "json", "locks", "list", "--file", "/data/shared"});
  for (uint64_t session : json_numbers(json.out, "session")) {
    asnd_.asnctl({"locks", "revoke", std::to_string(session)});
  }
  EXPECT_EQ(a.get().exit_code, 1);
  EXPECT_EQ(b.get().exit_code, 1);
}

TEST_F(LocksOwnershipTest, ASessionIsStillOwnedAfterAKillDashNine) {
  auto remote = tcp();
  v1::OpenSessionResponse opened;
  {
    grpc::ClientContext c;
    with_deadline(c);
    v1::OpenSessionRequest r;
    r.set_ttl_seconds(30);
    r.set_name("remote");
    ASSERT_TRUE(remote->OpenSession(&c, r, &opened).ok());
  }
  ASSERT_EQ(opened.secret().size(), 32u);
  {
    grpc::ClientContext c;
    with_deadline(c);
    v1::LockRequest r;
    r.set_session(opened.session());
    r.set_secret(opened.secret());
    r.set_file("/data/kept");
    r.set_mode(v1::LOCK_MODE_EXCLUSIVE);
    r.add_ranges()->set_length(10);
    v1::LockResponse granted;
    ASSERT_TRUE(remote->TryLock(&c, r, &granted).ok());
  }
  asnd_.signal(SIGKILL);
  while (asnd_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  start();

  remote = tcp();
  std::string wrong = opened.secret();
  wrong[0] = static_cast<char>(wrong[0] ^ 1);
  EXPECT_EQ(keep_alive(*remote, opened.session(), "").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(keep_alive(*remote, opened.session(), wrong).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // On the Unix socket, the same user is no owner of a session opened over plain TCP.
  EXPECT_EQ(keep_alive(*unix_socket(), opened.session(), "").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  bool reattached = false;
  const grpc::Status back = keep_alive(*remote, opened.session(), opened.secret(), &reattached);
  ASSERT_TRUE(back.ok()) << back.error_message();
  EXPECT_TRUE(reattached);
  EXPECT_THAT(asnd_.asnctl({"locks", "list"}).out, HasSubstr("/data/kept"));
  // The secret is in no log.
  EXPECT_THAT(asnd_.log(), Not(HasSubstr(opened.secret())));
}

}  // namespace
}  // namespace asn::test

// A small in-process stand-in for asnd's Locks service, for the client library's tests: sessions
// with leases, a lock table with shared/exclusive conflicts, FAILED_PRECONDITION for a session
// it does not know, and a restart that keeps the sessions (like asnd's grace period). Not the
// real service (daemon/): no FIFO fairness, no domains, no durable state.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"

namespace asn::test {

// The lock table and the sessions: outlives the servers that serve it (a restart).
class FakeLockState {
 public:
  using Clock = std::chrono::steady_clock;

  struct Held {
    std::uint64_t session;
    bool exclusive;
    std::uint64_t begin, end;  // [begin, end)
    std::uint64_t token;
    std::uint64_t request;
  };
  struct SessionState {
    std::uint32_t ttl_seconds;
    Clock::time_point expires;
    std::string name;
    bool pending_reattach = false;
  };

  // Drops a session and its locks, as if its lease had run out.
  void forget(std::uint64_t session);
  // The server went down and came back: sessions wait for a re-attach for `grace`.
  void restarted(std::chrono::milliseconds grace);
  bool has_session(std::uint64_t session);
  std::size_t held_entries(std::uint64_t session);
  std::vector<Held> held(const std::string& file);
  std::uint64_t keepalives() const { return keepalives_; }
  // A hung asnd: while true, Batch streams take messages and answer nothing (the unary calls
  // still answer). Set it false before the server stops.
  void hang(bool hung);

 private:
  friend class FakeLocksService;
  void expire_locked();
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::uint64_t, SessionState> sessions_;
  std::map<std::string, std::vector<Held>> files_;
  std::uint64_t next_session_ = 1000;
  std::uint64_t next_token_ = 1;
  std::uint64_t next_request_ = 1;
  std::atomic<std::uint64_t> keepalives_{0};
  bool hung_ = false;
};

class FakeLocksService final : public asn::v1::Locks::Service {
 public:
  explicit FakeLocksService(std::shared_ptr<FakeLockState> state) : state_(std::move(state)) {}

  grpc::Status OpenSession(grpc::ServerContext*, const asn::v1::OpenSessionRequest*,
                           asn::v1::OpenSessionResponse*) override;
  grpc::Status KeepAlive(grpc::ServerContext*, const asn::v1::KeepAliveRequest*,
                         asn::v1::KeepAliveResponse*) override;
  grpc::Status CloseSession(grpc::ServerContext*, const asn::v1::CloseSessionRequest*,
                            asn::v1::CloseSessionResponse*) override;
  grpc::Status Lock(grpc::ServerContext*, const asn::v1::LockRequest*,
                    asn::v1::LockResponse*) override;
  grpc::Status TryLock(grpc::ServerContext*, const asn::v1::LockRequest*,
                       asn::v1::LockResponse*) override;
  grpc::Status Unlock(grpc::ServerContext*, const asn::v1::UnlockRequest*,
                      asn::v1::UnlockResponse*) override;
  grpc::Status Downgrade(grpc::ServerContext*, const asn::v1::UnlockRequest*,
                         asn::v1::UnlockResponse*) override;
  // The ops of a message one after the other, their results in one reply: a waiting lock
  // holds up the stream's later ops (asnd's does not), and no op gives a reason.
  grpc::Status Batch(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<asn::v1::LockBatchReply, asn::v1::LockBatch>*) override;

 private:
  // `timeout_ms`: 0, or how long a waiting lock may wait (DEADLINE_EXCEEDED then).
  grpc::Status lock(grpc::ServerContext* context, const asn::v1::LockRequest* request,
                    asn::v1::LockResponse* response, bool wait, std::uint32_t timeout_ms = 0);
  grpc::Status unlock(const asn::v1::UnlockRequest* request, asn::v1::UnlockResponse* response,
                      bool downgrade);
  std::shared_ptr<FakeLockState> state_;
};

// Serves a FakeLockState on a Unix socket; stop() and start() again make a restart.
class FakeLocksServer {
 public:
  FakeLocksServer(std::shared_ptr<FakeLockState> state, std::string socket_path);
  ~FakeLocksServer();
  void start();
  void stop();
  // stop(), state->restarted(grace), start().
  void restart(std::chrono::milliseconds grace = std::chrono::seconds(5));
  const std::string& endpoint() const { return endpoint_; }
  FakeLockState& state() { return *state_; }

 private:
  std::shared_ptr<FakeLockState> state_;
  std::string endpoint_;
  std::unique_ptr<FakeLocksService> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace asn::test

// The lock torture test's hostile actors (tests/integration/locks_torture_test.cc, issue 24):
// another principal than the regular clients (those are uid 0 on the Unix socket; these are
// on plain TCP, the principal "address 127.0.0.1", whose sessions need their secret):
// - Hostile: knows the live session ids of the regular clients (the strongest attacker) and
//   calls every session RPC and Batch op on them, with no secret, random bytes, or the real
//   secret of its own session. Each such call must be refused; an OK is a violation.
// - Flooder: opens sessions until locks.max_sessions_per_principal refuses, and floods
//   waiting Locks through a Batch stream until locks.max_waiting_per_session and
//   locks.max_waiting_per_principal refuse, over and over, while the regular clients (another
//   principal, far below their quotas) must never be refused for a quota.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"
#include "asnd_harness.hpp"

namespace asn::test {

// A channel of its own (not gRPC's shared subchannel): each actor has its own connection, so
// that none waits behind another's streams (listen.max_streams_per_connection).
inline std::unique_ptr<v1::Locks::Stub> own_stub(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return v1::Locks::NewStub(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
}

inline void deadline_after(grpc::ClientContext& context, double seconds) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
}

// The regular clients' open sessions, for the hostile actor to steal.
class Roster {
 public:
  void add(uint64_t session) {
    std::lock_guard lock(mu_);
    live_.push_back(session);
  }
  void remove(uint64_t session) {
    std::lock_guard lock(mu_);
    std::erase(live_, session);
  }
  uint64_t pick(std::mt19937_64& random) const {
    std::lock_guard lock(mu_);
    if (live_.empty()) return 0;
    return live_[std::uniform_int_distribution<size_t>(0, live_.size() - 1)(random)];
  }

 private:
  mutable std::mutex mu_;
  std::vector<uint64_t> live_;
};

struct HostileCounters {
  std::atomic<uint64_t> attempts{0}, denied{0}, unavailable{0}, unanswered{0}, violations{0},
      unexpected{0}, own_calls{0}, own_ok{0};

  uint64_t calls() const { return attempts + own_calls; }
  std::string report() const {
    std::ostringstream out;
    out << "hostile (plain TCP, the clients' session ids): " << attempts << " attempts: " << denied
        << " refused as not open, " << unavailable << " UNAVAILABLE, " << unanswered
        << " unanswered, " << violations << " let through (violations), " << unexpected
        << " unexpected; " << own_calls << " calls on its own session (" << own_ok << " OK)";
    return out.str();
  }
};

// Calls on the regular clients' sessions as another principal. What asnd may answer
// (services/lock_ops.cc, LockManager::check_owner): FAILED_PRECONDITION "not open to this
// caller" (reason session-gone), whether the session is open (the owner check runs before
// anything else, also before the locks-lost check) or ended: a stranger cannot tell which;
// UNAVAILABLE while asnd is down (a broken Batch stream too);
// DEADLINE_EXCEEDED when no answer came in time (counted apart: no outcome is known, and the
// victims' records would show what a lost answer did). OK is a violation; anything else
// (e.g. the locks-lost FAILED_PRECONDITION, which only a caller that passed the owner check
// can get) is unexpected.
class Hostile {
 public:
  Hostile(const std::string& address, const Roster& roster, uint64_t seed)
      : roster_(roster), random_(seed), stub_(own_stub(address)) {}

  void run(const std::atomic<bool>& stop) {
    while (!stop) {
      if (own_session_ == 0 || chance(0.02)) own_keep_alive();
      uint64_t victim = roster_.pick(random_);
      if (chance(0.03)) victim = random_();  // a session that never existed
      if (victim == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      attack(victim);
    }
    drop_stream();
  }

  HostileCounters counters;

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(random_) < p; }

  // Its own session, opened on TCP: its secret is a real one, only not the victims'. The
  // flooder shares this principal and may hold every session it may have: then the last
  // secret it had stays its forgery.
  void own_keep_alive() {
    counters.own_calls++;
    if (own_session_ != 0) {
      grpc::ClientContext context;
      deadline_after(context, 1.0);
      v1::KeepAliveRequest request;
      request.set_session(own_session_);
      request.set_secret(own_secret_);
      v1::KeepAliveResponse response;
      const grpc::Status status = stub_->KeepAlive(&context, request, &response);
      if (status.ok()) {
        counters.own_ok++;
        return;
      }
      if (status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) return;
    }
    grpc::ClientContext context;
    deadline_after(context, 1.0);
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(3);
    request.set_name("hostile");
    v1::OpenSessionResponse response;
    if (stub_->OpenSession(&context, request, &response).ok()) {
      own_session_ = response.session();
      own_secret_ = response.secret();
      counters.own_ok++;
    }
  }

  std::string forged_secret() {
    const int kind = std::uniform_int_distribution<int>(0, 2)(random_);
    if (kind == 0) return "";
    if (kind == 1 && !own_secret_.empty()) return own_secret_;
    std::string bytes(32, '\0');
    for (auto& b : bytes) b = static_cast<char>(random_());
    return bytes;
  }

  template <typename Request>
  void aim(Request& request, uint64_t victim) {
    request.set_session(victim);
    request.set_secret(forged_secret());
  }

  // Ranges the victims use (tests/integration/locks_torture_test.cc: 4 files, bytes
  // [0, 256)): a stolen Unlock would take bytes a victim holds, which the victim's own
  // Unlock (refused, not held) and the checker (a conflicting grant) would then show.
  template <typename Request>
  void target(Request& request) {
    const int f = std::uniform_int_distribution<int>(0, 3)(random_);
    request.set_file((f < 2 ? "file-" : "sw/file-") + std::to_string(f));
    auto* r = request.add_ranges();
    r->set_offset(std::uniform_int_distribution<uint64_t>(0, 200)(random_));
    r->set_length(std::uniform_int_distribution<uint64_t>(1, 56)(random_));
  }

  void attack(uint64_t victim) {
    const int op = std::uniform_int_distribution<int>(0, 6)(random_);
    grpc::Status status;
    grpc::ClientContext context;
    deadline_after(context, 1.0);
    const char* what = "";
    switch (op) {
      case 0: {
        what = "KeepAlive";
        v1::KeepAliveRequest request;
        aim(request, victim);
        v1::KeepAliveResponse response;
        status = stub_->KeepAlive(&context, request, &response);
        break;
      }
      case 1:
      case 2: {
        what = op == 1 ? "TryLock" : "Lock";
        v1::LockRequest request;
        aim(request, victim);
        target(request);
        request.set_mode(chance(0.5) ? v1::LOCK_MODE_EXCLUSIVE : v1::LOCK_MODE_SHARED);
        v1::LockResponse response;
        status = op == 1 ? stub_->TryLock(&context, request, &response)
                         : stub_->Lock(&context, request, &response);
        break;
      }
      case 3:
      case 4: {
        what = op == 3 ? "Unlock" : "Downgrade";
        v1::UnlockRequest request;
        aim(request, victim);
        target(request);
        v1::UnlockResponse response;
        status = op == 3 ? stub_->Unlock(&context, request, &response)
                         : stub_->Downgrade(&context, request, &response);
        break;
      }
      case 5: {
        what = "CloseSession";
        v1::CloseSessionRequest request;
        aim(request, victim);
        v1::CloseSessionResponse response;
        status = stub_->CloseSession(&context, request, &response);
        break;
      }
      default:
        what = "Batch op";
        status = batch_attack(victim);
    }
    judge(what, victim, status);
  }

  grpc::Status batch_attack(uint64_t victim) {
    v1::LockOp op;
    op.set_id(++op_id_);
    switch (std::uniform_int_distribution<int>(0, 4)(random_)) {
      case 0:
        aim(*op.mutable_keep_alive(), victim);
        break;
      case 1:
      case 2: {
        auto* request = op.mutable_lock();
        if (chance(0.5)) {
          request = op.mutable_try_lock();
        } else {
          op.set_timeout_ms(200);  // were it let through, a wait ends soon
        }
        aim(*request, victim);
        target(*request);
        request->set_mode(v1::LOCK_MODE_EXCLUSIVE);
        break;
      }
      default: {
        auto* request = chance(0.5) ? op.mutable_unlock() : op.mutable_downgrade();
        aim(*request, victim);
        target(*request);
      }
    }
    if (!stream_) {
      stream_context_ = std::make_unique<grpc::ClientContext>();
      stream_ = stub_->Batch(stream_context_.get());
    }
    v1::LockBatch batch;
    *batch.add_ops() = std::move(op);
    v1::LockBatchReply reply;
    if (!stream_->Write(batch) || !stream_->Read(&reply)) {
      drop_stream();
      return {grpc::StatusCode::UNAVAILABLE, "the Batch stream broke"};
    }
    if (reply.results_size() != 1 || reply.results(0).id() != op_id_) {
      drop_stream();
      return {grpc::StatusCode::INTERNAL,
              "a reply that is not the op's: " + reply.ShortDebugString()};
    }
    const auto& result = reply.results(0);
    if (result.code() == 0) return grpc::Status::OK;
    return {static_cast<grpc::StatusCode>(result.code()), result.message()};
  }

  void drop_stream() {
    if (!stream_) return;
    stream_context_->TryCancel();
    (void)stream_->Finish();
    stream_.reset();
    stream_context_.reset();
  }

  void judge(const char* what, uint64_t victim, const grpc::Status& status) {
    counters.attempts++;
    switch (status.error_code()) {
      case grpc::StatusCode::OK:
        if (counters.violations++ < 10) {
          ADD_FAILURE() << "hostile " << what << " on session " << victim
                        << " of another principal was let through";
        }
        return;
      case grpc::StatusCode::FAILED_PRECONDITION:
        if (status.error_message().find("not open to this caller") != std::string::npos) {
          counters.denied++;
          return;
        }
        break;
      case grpc::StatusCode::UNAVAILABLE:
        counters.unavailable++;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        counters.unanswered++;
        return;
      default:
        break;
    }
    if (counters.unexpected++ < 10) {
      ADD_FAILURE() << "hostile " << what << " on session " << victim << ": " << status.error_code()
                    << " " << status.error_message();
    }
  }

  const Roster& roster_;
  std::mt19937_64 random_;
  std::unique_ptr<v1::Locks::Stub> stub_;
  uint64_t own_session_ = 0;
  std::string own_secret_;
  uint64_t op_id_ = 0;
  std::unique_ptr<grpc::ClientContext> stream_context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::LockBatch, v1::LockBatchReply>> stream_;
};

struct FloodCounters {
  std::atomic<uint64_t> rounds{0}, calls{0}, sessions_opened{0}, session_quota{0},
      session_quota_hits{0}, waits_sent{0}, session_wait_quota{0}, principal_wait_quota{0},
      grants{0}, grace{0}, ended{0}, unexpected{0};

  std::string report() const {
    std::ostringstream out;
    out << "flooder (plain TCP): " << rounds << " rounds, " << sessions_opened
        << " sessions opened, " << session_quota
        << " refused by locks.max_sessions_per_principal (in " << session_quota_hits << " rounds), "
        << waits_sent << " waits sent, " << session_wait_quota
        << " refused by locks.max_waiting_per_session, " << principal_wait_quota
        << " by locks.max_waiting_per_principal, " << grants << " granted, " << grace
        << " refused in a board reset's loss grace, " << ended
        << " ended with their session or stream, " << unexpected << " unexpected";
    return out.str();
  }
};

// Floods as another principal, in rounds: an anchor session holds bytes [kFloodFirst,
// kFloodFirst + kFloodSpan) of the regular clients' files (in both domains), the flood
// sessions queue 1-byte exclusive waits on them until the quotas refuse, hold them a while,
// then close everything and start again. The waits are in the same lock tables as the
// regular clients' locks but on bytes they never use: every grant the flooder can get is
// disjoint from every recorded grant, so its grants need no record for the checker to stay
// sound and complete about the regular clients (a grant comes when the anchor's switch locks
// go with a board reset, or its lease ends across a restart).
class Flooder {
 public:
  static constexpr uint64_t kFloodFirst = 1024, kFloodSpan = 1024;

  Flooder(const std::string& address, std::vector<std::string> files)
      : address_(address), files_(std::move(files)), stub_(own_stub(address)) {}

  void run(const std::atomic<bool>& stop) {
    while (!stop) round(stop);
  }

  FloodCounters counters;

 private:
  struct Session {
    uint64_t id = 0;
    std::string secret;
  };

  bool open(Session& s) {
    grpc::ClientContext context;
    deadline_after(context, 1.0);
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(3);  // as the clients: a reset's loss grace lasts no longer for it
    request.set_name("flood");
    v1::OpenSessionResponse response;
    counters.calls++;
    const grpc::Status status = stub_->OpenSession(&context, request, &response);
    if (status.ok()) {
      s = {response.session(), response.secret()};
      counters.sessions_opened++;
      return true;
    }
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
        status.error_message().find("locks.max_sessions_per_principal") != std::string::npos) {
      counters.session_quota++;
    } else if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
               status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      if (counters.unexpected++ < 10)
        ADD_FAILURE() << "flood OpenSession: " << status.error_code() << " "
                      << status.error_message();
    }
    return false;
  }

  void close(const Session& s) {
    grpc::ClientContext context;
    deadline_after(context, 1.0);
    v1::CloseSessionRequest request;
    request.set_session(s.id);
    request.set_secret(s.secret);
    v1::CloseSessionResponse response;
    counters.calls++;
    (void)stub_->CloseSession(&context, request, &response);
  }

  // The results of the flood's Lock ops, as they come: the quota refusals at once, the
  // waits when granted or when the stream or their session ends.
  void read_results(grpc::ClientReaderWriter<v1::LockBatch, v1::LockBatchReply>& stream) {
    v1::LockBatchReply reply;
    while (stream.Read(&reply)) {
      for (const auto& r : reply.results()) {
        if (r.code() == 0) {
          counters.grants++;
        } else if (r.code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                   r.message().find("locks.max_waiting_per_session") != std::string::npos) {
          counters.session_wait_quota++;
        } else if (r.code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
                   r.message().find("locks.max_waiting_per_principal") != std::string::npos) {
          counters.principal_wait_quota++;
        } else if (r.code() == grpc::StatusCode::UNAVAILABLE && r.reason() == "grace") {
          counters.grace++;  // a switch file in the loss grace of a board reset takes no wait
        } else if (r.code() == grpc::StatusCode::ABORTED ||
                   r.code() == grpc::StatusCode::FAILED_PRECONDITION ||
                   r.code() == grpc::StatusCode::UNAVAILABLE) {
          counters.ended++;  // its session ended (closed, expired, locks lost) or asnd stopped
        } else {
          if (counters.unexpected++ < 10)
            ADD_FAILURE() << "flood Lock op: " << r.ShortDebugString();
        }
      }
    }
  }

  void round(const std::atomic<bool>& stop) {
    std::vector<Session> sessions;
    Session anchor;
    if (!open(anchor)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // asnd is down
      return;
    }
    counters.rounds++;
    sessions.push_back(anchor);
    for (const auto& file : files_) {
      grpc::ClientContext context;
      deadline_after(context, 1.0);
      v1::LockRequest request;
      request.set_session(anchor.id);
      request.set_secret(anchor.secret);
      request.set_file(file);
      request.set_mode(v1::LOCK_MODE_EXCLUSIVE);
      auto* r = request.add_ranges();
      r->set_offset(kFloodFirst);
      r->set_length(kFloodSpan);
      v1::LockResponse response;
      counters.calls++;
      (void)stub_->TryLock(&context, request, &response);  // a flood session may hold them
    }
    // As many sessions as the principal may have, and one refused.
    const uint64_t refused_before = counters.session_quota;
    for (int i = 0; i < 1000 && !stop && counters.session_quota == refused_before; ++i) {
      Session s;
      if (open(s)) {
        sessions.push_back(s);
      } else if (counters.session_quota == refused_before) {
        break;  // asnd is down: a new round
      }
    }
    if (counters.session_quota != refused_before) counters.session_quota_hits++;

    grpc::ClientContext stream_context;
    auto stream = stub_->Batch(&stream_context);
    std::thread reader([&] { read_results(*stream); });
    // The first flood session asks for more waits than a session may have, the others for
    // less, so that the principal's quota is reached within a session's (both refuse). Twice
    // as many as that, as the switch's files refuse every wait in the loss grace after a
    // board reset (UNAVAILABLE, reason grace), which is most of the time here.
    uint64_t id = 0;
    bool broken = false;
    for (size_t i = 1; i < sessions.size() && i <= 6 && !broken && !stop; ++i) {
      v1::LockBatch batch;
      const uint64_t n = i == 1 ? 600 : 300;
      for (uint64_t k = 0; k < n; ++k) {
        auto* op = batch.add_ops();
        op->set_id(++id);
        auto* request = op->mutable_lock();
        request->set_session(sessions[i].id);
        request->set_secret(sessions[i].secret);
        request->set_file(files_[k % files_.size()]);
        request->set_mode(v1::LOCK_MODE_EXCLUSIVE);
        auto* r = request->add_ranges();
        r->set_offset(kFloodFirst + (k + 7 * i) % kFloodSpan);
        r->set_length(1);
      }
      counters.calls += n;
      counters.waits_sent += n;
      broken = !stream->Write(batch);
    }
    // Hold the waits a while (they sit in the lock tables beside the regular clients'), then
    // let them all go.
    for (int i = 0; i < 40 && !stop && !broken; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    stream_context.TryCancel();
    reader.join();
    (void)stream->Finish();
    for (const auto& s : sessions) close(s);
  }

  std::string address_;
  std::vector<std::string> files_;
  std::unique_ptr<v1::Locks::Stub> stub_;
};

}  // namespace asn::test

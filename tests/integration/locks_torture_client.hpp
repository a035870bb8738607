// The lock torture test's regular clients (tests/integration/locks_torture_test.cc says what
// they do and why what they record makes the checker sound): each with its own channel to
// asnd's Unix socket and its own session, recording every grant, release, downgrade, loss and
// session end in its history for HistoryChecker (locks_history.hpp).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"
#include "locks_history.hpp"
#include "locks_torture_actors.hpp"

namespace asn::test {

using SteadyClock = std::chrono::steady_clock;

class Timeline {
 public:
  double now() const { return std::chrono::duration<double>(SteadyClock::now() - origin_).count(); }

 private:
  SteadyClock::time_point origin_ = SteadyClock::now();
};

inline constexpr uint64_t kSpace = 256;
inline constexpr int kFiles = 4;

// Half the files live in the switch's lock engine, half in asnd's software domain (the
// placement in the test's config), so that both domains are tortured.
inline std::string file_name(int f) {
  return (f < kFiles / 2 ? "file-" : "sw/file-") + std::to_string(f);
}
inline bool in_switch(int f) { return f < kFiles / 2; }  // the placement puts sw/ in software
inline constexpr double kGrace = 2.0;

struct Counters {
  std::atomic<uint64_t> grants{0}, waited{0}, conflicts{0}, deadlines{0}, unavailable{0},
      unlocks{0}, downgrades{0}, lost{0}, abandoned{0}, reattached{0}, sessions{0}, other{0},
      batch_ops{0}, locks_lost{0}, reclaimed{0}, reclaim_refused{0}, switch_grants{0}, calls{0},
      exhausted{0}, confirmed{0}, released_unconfirmed{0};
};

class Client {
 public:
  // `batch`: Lock, TryLock, Unlock and Downgrade go as ops of a Batch stream (one op a
  // message, its result awaited) instead of unary calls.
  // `roster`: where its live sessions are shown to the hostile actor.
  Client(int id, const std::string& socket, const Timeline& clock, Counters& counters,
         uint64_t seed, bool batch, Roster& roster)
      : id_(id), batch_(batch), clock_(clock), counters_(counters), roster_(roster), random_(seed) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    stub_ = v1::Locks::NewStub(
        grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args));
  }

  void run(const std::atomic<bool>& stop) {
    while (!stop) {
      if (session_ == 0 && !open()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        continue;
      }
      if (lost_) {
        end_session(lost_at_);
        counters_.lost++;
        continue;
      }
      if (locks_lost_) {
        reclaim_and_close();
        continue;
      }
      if (confirm_held_) {
        name_held();
        continue;
      }
      step();
    }
    if (session_ != 0) close();
    drop_stream();
  }

  std::vector<Record> history;

 private:
  enum class Outcome { kOk, kGone, kRefused, kUnknown };

  // One op through this client's Batch stream, opened at first use and again after it broke
  // (asnd killed: the op's outcome is unknown, as a unary call's that got UNAVAILABLE).
  grpc::Status batch_call(v1::LockOp op, v1::LockOpResult& result) {
    if (!stream_) {
      stream_context_ = std::make_unique<grpc::ClientContext>();
      stream_context_->set_wait_for_ready(false);
      stream_ = stub_->Batch(stream_context_.get());
    }
    op.set_id(++op_id_);
    counters_.calls++;
    v1::LockBatch batch;
    *batch.add_ops() = std::move(op);
    v1::LockBatchReply reply;
    if (!stream_->Write(batch) || !stream_->Read(&reply)) {
      drop_stream();
      return {grpc::StatusCode::UNAVAILABLE, "the Batch stream broke"};
    }
    counters_.batch_ops++;
    if (reply.results_size() != 1 || reply.results(0).id() != op_id_) {
      ADD_FAILURE() << "client " << id_ << ": op " << op_id_ << " answered by "
                    << reply.ShortDebugString();
      return {grpc::StatusCode::INTERNAL, "a reply that is not the op's"};
    }
    result = std::move(*reply.mutable_results(0));
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

  grpc::Status lock_call(const v1::LockRequest& request, bool wait, double timeout_s,
                         v1::LockResponse& response) {
    if (!batch_) {
      grpc::ClientContext context;
      set_deadline(context, timeout_s);
      counters_.calls++;
      return wait ? stub_->Lock(&context, request, &response)
                  : stub_->TryLock(&context, request, &response);
    }
    v1::LockOp op;
    *(wait ? op.mutable_lock() : op.mutable_try_lock()) = request;
    if (wait) op.set_timeout_ms(static_cast<uint32_t>(timeout_s * 1000));
    v1::LockOpResult result;
    const grpc::Status status = batch_call(std::move(op), result);
    if (status.ok()) response = std::move(*result.mutable_lock());
    return status;
  }

  grpc::Status unlock_call(const v1::UnlockRequest& request, bool downgrade) {
    if (!batch_) {
      grpc::ClientContext context;
      set_deadline(context, 0.5);
      v1::UnlockResponse response;
      counters_.calls++;
      return downgrade ? stub_->Downgrade(&context, request, &response)
                       : stub_->Unlock(&context, request, &response);
    }
    v1::LockOp op;
    *(downgrade ? op.mutable_downgrade() : op.mutable_unlock()) = request;
    v1::LockOpResult result;
    return batch_call(std::move(op), result);
  }

  void set_deadline(grpc::ClientContext& context, double seconds) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6)));
  }

  bool open() {
    grpc::ClientContext context;
    set_deadline(context, 1.0);
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(std::uniform_int_distribution<uint32_t>(2, 3)(random_));
    request.set_name("torture-" + std::to_string(id_));
    v1::OpenSessionResponse response;
    const double sent = clock_.now();
    counters_.calls++;
    const grpc::Status status = stub_->OpenSession(&context, request, &response);
    if (!status.ok()) {
      exhausted("OpenSession", status);
      return false;
    }
    session_ = response.session();
    roster_.add(session_);
    ttl_ = response.ttl_seconds();
    last_touch_ = sent;
    lost_ = false;
    locks_lost_ = false;
    for (auto& f : held_) f.assign(kSpace, 0);
    for (auto& f : tokens_) f.assign(kSpace, {});
    confirm_held_ = false;
    counters_.sessions++;
    stop_keepalive_ = false;
    keepalive_ = std::thread([this] { keepalive_loop(); });
    return true;
  }

  // Stops keeping the session alive and writes its end (`at`: learned gone or closed).
  void end_session(double at) {
    stop_keepalive_ = true;
    if (keepalive_.joinable()) keepalive_.join();
    Record r;
    r.kind = Kind::kSessionEnd;
    r.client = id_;
    r.session = session_;
    r.at = at;
    {
      std::lock_guard lock(mu_);
      r.last_touch = last_touch_;
    }
    r.ttl = ttl_;
    history.push_back(r);
    roster_.remove(session_);
    session_ = 0;
  }

  void close() {
    const double sent = clock_.now();
    stop_keepalive_ = true;
    if (keepalive_.joinable()) keepalive_.join();
    grpc::ClientContext context;
    set_deadline(context, 1.0);
    v1::CloseSessionRequest request;
    request.set_session(session_);
    v1::CloseSessionResponse response;
    counters_.calls++;
    exhausted("CloseSession", stub_->CloseSession(&context, request, &response));
    end_session(sent);
  }

  // asnd said the switch lost this session's locks (a board reset): the loss is recorded as
  // learned when the KeepAlive said so; the session reclaims what it held in the switch (as
  // libasnclient would), then closes, and the client goes on with a new one.
  void reclaim_and_close() {
    Record loss;
    loss.kind = Kind::kLocksLost;
    loss.client = id_;
    loss.session = session_;
    {
      std::lock_guard lock(mu_);
      loss.at = locks_lost_at_;
    }
    history.push_back(loss);
    counters_.locks_lost++;
    for (int f = 0; f < kFiles; ++f) {
      if (!in_switch(f)) continue;
      for (uint64_t first = 0; first < kSpace;) {
        const uint8_t mode = held_[f][first];
        uint64_t end = first + 1;
        while (end < kSpace && held_[f][end] == mode) ++end;
        if (mode != 0) reclaim(f, first, end, mode == 2);
        first = end;
      }
    }
    close();
  }

  void reclaim(int f, uint64_t first, uint64_t end, bool exclusive) {
    v1::LockRequest request;
    request.set_session(session_);
    request.set_file(file_name(f));
    request.set_mode(exclusive ? v1::LOCK_MODE_EXCLUSIVE : v1::LOCK_MODE_SHARED);
    request.set_reclaim(true);
    auto* r = request.add_ranges();
    r->set_offset(first);
    r->set_length(end - first);
    v1::LockResponse response;
    const double sent = clock_.now();
    const grpc::Status status = lock_call(request, false, 0.5, response);
    if (!status.ok()) {
      exhausted("reclaim", status);
      counters_.reclaim_refused++;
      return;
    }
    Record g;
    g.kind = Kind::kGrant;
    g.client = id_;
    g.session = session_;
    g.file = request.file();
    g.exclusive = exclusive;
    g.token = response.token();
    g.sent = sent;
    g.at = clock_.now();
    g.in_switch = response.domain() == "switch";
    for (const auto& b : response.ranges())
      g.ranges.push_back({b.offset(), b.offset() + b.length()});
    history.push_back(std::move(g));
    for (const auto& b : response.ranges()) {
      for (uint64_t x = b.offset(); x < b.offset() + b.length() && x < kSpace; ++x) {
        tokens_[f][x].push_back(response.token());
      }
    }
    counters_.reclaimed++;
  }

  // asnd restarted while the session held locks: names the grants it holds (the tokens of
  // the bytes it holds), so that asnd releases those whose answers died with the last one.
  void name_held() {
    std::set<uint64_t> tokens;
    for (const auto& f : tokens_) {
      for (const auto& byte : f) tokens.insert(byte.begin(), byte.end());
    }
    v1::KeepAliveRequest request;
    request.set_session(session_);
    auto* held = request.mutable_held();  // set even when empty: "holds nothing"
    for (const uint64_t t : tokens) held->add_tokens(t);
    v1::KeepAliveResponse response;
    const grpc::Status status = keep_alive(request, response);
    if (status.ok()) {
      confirm_held_ = response.confirm_held();
      counters_.confirmed++;
      counters_.released_unconfirmed += response.released_unconfirmed();
    } else if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      gone(clock_.now());
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // One KeepAlive with what every answer tells: the lease renewed from when it was sent, a
  // loss of the switch's locks, asnd asking which grants the session holds.
  grpc::Status keep_alive(const v1::KeepAliveRequest& request, v1::KeepAliveResponse& response) {
    grpc::ClientContext context;
    set_deadline(context, 0.5);
    const double sent = clock_.now();
    counters_.calls++;
    const grpc::Status status = stub_->KeepAlive(&context, request, &response);
    exhausted("KeepAlive", status);
    if (status.ok()) {
      touched(sent);
      if (response.locks_lost()) learned_locks_lost(clock_.now());
      if (response.confirm_held()) confirm_held_ = true;
    }
    return status;
  }

  // Another principal at its quotas (the flooder) never stops this one from being served:
  // this client is far below its own.
  void exhausted(const char* call, const grpc::Status& status) {
    if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return;
    if (counters_.exhausted++ < 10) {
      ADD_FAILURE() << "client " << id_ << ": " << call << ": " << status.error_message();
    }
  }

  void touched(double sent) {
    std::lock_guard lock(mu_);
    last_touch_ = std::max(last_touch_, sent);
  }

  void learned_locks_lost(double learned) {
    std::lock_guard lock(mu_);
    if (!locks_lost_) locks_lost_at_ = learned;
    locks_lost_ = true;
  }

  void gone(double learned) {
    std::lock_guard lock(mu_);
    if (!lost_) lost_at_ = learned;
    lost_ = true;
  }

  void keepalive_loop() {
    const uint64_t session = session_;
    const double period = ttl_ / 4.0;
    double next = clock_.now();
    while (!stop_keepalive_ && !lost_) {
      if (clock_.now() < next) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      v1::KeepAliveRequest request;
      request.set_session(session);
      v1::KeepAliveResponse response;
      const double sent = clock_.now();
      const grpc::Status status = keep_alive(request, response);
      if (status.ok()) {
        if (response.reattached()) counters_.reattached++;
        next = sent + period;
      } else if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        gone(clock_.now());
      } else {
        next = clock_.now() + 0.05;  // asnd is down or restarting: come back soon
      }
    }
  }

  // After a call refused with FAILED_PRECONDITION: a refusal that says the switch lost this
  // session's locks (reason locks-lost) tells the loss as KeepAlive would; the loss grace may
  // end before a KeepAlive asks, and then no KeepAlive says so any more.
  void refused(const grpc::Status& status) {
    if (status.error_message().find("lost its lock table") != std::string::npos) {
      learned_locks_lost(clock_.now());
      return;
    }
    probe();
  }

  // Is the session still open? (after a FAILED_PRECONDITION that may mean either)
  void probe() {
    for (int i = 0; i < 100 && !lost_; ++i) {
      v1::KeepAliveRequest request;
      request.set_session(session_);
      v1::KeepAliveResponse response;
      const grpc::Status status = keep_alive(request, response);
      if (status.ok()) return;
      if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        gone(clock_.now());
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
  }

  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(random_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(random_) < p; }

  void fill_request(v1::LockRequest& request) {
    if (chance(0.2)) {
      auto* s = request.mutable_strided();
      const uint64_t block = pick(1, 12);
      const uint64_t stride = block + pick(1, 40);
      const uint64_t count = pick(2, 5);
      const uint64_t span = stride * (count - 1) + block;
      if (span >= kSpace) {
        s->set_count(1);
        s->set_offset(pick(0, kSpace - block));
      } else {
        s->set_count(count);
        s->set_offset(pick(0, kSpace - span));
      }
      s->set_block_length(block);
      s->set_stride(stride);
      return;
    }
    const int n = chance(0.3) ? static_cast<int>(pick(2, 3)) : 1;
    uint64_t at = pick(0, kSpace / 2);
    for (int i = 0; i < n && at < kSpace; ++i) {
      const uint64_t length = std::min<uint64_t>(pick(1, 48), kSpace - at);
      auto* r = request.add_ranges();
      r->set_offset(at);
      r->set_length(length);
      at += length + pick(1, 40);
    }
  }

  void lock(bool wait) {
    v1::LockRequest request;
    request.set_session(session_);
    const int f = static_cast<int>(pick(0, kFiles - 1));
    request.set_file(file_name(f));
    const bool exclusive = chance(0.6);
    request.set_mode(exclusive ? v1::LOCK_MODE_EXCLUSIVE : v1::LOCK_MODE_SHARED);
    fill_request(request);
    const double timeout =
        wait ? 0.02 + 0.15 * std::uniform_real_distribution<>(0, 1)(random_) : 0.5;
    v1::LockResponse response;
    const double sent = clock_.now();
    const grpc::Status status = lock_call(request, wait, timeout, response);
    const double received = clock_.now();
    if (status.ok()) {
      touched(sent);
      Record r;
      r.kind = Kind::kGrant;
      r.client = id_;
      r.session = session_;
      r.file = request.file();
      r.exclusive = exclusive;
      r.token = response.token();
      r.sent = sent;
      r.at = received;
      r.in_switch = response.domain() == "switch";
      if (r.in_switch) counters_.switch_grants++;
      for (const auto& b : response.ranges()) {
        r.ranges.push_back({b.offset(), b.offset() + b.length()});
        for (uint64_t x = b.offset(); x < b.offset() + b.length() && x < kSpace; ++x) {
          held_[f][x] = std::max<uint8_t>(held_[f][x], exclusive ? 2 : 1);
          tokens_[f][x].push_back(response.token());
        }
      }
      history.push_back(std::move(r));
      counters_.grants++;
      if (response.waited()) counters_.waited++;
      return;
    }
    switch (status.error_code()) {
      case grpc::StatusCode::FAILED_PRECONDITION:
        if (!wait && status.error_message().find("conflicts with") != std::string::npos) {
          touched(sent);
          counters_.conflicts++;
        } else {
          refused(status);
        }
        break;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        counters_.deadlines++;
        break;
      case grpc::StatusCode::UNAVAILABLE:
        counters_.unavailable++;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        break;
      case grpc::StatusCode::ABORTED:
        probe();
        break;
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        exhausted(wait ? "Lock" : "TryLock", status);
        break;
      default:
        counters_.other++;
        ADD_FAILURE() << "client " << id_ << ": " << (wait ? "Lock" : "TryLock") << " "
                      << request.ShortDebugString() << ": " << status.error_code() << " "
                      << status.error_message();
    }
  }

  // A run of bytes of one file this client holds (at least `mode`), or none.
  bool held_run(int& f, uint64_t& first, uint64_t& end, uint8_t mode) {
    for (int tries = 0; tries < 8; ++tries) {
      f = static_cast<int>(pick(0, kFiles - 1));
      std::vector<uint64_t> held;
      for (uint64_t x = 0; x < kSpace; ++x) {
        if (held_[f][x] >= mode) held.push_back(x);
      }
      if (held.empty()) continue;
      first = held[pick(0, held.size() - 1)];
      end = first + 1;
      while (end < kSpace && held_[f][end] >= mode) ++end;
      // A part of the run: sometimes the middle of a lock (a split).
      if (chance(0.5) && end - first > 2) {
        first = pick(first, end - 2);
        end = pick(first + 1, end);
      }
      return true;
    }
    return false;
  }

  // Unlock or Downgrade of bytes held; retried across restarts until asnd answers.
  void release(bool downgrade) {
    int f = 0;
    uint64_t first = 0, end = 0;
    if (!held_run(f, first, end, downgrade ? 2 : 1)) return;
    v1::UnlockRequest request;
    request.set_session(session_);
    request.set_file(file_name(f));
    auto* r = request.add_ranges();
    r->set_offset(first);
    r->set_length(end - first);
    Record rec;
    rec.kind = downgrade ? Kind::kDowngrade : Kind::kRelease;
    rec.client = id_;
    rec.session = session_;
    rec.file = request.file();
    rec.ranges = {{first, end}};
    rec.sent = clock_.now();
    history.push_back(rec);  // from its first attempt on, the bytes may be gone
    for (uint64_t x = first; x < end; ++x) {
      held_[f][x] = downgrade ? 1 : 0;
      if (!downgrade) tokens_[f][x].clear();  // a downgrade keeps the grant's token
    }
    for (int attempt = 0; attempt < 200 && !lost_; ++attempt) {
      const double sent = clock_.now();
      const grpc::Status status = unlock_call(request, downgrade);
      exhausted(downgrade ? "Downgrade" : "Unlock", status);
      if (status.ok()) {
        touched(sent);
        (downgrade ? counters_.downgrades : counters_.unlocks)++;
        return;
      }
      if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        // The session is gone, or an earlier attempt did it already (attempt > 0).
        refused(status);
        // A board reset may have taken the bytes with the switch's table (the refusal or the
        // probe's KeepAlive says so).
        if (attempt == 0 && !lost_ && !locks_lost_) {
          ADD_FAILURE() << "client " << id_ << ": " << (downgrade ? "Downgrade" : "Unlock")
                        << " of held bytes " << request.ShortDebugString()
                        << " refused: " << status.error_message();
        }
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void step() {
    const double u = std::uniform_real_distribution<double>(0, 1)(random_);
    if (u < 0.003) {
      // A crash: no more calls nor keepalives; the lease runs out. A new session next.
      end_session(kNever);
      counters_.abandoned++;
      return;
    }
    // Holding much of the small space would stall everyone: let go first.
    size_t held = 0;
    for (const auto& f : held_)
      held +=
          static_cast<size_t>(std::count_if(f.begin(), f.end(), [](uint8_t m) { return m != 0; }));
    if (held > 96 && u < 0.80) return release(u < 0.70 ? false : true);
    if (u < 0.30) return lock(true);
    if (u < 0.60) return lock(false);
    if (u < 0.90) return release(false);
    release(true);
  }

  int id_;
  bool batch_;
  std::unique_ptr<grpc::ClientContext> stream_context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::LockBatch, v1::LockBatchReply>> stream_;
  uint64_t op_id_ = 0;
  const Timeline& clock_;
  Counters& counters_;
  Roster& roster_;
  std::mt19937_64 random_;
  std::unique_ptr<v1::Locks::Stub> stub_;
  uint64_t session_ = 0;
  double ttl_ = 0;
  std::mutex mu_;
  double last_touch_ = 0;
  double lost_at_ = 0;
  double locks_lost_at_ = 0;
  std::atomic<bool> lost_{false};
  std::atomic<bool> locks_lost_{false};
  std::atomic<bool> stop_keepalive_{false};
  std::atomic<bool> confirm_held_{false};  // asnd waits for the session to name its grants
  std::thread keepalive_;
  std::vector<uint8_t> held_[kFiles];  // 0 none, 1 shared, 2 exclusive (as this client knows)
  std::vector<std::vector<uint64_t>> tokens_[kFiles];  // per byte: the grants holding it
};

}  // namespace asn::test

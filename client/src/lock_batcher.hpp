// libasnclient's Batch stream (locks.proto): a LockClient's lock, try_lock, unlock and
// downgrade ops go as ops of one stream instead of unary calls, so that the ops ready at once
// cost one message each way, not a call each (issue 9: 16 clients through unary calls spent
// half their time handing calls between gRPC's threads). The asynchronous calls
// (Session::lock_async, ...) always use it; the blocking ones with ClientOptions::batch.
// Internal: not part of the library's API.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"

namespace asn::client {

// gRPC 1.51 must not lose its last channel on one of its own callback threads: the channel's
// destruction then joins the thread it runs on, the join fails (EDEADLK, ignored) and the
// completion queue is freed twice (grpc/grpc#32584, #37858; client_batch_test and
// client_async_test crashed so under ASan, 4 runs in 40). So whatever may hold the last
// channel reference is destroyed, when on such a thread, by a thread of the library's own.
//   on_grpc_thread(): true inside the Batch stream's reactions (and the callbacks they run).
//   destroy_elsewhere(object): drops `object` on the library's own thread.
bool on_grpc_thread();
void destroy_elsewhere(std::shared_ptr<void> object);

// One op's outcome: the status (OK, asnd's error, or the stream's) and, when OK, the result.
// Why asnd refused a call, beyond its status code: "asn-lock-reason" (a Batch op's
// LockOpResult.reason) and, for "moved", "asn-lock-owner" (LockOpResult.owner).
struct Refusal {
  std::string reason;
  std::string owner;
};

struct BatchOutcome {
  grpc::Status status;
  Refusal refusal;
  asn::v1::LockOpResult result;
};

// The stream is a gRPC callback reactor (no thread of its own): it is opened by the first op
// and opened again by the first op after it ended; the ops sent on a stream that ends get its
// status (UNAVAILABLE when asnd went away). One write is in flight at a time: the ops
// submitted meanwhile, and all the ops the callbacks of one reply submit, go out together in
// the next message. Thread-safe. Held by a shared_ptr: a stream keeps its batcher until the
// stream is done, so shutdown() never waits for gRPC.
class LockBatcher : public std::enable_shared_from_this<LockBatcher> {
 public:
  using Done = std::function<void(BatchOutcome)>;
  // A message carries ops up to this size (one larger op goes alone): asnd's replies are cut
  // as small, and gRPC refuses a message over 4 MiB by default (asnd: 8 MiB).
  static constexpr std::size_t kMessageBytes = std::size_t{2} << 20;
  // asnd's limit on one message (its services/support.hpp kMaxRequestBytes): an op larger
  // than that is refused here, so that it does not end the stream the other ops share.
  static constexpr std::size_t kMaxOpBytes = std::size_t{8} << 20;

  explicit LockBatcher(asn::v1::Locks::Stub& stub) : stub_(stub) {}
  LockBatcher(const LockBatcher&) = delete;
  LockBatcher& operator=(const LockBatcher&) = delete;

  using Clock = std::chrono::steady_clock;

  // Sends `op` (its id is set here); `done` runs once with the outcome, on a gRPC thread
  // (on the calling thread, before submit() returns 0, when the op is refused at once: the
  // LockClient is going, or the op is over kMaxOpBytes). Returns the op's id. An op not answered by
  // `wait_until` gets DEADLINE_EXCEEDED then, on the library's own thread, and its late answer is
  // dropped: an asnd that hangs does not leave a caller waiting for ever.
  std::uint64_t submit(asn::v1::LockOp op, Done done,
                       Clock::time_point wait_until = Clock::time_point::max());
  // submit() and wait for the outcome. Refused (FAILED_PRECONDITION) on a thread running a
  // `done`: the op would wait for the end of that very `done` to be sent.
  BatchOutcome run(asn::v1::LockOp op, Clock::time_point wait_until);
  // The library thread's call: ends the ops whose wait_until has passed; returns the next
  // wait_until (max: none).
  Clock::time_point expire_due(Clock::time_point now);
  // The LockClient is going: the stream is cancelled, no other is opened; ops not answered
  // yet get CANCELLED.
  void shutdown();

 private:
  class Stream;
  struct Pending {
    Done done;
    Stream* sent_on = nullptr;  // null: queued
    Clock::time_point wait_until = Clock::time_point::max();
  };
  using PendingMap = std::map<std::uint64_t, Pending>;
  using Ready = std::vector<std::pair<Done, BatchOutcome>>;

  // Called with mutex_ held: unless a write is in flight or a reply's callbacks run, writes
  // the queued ops as one message on the stream, opened if there is none.
  void flush();
  // Called with mutex_ held: no more writes go to `stream`; once its writes and read are
  // done, its OnDone comes.
  void retire(Stream* stream);
  // The stream's reactions.
  void replied(asn::v1::LockBatchReply& reply);
  void written(Stream* stream, bool ok);
  void read_ended(Stream* stream);
  void ended(Stream* stream, const grpc::Status& status);
  // Runs the callbacks, mutex_ not held; their ops go out together after the last one.
  void dispatch(Ready& ready);
  // Called with mutex_ held: the op leaves pending_ (and its wait_until, deadlines_); returns
  // its callback and the next entry.
  PendingMap::iterator take(PendingMap::iterator it, Done& done);

  asn::v1::Locks::Stub& stub_;
  std::mutex mutex_;  // guards the members below
  std::uint64_t next_id_ = 1;
  struct Queued {
    asn::v1::LockOp op;
    std::size_t bytes = 0;  // its encoded size, taken once at submit()
  };
  std::vector<Queued> queued_;
  PendingMap pending_;                                               // by op id: sent or queued
  std::set<std::pair<Clock::time_point, std::uint64_t>> deadlines_;  // of pending ops
  bool timed_ = false;                                               // known to the library thread
  Stream* stream_ = nullptr;                                         // the open stream, if any
  bool writing_ = false;                                             // a write is in flight
  int dispatching_ = 0;  // > 0: a reply's callbacks run; their ops wait for its end
  bool stopping_ = false;
};

}  // namespace asn::client

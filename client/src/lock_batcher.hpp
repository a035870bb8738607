// libasnclient's Batch stream (locks.proto): with ClientOptions::batch, a LockClient's
// sessions send lock, try_lock, unlock and downgrade as ops of one stream instead of unary
// calls, so that the ops ready at once cost one message each way, not a call each
// (issue 9: 16 clients through unary calls spent half their time handing calls between
// gRPC's threads). Internal: not part of the library's API.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"

namespace asn::client {

// One op's outcome: the status (OK, asnd's error, or the stream's) and, when OK, the result.
struct BatchOutcome {
  grpc::Status status;
  std::string reason;  // LockOpResult.reason
  asn::v1::LockOpResult result;
};

// The stream is opened by the first op and opened again by the first op after it failed (the
// ops in flight when it fails get its status, UNAVAILABLE when asnd went away). Writes: the
// thread whose op finds no write in progress writes every op queued then, as one LockBatch,
// and goes on while more were queued meanwhile; one reader thread per stream hands the
// results to the threads waiting for them. Thread-safe.
class LockBatcher {
 public:
  explicit LockBatcher(asn::v1::Locks::Stub& stub) : stub_(stub) {}
  ~LockBatcher();
  LockBatcher(const LockBatcher&) = delete;
  LockBatcher& operator=(const LockBatcher&) = delete;

  // Sends `op` (its id is set here) and waits for its result until `wait_until`
  // (DEADLINE_EXCEEDED then; a late result is dropped).
  BatchOutcome run(asn::v1::LockOp op, std::chrono::steady_clock::time_point wait_until);

 private:
  struct Stream;
  struct Slot {
    std::condition_variable answered;
    bool done = false;
    bool lead = false;  // the writer handed its role to this op's thread
    Stream* sent_on = nullptr;
    BatchOutcome outcome;
  };
  struct Stream {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<asn::v1::LockBatch, asn::v1::LockBatchReply>> rw;
    std::thread reader;
    // Guarded by mutex_:
    bool writing = false;  // a Write is in progress (Finish waits for it)
    bool ending = false;   // the reader saw the end: no more writes
    bool broken = false;   // ... and Finish said why: `status`
    grpc::Status status;
  };

  void write_queued(std::unique_lock<std::mutex>& lock, Slot& own);
  Stream* stream_for_write(std::unique_lock<std::mutex>& lock);
  void read(Stream* stream);
  // The slots answered go to `wake`, to be notified after mutex_ is released (a waiter woken
  // under it would only block on it again); the shared_ptr keeps a slot whose waiter already
  // saw it answered.
  using Wake = std::vector<std::shared_ptr<Slot>>;
  void fail_sent(Stream* stream, Wake& wake);
  static void answer(std::shared_ptr<Slot> slot, BatchOutcome outcome, Wake& wake);
  static void notify(Wake& wake);

  asn::v1::Locks::Stub& stub_;
  std::mutex mutex_;                 // guards the members below
  std::condition_variable written_;  // a Stream's `writing` went false
  std::condition_variable replied_;  // a reply came: unanswered_ is 0
  // Messages written since the last reply. The writer holds the queue while it is not 0, for
  // kCoalesceWait at most.
  int unanswered_ = 0;
  static constexpr std::chrono::microseconds kCoalesceWait{200};
  std::uint64_t next_id_ = 1;
  std::vector<asn::v1::LockOp> queued_;
  bool writing_ = false;
  bool stopping_ = false;
  std::map<std::uint64_t, std::shared_ptr<Slot>> waiting_;  // sent or queued, by op id
  std::unique_ptr<Stream> stream_;
};

}  // namespace asn::client

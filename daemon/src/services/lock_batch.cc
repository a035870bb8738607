#include "services/lock_batch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace asn {

namespace {

// Why a Batch stream's waiting locks end when the stream does (ABORTED, as a cancelled Lock).
constexpr char kEndedWhy[] = "the Batch stream ended";

// A reply carries results up to this size (one larger result goes alone), well under the
// 4 MiB a gRPC client receives by default: a grant lists its ranges (65,536 at most, about
// 0.9 MB), and a reply the client refused for its size would lose the grants in it.
constexpr size_t kReplyBytes = size_t{2} << 20;

// Leaves in `reply` its first results that fit kReplyBytes (at least one) and moves the
// others, in order, into `rest` (empty). Returns how many it left, and their bytes.
std::pair<int, size_t> cut_reply(v1::LockBatchReply& reply, v1::LockBatchReply& rest) {
  const int n = reply.results_size();
  int keep = 0;
  size_t bytes = 0;
  for (; keep < n; ++keep) {
    const size_t result_bytes = reply.results(keep).ByteSizeLong();
    if (keep > 0 && bytes + result_bytes > kReplyBytes) break;
    bytes += result_bytes;
  }
  for (int i = keep; i < n; ++i) rest.add_results()->Swap(reply.mutable_results(i));
  if (keep < n) reply.mutable_results()->DeleteSubrange(keep, n - keep);
  return {keep, bytes};
}

// The grant a result carries, with what it was granted to (session and file), so that a
// grant that does not reach the client can be given back; nullopt for other results.
using Given = std::optional<v1::LockRequest>;

// One stream. Every op is answered exactly once (or dropped, once the stream has ended).
// Writes: one in flight at most; results that arrive meanwhile, and all the results an
// incoming message produces at once, go out together in the next message.
//
// Lifetime: one reference for gRPC (until OnDone) and one per lock the LockManager may still
// call back; the last one deletes the reactor. Once finished_ (Finish called) a callback
// touches nothing of gRPC's: it drops its result and lets go of its reference.
class BatchReactor final : public grpc::ServerBidiReactor<v1::LockBatch, v1::LockBatchReply> {
 public:
  BatchReactor(const LockOps& ops, grpc::CallbackServerContext* context, size_t max_queued_bytes)
      : ops_(ops), context_(context), max_queued_bytes_(max_queued_bytes) {}

  void start(const Authorizer& authorizer) {
    const OpStatus denied =
        run_op("Locks.Batch", [&] { authorizer.require(Permission::kLock, "Batch", *context_); });
    if (!denied.ok()) {
      {
        std::lock_guard lock(mu_);
        finished_ = true;
      }
      if (!denied.reason.empty()) context_->AddTrailingMetadata("asn-lock-reason", denied.reason);
      Finish(denied.status);
      return;
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed (or the stream broke: OnCancel says so)
      {
        std::lock_guard lock(mu_);
        reads_done_ = true;
      }
      maybe_finish();
      return;
    }
    {
      std::lock_guard lock(mu_);
      ++holding_;  // the results of this message go out together
    }
    for (const auto& op : in_.ops()) run(op);
    in_.Clear();
    {
      std::lock_guard lock(mu_);
      --holding_;
    }
    flush();
    maybe_finish();
    bool read = false;
    {
      std::lock_guard lock(mu_);
      read = !finished_;
      if (read && queued_bytes_ > max_queued_bytes_) {
        read_paused_ = true;  // OnWriteDone reads on once the queue is back under it
        read = false;
      }
    }
    if (read) StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    std::vector<Given> given;
    v1::LockBatchReply written;
    {
      std::lock_guard lock(mu_);
      write_in_flight_ = false;
      written.Swap(&writing_);
      given.swap(writing_given_);
    }
    if (!ok) give_back(written, given);  // the stream broke: the client has none of them
    if (!ok) end();
    flush();
    maybe_finish();
    bool read = false;
    {
      std::lock_guard lock(mu_);
      if (read_paused_ && !finished_ && queued_bytes_ <= max_queued_bytes_) {
        read_paused_ = false;
        read = true;
      }
    }
    if (read) StartRead(&in_);
  }

  void OnCancel() override {
    end();
    maybe_finish();
  }

  void OnDone() override {
    end();
    release();
  }

 private:
  void run(const v1::LockOp& op) {
    v1::LockOpResult result;
    result.set_id(op.id());
    OpStatus status;
    switch (op.op_case()) {
      case v1::LockOp::kLock:
      case v1::LockOp::kTryLock:
        start_lock(op);
        return;
      case v1::LockOp::kUnlock:
        status = ops_.unlock(*context_, op.unlock(), result.mutable_unlock());
        break;
      case v1::LockOp::kDowngrade:
        status = ops_.downgrade(*context_, op.downgrade(), result.mutable_unlock());
        break;
      case v1::LockOp::kKeepAlive:
        status = ops_.keep_alive(*context_, op.keep_alive(), result.mutable_keep_alive());
        break;
      case v1::LockOp::OP_NOT_SET:
        status = run_op("Locks.Batch", [] {
          throw Error(ErrorCode::kInvalidArgument,
                      "op: none given; give one of lock, try_lock, unlock, downgrade, keep_alive");
        });
        break;
    }
    push(std::move(result), status);
  }

  void start_lock(const v1::LockOp& op) {
    const bool try_lock = op.op_case() == v1::LockOp::kTryLock;
    std::optional<LockClock::time_point> deadline;
    if (!try_lock && op.timeout_ms() > 0) {
      deadline = LockClock::now() + std::chrono::milliseconds(op.timeout_ms());
    }
    uint64_t seq = 0;
    {
      std::lock_guard lock(mu_);
      seq = next_seq_++;
      waiting_[seq] = 0;  // its handle once lock() returns
    }
    refs_.fetch_add(1);
    const uint64_t id = op.id();
    const v1::LockRequest& request = try_lock ? op.try_lock() : op.lock();
    v1::LockRequest to_whom;
    to_whom.set_session(request.session());
    to_whom.set_file(request.file());
    const uint64_t handle =
        ops_.lock(*context_, request, try_lock ? locks::Wait::kTry : locks::Wait::kBlock, deadline,
                  [this, seq, id, to_whom](const OpStatus& status, v1::LockResponse* granted) {
                    lock_done(seq, id, status, granted, to_whom);
                  });
    bool cancel = false;
    {
      std::lock_guard lock(mu_);
      auto it = waiting_.find(seq);
      if (it != waiting_.end()) {
        it->second = handle;
        cancel = ended_ && handle != 0;
      }
    }
    if (cancel) ops_.cancel(handle, kEndedWhy);
  }

  void lock_done(uint64_t seq, uint64_t id, const OpStatus& status, v1::LockResponse* granted,
                 const v1::LockRequest& to_whom) {
    v1::LockOpResult result;
    result.set_id(id);
    if (granted != nullptr) result.mutable_lock()->Swap(granted);
    {
      std::lock_guard lock(mu_);
      waiting_.erase(seq);
    }
    push(std::move(result), status, granted != nullptr ? Given(to_whom) : std::nullopt);
    maybe_finish();
    release();
  }

  void push(v1::LockOpResult result, const OpStatus& status, Given given = std::nullopt) {
    if (!status.ok()) {
      result.clear_result();
      result.set_code(static_cast<int32_t>(status.status.error_code()));
      result.set_message(status.status.error_message());
      result.set_reason(status.reason);
      result.set_owner(status.owner);
    }
    {
      std::lock_guard lock(mu_);
      if (!finished_ && !ended_) {
        queued_bytes_ += result.ByteSizeLong();
        *reply_.add_results() = std::move(result);
        reply_given_.push_back(std::move(given));
        given.reset();
      }
    }
    if (given) ops_.give_back(*given, result.lock());  // the stream ended: nobody to tell
    flush();
  }

  void give_back(const v1::LockBatchReply& reply, const std::vector<Given>& given) {
    for (size_t i = 0; i < given.size(); ++i) {
      if (given[i]) ops_.give_back(*given[i], reply.results(static_cast<int>(i)).lock());
    }
  }

  // Writes what is queued unless a write is in flight (its OnWriteDone flushes again).
  void flush() {
    {
      std::lock_guard lock(mu_);
      if (finished_ || ended_ || write_in_flight_ || holding_ > 0 || reply_.results_size() == 0) {
        return;
      }
      writing_.Swap(&reply_);
      writing_given_.swap(reply_given_);
      // The rest goes with the next write.
      const auto [keep, bytes] = cut_reply(writing_, reply_);
      queued_bytes_ -= std::min(queued_bytes_, bytes);
      reply_given_.assign(std::make_move_iterator(writing_given_.begin() + keep),
                          std::make_move_iterator(writing_given_.end()));
      writing_given_.resize(static_cast<size_t>(keep));
      write_in_flight_ = true;
    }
    StartWrite(&writing_);
  }

  // The stream ended (cancelled, broken, or done): its waiting locks are withdrawn.
  void end() {
    std::vector<uint64_t> handles;
    v1::LockBatchReply unsent;
    std::vector<Given> given;
    {
      std::lock_guard lock(mu_);
      if (ended_) return;
      ended_ = true;
      unsent.Swap(&reply_);
      queued_bytes_ = 0;
      given.swap(reply_given_);
      for (const auto& [seq, handle] : waiting_) {
        if (handle != 0) handles.push_back(handle);
      }
    }
    give_back(unsent, given);
    ops_.cancel(handles, kEndedWhy);  // one withdrawal of them all
  }

  // Finishes once the stream ended, or the client half-closed and every op is answered.
  void maybe_finish() {
    grpc::Status status;
    {
      std::lock_guard lock(mu_);
      if (finished_ || write_in_flight_ || holding_ > 0) return;
      if (ended_) {
        status = grpc::Status(grpc::StatusCode::CANCELLED, "the Batch stream was cancelled");
      } else if (!reads_done_ || !waiting_.empty() || reply_.results_size() > 0) {
        return;
      }
      finished_ = true;
    }
    Finish(status);
  }

  void release() {
    if (refs_.fetch_sub(1) == 1) delete this;
  }

  const LockOps& ops_;
  grpc::CallbackServerContext* context_;
  // The stream stops reading ops while more results than this wait to be written
  // (locks.batch_reply_queue_bytes): a client that sends and does not read its replies then
  // waits for HTTP/2 flow control, as it would for any server, instead of growing asnd's
  // memory without end. Reading goes on once the queue is back under it. (Results of waiting
  // locks still arrive while reading is paused: the waiting quotas bound them.)
  const size_t max_queued_bytes_;
  v1::LockBatch in_;            // the read in flight
  v1::LockBatchReply writing_;  // the write in flight
  std::atomic<int> refs_{1};

  std::mutex mu_;                         // guards the members below
  v1::LockBatchReply reply_;              // results for the next write
  std::vector<Given> reply_given_;        // reply_'s grants, result for result
  std::vector<Given> writing_given_;      // writing_'s grants (the write in flight)
  std::map<uint64_t, uint64_t> waiting_;  // lock ops not answered yet: seq -> handle (0: not yet)
  uint64_t next_seq_ = 1;
  int holding_ = 0;           // > 0: an incoming message is being run; its results wait for its end
  size_t queued_bytes_ = 0;   // of reply_'s results
  bool read_paused_ = false;  // over max_queued_bytes_: the next read waits for a write to end
  bool write_in_flight_ = false;
  bool reads_done_ = false;
  bool ended_ = false;
  bool finished_ = false;
};

}  // namespace

grpc::ServerBidiReactor<v1::LockBatch, v1::LockBatchReply>* start_batch(
    const LockOps& ops, const Authorizer& authorizer, grpc::CallbackServerContext* context,
    size_t max_queued_bytes) {
  auto* reactor = new BatchReactor(ops, context, max_queued_bytes);
  reactor->start(authorizer);
  return reactor;
}

}  // namespace asn

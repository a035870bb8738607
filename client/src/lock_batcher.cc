#include "lock_batcher.hpp"

#include <algorithm>
#include <utility>

namespace asn::client {

namespace pb = asn::v1;

LockBatcher::~LockBatcher() {
  // Only once no run() is left (the LockClient and its sessions are gone).
  std::unique_ptr<Stream> stream;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stream = std::move(stream_);
  }
  if (stream) {
    stream->context.TryCancel();
    if (stream->reader.joinable()) stream->reader.join();
  }
}

void LockBatcher::answer(std::shared_ptr<Slot> slot, BatchOutcome outcome, Wake& wake) {
  slot->outcome = std::move(outcome);
  slot->done = true;
  wake.push_back(std::move(slot));
}

void LockBatcher::notify(Wake& wake) {
  for (const auto& slot : wake) slot->answered.notify_one();
  wake.clear();
}

BatchOutcome LockBatcher::run(pb::LockOp op, std::chrono::steady_clock::time_point wait_until) {
  auto shared = std::make_shared<Slot>();
  Slot& slot = *shared;
  std::unique_lock lock(mutex_);
  const std::uint64_t id = next_id_++;
  op.set_id(id);
  queued_.push_back(std::move(op));
  waiting_[id] = shared;
  for (;;) {
    if (slot.lead) {  // the writer answered handed its role over
      slot.lead = false;
      if (!writing_) write_queued(lock, slot);
    } else if (!writing_) {
      write_queued(lock, slot);
    }
    if (slot.done) break;
    const auto woken = [&] { return slot.done || slot.lead; };
    if (wait_until == std::chrono::steady_clock::time_point::max()) {
      slot.answered.wait(lock, woken);
    } else if (!slot.answered.wait_until(lock, wait_until, woken)) {
      waiting_.erase(id);
      std::erase_if(queued_, [id](const pb::LockOp& queued) { return queued.id() == id; });
      return {
          grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "asnd did not answer in time"), {}, {}};
    }
  }
  return std::move(slot.outcome);
}

// Called with the lock held and writing_ false by the thread of `own`; returns with the lock
// held, the queue empty or the role handed over: once its own op is answered, the writer
// leaves the next write to the thread of the first op queued.
void LockBatcher::write_queued(std::unique_lock<std::mutex>& lock, Slot& own) {
  writing_ = true;
  while (!queued_.empty() && !stopping_) {
    // Coalescing: while asnd has not answered the last message, the ops of other threads
    // gather in the queue. A message whose ops all wait for their locks gets no answer, so
    // the wait is bounded.
    if (unanswered_ > 0) {
      replied_.wait_until(lock, std::chrono::steady_clock::now() + kCoalesceWait,
                          [&] { return unanswered_ == 0 || stopping_; });
      if (queued_.empty()) break;  // their callers gave up
    }
    Stream* stream = stream_for_write(lock);
    pb::LockBatch batch;
    batch.mutable_ops()->Reserve(static_cast<int>(queued_.size()));
    for (auto& op : queued_) {
      if (auto it = waiting_.find(op.id()); it != waiting_.end()) it->second->sent_on = stream;
      *batch.add_ops() = std::move(op);
    }
    queued_.clear();
    stream->writing = true;
    ++unanswered_;
    lock.unlock();
    stream->rw->Write(batch);  // false: broken; the reader (or the check below) says why
    lock.lock();
    stream->writing = false;
    written_.notify_all();
    if (stream->broken) {
      Wake wake;
      fail_sent(stream, wake);
      notify(wake);  // under mutex_ here: rare (a broken stream)
    }
    if (own.done && !queued_.empty()) {
      if (auto it = waiting_.find(queued_.front().id()); it != waiting_.end()) {
        it->second->lead = true;
        it->second->answered.notify_one();
        break;
      }
    }
  }
  writing_ = false;
}

LockBatcher::Stream* LockBatcher::stream_for_write(std::unique_lock<std::mutex>& lock) {
  if (stream_ && !stream_->ending) return stream_.get();
  std::unique_ptr<Stream> old = std::move(stream_);
  lock.unlock();
  if (old) {
    old->context.TryCancel();
    if (old->reader.joinable()) old->reader.join();
    old.reset();
  }
  auto fresh = std::make_unique<Stream>();
  // asnd not there: the ops fail now (UNAVAILABLE) rather than wait without a deadline.
  fresh->context.set_wait_for_ready(false);
  fresh->rw = stub_.Batch(&fresh->context);
  Stream* raw = fresh.get();
  fresh->reader = std::thread([this, raw] { read(raw); });
  lock.lock();
  stream_ = std::move(fresh);
  return raw;
}

void LockBatcher::read(Stream* stream) {
  pb::LockBatchReply reply;
  Wake wake;
  while (stream->rw->Read(&reply)) {
    {
      std::lock_guard lock(mutex_);
      unanswered_ = 0;
      replied_.notify_one();
      for (auto& result : *reply.mutable_results()) {
        auto it = waiting_.find(result.id());
        if (it == waiting_.end()) continue;  // its caller gave up
        std::shared_ptr<Slot> slot = std::move(it->second);
        waiting_.erase(it);
        BatchOutcome outcome;
        if (result.code() != 0) {
          outcome.status =
              grpc::Status(static_cast<grpc::StatusCode>(result.code()), result.message());
          outcome.reason = result.reason();
        }
        outcome.result = std::move(result);
        answer(std::move(slot), std::move(outcome), wake);
      }
    }
    notify(wake);
  }
  std::unique_lock lock(mutex_);
  stream->ending = true;
  written_.wait(lock, [&] { return !stream->writing; });
  lock.unlock();
  grpc::Status status = stream->rw->Finish();
  lock.lock();
  if (status.ok()) status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the Batch stream ended");
  stream->status = status;
  stream->broken = true;
  unanswered_ = 0;
  replied_.notify_one();
  fail_sent(stream, wake);
  lock.unlock();
  notify(wake);
}

// The ops sent on a stream that ended get its status.
void LockBatcher::fail_sent(Stream* stream, Wake& wake) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second->sent_on != stream) {
      ++it;
      continue;
    }
    std::shared_ptr<Slot> slot = std::move(it->second);
    it = waiting_.erase(it);
    answer(std::move(slot), {stream->status, {}, {}}, wake);
  }
}

}  // namespace asn::client

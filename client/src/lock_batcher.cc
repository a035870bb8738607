#include "lock_batcher.hpp"

#include <algorithm>
#include <condition_variable>
#include <thread>
#include <utility>

namespace asn::client {

namespace pb = asn::v1;

namespace {

// > 0: this thread runs a `done` (LockBatcher::run() refuses to wait there).
thread_local int running_done = 0;
// > 0: this thread runs a reaction of a Stream (a gRPC callback thread).
thread_local int in_reaction = 0;

struct InReaction {
  InReaction() { ++in_reaction; }
  ~InReaction() { --in_reaction; }
  InReaction(const InReaction&) = delete;
  InReaction& operator=(const InReaction&) = delete;
};

// The library's own thread, started at first use and never joined (it outlives every
// LockClient). It does two things no gRPC callback thread may do:
//  - destroys what may hold a channel's last reference (hand(): see destroy_elsewhere());
//  - ends the ops of every batcher that asnd has not answered by their wait_until. It wakes
//    at the earliest wait_until it knows: a batcher tells it (wake_by) when an op's is
//    earlier than its other ops', and after each round every batcher says its next one.
class LibraryThread {
 public:
  using Clock = LockBatcher::Clock;
  static LibraryThread& instance() {
    static LibraryThread* thread = new LibraryThread;  // never destroyed: used until exit
    return *thread;
  }
  void hand(std::shared_ptr<void> object) {
    {
      std::lock_guard lock(mutex_);
      doomed_.push_back(std::move(object));
    }
    wake_.notify_one();
  }
  void add(std::weak_ptr<LockBatcher> batcher) {
    std::lock_guard lock(mutex_);
    batchers_.push_back(std::move(batcher));
  }
  void wake_by(Clock::time_point when) {
    {
      std::lock_guard lock(mutex_);
      if (when >= next_) return;
      next_ = when;
    }
    wake_.notify_one();
  }

 private:
  LibraryThread() {
    std::thread([this] { loop(); }).detach();
  }
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      const Clock::time_point until = next_;
      const auto woken = [&] { return !doomed_.empty() || next_ < until; };
      if (until == Clock::time_point::max()) {
        wake_.wait(lock, woken);
      } else {
        wake_.wait_until(lock, until, woken);
      }
      std::vector<std::shared_ptr<void>> objects;
      objects.swap(doomed_);
      const Clock::time_point now = Clock::now();
      const bool due = now >= next_;
      std::vector<std::weak_ptr<LockBatcher>> batchers;
      if (due) {
        next_ = Clock::time_point::max();  // wake_by() lowers it again meanwhile
        batchers = batchers_;
      }
      lock.unlock();
      objects.clear();
      Clock::time_point next = Clock::time_point::max();
      for (const auto& weak : batchers) {
        if (auto batcher = weak.lock()) next = std::min(next, batcher->expire_due(now));
      }
      batchers.clear();  // a batcher whose last owner went meanwhile is destroyed here
      lock.lock();
      if (due) {
        next_ = std::min(next_, next);
        std::erase_if(batchers_, [](const auto& weak) { return weak.expired(); });
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<void>> doomed_;
  std::vector<std::weak_ptr<LockBatcher>> batchers_;
  Clock::time_point next_ = Clock::time_point::max();
};

grpc::Status stream_ended(const grpc::Status& status) {
  return status.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "the Batch stream ended")
                     : status;
}

}  // namespace

bool on_grpc_thread() { return in_reaction > 0; }

void destroy_elsewhere(std::shared_ptr<void> object) {
  LibraryThread::instance().hand(std::move(object));
}

// One Batch call. It holds a hold (AddHold) while it is the batcher's open stream, because
// writes are started on it from outside its reactions; retire() releases it. Its reactions
// go to the batcher; OnDone is the last, and deletes it.
class LockBatcher::Stream final
    : public grpc::ClientBidiReactor<pb::LockBatch, pb::LockBatchReply> {
 public:
  explicit Stream(std::shared_ptr<LockBatcher> owner) : owner_(std::move(owner)) {
    // asnd not there: the ops fail now (UNAVAILABLE) rather than wait without a deadline.
    context.set_wait_for_ready(false);
  }

  void open(pb::Locks::Stub& stub) {
    stub.async()->Batch(&context, this);
    AddHold();
    StartRead(&reply_);
    StartWrite(&out);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    InReaction reaction;
    if (!ok) {  // the stream ended: OnDone says how
      owner_->read_ended(this);
      return;
    }
    owner_->replied(reply_);
    reply_.Clear();
    StartRead(&reply_);
  }
  void OnWriteDone(bool ok) override {
    InReaction reaction;
    owner_->written(this, ok);
  }
  void OnDone(const grpc::Status& status) override {
    {
      InReaction reaction;
      owner_->ended(this, status);
    }
    // Its ClientContext may hold the channel's last reference (the LockClient is gone), and
    // owner_ may be the batcher's last.
    destroy_elsewhere(std::shared_ptr<Stream>(this));
  }

  grpc::ClientContext context;
  pb::LockBatch out;     // the message in flight (the batcher's writing_ guards it)
  bool retired = false;  // guarded by the batcher's mutex_

 private:
  std::shared_ptr<LockBatcher> owner_;
  pb::LockBatchReply reply_;
};

std::uint64_t LockBatcher::submit(pb::LockOp op, Done done, Clock::time_point wait_until) {
  std::unique_lock lock(mutex_);
  if (stopping_) {
    lock.unlock();
    done({grpc::Status(grpc::StatusCode::CANCELLED, "the LockClient is being destroyed"), {}, {}});
    return 0;
  }
  const std::uint64_t id = next_id_++;
  op.set_id(id);
  // 64: the op's framing in its LockBatch, with room to spare.
  const std::size_t bytes = op.ByteSizeLong();
  if (bytes > kMaxOpBytes - 64) {
    lock.unlock();
    done({grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                       "the request takes " + std::to_string(bytes) +
                           " bytes; asnd takes at most " + std::to_string(kMaxOpBytes) +
                           " bytes in one message: name fewer ranges in one call (a strided "
                           "description is a few bytes)"),
          {},
          {}});
    return 0;
  }
  queued_.push_back({std::move(op), bytes});
  pending_.emplace(id, Pending{std::move(done), nullptr, wait_until});
  bool earliest = false;
  if (wait_until != Clock::time_point::max()) {
    earliest = deadlines_.empty() || wait_until < deadlines_.begin()->first;
    deadlines_.emplace(wait_until, id);
    if (!timed_) {
      timed_ = true;
      LibraryThread::instance().add(weak_from_this());
    }
  }
  flush();
  lock.unlock();
  // The timer already wakes by this batcher's earlier wait_until otherwise.
  if (earliest) LibraryThread::instance().wake_by(wait_until);
  return id;
}

LockBatcher::PendingMap::iterator LockBatcher::take(PendingMap::iterator it, Done& done) {
  if (it->second.wait_until != Clock::time_point::max()) {
    deadlines_.erase({it->second.wait_until, it->first});
  }
  done = std::move(it->second.done);
  return pending_.erase(it);
}

LockBatcher::Clock::time_point LockBatcher::expire_due(Clock::time_point now) {
  Ready ready;
  {
    std::lock_guard lock(mutex_);
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      const std::uint64_t id = deadlines_.begin()->second;
      auto it = pending_.find(id);
      if (it->second.sent_on == nullptr) {
        std::erase_if(queued_, [id](const Queued& queued) { return queued.op.id() == id; });
      }
      Done done;
      take(it, done);
      ready.emplace_back(std::move(done),
                         BatchOutcome{grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                                   "asnd did not answer in time"),
                                      {},
                                      {}});
    }
    if (ready.empty()) {
      return deadlines_.empty() ? Clock::time_point::max() : deadlines_.begin()->first;
    }
    ++dispatching_;
  }
  dispatch(ready);
  std::lock_guard lock(mutex_);
  return deadlines_.empty() ? Clock::time_point::max() : deadlines_.begin()->first;
}

BatchOutcome LockBatcher::run(pb::LockOp op, std::chrono::steady_clock::time_point wait_until) {
  if (running_done > 0) {
    // A reason of its own: not a conflict, and no cause to ask asnd about the session.
    return {grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                         "a blocking lock call inside the callback of an asynchronous one would "
                         "wait for that callback to end; use the *_async calls there"),
            {"blocking-in-callback", ""},
            {}};
  }
  struct Waiter {
    std::mutex mutex;
    std::condition_variable answered;
    bool done = false;
    BatchOutcome outcome;
  };
  auto waiter = std::make_shared<Waiter>();
  submit(
      std::move(op),
      [waiter](BatchOutcome outcome) {
        {
          std::lock_guard lock(waiter->mutex);
          waiter->outcome = std::move(outcome);
          waiter->done = true;
        }
        waiter->answered.notify_one();
      },
      wait_until);  // the timer ends it then
  std::unique_lock lock(waiter->mutex);
  waiter->answered.wait(lock, [&] { return waiter->done; });
  return std::move(waiter->outcome);
}

void LockBatcher::shutdown() {
  Ready ready;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (stream_ != nullptr) {
      stream_->context.TryCancel();  // its sent ops get CANCELLED in ended()
      retire(stream_);
    }
    queued_.clear();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.sent_on != nullptr) {
        ++it;
        continue;
      }
      Done done;
      it = take(it, done);
      ready.emplace_back(std::move(done),
                         BatchOutcome{grpc::Status(grpc::StatusCode::CANCELLED,
                                                   "the LockClient is being destroyed"),
                                      {},
                                      {}});
    }
    ++dispatching_;
  }
  dispatch(ready);
}

void LockBatcher::flush() {
  if (writing_ || dispatching_ > 0 || queued_.empty() || stopping_) return;
  const bool open = stream_ == nullptr;
  if (open) stream_ = new Stream(shared_from_this());
  Stream* stream = stream_;
  stream->out.Clear();
  // The queued ops up to kMessageBytes (at least one); the rest go with the next write.
  std::size_t taken = 0;
  std::size_t bytes = 0;
  for (; taken < queued_.size(); ++taken) {
    if (taken > 0 && bytes + queued_[taken].bytes > kMessageBytes) break;
    bytes += queued_[taken].bytes;
  }
  stream->out.mutable_ops()->Reserve(static_cast<int>(taken));
  for (std::size_t i = 0; i < taken; ++i) {
    pending_[queued_[i].op.id()].sent_on = stream;
    *stream->out.add_ops() = std::move(queued_[i].op);
  }
  queued_.erase(queued_.begin(), queued_.begin() + static_cast<std::ptrdiff_t>(taken));
  writing_ = true;
  // Under mutex_: gRPC runs no reaction inline (can_inline=false), so none waits for it here.
  if (open) {
    stream->open(stub_);
  } else {
    stream->StartWrite(&stream->out);
  }
}

void LockBatcher::retire(Stream* stream) {
  if (stream->retired) return;
  stream->retired = true;
  if (stream_ == stream) stream_ = nullptr;
  stream->RemoveHold();  // schedules OnDone (never inline) once nothing else is outstanding
}

void LockBatcher::replied(pb::LockBatchReply& reply) {
  Ready ready;
  {
    std::lock_guard lock(mutex_);
    ready.reserve(static_cast<std::size_t>(reply.results_size()));
    for (auto& result : *reply.mutable_results()) {
      auto it = pending_.find(result.id());
      if (it == pending_.end()) continue;  // forgotten: its caller gave up
      BatchOutcome outcome;
      if (result.code() != 0) {
        outcome.status =
            grpc::Status(static_cast<grpc::StatusCode>(result.code()), result.message());
        outcome.refusal = {result.reason(), result.owner()};
      }
      outcome.result = std::move(result);
      Done done;
      take(it, done);
      ready.emplace_back(std::move(done), std::move(outcome));
    }
    ++dispatching_;
  }
  dispatch(ready);
}

void LockBatcher::written(Stream* stream, bool ok) {
  std::lock_guard lock(mutex_);
  writing_ = false;
  if (!ok) retire(stream);  // broken: the next ops go on a new stream
  flush();
}

void LockBatcher::read_ended(Stream* stream) {
  std::lock_guard lock(mutex_);
  retire(stream);
}

void LockBatcher::ended(Stream* stream, const grpc::Status& status) {
  Ready ready;
  {
    std::lock_guard lock(mutex_);
    const grpc::Status why = stream_ended(status);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.sent_on != stream) {
        ++it;
        continue;
      }
      Done done;
      it = take(it, done);
      ready.emplace_back(std::move(done), BatchOutcome{why, {}, {}});
    }
    ++dispatching_;
  }
  dispatch(ready);
}

void LockBatcher::dispatch(Ready& ready) {
  ++running_done;
  for (auto& [done, outcome] : ready) done(std::move(outcome));
  --running_done;
  ready.clear();  // the callbacks' captures go before mutex_ is taken again
  std::lock_guard lock(mutex_);
  --dispatching_;
  flush();
}

}  // namespace asn::client

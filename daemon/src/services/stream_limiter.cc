#include "services/stream_limiter.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <vector>

#include "error.hpp"

namespace asn {

StreamLimiter::StreamLimiter(std::string listener, StreamLimits limits)
    : listener_(std::move(listener)), limits_(limits), watcher_([this] { watch(); }) {}

StreamLimiter::~StreamLimiter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

void StreamLimiter::add(grpc::CallbackServerContext* context) {
  std::lock_guard lock(mutex_);
  if (streams_.size() >= limits_.max_streams) {
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("{} streaming replies are running on {}, its cap (listen.max_streams); "
                            "try again when one has finished",
                            streams_.size(), listener_));
  }
  streams_.emplace(context, std::chrono::steady_clock::time_point{});
}

void StreamLimiter::remove(grpc::CallbackServerContext* context) {
  std::lock_guard lock(mutex_);
  streams_.erase(context);
}

void StreamLimiter::writing(grpc::CallbackServerContext* context) {
  std::lock_guard lock(mutex_);
  if (auto it = streams_.find(context); it != streams_.end()) {
    it->second = std::chrono::steady_clock::now();
  }
}

void StreamLimiter::written(grpc::CallbackServerContext* context) {
  std::lock_guard lock(mutex_);
  if (auto it = streams_.find(context); it != streams_.end()) {
    it->second = std::chrono::steady_clock::time_point{};
  }
}

unsigned StreamLimiter::active() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(streams_.size());
}

uint64_t StreamLimiter::cancelled_stalled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

void StreamLimiter::watch() {
  const auto tick = std::min<std::chrono::milliseconds>(limits_.write_timeout / 4,
                                                        std::chrono::milliseconds(1000));
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, tick, [this] { return stopping_; })) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<grpc::CallbackServerContext*> stalled;
    for (auto& [context, since] : streams_) {
      if (since != std::chrono::steady_clock::time_point{} &&
          now - since >= limits_.write_timeout) {
        since = std::chrono::steady_clock::time_point{};  // cancel once
        stalled.push_back(context);
      }
    }
    for (grpc::CallbackServerContext* context : stalled) {
      // Still registered (the lock is held, so it cannot be freed meanwhile).
      if (streams_.count(context) == 0) continue;
      ++cancelled_;
      spdlog::warn("{}: a client did not read a streaming reply for {} ms; cancelled it", listener_,
                   limits_.write_timeout.count());
      context->TryCancel();
    }
  }
}

}  // namespace asn

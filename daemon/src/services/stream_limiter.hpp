// Streaming replies of one listener: at most `max_streams` at once (more are refused with
// RESOURCE_EXHAUSTED, naming the cap), and none left waiting on a client that stopped
// reading: a stream whose last write has not completed within `write_timeout` is
// cancelled, which frees what it holds. Streams use gRPC's callback API, so a waiting one
// holds no thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace asn {

struct StreamLimits {
  unsigned max_streams = 64;
  std::chrono::milliseconds write_timeout{30'000};
};

class StreamLimiter {
 public:
  StreamLimiter(std::string listener, StreamLimits limits);
  ~StreamLimiter();
  StreamLimiter(const StreamLimiter&) = delete;
  StreamLimiter& operator=(const StreamLimiter&) = delete;

  // Registers a stream; throws asn::Error kResourceExhausted at the cap.
  void add(grpc::CallbackServerContext* context);
  void remove(grpc::CallbackServerContext* context);
  // The stream started a write / finished one.
  void writing(grpc::CallbackServerContext* context);
  void written(grpc::CallbackServerContext* context);
  unsigned active() const;
  uint64_t cancelled_stalled() const;

 private:
  void watch();

  std::string listener_;
  StreamLimits limits_;
  // Recursive: cancelling a stream may finish it on the watcher's own thread, which then
  // removes it.
  mutable std::recursive_mutex mutex_;
  std::condition_variable_any wake_;
  bool stopping_ = false;
  // Each stream, and since when its pending write waits (time_point{} when none does).
  std::map<grpc::CallbackServerContext*, std::chrono::steady_clock::time_point> streams_;
  uint64_t cancelled_ = 0;
  std::thread watcher_;
};

}  // namespace asn

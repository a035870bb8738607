// A progress line for a call that may take a while (a schedule load waits for a frame
// boundary; a fabric load for every switch): after about a second, one line on stderr that
// updates in place, "loading plan.yaml ... 2.3 s", until the call returns. Only when stderr is
// a terminal: a pipe or a log gets nothing. A call that moves bytes (a stripe write, read or
// rebuild) reports how far it is with update(), and the line becomes a bar:
// "writing big.img [#########           ] 45%  460.0 MiB / 1.0 GiB  812.3 MB/s  0.6 s".
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace asnctl {

class Progress {
 public:
  // Starts the thread that prints `label ... N.N s` once `delay` has passed (if stderr is
  // a terminal; otherwise does nothing).
  explicit Progress(std::string label,
                    std::chrono::milliseconds delay = std::chrono::milliseconds(1000));
  ~Progress();  // stop()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Counts in update() are of `unit` ("stripes"), not bytes. Call before the first update.
  void count_in(std::string unit) { unit_ = std::move(unit); }
  // How far the call is: `done` of `total` bytes (any thread).
  void update(uint64_t done, uint64_t total) {
    done_.store(done, std::memory_order_relaxed);
    total_.store(total, std::memory_order_relaxed);
  }

  // Stops the thread and erases the line, if one was printed. Idempotent.
  void stop();

 private:
  void loop();
  std::string line(double seconds) const;

  std::string label_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  size_t printed_ = 0;  // length of the line on screen; 0: nothing printed
  std::string unit_;    // "": bytes
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> total_{0};
  std::thread thread_;
};

}  // namespace asnctl

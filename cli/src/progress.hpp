// A progress line for a call that may take a while (a schedule load waits for a frame
// boundary; a fabric load for every switch): after about a second, one line on stderr that
// updates in place, "loading plan.yaml ... 2.3 s", until the call returns. Only when stderr is
// a terminal: a pipe or a log gets nothing.
#pragma once

#include <chrono>
#include <condition_variable>
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

  // Stops the thread and erases the line, if one was printed. Idempotent.
  void stop();

 private:
  void loop();

  std::string label_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  size_t printed_ = 0;  // length of the line on screen; 0: nothing printed
  std::thread thread_;
};

}  // namespace asnctl

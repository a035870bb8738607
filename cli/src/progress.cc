#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "output.hpp"

namespace asnctl {

namespace {

constexpr std::chrono::milliseconds kRefresh{100};

}  // namespace

Progress::Progress(std::string label, std::chrono::milliseconds delay)
    : label_(std::move(label)), delay_(delay), start_(std::chrono::steady_clock::now()) {
  if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { loop(); });
}

Progress::~Progress() { stop(); }

void Progress::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Progress::loop() {
  std::unique_lock lock(mutex_);
  if (wake_.wait_for(lock, delay_, [this] { return stopping_; })) return;
  while (!stopping_) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string line = label_ + " ... " + strprintf("%.1f s", seconds);
    // Carriage return and the line again, padded over a longer previous one.
    std::fprintf(stderr, "\r%s%*s", line.c_str(),
                 static_cast<int>(printed_ > line.size() ? printed_ - line.size() : 0), "");
    std::fflush(stderr);
    printed_ = std::max(printed_, line.size());
    wake_.wait_for(lock, kRefresh, [this] { return stopping_; });
  }
  if (printed_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(printed_), "");
    std::fflush(stderr);
  }
}

}  // namespace asnctl

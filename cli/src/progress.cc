#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "output.hpp"

namespace asnctl {

namespace {

constexpr std::chrono::milliseconds kRefresh{100};
constexpr int kBarWidth = 20;

// 1536 -> "1.5 KiB".
std::string size_text(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? strprintf("%llu B", static_cast<unsigned long long>(bytes))
                   : strprintf("%.1f %s", value, units[unit]);
}

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
    const std::string line = this->line(seconds);
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

std::string Progress::line(double seconds) const {
  const uint64_t done = done_.load(std::memory_order_relaxed);
  const uint64_t total = total_.load(std::memory_order_relaxed);
  if (total == 0) return label_ + " ... " + strprintf("%.1f s", seconds);
  const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const int filled = static_cast<int>(fraction * kBarWidth);
  const std::string bar = std::string(static_cast<size_t>(filled), '#') +
                          std::string(static_cast<size_t>(kBarWidth - filled), ' ');
  if (!unit_.empty()) {
    return strprintf("%s [%s] %3d%%  %llu / %llu %s  %.1f s", label_.c_str(), bar.c_str(),
                     static_cast<int>(fraction * 100), static_cast<unsigned long long>(done),
                     static_cast<unsigned long long>(total), unit_.c_str(), seconds);
  }
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds / 1e6 : 0;
  return strprintf("%s [%s] %3d%%  %s / %s  %.1f MB/s  %.1f s", label_.c_str(), bar.c_str(),
                   static_cast<int>(fraction * 100), size_text(done).c_str(),
                   size_text(total).c_str(), rate, seconds);
}

}  // namespace asnctl

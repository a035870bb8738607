#include "systemd.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <chrono>
#include <cstdlib>

namespace asn {

SystemdNotifier::SystemdNotifier(std::function<std::string()> problem)
    : problem_(std::move(problem)) {}

SystemdNotifier::~SystemdNotifier() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void SystemdNotifier::ready(const std::string& status) {
  sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str());
  uint64_t interval_us = 0;
  if (sd_watchdog_enabled(0, &interval_us) > 0 && interval_us > 0) {
    spdlog::info("systemd watchdog every {} ms", interval_us / 1000);
    watchdog_ = std::thread([this, interval_us] { watchdog_loop(interval_us); });
  }
}

void SystemdNotifier::stopping() { sd_notify(0, "STOPPING=1"); }

void SystemdNotifier::watchdog_loop(uint64_t interval_us) {
  // Ping at half the interval, as sd_watchdog_enabled(3) recommends.
  const auto period = std::chrono::microseconds(interval_us / 2);
  std::unique_lock lock(mutex_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    const std::string problem = problem_();
    if (problem.empty()) {
      sd_notify(0, "WATCHDOG=1");
    } else {
      spdlog::error("{}; withholding the watchdog ping (systemd restarts asnd)", problem);
      sd_notifyf(0, "STATUS=unhealthy: %s", problem.c_str());
    }
  }
}

SystemdTimeoutExtender::SystemdTimeoutExtender(std::chrono::milliseconds extend,
                                               std::chrono::milliseconds period,
                                               std::chrono::milliseconds at_most) {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  if (socket == nullptr || *socket == '\0') return;
  const auto usec = static_cast<unsigned long long>(
      std::chrono::duration_cast<std::chrono::microseconds>(extend).count());
  thread_ = std::thread([this, usec, period, at_most] {
    const auto until = std::chrono::steady_clock::now() + at_most;
    std::unique_lock lock(mutex_);
    do {
      if (std::chrono::steady_clock::now() >= until) {
        spdlog::warn("the start has taken {} s: no longer asking systemd to wait for it",
                     std::chrono::duration_cast<std::chrono::seconds>(at_most).count());
        return;
      }
      sd_notifyf(0, "EXTEND_TIMEOUT_USEC=%llu", usec);
    } while (!cv_.wait_for(lock, period, [this] { return stop_; }));
  });
}

SystemdTimeoutExtender::~SystemdTimeoutExtender() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace asn

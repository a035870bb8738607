// systemd integration: READY/STOPPING/STATUS notifications and watchdog pings when the
// unit asks for them (Type=notify, WatchdogSec=). Does nothing outside systemd.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace asn {

class SystemdNotifier {
 public:
  // `problem` is asked before each watchdog ping: "" when all is well, else what is wrong.
  // A daemon with a problem stops pinging (and logs it), and systemd restarts it.
  explicit SystemdNotifier(std::function<std::string()> problem);
  ~SystemdNotifier();

  void ready(const std::string& status);
  void stopping();

 private:
  void watchdog_loop(uint64_t interval_us);

  std::function<std::string()> problem_;
  std::thread watchdog_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace asn

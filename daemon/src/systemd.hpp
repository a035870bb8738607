// systemd integration: READY/STOPPING/STATUS notifications and watchdog pings when the
// unit asks for them (Type=notify, WatchdogSec=). Does nothing outside systemd.
#pragma once

#include <chrono>
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

// While it lives, asks systemd to wait longer for the start to finish: at once and then every
// `period`, EXTEND_TIMEOUT_USEC= `extend` from now (sd_notify(3)), so that a start whose lock
// journal takes long to replay is not killed at TimeoutStartSec (90 s by default) and
// restarted into the same replay. It stops asking after `at_most`, so that a start that
// hangs is still killed, `extend` later. Does nothing outside systemd (no NOTIFY_SOCKET).
class SystemdTimeoutExtender {
 public:
  explicit SystemdTimeoutExtender(std::chrono::milliseconds extend = std::chrono::seconds(30),
                                  std::chrono::milliseconds period = std::chrono::seconds(10),
                                  std::chrono::milliseconds at_most = std::chrono::minutes(15));
  ~SystemdTimeoutExtender();
  SystemdTimeoutExtender(const SystemdTimeoutExtender&) = delete;
  SystemdTimeoutExtender& operator=(const SystemdTimeoutExtender&) = delete;

 private:
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace asn

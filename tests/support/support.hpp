// Helpers shared by the test suites: temporary directories and running commands.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace asn::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code;    // the exit status, or 128 + signal
  std::string out;  // stdout
  std::string err;  // stderr
  std::string all() const { return out + err; }
};

// Runs argv (no shell) with an optional stdin text and waits for it.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& input = "");

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

// A unique short name for boards and sockets of one test ("t1234-5").
std::string unique_name(const std::string& prefix);

// A raw TCP connection from address `from` to 127.0.0.1:`port` that says nothing, as a
// flooding client holds it (-1 when no socket could be made).
int connect_tcp(const char* from, int port);
// True when the server closed the connection `fd` within `wait` (0: closed already).
bool closed_by_server(int fd, std::chrono::milliseconds wait);

// Whether asn.ko is loaded on this host (/proc/modules).
bool asn_module_loaded();

// How much slower than an idle 2-core machine this run may be: ASN_TEST_TIME_SCALE, a
// positive number (1 when unset; scripts/test.sh raises it for the sanitizer stages). A bad
// value ends the test binary at once with a message naming it.
double time_scale();

// `limit` times time_scale(): every limit a test waits for before it calls the wait failed
// (a gRPC deadline on a call that must succeed, a wait_until, a stream's deadline). A limit
// is a backstop against a hang, never a measure of speed: pick it far above the need, since
// a passing test never waits it out (tests/README.md).
template <typename Rep, typename Period>
std::chrono::milliseconds scaled(std::chrono::duration<Rep, Period> limit) {
  return std::chrono::milliseconds(static_cast<int64_t>(
      std::chrono::duration<double, std::milli>(limit).count() * time_scale()));
}

// The point `limit` (scaled) from now on the clock gRPC deadlines use.
template <typename Rep, typename Period>
std::chrono::system_clock::time_point deadline_in(std::chrono::duration<Rep, Period> limit) {
  return std::chrono::system_clock::now() + scaled(limit);
}

// True once `done()` is; asks it once per try (a try may use up what it tests, such as a
// free connection slot) until `limit` (scaled) has passed.
template <typename Done>
bool wait_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(limit);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace asn::test

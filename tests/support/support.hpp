// Helpers shared by the test suites: temporary directories and running commands.
#pragma once

#include <chrono>
#include <string>
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
// True when the server closed the connection `fd` within `wait`.
bool closed_by_server(int fd, std::chrono::milliseconds wait);

}  // namespace asn::test

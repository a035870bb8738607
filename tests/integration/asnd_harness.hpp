// Starts the real asnd on a temporary socket, board and state directory, and runs the real
// asnctl against it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support.hpp"

namespace asn::test {

class AsndProcess {
 public:
  // `dir` holds the socket, the board memory, the state directory and the log.
  AsndProcess(const TempDir& dir, std::string board);
  ~AsndProcess();

  // Writes `config` to the config file, starts asnd with it, the common flags and `extra`,
  // and waits until it serves (true) or exits (false; exit_code() then says how).
  bool start(const std::vector<std::string>& extra = {}, const std::string& config = "");
  const std::string& config_path() const { return config_; }
  // SIGTERM, then waits; returns the exit code.
  int stop();
  void signal(int sig);
  bool running();
  int exit_code() const { return exit_code_; }
  std::string log() const;

  // Point a second asnd at the first one's socket or board memory.
  void use_socket(const std::string& path) { socket_ = path; }
  void use_shm_dir(const std::string& dir) { shm_dir_ = dir; }
  // Extra environment for asnd (NOTIFY_SOCKET, WATCHDOG_USEC, ...).
  void set_env(const std::string& name, const std::string& value) {
    env_.emplace_back(name, value);
  }
  // Starts asnd with this many open files at most (RLIMIT_NOFILE), as a unit's LimitNOFILE.
  void set_fd_limit(unsigned limit) { fd_limit_ = limit; }
  pid_t pid() const { return pid_; }

  const std::string& socket() const { return socket_; }
  const std::string& board() const { return board_; }
  const std::string& shm_dir() const { return shm_dir_; }

  // Runs asnctl --socket <socket> args...
  CommandResult asnctl(const std::vector<std::string>& args, const std::string& input = "") const;

 private:
  std::string dir_;
  std::string board_;
  std::string socket_;
  std::string shm_dir_;
  std::string log_;
  std::string config_;
  std::vector<std::pair<std::string, std::string>> env_;
  unsigned fd_limit_ = 0;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// A line of /proc/<pid>/status as a number ("Threads", "VmRSS" in kB); 0 when absent.
uint64_t proc_status(pid_t pid, const std::string& field);

// A TCP port on the loopback that nobody listens on right now (bound once to learn one), for
// an asnd --tcp listener.
int free_tcp_port();

// The first number of `"key": N` or `"key": "N"` in asnctl's JSON output (proto3 JSON
// writes 64-bit integers as strings).
std::optional<uint64_t> json_number(const std::string& json, const std::string& key);
// Every such number of `key`, in order.
std::vector<uint64_t> json_numbers(const std::string& json, const std::string& key);
// The first `"key": "value"` string; "<no KEY>" when there is none.
std::string json_string(const std::string& json, const std::string& key);
// The JSON object under `key`, up to its first closing brace (for objects without nested
// ones); "" when there is none.
std::string json_object(const std::string& json, const std::string& key);
// Runs of spaces as one: a table's columns without their padding.
std::string squeezed(const std::string& text);

}  // namespace asn::test

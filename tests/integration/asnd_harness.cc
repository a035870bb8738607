#include "asnd_harness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace asn::test {

namespace {

bool accepts(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

AsndProcess::AsndProcess(const TempDir& dir, std::string board)
    : dir_(dir.path()),
      board_(std::move(board)),
      socket_(dir.file("asnd.sock")),
      shm_dir_(dir.path()),
      log_(dir.file("asnd.log")),
      config_(dir.file("asnd.yaml")) {}

AsndProcess::~AsndProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool AsndProcess::start(const std::vector<std::string>& extra, const std::string& config) {
  std::vector<std::string> argv = {ASND_PATH, "--config",    config_,        "--socket",
                                   socket_,   "--board",     board_,         "--shm-dir",
                                   shm_dir_,  "--state-dir", dir_ + "/state"};
  write_file(config_, config);
  const size_t log_start = log().size();  // the log file collects every start
  argv.insert(argv.end(), extra.begin(), extra.end());
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& [name, value] : env_) setenv(name.c_str(), value.c_str(), 1);
    if (fd_limit_ != 0) {
      const rlimit limit{fd_limit_, fd_limit_};
      setrlimit(RLIMIT_NOFILE, &limit);
    }
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + scaled(std::chrono::seconds(60));
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return false;
    // Serving means this asnd said so and the socket answers (another process may hold a
    // socket at the same path).
    if (log().find("serving on", log_start) != std::string::npos && accepts(socket_)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool AsndProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return false;
}

void AsndProcess::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int AsndProcess::stop() {
  if (pid_ <= 0) return exit_code_;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

std::string AsndProcess::log() const {
  try {
    return read_file(log_);
  } catch (...) {
    return "";
  }
}

uint64_t proc_status(pid_t pid, const std::string& field) {
  std::string text;
  try {
    text = read_file("/proc/" + std::to_string(pid) + "/status");
  } catch (...) {
    return 0;
  }
  const size_t at = text.find("\n" + field + ":");
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + field.size() + 2, nullptr, 10);
}

std::optional<uint64_t> json_number(const std::string& json, const std::string& key) {
  const std::string quoted_key = "\"" + key + "\":";
  // The key may also name an object ("value": {...}); take the first occurrence with a number.
  for (size_t at = json.find(quoted_key); at != std::string::npos;
       at = json.find(quoted_key, at + 1)) {
    size_t start = at + quoted_key.size();
    while (start < json.size() && (json[start] == ' ' || json[start] == '"')) ++start;
    size_t end = start;
    while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
    if (end > start) return std::stoull(json.substr(start, end - start));
  }
  return std::nullopt;
}

std::vector<uint64_t> json_numbers(const std::string& json, const std::string& key) {
  std::vector<uint64_t> out;
  const std::string quoted = "\"" + key + "\":";
  for (size_t at = json.find(quoted); at != std::string::npos; at = json.find(quoted, at + 1)) {
    if (auto n = json_number(json.substr(at), key)) out.push_back(*n);
  }
  return out;
}

std::string json_string(const std::string& json, const std::string& key) {
  const std::string quoted = "\"" + key + "\": \"";
  const size_t at = json.find(quoted);
  if (at == std::string::npos) return "<no " + key + ">";
  const size_t start = at + quoted.size();
  return json.substr(start, json.find('"', start) - start);
}

std::string json_object(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": {");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('}', at) - at);
}

std::string squeezed(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  }
  return out;
}

CommandResult AsndProcess::asnctl(const std::vector<std::string>& args,
                                  const std::string& input) const {
  std::vector<std::string> argv = {ASNCTL_PATH, "--socket", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, input);
}

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace asn::test

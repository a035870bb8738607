#include "etcd_cluster.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asnd_harness.hpp"

namespace asn::test {

namespace {

// Debian's etcd-server installs etcd as /usr/bin/etcd.
const char* etcd_binary() {
  const char* path = std::getenv("ASN_ETCD");
  return path != nullptr ? path : "/usr/bin/etcd";
}

}  // namespace

EtcdCluster::EtcdCluster(const TempDir& dir, int members) {
  token_ = unique_name("asn-etcd");
  std::vector<std::string> peers;
  for (int i = 0; i < members; ++i) {
    Member m;
    m.name = fmt::format("m{}", i);
    m.client_port = free_tcp_port();
    m.peer_port = free_tcp_port();
    m.data_dir = dir.file(fmt::format("etcd-{}", i));
    m.log = dir.file(fmt::format("etcd-{}.log", i));
    peers.push_back(fmt::format("{}=http://127.0.0.1:{}", m.name, m.peer_port));
    members_.push_back(m);
  }
  initial_cluster_ = fmt::format("{}", fmt::join(peers, ","));
}

EtcdCluster::~EtcdCluster() { stop_all(); }

bool EtcdCluster::spawn(Member& m) {
  if (::access(etcd_binary(), X_OK) != 0) {
    fmt::print(stderr, "{} is missing: install etcd-server (scripts/install-deps.sh)\n",
               etcd_binary());
    return false;
  }
  std::vector<std::string> argv = {etcd_binary(),
                                   "--name",
                                   m.name,
                                   "--data-dir",
                                   m.data_dir,
                                   "--listen-client-urls",
                                   fmt::format("http://127.0.0.1:{}", m.client_port),
                                   "--advertise-client-urls",
                                   fmt::format("http://127.0.0.1:{}", m.client_port),
                                   "--listen-peer-urls",
                                   fmt::format("http://127.0.0.1:{}", m.peer_port),
                                   "--initial-advertise-peer-urls",
                                   fmt::format("http://127.0.0.1:{}", m.peer_port),
                                   "--initial-cluster",
                                   initial_cluster_,
                                   "--initial-cluster-token",
                                   token_,
                                   "--initial-cluster-state",
                                   "new",
                                   "--log-level",
                                   "warn",
                                   "--logger",
                                   "zap"};
  m.pid = fork();
  if (m.pid == 0) {
    const int fd = ::open(m.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return m.pid > 0;
}

bool EtcdCluster::wait_serving() {
  // Serving: a write through etcdctl commits (a quorum has a leader).
  return wait_until(
      [&] {
        const CommandResult r =
            run_command({"/usr/bin/etcdctl", "--endpoints", endpoints(), "--command-timeout=2s",
                         "put", "/asn-test/ready", "1"});
        return r.exit_code == 0;
      },
      std::chrono::seconds(60));
}

bool EtcdCluster::start() {
  for (Member& m : members_) {
    if (!spawn(m)) return false;
  }
  return wait_serving();
}

bool EtcdCluster::start_member(int i) {
  if (member_running(i)) return true;
  return spawn(members_.at(i));
}

void EtcdCluster::kill_member(int i, int sig) {
  Member& m = members_.at(i);
  if (m.pid <= 0) return;
  ::kill(m.pid, sig);
  if (sig == SIGKILL) {
    ::waitpid(m.pid, nullptr, 0);
    m.pid = -1;
  }
}

void EtcdCluster::stop_all() {
  for (int i = 0; i < size(); ++i) {
    if (members_[i].pid > 0) ::kill(members_[i].pid, SIGCONT);
    kill_member(i, SIGKILL);
  }
}

bool EtcdCluster::member_running(int i) {
  Member& m = members_.at(i);
  if (m.pid <= 0) return false;
  if (::waitpid(m.pid, nullptr, WNOHANG) == 0) return true;
  m.pid = -1;
  return false;
}

std::vector<std::string> EtcdCluster::endpoint_list() const {
  std::vector<std::string> out;
  for (const Member& m : members_) out.push_back(fmt::format("127.0.0.1:{}", m.client_port));
  return out;
}

std::string EtcdCluster::endpoints() const {
  return fmt::format("{}", fmt::join(endpoint_list(), ","));
}

std::string EtcdCluster::logs() const {
  std::string out;
  for (const Member& m : members_) {
    out += fmt::format("--- etcd {} ---\n{}\n", m.name, read_file(m.log));
  }
  return out;
}

}  // namespace asn::test

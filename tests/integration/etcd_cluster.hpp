// A private etcd cluster on loopback ports for the fabric tests (issue 25): real etcd
// processes (Debian's etcd-server) with their data under a TempDir, killed and restarted
// by the tests. Never skips: a missing etcd binary fails the test with what to install.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support.hpp"

namespace asn::test {

class EtcdCluster {
 public:
  // `members` members, not started yet.
  EtcdCluster(const TempDir& dir, int members = 3);
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // Starts every member and waits until the cluster serves writes; false (with the logs in
  // the failure text of the caller) when it does not within a minute.
  bool start();
  // Starts member `i` again on its data directory (after kill or stop); does not wait (a
  // member alone has no quorum).
  bool start_member(int i);
  // Waits until the cluster serves writes again.
  bool wait_serving();
  void kill_member(int i, int sig = 9);  // SIGKILL by default; SIGSTOP/SIGCONT pause it
  void stop_all();                       // SIGKILL every member
  bool member_running(int i);

  int size() const { return static_cast<int>(members_.size()); }
  // "127.0.0.1:P,127.0.0.1:Q,..." (as asnd.yaml and ASN_FABRIC take them).
  std::string endpoints() const;
  std::vector<std::string> endpoint_list() const;
  std::string logs() const;

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::string data_dir;
    std::string log;
    pid_t pid = -1;
  };
  bool spawn(Member& member);

  std::vector<Member> members_;
  std::string initial_cluster_;
  std::string token_;
};

}  // namespace asn::test

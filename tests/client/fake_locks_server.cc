// The fake Locks service as a process: asn_fake_locks_server SOCKET_PATH. Serves until
// SIGTERM or SIGINT; prints "ready" once it listens.
#include <csignal>
#include <cstdio>

#include "fake_locks.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SOCKET_PATH\n", argv[0]);
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before gRPC starts its threads
  asn::test::FakeLocksServer server(std::make_shared<asn::test::FakeLockState>(), argv[1]);
  std::printf("ready\n");
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  return 0;
}

// asnd as a whole: backend, Device, gRPC server, signals and systemd, wired from a Config.
#pragma once

#include <csignal>

#include "config.hpp"

namespace asn {

// Blocks the signals asnd handles in the calling thread and every thread it creates later;
// call first thing in main(), before any thread exists.
sigset_t block_daemon_signals();

// Runs until SIGTERM or SIGINT. Returns the process exit code; throws asn::Error when the
// daemon cannot start (the message says why).
int run_daemon(const Config& config, const std::string& config_path, bool config_required,
               const ConfigOverrides& overrides, const sigset_t& signals);

}  // namespace asn

// asnd as a whole. The composition root: builds the bus from the configuration, the Device,
// the desired-state store and its reconciler, the managers and, per listener, the services;
// then runs until SIGTERM or SIGINT.
#pragma once

#include <csignal>
#include <string>

#include "config.hpp"

namespace asn {

// Blocks the signals asnd handles in the calling thread and every thread it creates later;
// call once the configuration has been read (a blocked SIGTERM must never keep a hanging
// read from being interrupted) and before any thread exists.
sigset_t block_daemon_signals();

// Runs until SIGTERM or SIGINT. Returns the process exit code; throws asn::Error when the
// daemon cannot start (the message says why).
int run_daemon(const Config& config, const std::string& config_path, bool config_required,
               const ConfigOverrides& overrides, const sigset_t& signals);

}  // namespace asn

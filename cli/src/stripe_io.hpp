// asnctl stripe write|read: a file streamed through asnd into a stripe group's parity path
// and back (the emulated board's data path), with a progress bar on a terminal.
#pragma once

#include <cstdint>
#include <string>

#include "command.hpp"

namespace asnctl {

// A data stream (write, read, rebuild) runs as long as its bytes take (Ctrl-C stops it); a
// missing asnd still fails at once.
void prepare_stream(Session& s, grpc::ClientContext& context);

// Writes `file` ('-': stdin) at `offset` of the group's file. A write cut off says how many
// bytes asnd acknowledged (those are on the members).
int stripe_write(Session& s, const std::string& file, uint32_t group, uint64_t offset);
// Reads `length` bytes (0: to the end) from `offset` into `out` ('-': stdout).
int stripe_read(Session& s, const std::string& out, uint32_t group, uint64_t offset,
                uint64_t length);

}  // namespace asnctl

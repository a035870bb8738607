// asnctl stripe write|read: a file streamed through asnd into a stripe group's parity path
// and back (the emulated board's data path), with a progress bar on a terminal.
#pragma once

#include <cstdint>
#include <string>

#include "command.hpp"
#include "progress.hpp"

namespace asnctl {

// A data stream (write, read, rebuild) runs as long as its bytes take (Ctrl-C stops it); a
// missing asnd still fails at once.
void prepare_stream(Session& s, grpc::ClientContext& context);

// Reads a stream of progress messages (stripes_done, stripes_total, finished: a rebuild's, a
// scrub's) to its end with `progress` shown, checks the call's status (an error throws, as
// Connection::check does) and returns the finished message.
template <typename Message, typename Reader>
Message follow_progress(Session& s, Reader& reader, Progress& progress) {
  Message message;
  Message last;
  while (reader.Read(&message)) {
    progress.update(message.stripes_done(), message.stripes_total());
    if (message.finished()) last = message;
  }
  const grpc::Status status = reader.Finish();
  progress.stop();
  s.connection.check(status);
  return last;
}

// Writes `file` ('-': stdin) at `offset` of the group's file. A write cut off says how many
// bytes asnd acknowledged (those are on the members).
int stripe_write(Session& s, const std::string& file, uint32_t group, uint64_t offset);
// Reads `length` bytes (0: to the end) from `offset` into `out` ('-': stdout).
int stripe_read(Session& s, const std::string& out, uint32_t group, uint64_t offset,
                uint64_t length);

}  // namespace asnctl

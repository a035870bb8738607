// A Watch on every key under a prefix (etcd's Watch service), run on the caller's thread
// until it is cancelled, the stream breaks, or the revision it starts from was compacted.
// What to do then is the caller's: the agent (daemon/src/fabric) watches again from the
// revision after the last it saw, or reads everything again after a compaction.
#pragma once

#include <grpcpp/client_context.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "etcd_client.hpp"

namespace asn::etcd {

struct WatchEvent {
  bool deleted = false;  // else a put
  KeyValue kv;
};

// Why run() returned.
struct WatchEnd {
  bool cancelled = false;    // cancel() was called
  int64_t compacted_to = 0;  // > 0: the start revision is gone; read everything again
  std::string error;         // the stream broke (a member died, the network): watch again
};

class Watcher {
 public:
  // Called on run()'s thread with each batch of events, in revision order, and the store's
  // revision when the batch was sent.
  using OnEvents = std::function<void(const std::vector<WatchEvent>&, int64_t revision)>;

  Watcher(Client& client, std::string prefix) : client_(client), prefix_(std::move(prefix)) {}

  // Streams events from `start_revision` (0: from now) until one of WatchEnd's reasons.
  WatchEnd run(int64_t start_revision, const OnEvents& on_events);
  // From any thread: the running run() returns (cancelled); a later one returns at once.
  void cancel();

 private:
  Client& client_;
  std::string prefix_;
  std::mutex mutex_;
  grpc::ClientContext* context_ = nullptr;  // of the running stream (mutex_)
  bool cancelled_ = false;                  // mutex_
};

}  // namespace asn::etcd

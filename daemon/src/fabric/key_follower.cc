#include "fabric/key_follower.hpp"

#include <spdlog/spdlog.h>

namespace asn {

KeyFollower::KeyFollower(etcd::Client& client, std::string key, OnValue on_value, OnReach on_reach)
    : client_(client),
      key_(std::move(key)),
      watcher_(client, key_),
      on_value_(std::move(on_value)),
      on_reach_(std::move(on_reach)) {}

void KeyFollower::run(const Wait& wait) {
  int64_t next = 0;  // the revision the watch starts from
  bool read_all = true;
  while (!wait(std::chrono::milliseconds::zero())) {
    if (read_all) {
      try {
        const etcd::Range range = client_.get(key_);
        on_value_(range.kvs.empty() ? std::string() : range.kvs[0].value,
                  range.kvs.empty() ? range.revision : range.kvs[0].mod_revision);
        on_reach_(true, "");
        next = range.revision + 1;
        read_all = false;
      } catch (const etcd::Error& e) {
        on_reach_(false, e.what());
        if (wait(kRetry)) break;
        continue;
      }
    }
    // The watch is of the key as a prefix: other keys that start with it are not ours.
    const etcd::WatchEnd end = watcher_.run(next, [&](const auto& events, int64_t) {
      for (const etcd::WatchEvent& e : events) {
        if (e.kv.key != key_) continue;
        on_value_(e.deleted ? std::string() : e.kv.value, e.kv.mod_revision);
        next = e.kv.mod_revision + 1;
      }
    });
    if (end.cancelled) break;
    if (end.compacted_to > 0) {
      spdlog::info("fabric: revision {} of {} was compacted (to {}): reading it again", next, key_,
                   end.compacted_to);
      read_all = true;
      continue;
    }
    on_reach_(false, end.error);
    if (wait(kRetry)) break;
  }
}

}  // namespace asn

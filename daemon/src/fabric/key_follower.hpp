// One etcd key followed: read once, then watched from the revision after the read; read again
// when that revision was compacted; while etcd cannot be reached, tried again every second.
// The fabric agent follows its switch's desired document and the fabric's lock map with one
// each.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "etcd_client.hpp"
#include "etcd_watch.hpp"

namespace asn {

class KeyFollower {
 public:
  // Each value the key takes, in order: its text and mod_revision, or "" and the store's
  // revision when the key is absent (deleted). The first read reports the value it finds.
  using OnValue = std::function<void(const std::string& value, int64_t revision)>;
  // Whether etcd answered, and why not.
  using OnReach = std::function<void(bool reachable, const std::string& error)>;
  // Sleeps up to the given time; returns true when the follower is to stop.
  using Wait = std::function<bool(std::chrono::milliseconds)>;
  // Between tries while etcd cannot be reached.
  static constexpr std::chrono::milliseconds kRetry{1000};

  KeyFollower(etcd::Client& client, std::string key, OnValue on_value, OnReach on_reach);

  // Follows until cancel() (or `wait` says stop).
  void run(const Wait& wait);
  // From any thread: run() returns soon.
  void cancel() { watcher_.cancel(); }

  const std::string& key() const { return key_; }

 private:
  etcd::Client& client_;
  std::string key_;
  etcd::Watcher watcher_;
  OnValue on_value_;
  OnReach on_reach_;
};

}  // namespace asn

// The fabric's lock map as one switch follows it (issue 25, item 6; the safety argument is in
// locks/lock_manager_fabric.cc):
//
// - every change of <prefix>/fabrics/<F>/locks goes to the LockManager (set_lock_map), which
//   serves only this switch's slots, redirects the rest, drops slots it lost and waits out
//   the grace on slots it gained;
// - every third of the status lease it reads the map back (a linearizable read) and confirms
//   it (LockManager::confirm_lock_map) for one status lease from when it sent the read: a
//   switch that can no longer read etcd stops granting and renewing before any successor may
//   start; the read's header revision goes with it, for the fencing tokens to embed, and when
//   the tokens have used half of what one revision allows it first writes
//   <prefix>/fabrics/<F>/lock-tokens/<switch> so that the read sees a newer one;
// - failover: when an owner's status key has been gone for a whole status lease (it died, was
//   stopped, or is cut off), the next live switch after it in name order takes its slots at a
//   new epoch, in one Txn guarded by the map's revision and by the owner's status still being
//   absent, so that of all the switches that see it only one move is written.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "asn/fabric/v1/fabric.pb.h"
#include "config.hpp"
#include "etcd_client.hpp"
#include "locks/lock_manager.hpp"

namespace asn {

class LockMapAgent {
 public:
  // What the switch reports: the map's revision (0: none) and the slots it owns.
  using OnStatus = std::function<void(int64_t revision, uint32_t slots, const std::string& error)>;

  // `takeover_grace`: how long a slot this switch gains grants nothing (the status lease plus
  // the longest session lease, locks.max_ttl).
  LockMapAgent(const FabricConfig& config, etcd::Client& client, LockManager& locks,
               std::chrono::milliseconds takeover_grace, OnStatus on_status);

  const std::string& key() const { return key_; }
  // A value of the key (the KeyFollower's): "" when absent.
  void on_value(const std::string& value, int64_t revision);
  // Reads the map back, confirms it, and moves the slots of an owner gone for a lease. Throws
  // etcd::Error when etcd cannot be reached (the switch is then fenced once the last
  // confirmation runs out).
  void check();

 private:
  // Moves the slots of a dead owner to this switch (one Txn); at most one owner a check.
  void take_over(const fabric::v1::LockMap& map, int64_t revision);
  std::string dead_owner(const fabric::v1::LockMap& map);

  FabricConfig config_;
  etcd::Client& client_;
  LockManager& locks_;
  std::chrono::milliseconds takeover_grace_;
  OnStatus on_status_;
  std::string key_;
  std::string token_key_;  // written to move the revision on (the class comment)
  std::mutex mutex_;
  int64_t revision_ = -1;  // mutex_: the map's revision handed to the LockManager (0: none)
  int64_t seen_ = 0;       // mutex_: the newest revision reported
  int64_t refused_ = 0;    // mutex_: the revision of a document refused (said once)
  // Owners whose status key was found gone, and since when (steady clock).
  std::map<std::string, std::chrono::steady_clock::time_point> gone_since_;
};

}  // namespace asn

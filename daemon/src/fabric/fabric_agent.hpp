// asnd as the agent of its switch in a fabric whose desired state lives in etcd (issue 25;
// docs/architecture.md "The fabric on etcd"). With `fabric.switch: S` in asnd.yaml it
//
// - watches <prefix>/fabrics/<F>/switches/<S>/desired and applies each revision through the
//   FabricManager (the same verify-then-commit change as a local call, into the same
//   desired-state store: etcd feeds the store, there is no second mechanism);
// - reports under a lease of its own, at .../switches/<S>/status, the revision in force, the
//   condition (in-force, applying, failed: why, not-in-fabric), the board's health and
//   generation; the key vanishes when asnd stops renewing it (.../last-status, without a
//   lease, keeps what it said last);
// - refuses local changes of what the fabric decides (FabricManager::set_owner);
// - keeps running on what it last applied while etcd is unreachable, says so in its
//   summary, and catches up when etcd returns: it watches again from the revision after the
//   last it saw, or reads the document again when that revision was compacted
//   (KeyFollower);
// - follows the fabric's lock map for the LockManager, confirms it with every status renewal
//   and moves the slots of a dead owner (LockMapAgent);
// - takes part in schedules switched on every switch together (ActivationAgent).
//
// What it applied last is kept under the state directory ("fabric-member"), so an asnd
// that starts while etcd is down still knows which revision the board holds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "asn/fabric/v1/status.pb.h"
#include "config.hpp"
#include "device/device.hpp"
#include "etcd_client.hpp"
#include "etcd_watch.hpp"
#include "fabric/activation_agent.hpp"
#include "fabric/key_follower.hpp"
#include "fabric/lock_map_agent.hpp"
#include "locks/lock_manager.hpp"
#include "managers/fabric_manager.hpp"
#include "state/reconciler.hpp"
#include "state/store.hpp"

namespace asn {

class FabricAgent final : public Reconcilable {
 public:
  // `endpoint`: asnd's TCP listener, reported for operators ("" when none). `locks`: the
  // lock service, which serves the fabric's lock map; `takeover_grace`: LockMapAgent's.
  // `tdm`: the schedules, which fabric-wide activations stage and arm.
  FabricAgent(const FabricConfig& config, std::string endpoint, FabricManager& fabric,
              Device& device, const StateStore& store, LockManager& locks,
              std::chrono::milliseconds takeover_grace, TdmManager& tdm);
  ~FabricAgent() override;

  // Starts the watch and the status threads; returns at once (etcd may be down).
  void start();
  // Stops both (cancelling calls in flight) and revokes the status lease (best effort,
  // bounded). Idempotent.
  void stop();

  std::string_view kind() const override { return "fabric-member"; }
  // On start: loads what was applied last; on a board reset: reports the new generation.
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  // None of its own: what the fabric decides is the FabricManager's document, whose drift()
  // reads the board.
  std::string drift() override { return ""; }

 private:
  void status_loop();
  // Runs `follower` on a thread of its own until stop().
  std::thread follow(KeyFollower& follower);
  // Applies one revision of the desired document (`value` empty: the key is absent).
  void apply(const std::string& value, int64_t revision);
  void set_store_reachable(bool reachable, const std::string& error);
  void update(const std::function<void(fabric::v1::SwitchStatus&)>& change);
  void save_applied(const fabric::v1::SwitchStatus& status);
  fabric::v1::SwitchStatus snapshot() const;
  std::string owner_text(int64_t revision) const;
  bool wait_stop(std::chrono::milliseconds how_long);
  void revoke_status();

  FabricConfig config_;
  FabricManager& fabric_;
  Device& device_;
  std::string desired_key_;
  std::string status_key_;
  std::string last_status_key_;
  std::unique_ptr<etcd::Client> client_;
  std::unique_ptr<KeyFollower> desired_;
  std::unique_ptr<LockMapAgent> lock_map_;
  std::unique_ptr<KeyFollower> lock_map_follower_;
  std::unique_ptr<ActivationAgent> activation_;
  std::unique_ptr<KeyFollower> activation_follower_;
  const StateStore& store_;  // "fabric-member": the status as of the last apply

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  fabric::v1::SwitchStatus status_;  // mutex_
  bool status_dirty_ = true;         // mutex_: to be written
  bool stopping_ = false;            // mutex_
  int64_t lease_ = 0;                // mutex_: the status lease, once the status thread ended
  bool store_reachable_ = false;     // mutex_
  std::string store_error_ = "not contacted yet";            // mutex_
  std::chrono::system_clock::time_point unreachable_since_;  // mutex_
  std::thread watch_thread_;
  std::thread lock_map_thread_;
  std::thread activation_thread_;
  std::thread status_thread_;
};

}  // namespace asn

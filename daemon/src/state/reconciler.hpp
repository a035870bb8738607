// The one mechanism that makes the board hold asnd's desired state: on start, whenever the
// board's generation changes (a board reset, through asnd or behind its back), and when the
// bus finds its board again after losing it (a driver reload, a re-bind), it asks
// every manager to reprogram the board from its stored document, and logs what each one
// restored. A worker thread watches the generation (bus events, and a poll as a backstop),
// so a bus's event thread never does the work.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "device/device.hpp"

namespace asn {

// kReconnect: the bus lost the board and found the same one again (the driver was reloaded,
// the board re-bound) with its generation unchanged: it kept its configuration unless
// something wrote it meanwhile, so each manager checks it and puts back what differs.
enum class ReconcileCause : uint8_t { kStart, kBoardReset, kReconnect };

struct ManagerSummary {
  std::string manager;
  std::string status;  // "in force", "nothing configured", "refused: ...", "restore failed: ..."
  uint64_t revision = 0;
  std::string last_restore;
  bool problem = false;   // an operator should act (shown as a warning)
  bool in_force = false;  // the stored document is committed: the board should hold it
};

// What a manager implements to take part.
class Reconcilable {
 public:
  virtual ~Reconcilable() = default;
  virtual std::string_view kind() const = 0;
  // Loads the stored document (on start), then makes the board hold it: finishes a pending
  // change, leaves a board that already holds it untouched, reprograms one that does not.
  // Returns what it did, in words. Throws asn::Error when the board refuses.
  virtual std::string reconcile(ReconcileCause cause) = 0;
  virtual ManagerSummary summary() const = 0;
  // How the board differs from the document in force, in words an operator can act on (what
  // differs, and how to put it back); empty when the board holds it or nothing is in force.
  // Reads the board: a register written behind asnd's back (`asnctl regs write`, another
  // program on the bus) is found here, not only at the next start or reset.
  virtual std::string drift() = 0;
};

class Reconciler {
 public:
  explicit Reconciler(Device& device) : device_(device) {}
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  void add(Reconcilable& manager) { managers_.push_back(&manager); }

  // The start: reconciles every manager for the board's current generation.
  void start();
  // Starts the worker that watches the generation (poll every `poll`).
  void watch(std::chrono::milliseconds poll);
  // The bus saw a new generation: wake the worker.
  void notify_generation(uint32_t generation);
  // The bus found the board again after losing it: wake the worker to reconcile (a reset
  // meanwhile counts as a reset).
  void notify_reconnected();
  // A reset through asnd (ResetBoard, a write of id.control.board_reset): runs `reset`
  // (which resets the board, logs who did it and returns the new generation), then reconciles
  // at once, before the caller answers, attributed to `who`. The watch is held off from the
  // reset on, so it never sees the new generation first and logs the reset as one behind
  // asnd's back.
  uint32_t reset_board(const std::string& who, const std::function<uint32_t()>& reset);

  // Every manager's summary; one in force whose board differs says so (drift()) and is a
  // problem. Not while a reconciliation runs: it is putting the board back.
  std::vector<ManagerSummary> summaries();
  uint32_t reconciled_generation() const;

 private:
  void run(ReconcileCause cause, uint32_t generation, const std::string& why);
  void run_locked(ReconcileCause cause, uint32_t generation, const std::string& why);
  void loop(std::chrono::milliseconds poll);

  Device& device_;
  std::vector<Reconcilable*> managers_;
  mutable std::mutex run_mutex_;  // one reconciliation at a time
  uint32_t generation_ = 0;       // the generation last reconciled (run_mutex_)
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint32_t notified_ = 0;     // wake_mutex_
  bool reconnected_ = false;  // wake_mutex_
  std::string last_error_;    // the worker's
  std::thread worker_;
};

}  // namespace asn

#include "state/reconciler.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "error.hpp"

namespace asn {

Reconciler::~Reconciler() {
  {
    std::lock_guard lock(wake_mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Reconciler::start() {
  const uint32_t generation = device_.read(regs::id::kGenerationValue);
  run(ReconcileCause::kStart, generation, "asnd started");
}

void Reconciler::watch(std::chrono::milliseconds poll) {
  worker_ = std::thread([this, poll] { loop(poll); });
}

void Reconciler::notify_generation(uint32_t generation) {
  {
    std::lock_guard lock(wake_mutex_);
    notified_ = generation;
  }
  wake_.notify_all();
}

void Reconciler::notify_reconnected() {
  {
    std::lock_guard lock(wake_mutex_);
    reconnected_ = true;
  }
  wake_.notify_all();
}

uint32_t Reconciler::reset_board(const std::string& who, const std::function<uint32_t()>& reset) {
  std::lock_guard lock(run_mutex_);
  const uint32_t generation = reset();
  run_locked(ReconcileCause::kBoardReset, generation, fmt::format("board reset by {}", who));
  return generation;
}

void Reconciler::run(ReconcileCause cause, uint32_t generation, const std::string& why) {
  std::lock_guard lock(run_mutex_);
  run_locked(cause, generation, why);
}

void Reconciler::run_locked(ReconcileCause cause, uint32_t generation, const std::string& why) {
  if (cause == ReconcileCause::kBoardReset && generation == generation_) return;  // done
  if (cause == ReconcileCause::kBoardReset) {
    spdlog::warn("board generation {} -> {} ({}): restoring the desired state", generation_,
                 generation, why);
  }
  generation_ = generation;
  for (Reconcilable* manager : managers_) {
    try {
      const std::string did = manager->reconcile(cause);
      spdlog::info("{} state: {} ({})", manager->kind(), did, why);
    } catch (const Error& e) {
      spdlog::error("{} state: not restored: {} ({})", manager->kind(), e.what(), why);
    }
  }
}

void Reconciler::loop(std::chrono::milliseconds poll) {
  std::unique_lock lock(wake_mutex_);
  for (;;) {
    wake_.wait_for(lock, poll, [this] { return stopping_ || notified_ != 0 || reconnected_; });
    if (stopping_) return;
    notified_ = 0;
    const bool reconnected = std::exchange(reconnected_, false);
    lock.unlock();
    try {
      // The poll catches a reset whose event was lost (or a backend without events). The
      // generation is read under run_mutex_: a reset through asnd holds it from before the
      // reset to the end of its reconciliation, and a read taken before it would be stale.
      std::lock_guard run_lock(run_mutex_);
      const uint32_t generation = device_.read(regs::id::kGenerationValue);
      if (generation != generation_) {
        device_.rediscover();
        run_locked(ReconcileCause::kBoardReset, generation,
                   "the board was reset behind asnd's back");
      } else if (reconnected) {
        run_locked(ReconcileCause::kReconnect, generation, "the board was found again");
      }
    } catch (const Error& e) {
      // Once per distinct problem: a failed board must not fill the journal every second.
      if (e.what() != last_error_) spdlog::error("watching the board generation: {}", e.what());
      last_error_ = e.what();
      lock.lock();
      continue;
    }
    last_error_.clear();
    lock.lock();
  }
}

std::vector<ManagerSummary> Reconciler::summaries() {
  std::vector<ManagerSummary> out;
  std::unique_lock running(run_mutex_, std::try_to_lock);
  for (Reconcilable* manager : managers_) {
    ManagerSummary s = manager->summary();
    if (s.in_force && running.owns_lock()) {
      try {
        if (std::string drift = manager->drift(); !drift.empty()) {
          s.status = "differs from the board (written behind asnd's back?): " + drift +
                     "; a restart of asnd puts the board back";
          s.problem = true;
        }
      } catch (const Error& e) {
        s.status = std::string("cannot read the board to compare: ") + e.what();
        s.problem = true;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

uint32_t Reconciler::reconciled_generation() const {
  std::lock_guard lock(run_mutex_);
  return generation_;
}

}  // namespace asn

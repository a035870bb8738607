// The emulated backend: the in-process model of the board (fpga/model), whose memory lives
// in a shared-memory file named after the board so that it outlives asnd as a real board's
// memory does, and a clock thread that runs the model's sequencers in real time and, like a
// driver's interrupt handler, turns the board's interrupts into bus events.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "asn/model/board.hpp"
#include "bus/register_bus.hpp"
#include "bus/stripe_data_port.hpp"

namespace asn {

struct EmulatedBusOptions {
  std::string board_name = "asn0";
  std::string profile = "netfpga-1g";
  bool power_on_reset = false;           // asnd --reset-board: start from a fresh board
  std::string shm_dir = "/dev/shm/asn";  // where the board memory file lives
  bool run_clock = true;                 // advance the model's clock and deliver events
  // The register map the emulated board implements; nullptr for the generated one (tests).
  const regmap::RegisterMap* map = nullptr;
  // Where the emulated storage servers behind the member ports keep what the parity data
  // path sends them (model::OpenOptions::storage_dir; asnd: backend.emulated.storage_dir).
  // Empty: none are attached, and every stripe_data_port() call fails.
  std::string storage_dir;
  // The longest the clock thread sleeps with nothing to do: how often it checks the board's
  // memory file and samples the external reset input, which nothing tells it of (see
  // emulated_bus.cc). Tests make it long to see that everything else wakes the clock.
  std::chrono::milliseconds health_check_every = std::chrono::milliseconds(250);
};

class EmulatedBus final : public RegisterBus {
 public:
  // Throws asn::Error: kInvalidArgument for an unknown profile or a bad board name (listing
  // the valid ones), kFailedPrecondition when the board is in use or holds another profile.
  explicit EmulatedBus(const EmulatedBusOptions& options);
  ~EmulatedBus() override;

  std::string describe() const override;
  BoardIdentity identity() const override;
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void execute(std::span<BusOp> ops) override;
  void set_event_handler(std::function<void(const BusEvent&)> handler) override;
  // The board's parity data path (bus/stripe_data_port.hpp), with its errors as asn::Error.
  StripeDataPort* stripe_data_port() override { return &stripe_port_; }

  model::EmulatedBoard& board() { return *board_; }
  const model::OpenReport& open_report() const { return board_->open_report(); }

  // One pass of the interrupt handler (the clock thread runs it whenever it wakes):
  // acknowledges the event causes the board raised and delivers them, and notices a new
  // generation.
  void service_interrupts();

  // For tests: the passes the clock thread has made, and how long it meant to sleep after
  // the last one (unless woken sooner).
  uint64_t clock_passes() const { return clock_passes_.load(); }
  std::chrono::nanoseconds planned_sleep() const {
    return std::chrono::nanoseconds(planned_sleep_ns_.load());
  }

 private:
  void clock_loop();
  void enable_interrupts();
  void deliver(const BusEvent& event);
  // Throws kUnavailable once the board has failed.
  void require_working() const;
  void check_health();
  // After an access: wakes the clock thread when the board counted something it has not
  // seen (model::EmulatedBoard::events()).
  void notice_events();

  // The client side of the board's parity data path: each call goes to the board's
  // stripe_* and its model::StripeError becomes the asn::Error the seam documents.
  class StripePort final : public StripeDataPort {
   public:
    explicit StripePort(EmulatedBus& bus) : bus_(bus) {}
    void write(uint16_t group, uint64_t offset, std::span<const uint8_t> bytes) override;
    size_t read(uint16_t group, uint64_t offset, std::span<uint8_t> out) override;
    uint64_t file_size(uint16_t group) override;
    void fail_member(uint16_t group, unsigned port) override;
    void rebuild_member(uint16_t group, unsigned port, const Progress& progress) override;
    stripe::ScrubReport scrub(uint16_t group, bool repair, bool dry_run,
                              const Progress& progress) override;
    void discard(uint16_t group) override;

   private:
    template <typename F>
    auto call(F&& request);
    EmulatedBus& bus_;
  };

  std::unique_ptr<model::EmulatedBoard> board_;
  uint32_t id_base_ = 0;
  uint32_t seen_generation_ = 0;  // clock thread (or service_interrupts' caller) only
  std::mutex handler_mutex_;
  std::function<void(const BusEvent&)> handler_;
  std::thread clock_;
  std::mutex clock_mutex_;
  std::condition_variable clock_cv_;
  bool stopping_ = false;
  bool kicked_ = false;  // under clock_mutex_: the board has news; run a pass
  bool run_clock_ = false;
  std::chrono::milliseconds health_check_every_;
  // The board's events() as of the clock thread's last pass.
  std::atomic<uint64_t> seen_events_{0};
  std::atomic<uint64_t> clock_passes_{0};
  std::atomic<int64_t> planned_sleep_ns_{0};
  // Due at once: the first pass checks. (Not the clock's epoch, which is the host's boot: on
  // a host up for less than health_check_every the first check would wait until then.)
  std::chrono::steady_clock::time_point last_health_check_ =
      std::chrono::steady_clock::now() - health_check_every_;
  mutable std::mutex failed_mutex_;
  std::string failed_;  // why the board can no longer be used; empty while it can
  StripePort stripe_port_{*this};
};

}  // namespace asn

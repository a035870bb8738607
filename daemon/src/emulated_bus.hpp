// The emulated backend: the in-process model of the board (fpga/model), whose memory lives
// in a shared-memory file named after the board so that it outlives asnd as a real board's
// memory does, and a clock thread that runs the model's sequencers in real time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "asn/model/board.hpp"
#include "register_bus.hpp"

namespace asn {

struct EmulatedBusOptions {
  std::string board_name = "asn0";
  std::string profile = "netfpga-1g";
  bool power_on_reset = false;       // asnd --reset-board: start from a fresh board
  std::string shm_dir = "/dev/shm";  // where the board memory file lives
  bool run_clock = true;             // advance the model's clock in real time
};

class EmulatedBus final : public RegisterBus {
 public:
  // Throws asn::Error: kInvalidArgument for an unknown profile or a bad board name (listing
  // the valid ones), kFailedPrecondition when the board is in use or holds another profile.
  explicit EmulatedBus(const EmulatedBusOptions& options);
  ~EmulatedBus() override;

  std::string describe() const override;
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void execute(std::span<BusOp> ops) override;

  model::EmulatedBoard& board() { return *board_; }
  const model::OpenReport& open_report() const { return board_->open_report(); }

 private:
  void clock_loop();

  std::unique_ptr<model::EmulatedBoard> board_;
  std::thread clock_;
  std::mutex clock_mutex_;
  std::condition_variable clock_cv_;
  bool stopping_ = false;
};

}  // namespace asn

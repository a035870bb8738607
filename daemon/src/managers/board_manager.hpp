// The board as a whole: its reset. Every reset asnd makes (asnctl board reset, a register
// write of id.control.board_reset) goes through here, so the desired state is back on the
// board before the caller hears the reset is done.
#pragma once

#include <cstdint>
#include <string>

#include "device/device.hpp"
#include "state/reconciler.hpp"

namespace asn {

struct ResetResult {
  uint32_t generation_before;
  uint32_t generation_after;
};

class BoardManager {
 public:
  BoardManager(Device& device, Reconciler& reconciler) : device_(device), reconciler_(reconciler) {}

  ResetResult reset(const std::string& who);

 private:
  Device& device_;
  Reconciler& reconciler_;
};

}  // namespace asn

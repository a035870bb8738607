// Internal: the TDM slot sequencer (000 L597, L704-828). A frame is slots_in_use preloaded
// slots of slot_length cycles, plus the wormhole slot (numbered slots_in_use) when
// config.wormhole is set. The sequencer counts frames, tracks the current slot and swaps the
// slot-table banks at the first frame boundary after an arm. It reads and writes only the
// TDM block's registers and the phase it is given.
#pragma once

#include <cstdint>

#include "../block_model.hpp"

namespace asn::model::detail::engines {

class TdmSequencer {
 public:
  // `phase`: core cycles into the current frame, kept by the board across restarts.
  TdmSequencer(RegisterView& tdm, uint64_t& phase, BoardContext& board)
      : tdm_(tdm), phase_(phase), board_(board) {}

  // Keeps status.running and current_slot in step with the configuration. A stopped
  // sequencer is held at the start of a frame, so it restarts in slot 0.
  void refresh();
  // control.arm: swap at the next frame boundary, or at once while stopped (no boundary
  // will come).
  void arm();
  void disarm();
  // O(1) in cycles: whole frames by division, the rest moves the phase.
  void advance(uint64_t cycles);

  uint64_t frame_cycles();

 private:
  void swap();
  void set_current_slot();

  RegisterView& tdm_;
  uint64_t& phase_;
  BoardContext& board_;
};

}  // namespace asn::model::detail::engines

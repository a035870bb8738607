// Internal: the TDM slot sequencer (000 L597, L704-828). A frame is the preloaded slots of
// the active timing bank, each slot_length cycles, plus the wormhole slot (numbered `slots`)
// when timing.wormhole is set. The slot-length policy decides which slots a frame counts
// (000 Ch. 4):
//  - fixed: every slot, empty or not;
//  - SES: only slots that hold a configuration (E_i: some output connected, L775-781);
//  - SLA: every slot, and the wormhole slot lasts wormhole_length (NUM_W, L783-793);
//  - PREEMPT: only slots that hold a configuration and whose predictable traffic is pending
//    (E_i and R_valid, L826-828); the rest are "sent to the background".
// Under every policy but SLA the wormhole slot lasts slot_length. The sequencer samples the
// traffic-pending input at each frame boundary (and when it starts): a frame keeps the
// slots it began with, so a slot is never cut short or moved under the traffic in it. (The
// seed decides per slot; deciding per frame keeps whole frames computable by division.)
//
// Frames run on the board's time base (tdm.time): a program, when the sequencer starts and
// when it is swapped in, runs on the grid of its frame length (frame n starts at time
// n x frame length), so boards that share a time base and run the same program run the same
// slot at the same instant, whatever their history (issue 8 part 7). An armed swap happens
// at the first frame boundary at or after tdm.arm_at_frame (numbered by the running
// program) and swaps the timing and slot-table banks together; the new program's first
// frame may then be partial. PREEMPT, whose frame length follows the traffic, keeps
// counting whole frames from there. The sequencer reads and writes only the TDM block's registers
// and the phase it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "../block_model.hpp"

namespace asn::model::detail::engines {

class TdmSequencer {
 public:
  // The private state the board keeps for the sequencer across restarts: the phase (core
  // cycles into the current frame), the traffic-pending bits sampled for this frame, which
  // slots of the active bank hold a configuration (E_i, found when the bank becomes active:
  // the clock must not scan the slot table), and whether the banks were swapped while
  // stopped (swap_frame is then set when it starts).
  static constexpr size_t kSlotWords = 1024 / 64;
  static constexpr size_t kStateWords = 1 + 2 * kSlotWords + 1;

  TdmSequencer(RegisterView& tdm, std::span<uint64_t> state, BoardContext& board)
      : tdm_(tdm),
        phase_(state[0]),
        sampled_(state.subspan(1, kSlotWords)),
        configured_(state.subspan(1 + kSlotWords, kSlotWords)),
        swapped_stopped_(state[kStateWords - 1]),
        board_(board) {}

  // Keeps status.running, status.preempted and current_slot in step with the configuration
  // and the data path's inputs. A sequencer that starts aligns its frames to the time base;
  // a stopped one is held at the start of a frame.
  void refresh();
  // control.arm: swap at the boundary arm_at_frame names, or at once while stopped (no
  // boundary will come).
  void arm();
  void disarm();
  // tdm.traffic_pending changed: a stopped sequencer samples it now (PREEMPT may now have a
  // frame to run), a running one at the next frame boundary.
  void input_changed();
  // Runs the core clock `cycles` on: the time base, frames and an armed swap. O(1) in cycles
  // (whole frames by division), O(slots) to find the current slot.
  void advance(uint64_t cycles);

  // Cycles of the current frame under the policy and today's traffic-pending inputs.
  uint64_t frame_cycles();
  // Core cycles from now until the armed swap happens (the frame boundary advance() swaps
  // at), assuming the traffic-pending inputs stay as they are; kNoEvent when no swap is
  // armed on a running sequencer. The only thing the sequencer does on its own that software
  // is interrupted for: frames, slots and the time base are read from registers, which a
  // board whose clock runs by itself brings up to date before they are read.
  uint64_t cycles_to_swap();

 private:
  struct Timing;
  Timing timing();
  // Whether a slot counts in a frame, with `pending` as the traffic-pending bits sampled.
  bool slot_counted(const Timing& timing, uint32_t slot, std::span<const uint64_t> pending);
  bool slot_counted(const Timing& timing, uint32_t slot) {
    return slot_counted(timing, slot, sampled_);
  }
  uint64_t frame_cycles(const Timing& timing, std::span<const uint64_t> pending);
  void swap(uint64_t time);
  void start(uint64_t time);
  void sample_pending();
  void read_pending(std::span<uint64_t> pending);  // tdm.traffic_pending, kSlotWords words
  void sample_configured();
  void set_current_slot();

  RegisterView& tdm_;
  uint64_t& phase_;
  std::span<uint64_t> sampled_;
  std::span<uint64_t> configured_;
  uint64_t& swapped_stopped_;
  BoardContext& board_;
};

}  // namespace asn::model::detail::engines

#include "tdm_sequencer.hpp"

#include "asn/regmap/regs.hpp"

namespace asn::model::detail::engines {

namespace t = regs::tdm;

// Slot-length policies (SES, SLA, PREEMPT in tdm.config.policy) are stored but not modelled
// yet: every preloaded slot lasts slot_length cycles. They come with the TDM schedules.
uint64_t TdmSequencer::frame_cycles() {
  const uint64_t slots = tdm_.get(t::kSlotsInUseSlots);
  uint64_t frame = slots * tdm_.get(t::kSlotLengthCycles);
  if (tdm_.get(t::kConfigWormhole) != 0) frame += tdm_.get(t::kWormholeLengthCycles);
  return frame;
}

void TdmSequencer::refresh() {
  const bool running = tdm_.get(t::kConfigEnable) != 0 && frame_cycles() > 0;
  tdm_.set(t::kStatusRunning, running ? 1 : 0);
  if (!running) phase_ = 0;
  set_current_slot();
}

void TdmSequencer::set_current_slot() {
  uint32_t slot = 0;
  if (tdm_.get(t::kStatusRunning) != 0) {
    const uint64_t slots = tdm_.get(t::kSlotsInUseSlots);
    const uint64_t slot_length = tdm_.get(t::kSlotLengthCycles);
    // Past the preloaded slots is the wormhole slot, numbered slots_in_use.
    slot = static_cast<uint32_t>(phase_ < slots * slot_length ? phase_ / slot_length : slots);
  }
  tdm_.set(t::kCurrentSlotSlot, slot);
}

void TdmSequencer::swap() {
  tdm_.swap_banks(t::kSlotTable);
  tdm_.set(t::kStatusArmed, 0);
  ++tdm_.word(t::kSwapCount);
  board_.raise(regs::id::kIrqStatusTdmSwap);
}

void TdmSequencer::arm() {
  if (tdm_.get(t::kStatusRunning) == 0) {
    swap();
  } else {
    tdm_.set(t::kStatusArmed, 1);
  }
}

void TdmSequencer::disarm() { tdm_.set(t::kStatusArmed, 0); }

void TdmSequencer::advance(uint64_t cycles) {
  if (cycles == 0 || tdm_.get(t::kStatusRunning) == 0) return;
  const uint64_t frame = frame_cycles();  // > 0 while running (refresh() keeps it so)

  uint64_t phase = phase_;
  uint64_t frames = 0;
  if (phase >= frame) {
    // The frame was shortened while the sequencer was inside its tail: it ends now.
    frames = 1;
    phase = 0;
  }
  frames += cycles / frame;
  phase += cycles % frame;
  if (phase >= frame) {
    phase -= frame;
    ++frames;
  }
  phase_ = phase;

  if (frames != 0) {
    tdm_.set64(t::kFrameCounter, tdm_.get64(t::kFrameCounter) + frames);
    // The swap happens at the first boundary crossed; later frames run on the new bank.
    if (tdm_.get(t::kStatusArmed) != 0) swap();
  }
  set_current_slot();
}

}  // namespace asn::model::detail::engines

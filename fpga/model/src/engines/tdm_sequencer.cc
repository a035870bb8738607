#include "tdm_sequencer.hpp"

#include <algorithm>

#include "asn/regmap/regs.hpp"

namespace asn::model::detail::engines {

namespace t = regs::tdm;

namespace {

constexpr uint32_t kFixed = 0, kSes = 1, kSla = 2, kPreempt = 3;  // timing.policy

}  // namespace

// The active timing bank, read once per step.
struct TdmSequencer::Timing {
  uint32_t policy = 0;
  bool wormhole = false;
  uint32_t slots = 0;
  uint64_t slot_length = 0;
  uint64_t wormhole_length = 0;  // as the policy gives it
};

TdmSequencer::Timing TdmSequencer::timing() {
  const auto entry = tdm_.entry(t::kTiming, 0, Bank::kActive);
  Timing timing;
  timing.policy = t::kTimingPolicy.get(entry);
  timing.wormhole = t::kTimingWormhole.get(entry) != 0;
  // A board implements tdm_slots entries; a larger count runs the ones it has.
  timing.slots = std::min(t::kTimingSlots.get(entry), tdm_.entries(t::kSlotTable));
  timing.slot_length = t::kTimingSlotLength.get(entry);
  if (timing.wormhole) {
    // 000 L789-793: only SLA gives the wormhole slot its own length (NUM_W against NUM_P).
    timing.wormhole_length =
        timing.policy == kSla ? t::kTimingWormholeLength.get(entry) : timing.slot_length;
  }
  return timing;
}

// 000 L775 (E_i: the slot holds a configuration) and L826-828 (R_valid gates it).
bool TdmSequencer::slot_counted(const Timing& timing, uint32_t slot,
                                std::span<const uint64_t> pending) {
  if (timing.policy == kFixed || timing.policy == kSla) return true;
  const bool configured = ((configured_[slot / 64] >> (slot % 64)) & 1u) != 0;
  if (!configured || timing.policy == kSes) return configured;
  return ((pending[slot / 64] >> (slot % 64)) & 1u) != 0;
}

void TdmSequencer::sample_configured() {
  std::fill(configured_.begin(), configured_.end(), 0);
  const uint32_t slots = std::min<uint32_t>(tdm_.entries(t::kSlotTable), kSlotWords * 64);
  for (uint32_t slot = 0; slot < slots; ++slot) {
    for (uint32_t word : tdm_.entry(t::kSlotTable, slot, Bank::kActive)) {
      if ((word & 0x80808080u) != 0) {  // bit 7 of some output's byte: connected
        configured_[slot / 64] |= uint64_t{1} << (slot % 64);
        break;
      }
    }
  }
}

uint64_t TdmSequencer::frame_cycles() { return frame_cycles(timing(), sampled_); }

uint64_t TdmSequencer::frame_cycles(const Timing& timing, std::span<const uint64_t> pending) {
  uint64_t counted = 0;
  if (timing.slot_length != 0) {
    for (uint32_t slot = 0; slot < timing.slots; ++slot) {
      if (slot_counted(timing, slot, pending)) ++counted;
    }
  }
  return counted * timing.slot_length + timing.wormhole_length;
}

void TdmSequencer::sample_pending() { read_pending(sampled_); }

void TdmSequencer::read_pending(std::span<uint64_t> pending) {
  for (size_t w = 0; w < pending.size(); ++w) {
    pending[w] = (uint64_t{tdm_.get(t::kTrafficPendingSlots.at(2 * w + 1))} << 32) |
                 tdm_.get(t::kTrafficPendingSlots.at(2 * w));
  }
}

// The arithmetic of advance(), run forward to the armed boundary without changing anything:
// the current frame ends after frame - phase cycles (its frame number becomes frame_counter
// + 1); the traffic-pending inputs are sampled there, and the frames after it are alike
// until the one arm_at_frame names. A change of the inputs in between is an input the board
// is told of (EmulatedBoard::set_traffic_pending), after which this is asked again.
uint64_t TdmSequencer::cycles_to_swap() {
  if (tdm_.get(t::kStatusRunning) == 0 || tdm_.get(t::kStatusArmed) == 0) return kNoEvent;
  const Timing timing = this->timing();
  const uint64_t frame = frame_cycles(timing, sampled_);
  if (frame == 0) return 0;  // advance() stops the sequencer at once
  const uint64_t to_boundary = phase_ < frame ? frame - phase_ : 0;
  const uint64_t frame_number = tdm_.get64(t::kFrameCounter);
  const uint64_t arm_at =
      (uint64_t{tdm_.get(t::kArmAtFrameHiFrame)} << 32) | tdm_.get(t::kArmAtFrameLoFrame);
  if (arm_at <= frame_number + 1) return to_boundary;
  uint64_t pending[kSlotWords];
  read_pending(pending);
  const uint64_t next = frame_cycles(timing, pending);
  // No frame after the boundary: the sequencer stops there (and never swaps); waking then
  // costs one look.
  if (next == 0) return to_boundary;
  const uint64_t frames = arm_at - frame_number - 1;
  if (frames > (kNoEvent - 1 - to_boundary) / next) return kNoEvent;  // beyond any clock
  return to_boundary + frames * next;
}

void TdmSequencer::start(uint64_t time) {
  sample_pending();
  sample_configured();
  const uint64_t frame = frame_cycles();
  phase_ = time % frame;
  tdm_.set64(t::kFrameCounter, time / frame);
  tdm_.set64(t::kFrameStart, time - phase_);
  if (swapped_stopped_ != 0) {  // the banks swapped in while stopped run from this frame
    swapped_stopped_ = 0;
    tdm_.set64(t::kSwapFrame, time / frame);
  }
}

void TdmSequencer::input_changed() {
  if (tdm_.get(t::kStatusRunning) != 0) return;
  sample_pending();
  refresh();
}

void TdmSequencer::refresh() {
  const bool was_running = tdm_.get(t::kStatusRunning) != 0;
  if (!was_running) {
    sample_pending();
    sample_configured();
  }
  const bool running = tdm_.get(t::kConfigEnable) != 0 && frame_cycles() > 0;
  tdm_.set(t::kStatusRunning, running ? 1 : 0);
  if (running && !was_running) start(tdm_.get64(t::kTime));
  if (!running) phase_ = 0;
  set_current_slot();
}

void TdmSequencer::set_current_slot() {
  uint32_t current = 0;
  bool preempted = false;
  const Timing timing = this->timing();
  if (timing.policy == kPreempt && timing.slots > 0) {
    preempted = true;
    for (uint32_t slot = 0; slot < timing.slots && preempted; ++slot) {
      preempted = !slot_counted(timing, slot);
    }
  }
  if (tdm_.get(t::kStatusRunning) != 0) {
    // The counted slots in order, then the wormhole slot (numbered `slots`).
    current = timing.slots;
    uint64_t start = 0;
    for (uint32_t slot = 0; slot < timing.slots; ++slot) {
      if (!slot_counted(timing, slot)) continue;
      start += timing.slot_length;
      if (phase_ < start) {
        current = slot;
        break;
      }
    }
  }
  tdm_.set(t::kCurrentSlotSlot, current);
  tdm_.set(t::kStatusPreempted, preempted ? 1 : 0);
}

void TdmSequencer::swap(uint64_t time) {
  // Disarm first: the emulated board lives in asnd's memory, and a kill between the two
  // stores must not leave the new banks active and the swap still armed (the next asnd's
  // clock would swap back).
  tdm_.set(t::kStatusArmed, 0);
  tdm_.swap_banks(t::kSlotTable);  // the timing table shares the bank bit
  ++tdm_.word(t::kSwapCount);
  tdm_.set64(t::kSwapTime, time);
  board_.raise(regs::id::kIrqStatusTdmSwap);
  // The new program runs on the time grid of its own frame length, as a sequencer that
  // starts does (as a TSN gate schedule runs from its base time): every board that swaps to
  // it, at this instant or another, runs the same slot at the same time. Its first frame may
  // be partial. A stopped sequencer, or a program with no frame, is refresh()'s.
  sample_pending();
  sample_configured();  // the bank that became active
  const bool running = tdm_.get(t::kStatusRunning) != 0;
  swapped_stopped_ = running ? 0 : 1;
  if (running && frame_cycles() > 0) {
    start(time);
  } else {
    refresh();  // a stopped sequencer that starts now sets swap_frame in start()
  }
  // Stopped still: the frame count at the swap, until start() names the first frame run.
  tdm_.set64(t::kSwapFrame, tdm_.get64(t::kFrameCounter));
}

void TdmSequencer::arm() {
  if (tdm_.get(t::kStatusRunning) == 0) {
    swap(tdm_.get64(t::kTime));
  } else {
    tdm_.set(t::kStatusArmed, 1);
  }
}

void TdmSequencer::disarm() { tdm_.set(t::kStatusArmed, 0); }

void TdmSequencer::advance(uint64_t cycles) {
  const uint64_t begin = tdm_.get64(t::kTime);
  tdm_.set64(t::kTime, begin + cycles);
  if (cycles == 0 || tdm_.get(t::kStatusRunning) == 0) return;

  uint64_t frame_number = tdm_.get64(t::kFrameCounter);
  uint64_t used = 0;  // cycles of `cycles` accounted for
  bool sampled = false;
  // Each pass crosses one or more boundaries. The first boundary is crossed alone (the
  // traffic-pending input sampled there may change the frame length), and so is the armed
  // one (the swap changes it); between them frames are alike and are skipped by division.
  while (true) {
    const uint64_t frame = frame_cycles();
    if (frame == 0) {  // the swapped-in timing has no frame to run
      refresh();
      break;
    }
    const uint64_t left = cycles - used;
    // A frame shortened under the sequencer (a sample at start) ends at once.
    const uint64_t to_boundary = phase_ < frame ? frame - phase_ : 0;
    if (left < to_boundary) {
      phase_ += left;
      break;
    }
    const bool armed = tdm_.get(t::kStatusArmed) != 0;
    const uint64_t arm_at =
        (uint64_t{tdm_.get(t::kArmAtFrameHiFrame)} << 32) | tdm_.get(t::kArmAtFrameLoFrame);
    uint64_t skip = 0;  // whole frames before the boundary crossed in this pass
    if (sampled) {
      skip = (left - to_boundary) / frame;
      if (armed && arm_at > frame_number + 1) skip = std::min(skip, arm_at - frame_number - 1);
      if (armed && arm_at <= frame_number + 1) skip = 0;
    }
    used += to_boundary + skip * frame;
    frame_number += 1 + skip;
    phase_ = 0;
    tdm_.set64(t::kFrameCounter, frame_number);
    tdm_.set64(t::kFrameStart, begin + used);
    if (armed && frame_number >= arm_at) {
      swap(begin + used);
      frame_number = tdm_.get64(t::kFrameCounter);
    }
    if (!sampled) {
      sample_pending();
      sampled = true;
    }
    if (used == cycles) break;
  }
  set_current_slot();
}

}  // namespace asn::model::detail::engines

#include "asn/circuit/slots.hpp"

#include <bit>
#include <stdexcept>
#include <string>

#include "asn/circuit/error.hpp"

namespace asn::circuit {

SlotMask all_slots(uint32_t degree) {
  return degree >= 64 ? ~SlotMask{0} : (SlotMask{1} << degree) - 1;
}

uint32_t slot_count(SlotMask m) { return static_cast<uint32_t>(std::popcount(m)); }

LinkSlots::LinkSlots(uint32_t degree, SlotMask preloaded)
    : degree_(degree), state_(degree, SlotState::kAvail), owner_(degree, 0) {
  if (degree == 0 || degree > kMaxDegree) {
    throw CircuitError(
        ErrorKind::kInvalidArgument, "degree",
        std::to_string(degree) + " slots; a link has 1.." + std::to_string(kMaxDegree));
  }
  avail_ = all_slots(degree);
  preload(preloaded);
}

void LinkSlots::preload(SlotMask slots) {
  if ((slots & ~all_slots(degree_)) != 0) {
    throw CircuitError(ErrorKind::kInvalidArgument, "preloaded",
                       "a slot past the link's " + std::to_string(degree_) + " slots");
  }
  if ((slots & ~preloaded_ & ~avail_) != 0) {
    throw std::logic_error("preloading a slot a reservation holds");
  }
  for (uint32_t s = 0; s < degree_; ++s) {
    if ((slots >> s & 1) != 0) set(s, SlotState::kPreloaded, 0);
  }
  preloaded_ |= slots;
}

void LinkSlots::set(uint32_t slot, SlotState s, CircuitId id) {
  state_[slot] = s;
  owner_[slot] = id;
  const SlotMask bit = SlotMask{1} << slot;
  avail_ = s == SlotState::kAvail ? avail_ | bit : avail_ & ~bit;
}

void LinkSlots::lock(SlotMask cset, CircuitId id) {
  if ((cset & ~avail_) != 0 || id == 0) throw std::logic_error("locking a slot not AVAIL");
  for (uint32_t s = 0; s < degree_; ++s) {
    if ((cset >> s & 1) != 0) set(s, SlotState::kLock, id);
  }
}

bool LinkSlots::commit(CircuitId id, uint32_t keep) {
  if (keep >= degree_ || state_[keep] != SlotState::kLock || owner_[keep] != id) return false;
  unlock(id);
  set(keep, SlotState::kBusy, id);
  return true;
}

uint32_t LinkSlots::unlock(CircuitId id) {
  uint32_t n = 0;
  for (uint32_t s = 0; s < degree_; ++s) {
    if (state_[s] == SlotState::kLock && owner_[s] == id) {
      set(s, SlotState::kAvail, 0);
      ++n;
    }
  }
  return n;
}

bool LinkSlots::release(CircuitId id, uint32_t slot) {
  if (slot >= degree_ || state_[slot] != SlotState::kBusy || owner_[slot] != id) return false;
  set(slot, SlotState::kAvail, 0);
  return true;
}

}  // namespace asn::circuit

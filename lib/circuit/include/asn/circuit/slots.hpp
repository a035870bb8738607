// The TDM slots of one link (one direction), as the switch at its start keeps them (002 L411:
// the control router keeps the state of its outgoing links). Slot s of the frame is one
// virtual channel; the link's number of slots is the multiplexing degree (002 L302).
#pragma once

#include <cstdint>
#include <vector>

namespace asn::circuit {

// A set of slots, bit s for slot s. The seed's cset / init / Avail(L) bit vectors (002 L424).
using SlotMask = uint64_t;
constexpr uint32_t kMaxDegree = 64;
// A reservation's id, kept by the circuit it becomes (002 L422). Never 0.
using CircuitId = uint64_t;

// AVAIL / LOCK / BUSY of 002 L411-417, and the slots the plan preloaded, never offered.
enum class SlotState : uint8_t { kAvail, kLock, kBusy, kPreloaded };

SlotMask all_slots(uint32_t degree);
uint32_t slot_count(SlotMask m);

class LinkSlots {
 public:
  // Throws CircuitError for a degree of 0 or above kMaxDegree, or a preloaded slot >= degree.
  explicit LinkSlots(uint32_t degree, SlotMask preloaded = 0);

  uint32_t degree() const { return degree_; }
  SlotMask avail() const { return avail_; }  // Avail(L)
  SlotMask preloaded() const { return preloaded_; }
  SlotMask dynamic() const { return all_slots(degree_) & ~preloaded_; }
  SlotState state(uint32_t slot) const { return state_.at(slot); }
  CircuitId owner(uint32_t slot) const { return owner_.at(slot); }  // 0 unless LOCK or BUSY

  // The plan's slots: preloading a slot a reservation holds is a logic error.
  void preload(SlotMask slots);
  // AVAIL -> LOCK for every slot of `cset` (each must be AVAIL: a logic error otherwise).
  void lock(SlotMask cset, CircuitId id);
  // `id`'s LOCKed slots: `keep` becomes BUSY, the others AVAIL (002 L425, the ACK).
  // Returns false if `keep` was not LOCKed by `id`.
  bool commit(CircuitId id, uint32_t keep);
  // `id`'s LOCKed slots -> AVAIL (FAIL). Returns how many.
  uint32_t unlock(CircuitId id);
  // BUSY `slot` of `id` -> AVAIL (REL). Returns false if `id` did not hold it.
  bool release(CircuitId id, uint32_t slot);

 private:
  void set(uint32_t slot, SlotState s, CircuitId id);

  uint32_t degree_;
  SlotMask avail_ = 0;
  SlotMask preloaded_ = 0;
  std::vector<SlotState> state_;
  std::vector<CircuitId> owner_;
};

}  // namespace asn::circuit

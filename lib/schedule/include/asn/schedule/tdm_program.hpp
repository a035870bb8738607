// One validated phase of one switch, as the TDM block's registers want it (issue 8 part 1;
// docs/registers.md, block tdm): the manager writes `entries` into the inactive bank of
// tdm.slot_table, the timing fields into their registers, and arms the swap.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/schedule/validate.hpp"

namespace asn::schedule {

// tdm.slot_table entries hold one byte for each of up to 64 output ports.
inline constexpr uint32_t kSlotTablePorts = 64;
inline constexpr uint8_t kEntryConnected = 0x80;  // bit 7: the output takes an input
inline constexpr uint8_t kEntryInputMask = 0x3f;  // bits 5:0: the input port

// One slot table entry: out[o] = kEntryConnected | input, or 0 (output o unconnected).
using SlotEntry = std::array<uint8_t, kSlotTablePorts>;

// The entry as the 16 32-bit words of the 64-byte table entry: out[4w + k] in bits
// 8k+7:8k of word w (the regmap generator's layout of `out`, bits_each 8).
std::array<uint32_t, kSlotTablePorts / 4> entry_words(const SlotEntry& entry);

struct TdmProgram {
  std::string plan;
  std::string phase;
  std::string switch_name;

  // tdm.config (the manager sets enable itself).
  Policy policy = Policy::kFixed;  // config.policy
  bool wormhole = false;           // config.wormhole
  // tdm.slots_in_use: the phase's slot count (Phase::slot_count(), the same on every switch
  // of a fabric).
  uint32_t slots_in_use = 0;
  uint32_t slot_length_cycles = 0;      // tdm.slot_length
  uint32_t wormhole_length_cycles = 0;  // tdm.wormhole_length (slot_length unless sla)
  uint32_t guard_band_cycles = 0;       // tdm.guard_band
  std::vector<SlotEntry> entries;       // slots_in_use entries, slot 0 first

  // FNV-1a over every field above but the names: equal programs have equal digests, so the
  // manager can tell whether a board already runs this program (see REGMAP-NOTES.md).
  uint64_t digest() const;
};

// Builds the program of `phase` for `switch_name` ("" in a single-switch plan). Validates
// that part against `limits` first and throws PlanError with the errors if there are any;
// also throws it when the phase or switch does not exist or the board has more than 64
// ports (the slot table entry holds 64).
TdmProgram make_tdm_program(const Plan& plan, std::string_view phase, std::string_view switch_name,
                            const BoardLimits& limits);

}  // namespace asn::schedule

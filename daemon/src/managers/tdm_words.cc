#include "managers/tdm_words.hpp"

#include "asn/regmap/regs.hpp"

namespace asn::tdm_words {

namespace t = regs::tdm;

state::v1::TdmPhase to_record(const schedule::TdmProgram& program, const std::string& description,
                              const std::optional<schedule::CompileSummary>& summary) {
  state::v1::TdmPhase record;
  record.set_name(program.phase);
  record.set_description(description);
  record.set_policy(static_cast<uint32_t>(program.policy));
  record.set_wormhole(program.wormhole);
  record.set_slots(program.slots_in_use);
  record.set_slot_length(program.slot_length_cycles);
  record.set_wormhole_length(program.wormhole_length_cycles);
  record.set_guard_band(program.guard_band_cycles);
  std::string entries;
  entries.reserve(program.entries.size() * schedule::kSlotTablePorts);
  for (const schedule::SlotEntry& entry : program.entries) {
    entries.append(reinterpret_cast<const char*>(entry.data()), entry.size());
  }
  record.set_entries(std::move(entries));
  record.set_program_id(program.digest());
  if (summary) {
    record.set_connections(summary->connections);
    record.set_lower_bound(summary->lower_bound);
    record.set_ports_in_use(summary->ports_in_use);
    record.set_method(std::string(schedule::to_string(summary->method)));
  }
  return record;
}

std::vector<uint32_t> timing_words(const state::v1::TdmPhase& program) {
  std::vector<uint32_t> words(t::kTiming.words(), 0);
  t::kTimingPolicy.put(words, program.policy());
  t::kTimingWormhole.put(words, program.wormhole() ? 1 : 0);
  t::kTimingSlots.put(words, program.slots());
  t::kTimingSlotLength.put(words, program.slot_length());
  t::kTimingWormholeLength.put(words, program.wormhole_length());
  t::kTimingGuardBand.put(words, program.guard_band());
  t::kTimingProgramIdLo.put(words, static_cast<uint32_t>(program.program_id()));
  t::kTimingProgramIdHi.put(words, static_cast<uint32_t>(program.program_id() >> 32));
  return words;
}

std::vector<uint32_t> slot_words(const state::v1::TdmPhase& program) {
  const std::string& bytes = program.entries();
  const uint32_t per = t::kSlotTable.words();
  std::vector<uint32_t> words(size_t{program.slots()} * per, 0);
  for (size_t i = 0; i < bytes.size() && i / 4 < words.size(); ++i) {
    words[i / 4] |= uint32_t{static_cast<uint8_t>(bytes[i])} << (8 * (i % 4));
  }
  return words;
}

state::v1::TdmPhase decode_timing(std::span<const uint32_t> words) {
  state::v1::TdmPhase timing;
  timing.set_policy(t::kTimingPolicy.get(words));
  timing.set_wormhole(t::kTimingWormhole.get(words) != 0);
  timing.set_slots(t::kTimingSlots.get(words));
  timing.set_slot_length(t::kTimingSlotLength.get(words));
  timing.set_wormhole_length(t::kTimingWormholeLength.get(words));
  timing.set_guard_band(t::kTimingGuardBand.get(words));
  timing.set_program_id((uint64_t{t::kTimingProgramIdHi.get(words)} << 32) |
                        t::kTimingProgramIdLo.get(words));
  return timing;
}

std::string decode_slots(std::span<const uint32_t> words) {
  std::string bytes(words.size() * 4, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((words[i / 4] >> (8 * (i % 4))) & 0xff);
  }
  return bytes;
}

uint64_t frame_cycles(const state::v1::TdmPhase& timing) {
  uint64_t cycles = uint64_t{timing.slots()} * timing.slot_length();
  if (timing.wormhole()) {
    const bool sla = timing.policy() == static_cast<uint32_t>(schedule::Policy::kSla);
    cycles += sla ? timing.wormhole_length() : timing.slot_length();
  }
  return cycles;
}

std::string policy_name(uint32_t policy) {
  return std::string(schedule::to_string(static_cast<schedule::Policy>(policy & 3)));
}

}  // namespace asn::tdm_words

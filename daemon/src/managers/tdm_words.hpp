// A TDM program as the TDM block's tables hold it: the timing entry (tdm.timing, with the
// program id) and the slot table entries, encoded and decoded by the generated field
// references. The kept form of a program is state::v1::TdmPhase.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "asn/state/v1/state.pb.h"

namespace asn::tdm_words {

// The kept form of a program, with the compile summary of its part.
state::v1::TdmPhase to_record(const schedule::TdmProgram& program, const std::string& description,
                              const std::optional<schedule::CompileSummary>& summary);

// tdm.timing's one entry, program id included.
std::vector<uint32_t> timing_words(const state::v1::TdmPhase& program);
// The first `slots` entries of tdm.slot_table, concatenated.
std::vector<uint32_t> slot_words(const state::v1::TdmPhase& program);

// The timing fields (and program id) of a timing entry; name, entries and summary empty.
state::v1::TdmPhase decode_timing(std::span<const uint32_t> words);
// Slot table words back into the 64-byte entries of TdmPhase.entries.
std::string decode_slots(std::span<const uint32_t> words);

// Cycles of a frame with every slot counted: slots x slot_length plus the wormhole slot
// (wormhole_length under SLA, else slot_length). SES and PREEMPT frames may be shorter.
uint64_t frame_cycles(const state::v1::TdmPhase& timing);

std::string policy_name(uint32_t policy);  // "fixed", "ses", "sla", "preempt"

}  // namespace asn::tdm_words

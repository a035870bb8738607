#include "asn/schedule/tdm_program.hpp"

#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

[[noreturn]] void fail(const Plan& plan, std::string message) {
  Problem problem;
  problem.file = plan.file;
  problem.message = std::move(message);
  throw PlanError(std::move(problem));
}

// Validated lengths are in range; a failure here is a bug, reported as such.
uint32_t cycles(const Plan& plan, const Length& length, uint64_t clock_hz, Rounding rounding) {
  std::optional<Cycles> c = to_cycles(length, clock_hz, rounding);
  if (!c || c->cycles > UINT32_MAX)
    fail(plan, cat("internal: ", length.to_string(), " out of range"));
  return static_cast<uint32_t>(c->cycles);
}

class Fnv1a {
 public:
  void add(uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      hash_ ^= (value >> (8 * i)) & 0xff;
      hash_ *= 0x100000001b3ull;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace

std::array<uint32_t, kSlotTablePorts / 4> entry_words(const SlotEntry& entry) {
  std::array<uint32_t, kSlotTablePorts / 4> words{};
  for (uint32_t o = 0; o < kSlotTablePorts; ++o) {
    words[o / 4] |= uint32_t{entry[o]} << (8 * (o % 4));
  }
  return words;
}

uint64_t TdmProgram::digest() const {
  Fnv1a h;
  h.add(static_cast<uint64_t>(policy), 1);
  h.add(wormhole ? 1 : 0, 1);
  h.add(slots_in_use, 4);
  h.add(slot_length_cycles, 4);
  h.add(wormhole_length_cycles, 4);
  h.add(guard_band_cycles, 4);
  for (const auto& entry : entries) {
    for (uint8_t byte : entry) h.add(byte, 1);
  }
  return h.value();
}

TdmProgram make_tdm_program(const Plan& plan, std::string_view phase_name,
                            std::string_view switch_name, const BoardLimits& limits) {
  if (limits.ports > kSlotTablePorts) {
    fail(plan, cat("the board has ", limits.ports, " ports; a TDM slot table entry holds ",
                   kSlotTablePorts));
  }
  ValidateOptions options;
  options.phase = std::string(phase_name);
  if (plan.is_fabric()) options.switch_name = std::string(switch_name);
  validate(plan, limits, options).throw_if_errors();

  const Phase& phase = *plan.find_phase(phase_name);  // validate() has checked both
  const Part* part = phase.find_part(plan.is_fabric() ? switch_name : std::string_view());
  if (part == nullptr) fail(plan, cat("internal: no part for switch '", switch_name, "'"));
  const Timing& t = phase.timing;
  TdmProgram program;
  program.plan = plan.name;
  program.phase = phase.name;
  program.switch_name = part->switch_name;
  program.policy = t.policy;
  program.wormhole = t.wormhole;
  program.slots_in_use = phase.slot_count();
  program.slot_length_cycles = cycles(plan, *t.slot_length, limits.clock_hz, Rounding::kNearest);
  program.wormhole_length_cycles =
      t.wormhole && t.wormhole_length
          ? cycles(plan, *t.wormhole_length, limits.clock_hz, Rounding::kNearest)
          : program.slot_length_cycles;
  program.guard_band_cycles = cycles(plan, *t.guard_band, limits.clock_hz, Rounding::kUp);
  program.entries.assign(program.slots_in_use, SlotEntry{});
  for (size_t s = 0; s < part->slots.size(); ++s) {
    for (const Connection& c : part->slots[s].connections) {
      program.entries[s][c.to] = static_cast<uint8_t>(kEntryConnected | c.from);
    }
  }
  return program;
}

}  // namespace asn::schedule

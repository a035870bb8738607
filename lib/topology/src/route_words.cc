#include "asn/topology/route_words.hpp"

#include "asn/regmap/regs.hpp"

namespace asn::topology {

namespace r = regs::route;

namespace {

constexpr regmap::TableFieldRef kDigits[kMaxDimensions] = {r::kConfigDigit0, r::kConfigDigit1,
                                                           r::kConfigDigit2, r::kConfigDigit3};
// d<i>_port_a, d<i>_port_b
constexpr regmap::TableFieldRef kPorts[kMaxDimensions][2] = {
    {r::kDestTableD0PortA, r::kDestTableD0PortB},
    {r::kDestTableD1PortA, r::kDestTableD1PortB},
    {r::kDestTableD2PortA, r::kDestTableD2PortB},
    {r::kDestTableD3PortA, r::kDestTableD3PortB}};

uint8_t u8(uint32_t value) { return static_cast<uint8_t>(value); }

}  // namespace

std::vector<uint32_t> encode_config(const RouteRegisters& registers, const RouteMode& mode) {
  std::vector<uint32_t> entry(r::kConfig.words(), 0);
  for (unsigned d = 0; d < kMaxDimensions; ++d) kDigits[d].put(entry, registers.own_digits[d]);
  r::kConfigK.put(entry, registers.k);
  r::kConfigR.put(entry, registers.r);
  r::kConfigLanes.put(entry, registers.lanes);
  r::kConfigLastRadix.put(entry, registers.last_radix);
  r::kConfigLastLanes.put(entry, registers.last_lanes);
  r::kConfigMode.put(entry, static_cast<uint32_t>(mode.mode));
  r::kConfigEnable.put(entry, mode.enable ? 1 : 0);
  r::kConfigVcPolicy.put(entry, static_cast<uint32_t>(mode.vc_policy));
  return entry;
}

RouteRegisters decode_config(std::span<const uint32_t> entry) {
  RouteRegisters registers;
  for (unsigned d = 0; d < kMaxDimensions; ++d) registers.own_digits[d] = u8(kDigits[d].get(entry));
  registers.k = u8(r::kConfigK.get(entry));
  registers.r = u8(r::kConfigR.get(entry));
  registers.lanes = u8(r::kConfigLanes.get(entry));
  registers.last_radix = u8(r::kConfigLastRadix.get(entry));
  registers.last_lanes = u8(r::kConfigLastLanes.get(entry));
  return registers;
}

RouteMode decode_mode(std::span<const uint32_t> entry) {
  return RouteMode{static_cast<RoutingMode>(r::kConfigMode.get(entry)),
                   r::kConfigEnable.get(entry) != 0,
                   static_cast<VcPolicy>(r::kConfigVcPolicy.get(entry))};
}

uint32_t encode_port_map(const PortMapEntry& entry) {
  uint32_t word = 0;
  std::span<uint32_t> w(&word, 1);
  r::kPortMapRole.put(w, static_cast<uint32_t>(entry.role));
  r::kPortMapDimension.put(w, entry.dimension);
  r::kPortMapDigit.put(w, entry.digit);
  r::kPortMapLane.put(w, entry.lane);
  return word;
}

PortMapEntry decode_port_map(uint32_t word) {
  const std::span<const uint32_t> w(&word, 1);
  return PortMapEntry{static_cast<PortRole>(r::kPortMapRole.get(w)), u8(r::kPortMapLane.get(w)),
                      u8(r::kPortMapDimension.get(w)), u8(r::kPortMapDigit.get(w))};
}

std::vector<uint32_t> encode_dest(const DestEntry& entry) {
  std::vector<uint32_t> words(r::kDestTable.words(), 0);
  r::kDestTableValid.put(words, entry.valid ? 1 : 0);
  r::kDestTableLocal.put(words, entry.local ? 1 : 0);
  for (unsigned d = 0; d < kMaxDimensions; ++d) {
    kPorts[d][0].put(words, entry.dims[d].port_a);
    kPorts[d][1].put(words, entry.dims[d].port_b);
  }
  return words;
}

DestEntry decode_dest(std::span<const uint32_t> words) {
  DestEntry entry;
  entry.valid = r::kDestTableValid.get(words) != 0;
  entry.local = r::kDestTableLocal.get(words) != 0;
  for (unsigned d = 0; d < kMaxDimensions; ++d) {
    entry.dims[d].port_a = u8(kPorts[d][0].get(words));
    entry.dims[d].port_b = u8(kPorts[d][1].get(words));
  }
  return entry;
}

uint32_t encode_schedule(const ScheduleEntry& entry) {
  uint32_t word = 0;
  std::span<uint32_t> w(&word, 1);
  r::kScheduleFirstLength.put(w, entry.first_length);
  r::kScheduleFirstLane.put(w, entry.first_lane);
  r::kScheduleSecondLength.put(w, entry.second_length);
  r::kScheduleSecondLane.put(w, entry.second_lane);
  return word;
}

ScheduleEntry decode_schedule(uint32_t word) {
  const std::span<const uint32_t> w(&word, 1);
  return ScheduleEntry{u8(r::kScheduleFirstLength.get(w)), u8(r::kScheduleFirstLane.get(w)),
                       u8(r::kScheduleSecondLength.get(w)), u8(r::kScheduleSecondLane.get(w))};
}

std::vector<uint32_t> encode_port_map_table(const std::vector<PortMapEntry>& entries,
                                            uint32_t board_entries) {
  std::vector<uint32_t> words(board_entries, 0);
  for (size_t i = 0; i < entries.size() && i < board_entries; ++i) {
    words[i] = encode_port_map(entries[i]);
  }
  return words;
}

std::vector<uint32_t> encode_dest_table(const std::vector<DestEntry>& entries,
                                        uint32_t board_entries) {
  const uint32_t per = r::kDestTable.words();
  std::vector<uint32_t> words(size_t{board_entries} * per, 0);
  for (size_t i = 0; i < entries.size() && i < board_entries; ++i) {
    const std::vector<uint32_t> entry = encode_dest(entries[i]);
    std::copy(entry.begin(), entry.end(), words.begin() + static_cast<ptrdiff_t>(i * per));
  }
  return words;
}

std::vector<uint32_t> encode_schedule_table(const std::vector<ScheduleEntry>& entries,
                                            uint32_t board_entries) {
  std::vector<uint32_t> words(board_entries, 0);
  for (size_t i = 0; i < entries.size() && i < board_entries; ++i) {
    words[i] = encode_schedule(entries[i]);
  }
  return words;
}

}  // namespace asn::topology

// The ROUTE block's table entries (fpga/regmap/asn_regmap.yaml, block `route`) for the
// structs of route_tables.hpp, both ways: the routing manager encodes what it programs, the
// emulated board's routing engine and GetRoutes decode what a board holds. One encoding,
// written against the generated field references.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "asn/topology/route_tables.hpp"

namespace asn::topology {

// route.config[0]: this router's place and mode.
std::vector<uint32_t> encode_config(const RouteRegisters& registers, const RouteMode& mode);
RouteRegisters decode_config(std::span<const uint32_t> entry);
RouteMode decode_mode(std::span<const uint32_t> entry);

// One entry of route.port_map, route.dest_table and route.schedule.
uint32_t encode_port_map(const PortMapEntry& entry);
PortMapEntry decode_port_map(uint32_t word);
std::vector<uint32_t> encode_dest(const DestEntry& entry);
DestEntry decode_dest(std::span<const uint32_t> entry);
uint32_t encode_schedule(const ScheduleEntry& entry);
ScheduleEntry decode_schedule(uint32_t word);

// Whole tables as the board's windows hold them, `entries` entries each (the board's count):
// past the fabric's routers or ports, zero (an unused port, an invalid destination).
std::vector<uint32_t> encode_port_map_table(const std::vector<PortMapEntry>& entries,
                                            uint32_t board_entries);
std::vector<uint32_t> encode_dest_table(const std::vector<DestEntry>& entries,
                                        uint32_t board_entries);
std::vector<uint32_t> encode_schedule_table(const std::vector<ScheduleEntry>& entries,
                                            uint32_t board_entries);

}  // namespace asn::topology

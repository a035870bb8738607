#include "asn/topology/route_tables.hpp"

#include <string>

#include "asn/topology/schedule.hpp"

namespace asn::topology {
namespace {

void check_fits(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  if (fabric.k() > kMaxK) {
    throw TopologyError("k", "k = " + std::to_string(fabric.k()) +
                                 "; the ROUTE block's 8-bit k and digit fields allow up to " +
                                 std::to_string(kMaxK));
  }
  if (fabric.dimensions() > kMaxDimensions) {
    throw TopologyError("dimensions", std::to_string(fabric.dimensions()) +
                                          " dimensions; the ROUTE block holds up to " +
                                          std::to_string(kMaxDimensions));
  }
  if (fabric.radix(mode) > kMaxPorts) {
    throw TopologyError("radix", "radix " + std::to_string(fabric.radix(mode)) +
                                     "; the ROUTE block's 8-bit port fields allow up to " +
                                     std::to_string(kMaxPorts) + " ports");
  }
  if (router >= fabric.routers()) {
    throw TopologyError("router", "router " + std::to_string(router) +
                                      " is outside the fabric: 0.." +
                                      std::to_string(fabric.routers() - 1));
  }
}

RouteRegisters registers_of(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  RouteRegisters regs;
  const unsigned dims = fabric.dimensions();
  const std::vector<uint32_t> digits = fabric.digits(router);
  for (unsigned dim = 0; dim < dims; ++dim)
    regs.own_digits[dim] = static_cast<uint8_t>(digits[dim]);
  regs.k = static_cast<uint8_t>(fabric.k());
  regs.r = static_cast<uint8_t>(dims);
  regs.lanes = mode == ChannelMode::kDilated ? 2 : 1;
  regs.last_radix = static_cast<uint8_t>(dims == 0 ? 1 : fabric.dimension_radix(dims - 1));
  regs.last_lanes = static_cast<uint8_t>(dims == 0 ? regs.lanes : fabric.lanes(dims - 1, mode));
  return regs;
}

std::vector<PortMapEntry> port_map_of(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  std::vector<PortMapEntry> map;
  map.reserve(fabric.radix(mode));
  for (uint32_t terminal = 0; terminal < fabric.k(); ++terminal) {
    map.push_back({PortRole::kTerminal, 0, 0, static_cast<uint8_t>(terminal)});
  }
  const std::vector<uint32_t> own = fabric.digits(router);
  for (unsigned dim = 0; dim < fabric.dimensions(); ++dim) {
    for (uint32_t digit = 0; digit < fabric.dimension_radix(dim); ++digit) {
      if (digit == own[dim]) continue;
      for (unsigned lane = 0; lane < fabric.lanes(dim, mode); ++lane) {
        map.push_back({PortRole::kChannel, static_cast<uint8_t>(lane), static_cast<uint8_t>(dim),
                       static_cast<uint8_t>(digit)});
      }
    }
  }
  return map;
}

// One pass over the destinations, their digits counted like an odometer; the direct ports of
// each (dimension, digit) are looked up, not searched: the compute phase of programming a
// 1024-router fabric stays in microseconds.
std::vector<DestEntry> dest_table_of(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  const unsigned dims = fabric.dimensions();
  const std::vector<uint32_t> own = fabric.digits(router);
  std::array<std::vector<DirectPorts>, kMaxDimensions> direct;
  for (unsigned dim = 0; dim < dims; ++dim) {
    direct[dim].resize(fabric.dimension_radix(dim));
    const bool two_lanes = fabric.lanes(dim, mode) >= 2;
    for (uint32_t digit = 0; digit < fabric.dimension_radix(dim); ++digit) {
      if (digit == own[dim]) continue;
      const unsigned port_a = fabric.channel_port(router, dim, digit, 0, mode);
      direct[dim][digit] = {static_cast<uint8_t>(port_a),
                            two_lanes ? static_cast<uint8_t>(port_a + 1) : kNoPort};
    }
  }

  std::array<uint32_t, kMaxDimensions> radix{};
  for (unsigned dim = 0; dim < dims; ++dim) radix[dim] = fabric.dimension_radix(dim);
  std::vector<DestEntry> table(fabric.routers());
  std::array<uint32_t, kMaxDimensions> digits{};
  for (uint32_t dest = 0; dest < fabric.routers(); ++dest) {
    DestEntry& entry = table[dest];
    entry.valid = true;
    entry.local = dest == router;
    for (unsigned dim = 0; dim < dims; ++dim) entry.dims[dim] = direct[dim][digits[dim]];
    for (unsigned dim = 0; dim < dims; ++dim) {
      if (++digits[dim] < radix[dim]) break;
      digits[dim] = 0;
    }
  }
  return table;
}

std::vector<ScheduleEntry> schedule_of(const Fabric& fabric) {
  std::vector<ScheduleEntry> entries;
  if (StaticSchedule::unsupported(fabric) || fabric.dimensions() == 0) return entries;
  const StaticSchedule schedule(fabric.k());
  for (unsigned length = 1; length < fabric.k(); ++length) {
    for (unsigned row = 0; row < fabric.k(); ++row) {
      const ScheduleRow& r = schedule.initial_row(length, row);
      entries.push_back({r.steps[0].length, r.steps[0].lane, r.steps[1].length, r.steps[1].lane});
    }
  }
  return entries;
}

}  // namespace

RouteTables compute_route_tables(const Fabric& fabric, uint32_t router, ChannelMode mode) {
  check_fits(fabric, router, mode);
  return {registers_of(fabric, router, mode), port_map_of(fabric, router, mode),
          dest_table_of(fabric, router, mode), schedule_of(fabric)};
}

}  // namespace asn::topology

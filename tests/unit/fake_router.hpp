// A RouterView over the tables lib/topology computes, with settable thresholds and queues,
// for the routing engine's tests. Reads past a table throw (std::out_of_range), so an engine
// reading out of bounds fails the test instead of reading garbage.
#pragma once

#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"

namespace asn::model::engines::test {

inline constexpr uint32_t kThreshold = 8;

// One switch: the tables compute_route_tables() gives, thresholds, queues.
class FakeRouter : public RouterView {
 public:
  FakeRouter(const topology::Fabric& fabric, uint32_t router, topology::ChannelMode channels,
             topology::RoutingMode mode)
      : tables(topology::compute_route_tables(fabric, router, channels)),
        route_mode{mode, true},
        thresholds(tables.port_map.size(), kThreshold),
        queues(tables.port_map.size() * vcs) {}

  topology::RouteRegisters registers() const override { return tables.registers; }
  topology::RouteMode mode() const override { return route_mode; }
  unsigned port_count() const override { return static_cast<unsigned>(tables.port_map.size()); }
  topology::PortMapEntry port_map(unsigned port) const override { return tables.port_map.at(port); }
  uint32_t dest_entries() const override { return static_cast<uint32_t>(tables.dest_table.size()); }
  topology::DestEntry dest_entry(uint32_t router) const override {
    return tables.dest_table.at(router);
  }
  unsigned schedule_entries() const override {
    return static_cast<unsigned>(tables.schedule.size());
  }
  topology::ScheduleEntry schedule_entry(unsigned index) const override {
    return tables.schedule.at(index);
  }
  uint32_t threshold(unsigned port) const override { return thresholds.at(port); }
  unsigned vcs_per_port() const override { return vcs; }
  uint32_t queue_depth() const override { return depth; }
  uint32_t occupancy(unsigned port, unsigned vc) const override {
    return queues.at(port * vcs + vc);
  }

  // Every VC of `port` holds `packets`.
  void fill(unsigned port, uint32_t packets) {
    for (unsigned vc = 0; vc < vcs; ++vc) queues.at(port * vcs + vc) = packets;
  }
  void congest(unsigned port) { fill(port, kThreshold); }

  topology::RouteTables tables;
  topology::RouteMode route_mode;
  std::vector<uint32_t> thresholds;
  unsigned vcs = 2;
  uint32_t depth = 64;
  std::vector<uint32_t> queues;
};

}  // namespace asn::model::engines::test

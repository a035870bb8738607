// Everything the ROUTE block of one switch holds for its place in a 2DFB, as plain structs
// that mirror the register fields one to one (fpga/regmap/asn_regmap.yaml, block `route`,
// version 3; route_words.hpp encodes them). The fabric manager writes them to the board; the
// routing engine (fpga/model/include/asn/model/engines) reads them back.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "asn/topology/fabric.hpp"

namespace asn::topology {

// The ROUTE block holds 4 digits (own_router.digit0-3) and 4 dimensions of direct ports
// (dest_table d0-d3).
inline constexpr unsigned kMaxDimensions = 4;
// Port fields are 8 bits; 0xff means "no port" (nothing to correct in that dimension, or no
// lane B with double-rate channels), so a switch has at most 255 ports, 0..254.
inline constexpr uint8_t kNoPort = 0xff;
inline constexpr unsigned kMaxPorts = 255;
// geometry.k and port_map.digit are 8 bits.
inline constexpr uint32_t kMaxK = 255;

// route.config.mode
enum class RoutingMode : uint8_t { kStatic = 0, kMinimal = 1, kUgal = 2, kAldfb = 3 };

// route.config.vc_policy: how the engine assigns virtual channels (docs/architecture.md,
// "Routing that cannot deadlock").
enum class VcPolicy : uint8_t {
  // VC 0 is the escape channel: dimension-ordered minimal hops only. The modes route
  // adaptively on VCs 1 and up; a packet whose adaptive VC has no room takes the escape hop.
  kEscape = 0,
  // The seed's forward/reverse rule by link numbers (004 L893-935). It deadlocks a lossless
  // fabric; asnsim keeps it for comparison, asnd never programs it.
  kSeed = 1,
};

// route.config's mode, enable and vc_policy fields.
struct RouteMode {
  RoutingMode mode = RoutingMode::kStatic;
  bool enable = false;
  VcPolicy vc_policy = VcPolicy::kEscape;
};

// route.config: this router's place.
struct RouteRegisters {
  std::array<uint8_t, kMaxDimensions> own_digits{};  // digit0..digit3, unused ones 0
  uint8_t k = 2;                                     // geometry.k
  uint8_t r = 2;                                     // geometry.r
  // lanes per peer below the last dimension: 2 dilated, 1 double rate.
  uint8_t lanes = 2;
  // routers along the last dimension (N_s, or k when N is a power of k; 1 when r = 0).
  uint8_t last_radix = 2;
  // lanes per peer in the last dimension (ceil(DF_d) or half that, Eq 8-9).
  uint8_t last_lanes = 2;

  friend bool operator==(const RouteRegisters&, const RouteRegisters&) = default;
};

// One entry of route.port_map.
struct PortMapEntry {
  PortRole role = PortRole::kUnused;
  uint8_t lane = 0;       // 0 (A), 1 (B), more where the last dimension is wider
  uint8_t dimension = 0;  // channels
  uint8_t digit = 0;      // channels: the peer's digit; terminals: the terminal index 0..k-1

  friend bool operator==(const PortMapEntry&, const PortMapEntry&) = default;
};

// d<i>_port_a, d<i>_port_b of a route.dest_table entry. Lanes beyond B, where the last
// dimension has them, are the ports that follow port_b (the port map keeps a peer's lanes
// together).
struct DirectPorts {
  uint8_t port_a = kNoPort;
  uint8_t port_b = kNoPort;

  friend bool operator==(const DirectPorts&, const DirectPorts&) = default;
};

// Lanes per peer in dimension `dim` of a router with these registers.
inline unsigned lanes_in(const RouteRegisters& registers, unsigned dim) {
  return dim + 1 == registers.r ? registers.last_lanes : registers.lanes;
}

// The port of lane `lane` of a dest_table entry's direct ports: A, B, then the ports after
// B (a single-lane peer has port_a only).
inline unsigned lane_port(const DirectPorts& direct, unsigned lane) {
  return lane == 0 || direct.port_b == kNoPort ? direct.port_a : direct.port_b + lane - 1u;
}
// How many lanes of a dest_table entry's direct ports dimension `dim` has.
inline unsigned direct_lanes(const DirectPorts& direct, const RouteRegisters& registers,
                             unsigned dim) {
  if (direct.port_a == kNoPort) return 0;
  return direct.port_b == kNoPort ? 1 : std::max(lanes_in(registers, dim), 2u);
}

// One entry of route.dest_table: for destination router d, the direct ports of every
// dimension in which d's digit differs from ours (kNoPort where it does not).
struct DestEntry {
  bool valid = false;
  bool local = false;  // d is this router
  std::array<DirectPorts, kMaxDimensions> dims{};

  friend bool operator==(const DestEntry&, const DestEntry&) = default;
};

// One entry of route.schedule: T_d^(p) of the initial schedule at index
// (d - 1) * k + p (schedule.hpp); the final schedule is its mirror image.
struct ScheduleEntry {
  uint8_t first_length = 0;  // 0: no hop in the first cycle
  uint8_t first_lane = 0;
  uint8_t second_length = 0;
  uint8_t second_lane = 0;

  friend bool operator==(const ScheduleEntry&, const ScheduleEntry&) = default;
};

struct RouteTables {
  RouteRegisters registers;
  std::vector<PortMapEntry> port_map;   // radix entries
  std::vector<DestEntry> dest_table;    // one per router of the fabric
  std::vector<ScheduleEntry> schedule;  // empty when the fabric has no static schedule
};

// The tables of router `router`. Throws TopologyError naming "router" (outside the fabric),
// "k" (above kMaxK), "dimensions" (above kMaxDimensions) or "radix" (above kMaxPorts).
RouteTables compute_route_tables(const Fabric& fabric, uint32_t router, ChannelMode mode);

}  // namespace asn::topology

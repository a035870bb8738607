// The routing engine of the emulated board: for one packet at one switch, the output port,
// virtual channel and new header flags, exactly as the programmed routing mode prescribes
// (route.config mode: static, minimal adaptive, UGAL, ALDFB; 004 L376-431, L842-962).
//
// A pure function of what the switch's registers hold and its queue occupancies, read
// through RouterView only: the emulated board implements the view over its register image,
// the fabric simulator over its own state, and both run this same code. Nothing is kept
// between packets.
//
// Readings where the seed leaves room (each also at the code it governs):
// - Priority encoder (L846): ports of the higher dimension first, then the lower port
//   number. A port is usable (its Pi bit set) when the output queue of the VC the packet
//   would take there holds fewer packets than its T_h and is not full.
// - VC (L888, L906, L928-931): the link the packet came in on and the link it leaves on are
// numbered as
//   in topology::Fabric::link_number; forward VC when the input link's number is the smaller,
//   reverse otherwise. A packet from a terminal has no input link and takes the forward VC,
//   as does a packet delivered to a terminal. With V VCs per port the first half (at least
//   VC 0) are forward, the rest reverse; the least occupied of the class is taken.
// - ALDFB, Algorithm 3 with h1 = 1 (L921-923): the packet's last hop was its detour, and the
//   mandatory minimal hop corrects the dimension of that detour (the dimension of the input
//   port), as the worked example does (L906). Taken literally (any direct port of Dr), a
//   packet could correct another dimension first and then detour again in the first one; the
//   seed's "one non-minimal forwarding in each dimension" (L834, L848) would not hold.
// - ALDFB, Algorithm 4 when no port of Dr is under its threshold (Ps false, Po undefined):
//   the packet takes the higher-dimension direct link, as in Algorithm 3 line 13, and h1
//   stays 0.
// - Where a fallback to a direct link is needed (minimal adaptive and UGAL with every direct
//   queue at its threshold, ALDFB's higher-dimension link), the least occupied lane of the
//   candidates is taken, ties by the priority order.
// - UGAL (L838, L956-960): decided once, at the source switch (the packet came from a
//   terminal): minimal when a direct queue is under its threshold, else towards a random
//   intermediate router `random % routers` (minimal when that is this or the destination
//   router), then minimally to the destination. No non-minimal hop otherwise.
// - Static (topology/schedule.hpp): the initial schedule in dimension 0, its mirror image in
//   dimension 1; the rows come with the packet (initial_row, final_row). Where a packet is
//   within a row is told by its input port: arriving on a channel of the dimension in
//   progress, it has taken the row's first hop (the input port's lane and the digit it came
//   from name that hop).
#pragma once

#include <cstdint>
#include <string_view>

#include "asn/topology/route_tables.hpp"

namespace asn::model::engines {

// What one switch's routing decision reads. Every function is a read of the switch's state;
// tables are read from their active bank.
class RouterView {
 public:
  virtual ~RouterView() = default;

  virtual topology::RouteRegisters registers() const = 0;             // route.config (active bank)
  virtual topology::RouteMode mode() const = 0;                       // route.config mode, enable
  virtual unsigned port_count() const = 0;                            // id.cap_ports.ports
  virtual topology::PortMapEntry port_map(unsigned port) const = 0;   // route.port_map
  virtual uint32_t dest_entries() const = 0;                          // id.cap_route_entries
  virtual topology::DestEntry dest_entry(uint32_t router) const = 0;  // route.dest_table
  // route.schedule: its size and entries.
  virtual unsigned schedule_entries() const = 0;
  virtual topology::ScheduleEntry schedule_entry(unsigned index) const = 0;
  virtual uint32_t threshold(unsigned port) const = 0;               // port[p].aldfb_threshold: T_h
  virtual unsigned vcs_per_port() const = 0;                         // id.cap_ports.vcs_per_port
  virtual uint32_t queue_depth() const = 0;                          // id.cap_ports.queue_depth
  virtual uint32_t occupancy(unsigned port, unsigned vc) const = 0;  // port[p].vc_occupancy
};

// What routing reads from and writes to a packet. in_port is the source port of the
// NetFPGA module header (L678), written by the switch that receives the packet; the
// other fields travel with the packet between switches.
struct PacketHeader {
  uint32_t dest_terminal = 0;
  uint16_t in_port = 0;
  // ALDFB priority flag (L848, L896): set on a detour, so the next switch forwards minimally.
  bool h1 = false;
  // UGAL: the packet is still on its way to the intermediate router.
  bool to_intermediate = false;
  uint32_t intermediate = 0;
  // Static: the schedule rows T^(p) of the initial (dimension 0) and final (dimension 1)
  // parts, from topology::plan_static_routes.
  uint8_t initial_row = 0;
  uint8_t final_row = 0;

  friend bool operator==(const PacketHeader&, const PacketHeader&) = default;
};

enum class RouteStatus : uint8_t {
  kOk,
  kDisabled,        // route.config.enable is 0
  kBadConfig,       // the ROUTE registers describe no fabric (k < 2, r > 4, a digit too big)
  kBadInputPort,    // in_port is beyond the port map or names no port in use
  kBadDestination,  // the destination router is beyond the fabric or its entry is not valid
  kNoPort,          // the tables name no port to take (a missing terminal, a port past the map)
  kNoSchedule,      // static mode, but no schedule for this fabric is programmed
  kBadHeader,       // the header contradicts the tables (a static row out of range, ...)
};

std::string_view to_string(RouteStatus status);

enum class VcClass : uint8_t { kForward, kReverse };

struct RouteDecision {
  RouteStatus status = RouteStatus::kOk;
  uint16_t port = 0;
  uint8_t vc = 0;
  VcClass vc_class = VcClass::kForward;
  bool local = false;   // to a terminal port of this switch
  bool minimal = true;  // to the destination's digit in its dimension (or local)
  PacketHeader header;  // the header the packet leaves with; unchanged on an error

  friend bool operator==(const RouteDecision&, const RouteDecision&) = default;
};

// `random` is UGAL's draw for the intermediate router, any uniform 32-bit value (the caller's
// generator makes runs reproducible); the other modes ignore it.
RouteDecision route_packet(const RouterView& view, const PacketHeader& header, uint32_t random);

}  // namespace asn::model::engines

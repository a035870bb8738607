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
// - Priority encoder (L846): one bit per output port, set when the port's output queue (the
//   packets of all its VCs) holds fewer than its T_h and the VC the packet would take there
//   has room. Ports of the higher dimension first, then the lower port number.
// - VCs: route.config.vc_policy.
//   - escape (the default, and all asnd programs): VC 0 of every port is the escape channel.
//     It carries only the dimension-ordered minimal hop (the highest dimension still to
//     correct; any lane of it). The modes route on VCs 1 and up (the least occupied); when
//     the VC the mode chose has no room, the packet takes the escape hop instead, and from
//     then on routes minimally (`escaped` in its header: no detour, no intermediate). This is
//     Duato's construction for virtual cut-through: the escape sub-function is connected
//     and its channel dependency graph is acyclic (dimensions are corrected highest first,
//     one hop each), and a blocked packet can always request it, so the fabric cannot
//     deadlock (docs/architecture.md; `asnsim prove` checks it from the tables).
//   - seed (004 L888, L906, L928-931): forward VC when the input link's number is the
//     smaller (topology::Fabric::link_number), reverse otherwise; a packet from a terminal
//     takes the forward VC; the first half of the VCs are forward. The seed claims it is
//     deadlock-free (L893-906); it is not: three packets, each in a legal detour and its
//     correction, wait on each other, and every wait obeys the rule. asnsim keeps it for
//     comparison (`--vc-rule seed`); asnd never writes it.
// - ALDFB, Algorithm 3 with h1 = 1 (L921-923): the packet's last hop was its detour, and the
//   mandatory minimal hop corrects the dimension of that detour (the dimension of the input
//   port), as the worked example does (L906). Taken literally (any direct port of Dr), a
//   packet could correct another dimension first and then detour again in the first one; the
//   seed's "one non-minimal forwarding in each dimension" (L834, L848) would not hold.
// - ALDFB, Algorithm 4 when no port of Dr is usable (Ps false, Po undefined): the packet takes
//   the higher-dimension direct link, as in Algorithm 3 line 13, and h1 stays 0.
// - Where a fallback to a direct link is needed (minimal adaptive with every direct port
//   unusable, ALDFB's higher-dimension link), the port with the shortest output queue among
//   the candidates is taken, ties by the priority order.
// - UGAL (L838, L956-960), as UGAL-L (BookSim's ugal_flatfly_onchip): decided once, at the
//   source switch (the packet came from a terminal). An intermediate router `random %
//   routers` is drawn; minimal when it is this or the destination router, or when
//   H_min x Q_min <= H_nonmin x Q_nonmin + T_h (hops times the output queue of the
//   shortest-queued first hop of each path; BookSim's constant bias towards the minimal path
//   is the minimal port's T_h here); else towards the intermediate, then minimally to the
//   destination. No non-minimal hop otherwise.
// - Static (topology/schedule.hpp): the initial schedule in dimension 0, its mirror image in
//   dimension 1; the rows come with the packet (initial_row, final_row). Where a packet is
//   within a row is told by its input port: arriving on a channel of the dimension in
//   progress, it has taken the row's first hop (the input port's lane and the digit it came
//   from name that hop). Its hops use the adaptive VCs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

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
  // Escape VC policy: the packet has taken an escape hop and routes minimally from here.
  bool escaped = false;
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

// kForward and kReverse under the seed's VC policy; kAdaptive and kEscape under the escape
// policy.
enum class VcClass : uint8_t { kForward, kReverse, kAdaptive, kEscape };

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

// One output the engine may choose for a packet: the routing relation R of Duato's theory.
struct RouteOption {
  uint16_t port = 0;
  uint8_t vc = 0;
  VcClass vc_class = VcClass::kForward;
  bool local = false;
  PacketHeader header;  // the header the packet would leave with

  friend bool operator==(const RouteOption&, const RouteOption&) = default;
};

// Every output route_packet may choose for this packet in some state of the queues (and, for
// UGAL at the source, for any draw), appended to `out` (cleared first). The same candidate
// code as route_packet: the prover builds channel dependency graphs from it.
RouteStatus route_options(const RouterView& view, const PacketHeader& header,
                          std::vector<RouteOption>& out);

// The escape sub-function R1 under the escape VC policy: the ports whose VC 0 the packet may
// take as its escape hop here (the lanes of the highest dimension still to correct towards
// its destination), appended to `out` (cleared first). Empty at the destination router.
RouteStatus escape_ports(const RouterView& view, const PacketHeader& header,
                         std::vector<uint16_t>& out);

}  // namespace asn::model::engines

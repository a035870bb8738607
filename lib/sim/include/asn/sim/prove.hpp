// The deadlock prover (`asnsim prove`): builds the channel dependency graph of the routing
// engine exactly as it routes from the ROUTE words asnd writes (topology::compute_route_tables,
// encoded and decoded as a board holds them; model::engines::route_options / escape_ports /
// route_packet), and says whether the fabric can deadlock.
//
// - Escape VC rule (the default; Duato's theorem for virtual cut-through): the escape
//   sub-function R1 (VC 0, engines::escape_ports) is built for every router and destination;
//   its channel dependency graph (channel c -> c' when a packet R1 puts on c may next be put
//   on c' by R1) must be acyclic, and R1 defined at every router but the destination (so it is
//   connected: a chain of R1 hops cannot repeat a channel and ends only at the destination).
//   Then every state must have an escape: with every adaptive VC full, the engine must choose
//   a hop of R1 on VC 0, from every input, header state and destination checked.
// - Seed rule: no escape channels; the whole graph over every channel and VC, from every state
//   reachable by injection (route_options), must be acyclic. It is not: the prover names a
//   cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "asn/sim/settings.hpp"
#include "asn/topology/route_tables.hpp"

namespace asn::sim {

struct ProveRequest {
  uint32_t terminals = 64;
  uint32_t k = 4;
  Channels channels = Channels::kDilated;
  topology::RoutingMode mode = topology::RoutingMode::kAldfb;
  topology::VcPolicy vc_policy = topology::VcPolicy::kEscape;
  uint32_t num_vcs = 2;
  // Engine calls the every-state-has-an-escape check may make; past it, destinations are
  // sampled evenly (and the proof says so).
  uint64_t state_budget = 4'000'000;
  // States the seed rule's full graph may hold before the prover gives up (SimError).
  uint64_t full_graph_budget = 5'000'000;
};

struct Proof {
  bool deadlock_free = false;
  uint64_t channels = 0;  // vertices of the graph
  uint64_t edges = 0;
  uint64_t states = 0;  // states checked for an escape, or reachable states (seed rule)
  bool states_exhaustive = true;
  std::vector<std::string> cycle;  // router:port/VC of each channel, when there is one
  std::string text;                // the argument or the counterexample, for a person
  double seconds = 0;
};

// Checks the request (the fabric, the mode: aldfb, ugal or minimal; 1..8 VCs) and proves.
// SimError names a bad field.
Proof prove(const ProveRequest& request);

// Every fabric a board of `max_ports` ports and `max_routers` destination entries can run
// (topology::Fabric's rules, at most 4 dimensions, the radix with these channels fits), in
// increasing router count.
struct FabricShape {
  uint32_t terminals = 0;
  uint32_t k = 0;
  uint32_t routers = 0;
};
std::vector<FabricShape> board_fabrics(unsigned max_ports, uint32_t max_routers,
                                       Channels channels);

}  // namespace asn::sim

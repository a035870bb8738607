// One simulation point: a 2DFB of input-queued routers, each deciding with its own instance of
// the emulated board's routing engine (fpga/model, route_packet over a RouterView) programmed
// with the ROUTE tables asnd writes (topology::compute_route_tables, encoded to register words
// and read back as the board would), driven by a traffic pattern at one offered load.
//
// The router model, per cycle:
// - Terminals draw packets (Bernoulli, probability load / packet_size) into a source queue of
//   `source_queue` packets; a packet that finds it full is refused and the point is marked
//   saturated, so queues never grow without bound. The head packet enters the router's
//   terminal input port (no channel latency on the way in) when a VC there has room.
// - A packet at the head of an input VC is routed by the engine, reading the router's own
//   queue state; it may request the switch routing_delay cycles after it arrived. A head whose
//   output VC has no room (credits, or a full output queue) is routed again the next cycle,
//   from the header it arrived with and with no second routing_delay, so that it can take
//   another VC (the escape VC of Duato's rule) at every cycle it is blocked. A head waiting only
//   for a busy lane keeps its decision.
// - Switch allocation: separable iSLIP (outputs grant round-robin from their pointer, inputs
//   accept round-robin, pointers move past an accepted grant), alloc_iters iterations. A
//   request needs packet_size free credits at the downstream VC (virtual cut-through) and a
//   free output lane (a double-rate channel has two); an input port sends one packet at a time
//   per lane.
// - A granted packet's head reaches the next router channel_latency cycles later; its credits
//   return channel_latency cycles after its tail left.
// - With internal_speedup >= 2 the switch runs that many passes a cycle into per-VC output
//   queues, which feed the channels (the seed's output-queued switch); the engine's occupancy
//   then includes them.
// Zero-load latency, in cycles from creation to the tail's delivery:
//   routers traversed x (routing_delay + channel_latency) + packet_size - 1.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "asn/sim/settings.hpp"

namespace asn::sim {

struct PointResult {
  topology::RoutingMode mode = topology::RoutingMode::kAldfb;
  VcRule vc_rule = VcRule::kEscape;  // the settings' (a CSV column, so rows say what ran)
  double load = 0;                   // offered, flits/cycle/terminal
  double offered = 0;                // generated during the measurement (refused packets included)
  double accepted = 0;  // delivered flits/cycle/terminal, a fraction of the injection capacity
  double latency_mean = 0;
  double latency_p50 = 0;
  double latency_p99 = 0;
  double hops_mean = 0;         // router-to-router channels per packet
  double nonminimal_share = 0;  // of those hops, the share that were detours
  uint64_t packets = 0;         // measured packets
  uint64_t cycles = 0;          // simulated cycles (warm-up included)
  uint64_t routers = 0;
  bool saturated = false;
  bool converged = false;
  // A cycle of input VCs whose heads each waited more than deadlock_cycles for the next one,
  // which had no room: the point ends (asnsim exits 3).
  bool deadlock = false;
  // A head that waited more than deadlock_cycles while its output VC had room and its lane was
  // idle: the allocator passes it over. The point ends (asnsim exits 4).
  bool starvation = false;
  bool cancelled = false;
  // Packets that took two non-minimal hops in one dimension (ALDFB allows one, 004 L848).
  uint64_t repeated_detours = 0;
  // Times a head was routed again because the output VC it had chosen had no room (measured
  // period only).
  uint64_t reroutes = 0;
  std::string message;  // the deadlock or starvation report, when there is one

  // Hotspot traffic (0 for other patterns). hot_bound: the accepted rate at which the hot
  // terminal's link is full without combining, 1 / (1 + h(N - 1)) (001 L487, L525).
  double hot_bound = 0;
  double cold_accepted = 0;  // requests other than hot fetch-and-adds, flits/cycle/terminal
  double cold_latency_mean = 0;
  double cold_latency_p99 = 0;
  uint64_t hot_requests = 0;      // hot fetch-and-adds served (measured period)
  uint64_t combines = 0;          // merges in router queues (measured period)
  uint64_t wait_buffer_full = 0;  // hot arrivals that could have merged but found it full
  // check_serial_order() over every hot reply of the run: "" when a serial order exists.
  std::string serial_order_error;
};

// Runs one point to the end of its measurement (or a deadlock, a starved head, or `cancel`). The
// settings must have passed validate(). Deterministic: the same settings, mode, load and seed give
// the same result.
PointResult simulate(const Settings& settings, topology::RoutingMode mode, double load,
                     uint64_t seed, const std::atomic<bool>* cancel = nullptr);

// Runs exactly `cycles` cycles with no measurement logic, for benchmarks; returns the packets
// delivered.
uint64_t simulate_cycles(const Settings& settings, topology::RoutingMode mode, double load,
                         uint64_t seed, uint64_t cycles);

}  // namespace asn::sim

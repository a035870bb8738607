// asnsim circuits: 002's simulation of the path reservation protocols (002 L478-512) as a
// discrete-event model over this library's hop logic. A k x k torus with XY routing; each
// node draws connection requests with Poisson arrivals to uniform other nodes, reserves one at
// a time (a failed one is retried after a random time below MRT), sends its message once the
// circuit stands (message packets, one per frame of `degree` slots), then releases it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "asn/circuit/fabric.hpp"

namespace asn::circuit {

struct SimSettings {
  uint32_t side = 16;      // the torus is side x side (002 L504: 16 x 16)
  uint32_t degree = 32;    // multiplexing degree (Fig 3.4: 32)
  uint32_t message = 8;    // packets per message (002 L504)
  uint32_t control = 2;    // time units per control message hop: processing + propagation
  double rate = 0.004;     // requests per node per time unit
  Protocol protocol;       // with its hold_time
  uint32_t mrt = 5;        // maximum retransmit time (002 L526, L546)
  uint32_t mrt_fda = 60;   // ... for forward aggressive, which live-locks with a small one
  uint32_t time = 5000;    // time units simulated
  uint32_t warmup = 1000;  // of which the first are not measured
  uint64_t seed = 1;
};

struct SimResult {
  double throughput = 0;     // messages received per time unit, whole network (002 L499)
  double latency = 0;        // mean time from request to first packet sent (002 L499)
  double latency_total = 0;  // ... to the last packet received (setup + transmission)
  uint64_t messages = 0;     // received in the measured time
  uint64_t attempts = 0;     // reservations started in the measured time
  uint64_t failures = 0;     // of which failed
  uint64_t events = 0;       // control messages handled, all the run
};

// Throws CircuitError naming the setting for one out of range.
SimResult simulate(const SimSettings& s);

// The torus and its XY route (dimension order, the shorter way round, + on a tie).
Fabric torus(uint32_t side, uint32_t degree);
std::vector<uint32_t> xy_ports(uint32_t side, uint32_t src, uint32_t dst);

// Runs every setting on `threads` threads; results in order. progress(done, total) from one
// thread at a time.
std::vector<SimResult> simulate_all(const std::vector<SimSettings>& points, unsigned threads,
                                    const std::function<void(size_t, size_t)>& progress);

}  // namespace asn::circuit

#include "asn/sim/network.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "fabric.hpp"

namespace asn::sim {
namespace {

using detail::Network;

double percentile(std::vector<uint32_t>& values, double fraction) {
  if (values.empty()) return 0;
  const size_t at =
      std::min(values.size() - 1, static_cast<size_t>(std::ceil(fraction * values.size())) - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(at), values.end());
  return values[at];
}

// Runs `cycles` cycles; false on a deadlock, a starved head or a cancel.
bool run_for(Network& net, uint64_t cycles, PointResult& result, const std::atomic<bool>* cancel) {
  for (uint64_t c = 0; c < cycles; ++c) {
    net.step();
    if ((c & 1023) == 0) {
      const Network::Stuck stuck = net.check_stuck();
      if (stuck != Network::Stuck::kNone) {
        result.deadlock = stuck == Network::Stuck::kDeadlock;
        result.starvation = stuck == Network::Stuck::kStarvation;
        result.message = net.stuck_report();
        result.cycles = net.now();
        return false;
      }
      if (cancel && cancel->load(std::memory_order_relaxed)) {
        result.cancelled = true;
        return false;
      }
    }
  }
  return true;
}

void summarise_hotspot(Network& net, const Settings& settings, double capacity,
                       PointResult& result) {
  const double n = settings.terminals;
  result.hot_bound = 1.0 / (1.0 + settings.hot_fraction * (n - 1));
  result.cold_accepted = net.cold_delivered_flits / capacity;
  if (!net.cold_latencies.empty()) {
    double sum = 0;
    for (uint32_t l : net.cold_latencies) sum += l;
    result.cold_latency_mean = sum / net.cold_latencies.size();
    result.cold_latency_p99 = percentile(net.cold_latencies, 0.99);
  }
  result.hot_requests = net.hot_served;
  result.combines = net.combines;
  result.wait_buffer_full = net.wait_buffer_full;
  result.serial_order_error = check_serial_order(0, net.hot_memory(), net.returned);
}

void summarise(Network& net, const Settings& settings, uint64_t measured, PointResult& result) {
  const double capacity = static_cast<double>(settings.terminals) * std::max<uint64_t>(measured, 1);
  result.offered = net.total.generated_flits / capacity;
  result.accepted = net.total.delivered_flits / capacity;
  result.packets = net.delivered_packets;
  if (!net.latencies.empty()) {
    double sum = 0;
    for (uint32_t l : net.latencies) sum += l;
    result.latency_mean = sum / net.latencies.size();
    result.latency_p50 = percentile(net.latencies, 0.50);
    result.latency_p99 = percentile(net.latencies, 0.99);
    result.hops_mean = static_cast<double>(net.hops) / net.delivered_packets;
  }
  result.nonminimal_share = net.hops == 0 ? 0 : static_cast<double>(net.detour_hops) / net.hops;
  result.repeated_detours = net.repeated_detours;
  result.reroutes = net.reroutes;
  result.cycles = net.now();
  result.routers = net.routers();
  result.saturated = net.total.refused > 0 || result.accepted < 0.95 * result.offered;
  if (settings.pattern == Pattern::kHotspot) summarise_hotspot(net, settings, capacity, result);
}

}  // namespace

PointResult simulate(const Settings& settings, topology::RoutingMode mode, double load,
                     uint64_t seed, const std::atomic<bool>* cancel) {
  PointResult result;
  result.mode = mode;
  result.vc_rule = settings.vc_rule;
  result.load = load;
  Network net(settings, mode, load, seed);

  if (settings.pattern == Pattern::kTrace) {
    net.start_measurement();
    while (!net.trace_done()) {
      if (!run_for(net, 256, result, cancel)) break;
    }
    result.converged = !result.deadlock && !result.starvation && !result.cancelled;
    summarise(net, settings, net.now(), result);
    result.saturated = false;
    return result;
  }

  if (!run_for(net, settings.warmup_cycles, result, cancel)) return result;
  net.start_measurement();
  const double capacity = static_cast<double>(settings.terminals) * settings.sample_cycles;
  double previous = -1;
  bool stalled = false;
  for (uint32_t sample = 1; sample <= settings.max_samples; ++sample) {
    net.window = {};
    if (!run_for(net, settings.sample_cycles, result, cancel)) break;
    const double accepted = net.window.delivered_flits / capacity;
    // A window that delivered nothing while packets wait is no steady state: keep running
    // until the deadlock detector decides.
    stalled = accepted == 0 && net.busy();
    const bool steady =
        !stalled && previous >= 0 &&
        std::abs(accepted - previous) <= settings.converge_tolerance * std::max(accepted, 1e-9);
    previous = accepted;
    if (steady && sample >= settings.min_samples) {
      result.converged = true;
      break;
    }
  }
  if (stalled && !result.deadlock && !result.starvation && !result.cancelled) {
    run_for(net, settings.deadlock_cycles + 1024, result, cancel);  // let the detector decide
  }
  if (result.deadlock || result.starvation || result.cancelled) return result;
  summarise(net, settings, net.now() - settings.warmup_cycles, result);
  return result;
}

uint64_t simulate_cycles(const Settings& settings, topology::RoutingMode mode, double load,
                         uint64_t seed, uint64_t cycles) {
  Network net(settings, mode, load, seed);
  for (uint64_t c = 0; c < cycles; ++c) net.step();
  return net.delivered_all;
}

}  // namespace asn::sim

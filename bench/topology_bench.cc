// The compute phase of programming one switch of a 32-ary 2DFB (issue 7): its ROUTE tables
// at N = 1024 (radix 94) and N = 32768 (1024 routers, radix 156), against the reference of
// the same run, computing one router's digits. Also one ALDFB decision of the routing engine
// at radix 156, the unit of work of the fabric simulator.
//   build/bench/topology_bench  (or: python3 bench/table.py <json> BM_RouterDigits)
#include <benchmark/benchmark.h>

#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "router_digits_reference.hpp"

namespace {

using namespace asn;
using topology::ChannelMode;

void BM_RouteTables(benchmark::State& state) {
  const uint32_t terminals = static_cast<uint32_t>(state.range(0));
  const auto mode = state.range(1) ? ChannelMode::kDoubleRate : ChannelMode::kDilated;
  uint32_t router = 0;
  for (auto _ : state) {
    // From (N, k, router) to every field: the fabric is part of the work.
    const topology::Fabric fabric(terminals, 32);
    benchmark::DoNotOptimize(topology::compute_route_tables(fabric, router, mode));
    router = (router + 7) % fabric.routers();
  }
  state.SetLabel(mode == ChannelMode::kDilated ? "dilated" : "double-rate");
}
BENCHMARK(BM_RouteTables)->Args({1024, 0})->Args({1024, 1})->Args({32768, 0})->Args({32768, 1});

// A view over computed tables with every queue empty but the direct ones.
class TablesView : public model::engines::RouterView {
 public:
  explicit TablesView(topology::RouteTables t)
      : tables(std::move(t)), queues(tables.port_map.size() * 2) {}
  topology::RouteRegisters registers() const override { return tables.registers; }
  topology::RouteMode mode() const override { return {topology::RoutingMode::kAldfb, true}; }
  unsigned port_count() const override { return static_cast<unsigned>(tables.port_map.size()); }
  topology::PortMapEntry port_map(unsigned port) const override { return tables.port_map[port]; }
  uint32_t dest_entries() const override { return static_cast<uint32_t>(tables.dest_table.size()); }
  topology::DestEntry dest_entry(uint32_t router) const override {
    return tables.dest_table[router];
  }
  unsigned schedule_entries() const override { return 0; }
  topology::ScheduleEntry schedule_entry(unsigned) const override { return {}; }
  uint32_t threshold(unsigned) const override { return 8; }
  unsigned vcs_per_port() const override { return 2; }
  uint32_t queue_depth() const override { return 128; }
  uint32_t occupancy(unsigned port, unsigned vc) const override { return queues[port * 2 + vc]; }

  topology::RouteTables tables;
  std::vector<uint32_t> queues;
};

// range(0) = 1: the direct queues are full, so Algorithm 4 scans every port of Dr.
void BM_AldfbDecision(benchmark::State& state) {
  const topology::Fabric fabric(32768, 32);
  TablesView view(topology::compute_route_tables(fabric, 0, ChannelMode::kDilated));
  const uint32_t dest_router = fabric.router_of({5, 9});
  if (state.range(0)) {
    for (const auto& direct : view.tables.dest_table[dest_router].dims) {
      for (uint8_t port : {direct.port_a, direct.port_b}) {
        if (port != topology::kNoPort) view.queues[port * 2] = view.queues[port * 2 + 1] = 8;
      }
    }
  }
  const model::engines::PacketHeader header{.dest_terminal = dest_router * 32 + 3, .in_port = 1};
  for (auto _ : state) {
    benchmark::DoNotOptimize(model::engines::route_packet(view, header, 0));
  }
  state.SetLabel(state.range(0) ? "detour" : "direct");
}
BENCHMARK(BM_AldfbDecision)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();

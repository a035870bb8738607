#include "asn/topology/compare.hpp"

#include <string>

namespace asn::topology {
namespace {

// Smallest L with base^L >= n: ceil(log_base n) without floating point.
unsigned ceil_log(uint64_t n, uint64_t base) {
  unsigned levels = 0;
  for (uint64_t reach = 1; reach < n; reach *= base) ++levels;
  return levels;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// ceil(log2(N / k)) for real N / k: the smallest e with k 2^e >= N.
unsigned hypercube_dimensions(uint64_t terminals, uint64_t k) {
  unsigned dims = 0;
  for (uint64_t reach = k; reach < terminals; reach *= 2) ++dims;
  return dims;
}

constexpr uint32_t kMaxRadix = 65535;

void check_radix(uint32_t radix, uint32_t least, std::string_view why) {
  if (radix < least || radix > kMaxRadix) {
    throw TopologyError("radix", "radix " + std::to_string(radix) +
                                     "; accepted: " + std::to_string(least) + ".." +
                                     std::to_string(kMaxRadix) + " (" + std::string(why) + ")");
  }
}

void check_terminals(uint64_t terminals) {
  if (terminals < 2 || terminals > kMaxTerminals) {
    throw TopologyError("terminals", "N = " + std::to_string(terminals) + "; accepted: 2.." +
                                         std::to_string(kMaxTerminals));
  }
}

// A DBHC of k terminals per router: a hypercube of ceil(N/k) routers with k-dilated links
// (L327), so k terminal ports and k ports per dimension.
TopologyFigures dbhc_with(uint64_t terminals, uint32_t k, uint32_t radix, std::string_view name) {
  const unsigned dims = hypercube_dimensions(terminals, k);  // Eq 14/15
  TopologyFigures f;
  f.name = name;
  f.radix = radix;
  f.ary = k;
  f.diameter = dims;
  f.switching_elements = ceil_div(terminals, k);  // Eq 18
  f.links = terminals * dims / 2;                 // Eq 23: (N/2) ceil(log2(N/k))
  f.worst_case_hops = dims;                       // log2(N/k), L523
  return f;
}

}  // namespace

TopologyFigures two_dfb(const Fabric& fabric) {
  TopologyFigures f;
  f.name = "2DFB";
  f.radix = fabric.radix();
  f.ary = fabric.k();
  f.diameter = fabric.diameter();
  f.switching_elements = fabric.switching_elements();
  f.links = fabric.links();
  f.double_rate_links = fabric.double_rate_links();
  f.worst_case_hops = fabric.worst_case_hops();
  return f;
}

TopologyFigures folded_clos(uint64_t terminals, uint32_t radix) {
  check_terminals(terminals);
  check_radix(radix, 4, "a folded-Clos router has at least 2 ports down and 2 up");
  const uint32_t k = radix / 2;
  const unsigned levels = ceil_log(terminals, k);  // ceil(log_k N)
  // Reading: Eq 16 as printed, 2(ceil(log_k N) - 1), gives 2 2 4 4 where Table 1 prints
  // 3 3 5 5; the table counts the routers of the longest path up and down, 2 levels - 1.
  TopologyFigures f;
  f.name = "folded-Clos";
  f.radix = radix;
  f.ary = k;
  f.diameter = 2 * levels - 1;
  f.switching_elements = ceil_div(terminals, k) * levels;  // Eq 19
  f.links = terminals * (levels - 1);                      // Eq 21
  // Table 3 prints L_T / 2 for every size; the extra N/2 of L565 (a stage added when
  // k/2 < N/k) is not in its figures (it would give 24576 at N = 16384), so it is not here.
  f.double_rate_links = f.links / 2;
  f.worst_case_hops = 2 * (levels - 1);  // L523
  return f;
}

TopologyFigures dbhc(uint64_t terminals, uint32_t radix) {
  check_terminals(terminals);
  check_radix(radix, 2, "a DBHC router has a terminal port and a link");
  uint32_t best = 0;
  for (uint64_t k = 1; k <= radix; ++k) {
    if (k * (1 + hypercube_dimensions(terminals, k)) <= radix) best = static_cast<uint32_t>(k);
  }
  if (best == 0) {
    throw TopologyError("radix",
                        "radix " + std::to_string(radix) +
                            " fits no DBHC router; it needs 1 + ceil(log2 N) ports at k = 1");
  }
  TopologyFigures f = dbhc_with(terminals, best, radix, "DBHC");
  f.double_rate_links = f.links / 2;  // "In 2DFB and DBHC ... L_T / 2" (L565)
  return f;
}

TopologyFigures hypercube(uint64_t terminals) {
  check_terminals(terminals);
  // One terminal per router: a DBHC with k = 1 (Eq 15 -> Eq 14, Eq 23 -> (N/2) log2 N).
  const unsigned dims = hypercube_dimensions(terminals, 1);
  return dbhc_with(terminals, 1, dims + 1, "hypercube");
}

std::array<TopologyFigures, 4> compare(const Fabric& fabric) {
  const uint32_t radix = fabric.radix();
  return {two_dfb(fabric), folded_clos(fabric.terminals(), radix), dbhc(fabric.terminals(), radix),
          hypercube(fabric.terminals())};
}

}  // namespace asn::topology

// The figures of the nonblocking topologies 004 §2.4 compares with the 2DFB, each built from
// routers of the 2DFB's radix (L437): folded-Clos, dilated bristled hypercube (DBHC) and
// hypercube (Eq 14-23). compare() gives the rows of Table 1 (L456-463) and Table 3
// (L569-575; the digest says L560-566) for one fabric.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "asn/topology/fabric.hpp"

namespace asn::topology {

struct TopologyFigures {
  std::string_view name;            // "2DFB", "folded-Clos", "DBHC", "hypercube"
  uint32_t radix = 0;               // ports per router (Table 1 'r', Table 3 'b')
  uint32_t ary = 0;                 // terminals per router (Table 1 'k')
  unsigned diameter = 0;            // Table 1 'd'
  uint64_t switching_elements = 0;  // routers (Eq 18-20, Table 3 'n')
  uint64_t links = 0;               // inter-router links of terminal bandwidth (Eq 21-23)
  // Links of twice the terminal bandwidth (Table 3 'l'); the hypercube has none.
  std::optional<uint64_t> double_rate_links{};
  unsigned worst_case_hops = 0;  // L521-523
};

TopologyFigures two_dfb(const Fabric& fabric);
// Folded-Clos of N terminals from routers of `radix` ports: k = radix / 2 down, as many up
// (Table 1: 88 -> 44). Throws TopologyError("radix") below 4, ("terminals") below 2.
TopologyFigures folded_clos(uint64_t terminals, uint32_t radix);
// DBHC of N terminals from routers of `radix` ports: the largest k whose k terminal ports and
// k-dilated links in ceil(log2(N/k)) dimensions fit, k (1 + ceil(log2(N/k))) <= radix
// (Table 1: 88 -> 17, 94 -> 11, 154 -> 12, 156 -> 12). Throws TopologyError("radix") when no
// k fits.
TopologyFigures dbhc(uint64_t terminals, uint32_t radix);
// Hypercube of N terminals, one per router: radix ceil(log2 N) + 1 (Table 1).
TopologyFigures hypercube(uint64_t terminals);

// The 2DFB, then folded-Clos and DBHC at the 2DFB's radix, then the hypercube.
std::array<TopologyFigures, 4> compare(const Fabric& fabric);

}  // namespace asn::topology

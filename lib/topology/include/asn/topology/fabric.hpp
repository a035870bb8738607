// The 2-dilated flattened butterfly (2DFB) of N terminals, k per router (004 chapter 2):
// its closed-form figures (Eq 4-9, 17, 20, 22, Table 1 and 3), the base-k numbering of its
// routers and the wiring of Eq 1, the ports of each router, and the link numbers that decide
// forward or reverse virtual channel (004 L888, L906).
//
// Dimensions are counted from 0 here; the seed's dimension d (1..r) is our d - 1. Digit i of
// a router number has weight k^i; every digit is base k except the last one of a fabric whose
// N is not a power of k, which is base N_s (Eq 4: the last dimension joins N_s < k routers).
#pragma once

#include <cstdint>
#include <vector>

#include "asn/topology/error.hpp"

namespace asn::topology {

// How the doubled bandwidth between routers is built (004 L335, L341): two channels A and B of
// terminal bandwidth per router pair (dilated), or one channel of twice that bandwidth. The
// board profile decides; the last dimension of a fabric whose N is not a power of k needs
// ceil(DF_d) channels per pair (Eq 8-9), or half as many double-rate ones.
enum class ChannelMode : uint8_t { kDilated, kDoubleRate };

// Values as route.port_map.role holds them.
enum class PortRole : uint8_t { kUnused = 0, kTerminal = 1, kChannel = 2 };

// What one port of a router connects to.
struct PortInfo {
  PortRole role = PortRole::kUnused;
  unsigned dimension = 0;  // channels: 0-based dimension
  uint32_t digit = 0;      // channels: the peer router's digit in that dimension;
                           // terminals: the terminal's index at this router, 0..k-1
  unsigned lane = 0;       // channels: 0 = A, 1 = B, 2... (dilation beyond 2)
};

// The far end of a channel: the peer router and its port back to us.
struct PortEnd {
  uint32_t router = 0;
  unsigned port = 0;
};

// Terminal numbers are 32-bit; link numbers (up to (k^r)^2) then fit in 64 bits.
inline constexpr uint64_t kMaxTerminals = uint64_t{1} << 31;

class Fabric {
 public:
  // Throws TopologyError naming "k" (k < 2) or "terminals" (N < k, N > kMaxTerminals, N not
  // a multiple of k^floor(log_k N): the fabrics 004 L349 admits).
  Fabric(uint64_t terminals, uint32_t k);

  uint32_t terminals() const { return terminals_; }
  uint32_t k() const { return k_; }
  // r: digits of a router number, the dimensions channels run in; ceil(log_k N) - 1.
  unsigned dimensions() const { return dimensions_; }
  uint32_t routers() const { return routers_; }  // N / k
  bool power_of_k() const { return subsystems_ == 1; }
  // N_s (Eq 4): subsystems of dimension r - 1 when N is not a power of k; 1 when it is.
  uint32_t subsystems() const { return subsystems_; }
  // Routers along dimension `dim` (the base of that digit): k, or N_s for the last dimension
  // of a fabric whose N is not a power of k.
  uint32_t dimension_radix(unsigned dim) const;
  // DF_d of the last dimension (Eq 8): 2k / N_s, or 2 when N is a power of k.
  double last_dilation() const;
  // Channels from a router to each peer of dimension `dim`: 2 (dilated) or 1 (double rate);
  // ceil(DF_d), or ceil(ceil(DF_d) / 2) double-rate channels, in the widened last dimension.
  unsigned lanes(unsigned dim, ChannelMode mode) const;
  // Ports of a router in dimension `dim`: (routers of the dimension - 1) * lanes (Eq 9).
  uint32_t dimension_ports(unsigned dim, ChannelMode mode) const;
  // Ports per router: k terminal ports plus every dimension's ports (004 L341, Table 1).
  uint32_t radix(ChannelMode mode = ChannelMode::kDilated) const;

  unsigned diameter() const { return dimensions_; }         // Eq 17: ceil(log_k N) - 1
  uint64_t switching_elements() const { return routers_; }  // Eq 20: ceil(N / k)
  // Inter-router links of terminal bandwidth b, L_T: Eq 22 when N is a power of k, else half
  // the Eq 9 ports summed over all routers (what L512 leaves to Eq 9).
  uint64_t links() const;
  // Links of bandwidth 2b (Table 3 'l'): every pair of dilated channels as one double-rate
  // link, L_T / 2 when the dilation is even.
  uint64_t double_rate_links() const;
  // Hops of the longest route, 2 per dimension (a detour and back, L521), 1 in a
  // dimension of only 2 routers (no detour there: k = 2 gives log2(N/2), L523).
  unsigned worst_case_hops() const;

  // Router numbering (004 L319, L844).
  uint32_t terminal_router(uint32_t terminal) const;    // terminal / k
  std::vector<uint32_t> digits(uint32_t router) const;  // r digits, least significant first
  uint32_t router_of(const std::vector<uint32_t>& digits) const;
  uint32_t weight(unsigned dim) const { return weights_[dim]; }  // k^dim
  // Eq 1: j = i + [m - (floor(i / k^(d-1)) mod k)] k^(d-1), the router that differs from i
  // only in digit `dim`, which is m there. m == own digit gives the router itself.
  uint32_t neighbour(uint32_t router, unsigned dim, uint32_t m) const;
  // The link number of L888: 2r digits, those of the router the link ends at above those
  // of the router it starts from, i.e. to * k^r + from. Reading: the prose says "the first r
  // digits" are the starting router, and the figures name the link from R_00 to R_02 L_0200
  // (L906, also L_2101, L_1213 at L960-962); both hold when "first" means the low-order
  // digits x_0.., as the seed writes numbers x_{r-1}...x_0 (L319, L844). The worked example then
  // needs L_0102 < L_0200 (a reverse-VC hop), which this numbering gives.
  uint64_t link_number(uint32_t from, uint32_t to) const;

  // Ports of one router: terminal ports 0..k-1, then dimension 0, 1, ...; within a dimension
  // the peers in increasing digit order (own digit skipped), each peer's lanes consecutive.
  PortInfo port_info(uint32_t router, unsigned port, ChannelMode mode) const;
  // The port of `router` on lane `lane` to the peer with digit `digit` in dimension `dim`.
  unsigned channel_port(uint32_t router, unsigned dim, uint32_t digit, unsigned lane,
                        ChannelMode mode) const;
  // Where a channel port leads. Throws TopologyError("port") for a terminal port.
  PortEnd peer(uint32_t router, unsigned port, ChannelMode mode) const;
  // The first port of dimension `dim` (k + the ports of the dimensions below it).
  unsigned dimension_base(unsigned dim, ChannelMode mode) const;

 private:
  void check_router(uint32_t router) const;
  void check_dimension(unsigned dim) const;

  uint32_t terminals_;
  uint32_t k_;
  unsigned dimensions_;
  uint32_t routers_;
  uint32_t subsystems_;
  std::vector<uint32_t> weights_;  // k^0 .. k^r
};

}  // namespace asn::topology

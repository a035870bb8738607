// The targets with a choice of paths: the 2DFB (lib/topology's Fabric) and the fat tree of
// 000 Ch. 7.
#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "asn/fabric_schedule/target.hpp"
#include "asn/topology/fabric.hpp"

namespace asn::fabric_schedule {
namespace {

using topology::ChannelMode;
constexpr ChannelMode kMode = ChannelMode::kDilated;

class FlattenedButterfly final : public Target {
 public:
  FlattenedButterfly(uint64_t n, uint32_t k, bool detours)
      : f_(n, k), channels_(f_.radix(kMode) - f_.k()), detours_(detours) {
    for (unsigned d = 0; d < f_.dimensions(); ++d) lanes_.push_back(f_.lanes(d, kMode));
  }
  std::string name() const override {
    return "2dfb N=" + std::to_string(f_.terminals()) + " k=" + std::to_string(f_.k());
  }
  uint32_t terminals() const override { return f_.terminals(); }
  // Link router * channels + (port - k): the channel leaving `router` at `port`.
  uint32_t links() const override { return f_.routers() * channels_; }
  uint32_t minimal_paths(uint32_t src, uint32_t dst) const override {
    Hops h = hops(src, dst);
    uint32_t count = orders(h.count);
    for (unsigned d = 0; d < f_.dimensions(); ++d) count *= h.differs(d) ? lanes_[d] : 1;
    return count;
  }
  uint32_t path_count(uint32_t src, uint32_t dst) const override {
    uint32_t count = minimal_paths(src, dst);
    if (!detours_) return count;
    Hops h = hops(src, dst);
    for (unsigned d = 0; d < f_.dimensions(); ++d) count += h.differs(d) ? detours(d) : 0;
    return count;
  }
  void path(uint32_t src, uint32_t dst, uint32_t index, std::vector<uint32_t>& out) const override;
  int64_t aapc_phase(uint32_t src, uint32_t dst) const override;
  uint32_t aapc_phases() const override { return aapc_ok() ? f_.terminals() : 0; }
  uint32_t link_lower_bound(std::span<const Conn> conns) const override;
  uint32_t switches() const override { return f_.routers(); }
  Attach terminal_attach(uint32_t t) const override { return {t / f_.k(), t % f_.k()}; }
  LinkEnds link_ends(uint32_t link) const override {
    const uint32_t router = link / channels_;
    const unsigned port = f_.k() + link % channels_;
    const topology::PortEnd end = f_.peer(router, port, kMode);
    return {{router, port}, {end.router, end.port}};
  }
  uint32_t switch_ports() const override { return f_.radix(kMode); }

 private:
  // The dimensions in which two routers differ, as bits (a fabric has at most 31).
  struct Hops {
    uint32_t mask = 0;
    unsigned count = 0;
    bool differs(unsigned d) const { return (mask >> d & 1) != 0; }
  };
  Hops hops(uint32_t src, uint32_t dst) const {
    const uint32_t a = src / f_.k();
    const uint32_t b = dst / f_.k();
    Hops h;
    for (unsigned d = 0; d < f_.dimensions(); ++d) {
      if (digit(a, d) == digit(b, d)) continue;
      h.mask |= 1u << d;
      ++h.count;
    }
    return h;
  }
  // Orders of the differing dimensions tried: both for two, ascending and descending beyond.
  static uint32_t orders(unsigned count) { return count >= 2 ? 2 : 1; }
  uint32_t digit(uint32_t router, unsigned d) const {
    return d + 1 == f_.dimensions() ? router / f_.weight(d) : (router / f_.weight(d)) % f_.k();
  }
  // Path 0's lane: spread by the source's terminal index so that the standard routing uses
  // every lane; with one dimension and k > routers, the two terminals p and p + routers of
  // an AAPC configuration take different lanes.
  unsigned first_lane(uint32_t src, unsigned d) const {
    const uint32_t p = src % f_.k();
    const uint32_t r = f_.routers();
    return (f_.k() > r ? p / r : p) % lanes_[d];
  }
  bool aapc_ok() const { return f_.dimensions() == 1 && f_.k() <= 2 * f_.routers(); }
  // Detours in dimension d: through each router of it but the two ends, on each lane.
  uint32_t detours(unsigned d) const { return (f_.dimension_radix(d) - 2) * lanes_[d]; }
  void detour_path(uint32_t src, uint32_t dst, uint32_t index, std::vector<uint32_t>& out) const;
  // Appends the hop from `at` to digit m of dimension d on `lane`; returns the router reached.
  uint32_t hop(uint32_t at, unsigned d, uint32_t m, unsigned lane,
               std::vector<uint32_t>& out) const {
    const unsigned port = f_.channel_port(at, d, m, lane, kMode);
    out.push_back(at * channels_ + (port - f_.k()));
    return f_.neighbour(at, d, m);
  }

  topology::Fabric f_;
  uint32_t channels_;
  bool detours_;
  std::vector<unsigned> lanes_;  // per dimension
};

// Detour j: in the first differing dimension whose detours reach j, through the
// (j / lanes)-th other router, every hop on lane first_lane + j % lanes; dimensions ascending.
void FlattenedButterfly::detour_path(uint32_t src, uint32_t dst, uint32_t j,
                                     std::vector<uint32_t>& out) const {
  Hops h = hops(src, dst);
  unsigned via_dim = 0;
  for (unsigned d = 0; d < f_.dimensions(); ++d) {
    if (!h.differs(d)) continue;
    if (j < detours(d)) {
      via_dim = d;
      break;
    }
    j -= detours(d);
  }
  uint32_t at = src / f_.k();
  const uint32_t to = dst / f_.k();
  const unsigned lanes = lanes_[via_dim];
  uint32_t via = j / lanes;  // the via-th digit other than the two ends
  for (uint32_t m = 0; m <= via; ++m) {
    if (m == digit(at, via_dim) || m == digit(to, via_dim)) ++via;
  }
  for (unsigned d = 0; d < f_.dimensions(); ++d) {
    if (!h.differs(d)) continue;
    const unsigned lane = (first_lane(src, d) + j % lanes) % lanes_[d];
    if (d == via_dim) at = hop(at, d, via, lane, out);
    at = hop(at, d, digit(to, d), lane, out);
  }
}

void FlattenedButterfly::path(uint32_t src, uint32_t dst, uint32_t index,
                              std::vector<uint32_t>& out) const {
  const uint32_t minimal = minimal_paths(src, dst);
  if (index >= minimal) return detour_path(src, dst, index - minimal, out);
  Hops h = hops(src, dst);
  std::array<unsigned, 32> dims;
  unsigned n_dims = 0;
  for (unsigned d = 0; d < f_.dimensions(); ++d) {
    if (h.differs(d)) dims[n_dims++] = d;
  }
  const uint32_t n_orders = orders(h.count);
  if (index % n_orders == 1) std::reverse(dims.begin(), dims.begin() + n_dims);
  uint32_t lanes_index = index / n_orders;
  uint32_t at = src / f_.k();
  const uint32_t to = dst / f_.k();
  for (unsigned i = 0; i < n_dims; ++i) {
    const unsigned d = dims[i];
    const unsigned lanes = lanes_[d];
    const unsigned lane = (first_lane(src, d) + lanes_index % lanes) % lanes;
    lanes_index /= lanes;
    at = hop(at, d, digit(to, d), lane, out);
  }
}

// One dimension, k <= 2 routers: configuration (i, j) sends terminal p of router r to port
// p + j of router r + p + i (mod), a permutation of the terminals in which a router pair
// carries ceil(k / routers) <= 2 connections, on different lanes (first_lane).
int64_t FlattenedButterfly::aapc_phase(uint32_t src, uint32_t dst) const {
  if (!aapc_ok()) return -1;
  const uint32_t k = f_.k();
  const uint32_t routers = f_.routers();
  const uint32_t r = src / k, p = src % k, r2 = dst / k, p2 = dst % k;
  const uint32_t i = (r2 + 2 * routers * k - r - p) % routers;
  const uint32_t j = (p2 + k - p) % k;
  return int64_t{i} * k + j;
}

// Every choice of paths crosses: for routers differing in one dimension, one of the lanes
// between them; out of (into) a router, one of its channels.
uint32_t FlattenedButterfly::link_lower_bound(std::span<const Conn> conns) const {
  const uint32_t routers = f_.routers();
  if (f_.dimensions() == 0) return 0;
  std::vector<uint32_t> out(routers, 0), in(routers, 0);
  const bool pairs = !detours_ && routers <= 4096;  // a detour avoids the direct lanes
  std::vector<uint32_t> pair(pairs ? size_t{routers} * routers : 0, 0);
  uint32_t most = 0;
  for (const Conn& c : conns) {
    const uint32_t a = c.src / f_.k();
    const uint32_t b = c.dst / f_.k();
    if (a == b) continue;
    most = std::max(
        {most, (++out[a] + channels_ - 1) / channels_, (++in[b] + channels_ - 1) / channels_});
    if (!pairs) continue;
    Hops h = hops(c.src, c.dst);
    if (h.count != 1) continue;
    const uint32_t lanes = lanes_[std::countr_zero(h.mask)];
    most = std::max(most, (++pair[size_t{a} * routers + b] + lanes - 1) / lanes);
  }
  return most;
}

// FT(l, w): switch (h, tau) is h * w^(l-1) + tau; ports 0..w-1 down, w..2w-1 up. Up link
// (h, tau, i) is ((h * w^(l-1) + tau) * w + i) * 2, the down link into (h, tau) through its
// up port i the next number (the seed's Ulink / Dlink, 000 L1430).
class FatTree final : public Target {
 public:
  FatTree(uint32_t l, uint32_t w) : l_(l), w_(w), per_level_(1) {
    for (uint32_t i = 0; i + 1 < l; ++i) per_level_ *= w;
  }
  std::string name() const override {
    return "fat tree FT(" + std::to_string(l_) + ", " + std::to_string(w_) + ")";
  }
  uint32_t terminals() const override { return per_level_ * w_; }
  uint32_t links() const override { return (l_ - 1) * per_level_ * w_ * 2; }
  uint32_t path_count(uint32_t src, uint32_t dst) const override {
    uint32_t count = 1;
    for (uint32_t h = 0; h < ancestor(src / w_, dst / w_); ++h) count *= w_;
    return count;
  }
  void path(uint32_t src, uint32_t dst, uint32_t index, std::vector<uint32_t>& out) const override {
    uint32_t sigma = src / w_, delta = dst / w_;
    const uint32_t top = ancestor(sigma, delta);
    std::vector<uint32_t> down(top);
    for (uint32_t h = 0; h < top; ++h, index /= w_) {
      const uint32_t port = index % w_;
      out.push_back(up_link(h, sigma, port));
      down[h] = up_link(h, delta, port) + 1;
      sigma = parent(h, sigma, port);
      delta = parent(h, delta, port);
    }
    for (uint32_t h = top; h-- > 0;) out.push_back(down[h]);
  }
  uint32_t link_lower_bound(std::span<const Conn> conns) const override;
  uint32_t fat_tree_width() const override { return w_; }
  uint32_t switches() const override { return l_ * per_level_; }
  Attach terminal_attach(uint32_t t) const override { return {t / w_, t % w_}; }
  LinkEnds link_ends(uint32_t link) const override {
    const uint32_t port = (link / 2) % w_;
    const uint32_t sw = link / 2 / w_;
    const uint32_t h = sw / per_level_, tau = sw % per_level_;
    const Attach child{sw, w_ + port};
    const Attach up{(h + 1) * per_level_ + parent(h, tau, port), digit(tau, h)};
    return link % 2 == 0 ? LinkEnds{child, up} : LinkEnds{up, child};
  }
  uint32_t switch_ports() const override { return 2 * w_; }

  // Theorem 3 (000 L1442): the switch above (h, tau) through up port p.
  uint32_t parent(uint32_t h, uint32_t tau, uint32_t p) const {
    uint32_t span = w_;  // w^(h+1)
    for (uint32_t i = 0; i < h; ++i) span *= w_;
    return (tau / span) * span + ((tau % span) * w_ + p) % span;
  }
  uint32_t up_link(uint32_t h, uint32_t tau, uint32_t p) const {
    return ((h * per_level_ + tau) * w_ + p) * 2;
  }
  // The level of the common ancestor: one above the highest differing base-w digit.
  uint32_t ancestor(uint32_t sigma, uint32_t delta) const {
    uint32_t h = 0;
    while (sigma != delta) {
      sigma /= w_;
      delta /= w_;
      ++h;
    }
    return h;
  }
  uint32_t digit(uint32_t tau, uint32_t i) const {
    for (uint32_t j = 0; j < i; ++j) tau /= w_;
    return tau % w_;
  }

 private:
  uint32_t l_;
  uint32_t w_;
  uint32_t per_level_;  // w^(l-1)
};

// Every path out of (into) a level-0 switch uses one of its w up (down) links.
uint32_t FatTree::link_lower_bound(std::span<const Conn> conns) const {
  std::vector<uint32_t> out(per_level_, 0), in(per_level_, 0);
  uint32_t most = 0;
  for (const Conn& c : conns) {
    const uint32_t a = c.src / w_, b = c.dst / w_;
    if (a == b) continue;
    most = std::max({most, (++out[a] + w_ - 1) / w_, (++in[b] + w_ - 1) / w_});
  }
  return most;
}

}  // namespace

std::unique_ptr<Target> make_flattened_butterfly(uint64_t terminals, uint32_t k, bool detours) {
  return std::make_unique<FlattenedButterfly>(terminals, k, detours);
}

std::unique_ptr<Target> make_fat_tree(uint32_t levels, uint32_t w) {
  uint64_t n = w;
  for (uint32_t i = 1; i < levels && n <= (1u << 20); ++i) n *= w;
  if (levels < 1 || w < 2 || n > (1u << 20)) {
    throw std::invalid_argument("a fat tree FT(l, w) needs l >= 1, w >= 2, w^l <= 2^20");
  }
  return std::make_unique<FatTree>(levels, w);
}

}  // namespace asn::fabric_schedule

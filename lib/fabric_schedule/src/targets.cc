// The linear array, the torus and the single crossbar, and what every target shares.
#include <algorithm>
#include <string>

#include "asn/fabric_schedule/target.hpp"
#include "ring_aapc.hpp"

namespace asn::fabric_schedule {

int64_t Target::aapc_phase(uint32_t, uint32_t) const { return -1; }

uint32_t Target::link_lower_bound(std::span<const Conn> conns) const {
  std::vector<uint32_t> load(links(), 0);
  std::vector<uint32_t> path_links;
  uint32_t most = 0;
  for (const Conn& c : conns) {
    if (path_count(c.src, c.dst) != 1) return 0;  // a choice of paths: no exact bound here
    path_links.clear();
    path(c.src, c.dst, 0, path_links);
    for (uint32_t l : path_links) most = std::max(most, ++load[l]);
  }
  return most;
}

std::string Target::switch_name(uint32_t sw) const { return "s" + std::to_string(sw); }

void Target::check(const Conn& c) const {
  if (c.src >= terminals() || c.dst >= terminals()) {
    throw std::invalid_argument("connection " + std::to_string(c.src) + " -> " +
                                std::to_string(c.dst) + " names a terminal outside " + name() +
                                " (0.." + std::to_string(terminals() - 1) + ")");
  }
  if (c.src == c.dst) {
    throw std::invalid_argument("connection " + std::to_string(c.src) + " -> " +
                                std::to_string(c.dst) +
                                " is a terminal to itself: its NIC loops back without the fabric");
  }
}

namespace {

// Ports of a node of the array and the torus: 0 its terminal, then one per link direction.
constexpr uint32_t kTerminalPort = 0;

class LinearArray final : public Target {
 public:
  explicit LinearArray(uint32_t n) : n_(n) {}
  std::string name() const override { return "linear array " + std::to_string(n_); }
  uint32_t terminals() const override { return n_; }
  // Link 2i: i -> i+1 (port 1 of i, port 2 of i+1); link 2i+1: i+1 -> i.
  uint32_t links() const override { return 2 * (n_ - 1); }
  uint32_t path_count(uint32_t, uint32_t) const override { return 1; }
  void path(uint32_t src, uint32_t dst, uint32_t, std::vector<uint32_t>& out) const override {
    for (uint32_t i = src; i < dst; ++i) out.push_back(2 * i);
    for (uint32_t i = src; i > dst; --i) out.push_back(2 * (i - 1) + 1);
  }
  uint32_t switches() const override { return n_; }
  Attach terminal_attach(uint32_t t) const override { return {t, kTerminalPort}; }
  LinkEnds link_ends(uint32_t link) const override {
    const uint32_t i = link / 2;
    if (link % 2 == 0) return {{i, 1}, {i + 1, 2}};
    return {{i + 1, 2}, {i, 1}};
  }
  uint32_t switch_ports() const override { return 3; }

 private:
  uint32_t n_;
};

class Torus final : public Target {
 public:
  Torus(uint32_t x, uint32_t y) : x_(x), y_(y), ring_x_(ring_aapc(x)), ring_y_(ring_aapc(y)) {}
  std::string name() const override {
    return "torus " + std::to_string(x_) + "x" + std::to_string(y_);
  }
  uint32_t terminals() const override { return x_ * y_; }
  // Link node * 4 + direction: 0 +x, 1 -x, 2 +y, 3 -y; it leaves at port 1 + direction.
  uint32_t links() const override { return 4 * x_ * y_; }
  uint32_t path_count(uint32_t, uint32_t) const override { return 1; }
  void path(uint32_t src, uint32_t dst, uint32_t, std::vector<uint32_t>& out) const override {
    uint32_t col = src % x_;
    const uint32_t row = src / x_;
    // X first along the source's row, then Y along the destination's column.
    RingStep sx = ring_step(col, dst % x_, x_);
    for (uint32_t i = 0; i < sx.hops; ++i) {
      out.push_back((row * x_ + col) * 4 + (sx.positive ? 0 : 1));
      col = (col + (sx.positive ? 1 : x_ - 1)) % x_;
    }
    uint32_t r = row;
    RingStep sy = ring_step(row, dst / x_, y_);
    for (uint32_t i = 0; i < sy.hops; ++i) {
      out.push_back((r * x_ + col) * 4 + (sy.positive ? 2 : 3));
      r = (r + (sy.positive ? 1 : y_ - 1)) % y_;
    }
  }
  // The product of two ring AAPC splits (our construction; 002 L861 cites [33] for one):
  // connections whose X parts share ring configuration a and Y parts share b use distinct
  // links in every row (a's are link-disjoint) and every column (a fixes the column's one
  // sender, b's are link-disjoint), and each node sends and receives at most once.
  int64_t aapc_phase(uint32_t src, uint32_t dst) const override {
    if (ring_x_.configurations == 0 || ring_y_.configurations == 0) return -1;
    const int64_t a = ring_x_.phase[(src % x_) * x_ + dst % x_];
    const int64_t b = ring_y_.phase[(src / x_) * y_ + dst / x_];
    return a * ring_y_.configurations + b;
  }
  uint32_t aapc_phases() const override { return ring_x_.configurations * ring_y_.configurations; }
  uint32_t switches() const override { return x_ * y_; }
  Attach terminal_attach(uint32_t t) const override { return {t, kTerminalPort}; }
  LinkEnds link_ends(uint32_t link) const override {
    const uint32_t node = link / 4;
    const uint32_t dir = link % 4;
    const uint32_t col = node % x_;
    const uint32_t row = node / x_;
    uint32_t peer = 0;
    switch (dir) {
      case 0:
        peer = row * x_ + (col + 1) % x_;
        break;
      case 1:
        peer = row * x_ + (col + x_ - 1) % x_;
        break;
      case 2:
        peer = ((row + 1) % y_) * x_ + col;
        break;
      default:
        peer = ((row + y_ - 1) % y_) * x_ + col;
        break;
    }
    const uint32_t back = dir ^ 1u;  // the opposite direction's port at the peer
    return {{node, 1 + dir}, {peer, 1 + back}};
  }
  uint32_t switch_ports() const override { return 5; }

 private:
  uint32_t x_;
  uint32_t y_;
  RingAapc ring_x_;
  RingAapc ring_y_;
};

class Crossbar final : public Target {
 public:
  explicit Crossbar(uint32_t ports) : ports_(ports) {}
  std::string name() const override { return "crossbar " + std::to_string(ports_); }
  uint32_t terminals() const override { return ports_; }
  uint32_t links() const override { return 0; }
  uint32_t path_count(uint32_t, uint32_t) const override { return 1; }
  void path(uint32_t, uint32_t, uint32_t, std::vector<uint32_t>&) const override {}
  // Shifts: (dst - src) mod n, the closed form of lib/schedule's compiler.
  int64_t aapc_phase(uint32_t src, uint32_t dst) const override {
    return (dst + ports_ - src) % ports_;
  }
  uint32_t aapc_phases() const override { return ports_; }
  uint32_t switches() const override { return 1; }
  Attach terminal_attach(uint32_t t) const override { return {0, t}; }
  LinkEnds link_ends(uint32_t) const override { return {}; }
  uint32_t switch_ports() const override { return ports_; }

 private:
  uint32_t ports_;
};

void need(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

std::unique_ptr<Target> make_linear_array(uint32_t nodes) {
  need(nodes >= 2 && nodes <= (1u << 20), "a linear array needs 2 .. 2^20 nodes");
  return std::make_unique<LinearArray>(nodes);
}

std::unique_ptr<Target> make_torus(uint32_t x, uint32_t y) {
  need(x >= 3 && y >= 3 && uint64_t{x} * y <= (1u << 20),
       "a torus needs at least 3 nodes per ring and at most 2^20 nodes");
  return std::make_unique<Torus>(x, y);
}

std::unique_ptr<Target> make_crossbar(uint32_t ports) {
  need(ports >= 2 && ports <= (1u << 20), "a crossbar needs 2 .. 2^20 ports");
  return std::make_unique<Crossbar>(ports);
}

}  // namespace asn::fabric_schedule

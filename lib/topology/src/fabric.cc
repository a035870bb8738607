#include "asn/topology/fabric.hpp"

#include <string>

namespace asn::topology {
namespace {

std::string str(uint64_t value) { return std::to_string(value); }

}  // namespace

Fabric::Fabric(uint64_t terminals, uint32_t k) {
  if (k < 2) {
    throw TopologyError("k", "k = " + str(k) + " terminals per router; a 2DFB needs k >= 2");
  }
  if (terminals < k) {
    throw TopologyError("terminals", "N = " + str(terminals) + " is below k = " + str(k) +
                                         "; a fabric has at least one router of k terminals");
  }
  if (terminals > kMaxTerminals) {
    throw TopologyError("terminals",
                        "N = " + str(terminals) + " exceeds the limit of " + str(kMaxTerminals));
  }
  // k^floor(log_k N) by multiplication: no floating-point logarithm near exact powers.
  uint64_t power = 1;
  unsigned exponent = 0;
  while (power * k <= terminals) {
    power *= k;
    ++exponent;
  }
  if (terminals % power != 0) {
    throw TopologyError("terminals", "N = " + str(terminals) +
                                         " is not a multiple of k^floor(log_k N) = " + str(power) +
                                         " (k = " + str(k) + "); accepted: N = m * " + str(power) +
                                         " with 1 <= m < " + str(k) + " (004 L349)");
  }
  terminals_ = static_cast<uint32_t>(terminals);
  k_ = k;
  subsystems_ = static_cast<uint32_t>(terminals / power);
  // N = k^e: e - 1 dimensions of k routers. N = N_s k^e: e dimensions, the last of N_s.
  dimensions_ = subsystems_ == 1 ? exponent - 1 : exponent;
  routers_ = static_cast<uint32_t>(terminals / k);
  weights_.resize(dimensions_ + 1);
  weights_[0] = 1;
  for (unsigned i = 1; i <= dimensions_; ++i) weights_[i] = weights_[i - 1] * k;
}

uint32_t Fabric::dimension_radix(unsigned dim) const {
  check_dimension(dim);
  return dim + 1 == dimensions_ && !power_of_k() ? subsystems_ : k_;
}

double Fabric::last_dilation() const {
  return power_of_k() ? 2.0 : 2.0 * k_ / subsystems_;  // Eq 8: 2 k^(floor(log_k N)+1) / N
}

unsigned Fabric::lanes(unsigned dim, ChannelMode mode) const {
  check_dimension(dim);
  unsigned dilated = 2;
  if (dim + 1 == dimensions_ && !power_of_k()) {
    dilated = (2 * k_ + subsystems_ - 1) / subsystems_;  // ceil(DF_d), Eq 9
  }
  return mode == ChannelMode::kDilated ? dilated : (dilated + 1) / 2;
}

uint32_t Fabric::dimension_ports(unsigned dim, ChannelMode mode) const {
  return (dimension_radix(dim) - 1) * lanes(dim, mode);
}

uint32_t Fabric::radix(ChannelMode mode) const {
  uint32_t ports = k_;
  for (unsigned dim = 0; dim < dimensions_; ++dim) ports += dimension_ports(dim, mode);
  return ports;
}

uint64_t Fabric::links() const {
  // Every link has two ends, each a port of some router.
  return uint64_t{routers_} * (radix(ChannelMode::kDilated) - k_) / 2;
}

uint64_t Fabric::double_rate_links() const {
  return uint64_t{routers_} * (radix(ChannelMode::kDoubleRate) - k_) / 2;
}

unsigned Fabric::worst_case_hops() const {
  unsigned hops = 0;
  for (unsigned dim = 0; dim < dimensions_; ++dim) hops += dimension_radix(dim) > 2 ? 2 : 1;
  return hops;
}

uint32_t Fabric::terminal_router(uint32_t terminal) const {
  if (terminal >= terminals_) {
    throw TopologyError("terminal", "terminal " + str(terminal) + " is outside the fabric: 0.." +
                                        str(terminals_ - 1));
  }
  return terminal / k_;
}

std::vector<uint32_t> Fabric::digits(uint32_t router) const {
  check_router(router);
  std::vector<uint32_t> out(dimensions_);
  for (unsigned dim = 0; dim < dimensions_; ++dim) {
    // The top digit takes what is left: base N_s in a fabric that is not a power of k.
    out[dim] = dim + 1 == dimensions_ ? router : router % k_;
    router /= k_;
  }
  return out;
}

uint32_t Fabric::router_of(const std::vector<uint32_t>& digits) const {
  if (digits.size() != dimensions_) {
    throw TopologyError("digits",
                        str(digits.size()) + " digits given; this fabric has " + str(dimensions_));
  }
  uint32_t router = 0;
  for (unsigned dim = 0; dim < dimensions_; ++dim) {
    if (digits[dim] >= dimension_radix(dim)) {
      throw TopologyError("digits", "digit " + str(dim) + " is " + str(digits[dim]) +
                                        "; accepted: 0.." + str(dimension_radix(dim) - 1));
    }
    router += digits[dim] * weights_[dim];
  }
  return router;
}

uint32_t Fabric::neighbour(uint32_t router, unsigned dim, uint32_t m) const {
  check_router(router);
  if (m >= dimension_radix(dim)) {
    throw TopologyError("digit", "digit " + str(m) + " in dimension " + str(dim) +
                                     "; accepted: 0.." + str(dimension_radix(dim) - 1));
  }
  // Eq 1 as printed, with d - 1 = dim.
  const int64_t own = (router / weights_[dim]) % k_;
  return static_cast<uint32_t>(int64_t{router} + (int64_t{m} - own) * weights_[dim]);
}

uint64_t Fabric::link_number(uint32_t from, uint32_t to) const {
  check_router(from);
  check_router(to);
  return uint64_t{to} * weights_[dimensions_] + from;
}

unsigned Fabric::dimension_base(unsigned dim, ChannelMode mode) const {
  check_dimension(dim);
  unsigned base = k_;
  for (unsigned lower = 0; lower < dim; ++lower) base += dimension_ports(lower, mode);
  return base;
}

PortInfo Fabric::port_info(uint32_t router, unsigned port, ChannelMode mode) const {
  check_router(router);
  if (port >= radix(mode)) {
    throw TopologyError(
        "port", "port " + str(port) + " is beyond the radix; accepted: 0.." + str(radix(mode) - 1));
  }
  if (port < k_) return {PortRole::kTerminal, 0, port, 0};
  unsigned index = port - k_;
  unsigned dim = 0;
  while (index >= dimension_ports(dim, mode)) index -= dimension_ports(dim++, mode);
  const unsigned lanes_per_peer = lanes(dim, mode);
  const uint32_t own = (router / weights_[dim]) % k_;
  const uint32_t peer_index = index / lanes_per_peer;
  return {PortRole::kChannel, dim, peer_index < own ? peer_index : peer_index + 1,
          index % lanes_per_peer};
}

unsigned Fabric::channel_port(uint32_t router, unsigned dim, uint32_t digit, unsigned lane,
                              ChannelMode mode) const {
  check_router(router);
  const uint32_t own = (router / weights_[dim]) % k_;
  if (digit >= dimension_radix(dim) || digit == own) {
    throw TopologyError("digit", "digit " + str(digit) + " in dimension " + str(dim) +
                                     " names no peer of router " + str(router) + "; accepted: 0.." +
                                     str(dimension_radix(dim) - 1) + " except " + str(own));
  }
  if (lane >= lanes(dim, mode)) {
    throw TopologyError("lane", "lane " + str(lane) + "; dimension " + str(dim) + " has " +
                                    str(lanes(dim, mode)) + " lanes per peer");
  }
  const uint32_t peer_index = digit < own ? digit : digit - 1;
  return dimension_base(dim, mode) + peer_index * lanes(dim, mode) + lane;
}

PortEnd Fabric::peer(uint32_t router, unsigned port, ChannelMode mode) const {
  const PortInfo info = port_info(router, port, mode);
  if (info.role != PortRole::kChannel) {
    throw TopologyError("port", "port " + str(port) + " is a terminal port; it leads to no router");
  }
  const uint32_t other = neighbour(router, info.dimension, info.digit);
  const uint32_t own = (router / weights_[info.dimension]) % k_;
  return {other, channel_port(other, info.dimension, own, info.lane, mode)};
}

void Fabric::check_router(uint32_t router) const {
  if (router >= routers_) {
    throw TopologyError(
        "router", "router " + str(router) + " is outside the fabric: 0.." + str(routers_ - 1));
  }
}

void Fabric::check_dimension(unsigned dim) const {
  if (dim >= dimensions_) {
    throw TopologyError("dimension",
                        "dimension " + str(dim) + "; " +
                            (dimensions_ == 0 ? "a one-router fabric has none"
                                              : "accepted: 0.." + str(dimensions_ - 1)));
  }
}

}  // namespace asn::topology

#include <string>

#include "asn/circuit/error.hpp"
#include "asn/circuit/sim.hpp"

namespace asn::circuit {

// Ports 0..3: +x, -x, +y, -y. Node n is (n % side, n / side).
Fabric torus(uint32_t side, uint32_t degree) {
  if (side < 2 || side > 64) {
    throw CircuitError(ErrorKind::kInvalidArgument, "size",
                       std::to_string(side) + "; a torus side of 2..64 is accepted");
  }
  Fabric f(side * side, degree);
  for (uint32_t y = 0; y < side; ++y) {
    for (uint32_t x = 0; x < side; ++x) {
      const uint32_t n = y * side + x;
      f.add_link(n, 0, y * side + (x + 1) % side);
      f.add_link(n, 1, y * side + (x + side - 1) % side);
      f.add_link(n, 2, ((y + 1) % side) * side + x);
      f.add_link(n, 3, ((y + side - 1) % side) * side + x);
    }
  }
  return f;
}

std::vector<uint32_t> xy_ports(uint32_t side, uint32_t src, uint32_t dst) {
  std::vector<uint32_t> ports;
  const auto dim = [&](uint32_t from, uint32_t to, uint32_t plus) {
    const uint32_t ahead = (to + side - from) % side;
    if (ahead <= side / 2) {
      ports.insert(ports.end(), ahead, plus);
    } else {
      ports.insert(ports.end(), side - ahead, plus + 1);
    }
  };
  dim(src % side, dst % side, 0);
  dim(src / side, dst / side, 2);
  return ports;
}

}  // namespace asn::circuit

#include "generators.hpp"

namespace asn::schedule::detail {

uint64_t all_to_all_count(uint64_t n) { return n == 0 ? 0 : n * (n - 1); }

uint64_t mesh_count(uint32_t rows, uint32_t cols, bool wrap) {
  // Each direction of each axis: an edge between neighbours, counted per sender.
  auto axis = [wrap](uint64_t length) -> uint64_t {
    if (length <= 1) return 0;
    return wrap ? 2 * length : 2 * (length - 1);
  };
  return axis(cols) * rows + axis(rows) * cols;
}

void all_to_all(uint32_t n, std::vector<IndexPair>& out) {
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      if (i != j) out.push_back({i, j});
    }
  }
}

void shift(uint32_t n, int64_t by, std::vector<IndexPair>& out) {
  int64_t step = ((by % n) + n) % n;
  for (uint32_t i = 0; i < n; ++i) out.push_back({i, static_cast<uint32_t>((i + step) % n)});
}

void transpose(uint32_t rows, uint32_t cols, std::vector<IndexPair>& out) {
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      uint32_t from = r * cols + c;
      uint32_t to = c * rows + r;
      if (from != to) out.push_back({from, to});
    }
  }
}

void mesh(uint32_t rows, uint32_t cols, bool wrap, std::vector<IndexPair>& out) {
  auto node = [cols](uint32_t r, uint32_t c) { return r * cols + c; };
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      uint32_t self = node(r, c);
      auto send = [&](bool exists, uint32_t to) {
        if (exists && to != self) out.push_back({self, to});
      };
      send(wrap || c + 1 < cols, node(r, (c + 1) % cols));  // east
      send(wrap || c > 0, node(r, (c + cols - 1) % cols));  // west
      send(wrap || r + 1 < rows, node((r + 1) % rows, c));  // south
      send(wrap || r > 0, node((r + rows - 1) % rows, c));  // north
    }
  }
}

}  // namespace asn::schedule::detail

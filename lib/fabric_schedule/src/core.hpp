// What the compiler's algorithms share: a connection's resources on a path, the chosen
// paths as flat lists, and a table of the slots each resource is busy in.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "asn/fabric_schedule/target.hpp"

namespace asn::fabric_schedule::detail {

// The resources of c on path `index`: src's send port, the links, dst's receive port.
inline void resources_of(const Target& t, const Conn& c, uint32_t index, std::vector<uint32_t>& out,
                         std::vector<uint32_t>& scratch) {
  out.clear();
  scratch.clear();
  t.path(c.src, c.dst, index, scratch);
  out.push_back(t.send_port(c.src));
  for (uint32_t l : scratch) out.push_back(t.link_resource(l));
  out.push_back(t.receive_port(c.dst));
}

// Every connection's resources on its chosen path, flat.
struct Routed {
  std::vector<uint64_t> offset;  // connections + 1
  std::vector<uint32_t> res;
  std::span<const uint32_t> of(size_t i) const {
    return {res.data() + offset[i], static_cast<size_t>(offset[i + 1] - offset[i])};
  }
  size_t size() const { return offset.empty() ? 0 : offset.size() - 1; }
};
Routed route(const Target& t, std::span<const Conn> conns, std::span<const uint32_t> path_of);

// A bit per (resource, slot): set when the resource is busy in the slot. Grows as slots are
// added.
class SlotTable {
 public:
  SlotTable(uint32_t resources, uint32_t slots_hint)
      : resources_(resources),
        words_(std::max<uint32_t>(1, (slots_hint + 63) / 64)),
        bits_(size_t{resources} * words_, 0) {}
  // The first slot at which every resource is free.
  uint32_t first_free(std::span<const uint32_t> res) const {
    for (uint32_t w = 0; w < words_; ++w) {
      uint64_t busy = 0;
      for (uint32_t r : res) busy |= bits_[size_t{r} * words_ + w];
      if (busy != ~uint64_t{0}) return w * 64 + static_cast<uint32_t>(std::countr_one(busy));
    }
    return words_ * 64;
  }
  bool is_free(std::span<const uint32_t> res, uint32_t slot) const {
    if (slot >= words_ * 64) return true;
    for (uint32_t r : res) {
      if (bit(r, slot)) return false;
    }
    return true;
  }
  void set(std::span<const uint32_t> res, uint32_t slot, bool busy) {
    if (slot >= words_ * 64) grow(slot + 1);
    const uint64_t mask = uint64_t{1} << (slot % 64);
    for (uint32_t r : res) {
      uint64_t& word = bits_[size_t{r} * words_ + slot / 64];
      word = busy ? word | mask : word & ~mask;
    }
  }
  bool bit(uint32_t r, uint32_t slot) const {
    return slot < words_ * 64 && (bits_[size_t{r} * words_ + slot / 64] >> (slot % 64) & 1) != 0;
  }

 private:
  void grow(uint32_t slots) {
    uint32_t words = words_;
    while (words * 64 < slots) words *= 2;
    std::vector<uint64_t> bits(size_t{resources_} * words, 0);
    for (size_t r = 0; r < resources_; ++r) {
      for (uint32_t w = 0; w < words_; ++w) bits[r * words + w] = bits_[r * words_ + w];
    }
    bits_.swap(bits);
    words_ = words;
  }
  uint32_t resources_;
  uint32_t words_;
  std::vector<uint64_t> bits_;
};

// Slots in use: one past the highest slot of any connection.
uint32_t slot_count(std::span<const uint32_t> slot_of);

// The seed's baselines on path 0 (baselines.cc); slot_of per connection.
std::vector<uint32_t> greedy(const Target& t, std::span<const Conn> conns,
                             std::span<const uint32_t> order);
std::vector<uint32_t> coloring(const Target& t, std::span<const Conn> conns);
std::vector<uint32_t> ordered_aapc(const Target& t, std::span<const Conn> conns);
// 000 Ch. 7 on a fat tree (fat_tree_schemes.cc): slot_of and path_of.
struct Placed {
  std::vector<uint32_t> slot_of;
  std::vector<uint32_t> path_of;
};
Placed level_wise(const Target& t, std::span<const Conn> conns);
Placed local_random(const Target& t, std::span<const Conn> conns, uint64_t seed);

}  // namespace asn::fabric_schedule::detail

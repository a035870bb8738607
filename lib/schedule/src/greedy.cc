#include "asn/schedule/greedy.hpp"

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "greedy_assign.hpp"
#include "text.hpp"

namespace asn::schedule {

GreedyScheduler::GreedyScheduler(uint32_t ports, uint32_t slots)
    : ports_(ports),
      slots_(slots),
      input_of_(size_t{slots} * ports, kNone),
      realised_(size_t{ports} * ports, 0) {}

GreedyScheduler::StepResult GreedyScheduler::step(const RequestMatrix& requests, uint32_t slot,
                                                  uint32_t a, uint32_t b) {
  if (requests.ports() != ports_ || slot >= slots_) {
    throw std::invalid_argument("GreedyScheduler::step: request matrix or slot out of range");
  }
  StepResult result;
  uint32_t* input_of = &input_of_[size_t{slot} * ports_];
  // AO: output v used in slot s; AI: input u used in slot s (L991).
  std::vector<uint8_t> output_used(ports_, 0);
  std::vector<uint8_t> input_used(ports_, 0);
  for (uint32_t v = 0; v < ports_; ++v) {
    if (input_of[v] != kNone) {
      output_used[v] = 1;
      input_used[input_of[v]] = 1;
    }
  }
  // A(.,v) runs through the rows from row a, D(u,.) through the columns from column b.
  for (uint32_t i = 0; i < ports_; ++i) {
    uint32_t u = (a + i) % ports_;
    uint8_t d = input_used[u];
    for (uint32_t j = 0; j < ports_; ++j) {
      uint32_t v = (b + j) % ports_;
      const bool connected = input_of[v] == u;  // B^(s)(u,v)
      const bool requested = requests.get(u, v);
      uint32_t& realised = realised_[size_t{u} * ports_ + v];
      // Table 5.1: release what is no longer requested; establish what is requested and
      // realised in no slot (B* = 0).
      const bool change = connected ? !requested : (requested && realised == 0);
      if (!change) continue;
      if (connected) {  // Table 5.2, read by the B bit: release, freeing A and D
        input_of[v] = kNone;
        --realised;
        output_used[v] = 0;
        d = 0;
        ++result.released;
      } else if (output_used[v] == 0 && d == 0) {  // establish, taking A and D
        input_of[v] = u;
        ++realised;
        output_used[v] = 1;
        d = 1;
        ++result.established;
      } else {
        ++result.blocked;
      }
    }
  }
  return result;
}

bool GreedyScheduler::connected(uint32_t slot, uint32_t input, uint32_t output) const {
  return input_of_[size_t{slot} * ports_ + output] == input;
}

bool GreedyScheduler::established(uint32_t input, uint32_t output) const {
  return realised_[size_t{input} * ports_ + output] != 0;
}

Slot GreedyScheduler::slot_connections(uint32_t slot) const {
  Slot result;
  for (uint32_t v = 0; v < ports_; ++v) {
    uint32_t u = input_of_[size_t{slot} * ports_ + v];
    if (u != kNone) result.connections.push_back({u, v, {}});
  }
  return result;
}

namespace detail {
namespace {

// One bit per output, 64 to a word.
class BitRow {
 public:
  explicit BitRow(uint32_t bits) : words_((bits + 63) / 64, 0) {}
  void set(uint32_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void clear(uint32_t i) { words_[i / 64] &= ~(uint64_t{1} << (i % 64)); }
  bool test(uint32_t i) const { return (words_[i / 64] >> (i % 64) & 1) != 0; }
  void fill_first(uint32_t bits) {
    std::fill(words_.begin(), words_.end(), 0);
    for (uint32_t w = 0; w < bits / 64; ++w) words_[w] = ~uint64_t{0};
    if (bits % 64 != 0) words_[bits / 64] = (uint64_t{1} << (bits % 64)) - 1;
  }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  std::vector<uint64_t> words_;
};

// The first bit set in both rows at or after `start`, wrapping around; or -1.
int64_t first_common(const BitRow& x, const BitRow& y, uint32_t start, uint32_t bits) {
  const auto& a = x.words();
  const auto& b = y.words();
  const size_t words = a.size();
  size_t w = start / 64;
  uint64_t word = a[w] & b[w] & (~uint64_t{0} << (start % 64));
  for (size_t k = 0; k <= words; ++k) {
    if (word != 0) {
      uint64_t bit = w * 64 + static_cast<uint64_t>(std::countr_zero(word));
      if (bit < bits) return static_cast<int64_t>(bit);
    }
    w = (w + 1) % words;
    word = a[w] & b[w];
    if (k + 1 == words) word &= (uint64_t{1} << (start % 64)) - 1;  // back at the start word
  }
  return -1;
}

}  // namespace

// Slots 0, 1, 2, ... in turn, each filled by one step of the SL array over an empty slot with
// the origin a = b = slot mod N (round robin, L1000), until every connection is established.
// Over an empty slot a step only establishes, and a row takes at most one connection (its D
// signal is then set), so a step is: for each row from a, the first requested output from b
// that is still free. Bit rows make that O(N / 64) a row. Repeated connections: B* counts
// how often a pair is realised, so a pair stays requested until each copy has its slot.
std::vector<uint32_t> greedy_assign(std::span<const Connection> pattern, uint32_t& slots) {
  uint32_t n = 0;
  for (const auto& c : pattern) n = std::max({n, c.from + 1, c.to + 1});
  if (n > kMaxGreedyPorts) {
    throw std::length_error(cat("the greedy baseline models an N x N array of up to ",
                                kMaxGreedyPorts, " ports; this pattern uses port ", n - 1));
  }
  std::vector<BitRow> pending(n, BitRow(n));
  std::unordered_map<uint64_t, uint32_t> extra;  // copies of a pair beyond the first
  for (const auto& c : pattern) {
    const uint64_t key = uint64_t{c.from} << 32 | c.to;
    if (pending[c.from].test(c.to)) {
      ++extra[key];
    } else {
      pending[c.from].set(c.to);
    }
  }
  struct Made {
    uint32_t from, to, slot;
  };
  std::vector<Made> made;
  made.reserve(pattern.size());
  BitRow free_outputs(n);
  slots = 0;
  while (made.size() < pattern.size()) {
    const uint32_t slot = slots++;
    const uint32_t origin = slot % n;
    free_outputs.fill_first(n);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t u = (origin + i) % n;
      int64_t v = first_common(pending[u], free_outputs, origin, n);
      if (v < 0) continue;
      const auto out = static_cast<uint32_t>(v);
      free_outputs.clear(out);
      made.push_back({u, out, slot});
      auto it = extra.find(uint64_t{u} << 32 | out);
      if (it != extra.end() && it->second > 0) {
        --it->second;
      } else {
        pending[u].clear(out);
      }
    }
  }
  // The k-th copy of a pair (in pattern order) takes the k-th slot made for that pair.
  std::vector<uint32_t> order(pattern.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return std::pair(pattern[x].from, pattern[x].to) < std::pair(pattern[y].from, pattern[y].to);
  });
  std::sort(made.begin(), made.end(), [](const Made& x, const Made& y) {
    return std::tie(x.from, x.to, x.slot) < std::tie(y.from, y.to, y.slot);
  });
  std::vector<uint32_t> slot_of(pattern.size());
  for (size_t k = 0; k < order.size(); ++k) slot_of[order[k]] = made[k].slot;
  return slot_of;
}

}  // namespace detail
}  // namespace asn::schedule

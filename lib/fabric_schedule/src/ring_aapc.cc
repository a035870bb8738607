// The ring AAPC split by depth-first search. Hinrichs et al. ([33], 002 L861) construct one
// for the torus, but the seed does not print it; a search over the n^2 ring pairs is small
// and gives the same count, n^2 / 8 for n = 8 (every link used in every configuration).
#include "ring_aapc.hpp"

#include <algorithm>

namespace asn::fabric_schedule {
namespace {

struct Pair {
  uint32_t s = 0;
  uint32_t d = 0;
  std::vector<uint32_t> links;  // positive link i: 2i (i -> i+1), negative: 2i+1 (i -> i-1)
};

class Search {
 public:
  Search(uint32_t n, uint32_t k, std::vector<Pair> pairs)
      : k_(k),
        pairs_(std::move(pairs)),
        senders_(k, std::vector<bool>(n)),
        receivers_(k, std::vector<bool>(n)),
        links_(k, std::vector<bool>(2 * n)),
        phase_(pairs_.size(), 0) {}

  bool run() { return place(0, 0); }
  const std::vector<uint32_t>& phase() const { return phase_; }

 private:
  static constexpr uint64_t kBudget = 20'000'000;  // visits before giving up

  bool fits(const Pair& p, uint32_t c) const {
    if (senders_[c][p.s] || receivers_[c][p.d]) return false;
    return std::none_of(p.links.begin(), p.links.end(), [&](uint32_t l) { return links_[c][l]; });
  }
  void mark(const Pair& p, uint32_t c, bool on) {
    senders_[c][p.s] = on;
    receivers_[c][p.d] = on;
    for (uint32_t l : p.links) links_[c][l] = on;
  }
  // used: configurations opened so far; an unopened one is tried once (they are alike).
  bool place(size_t i, uint32_t used) {
    if (i == pairs_.size()) return true;
    if (++visits_ > kBudget) return false;
    for (uint32_t c = 0; c < std::min(used + 1, k_); ++c) {
      if (!fits(pairs_[i], c)) continue;
      mark(pairs_[i], c, true);
      phase_[i] = c;
      if (place(i + 1, std::max(used, c + 1))) return true;
      mark(pairs_[i], c, false);
      if (visits_ > kBudget) return false;
    }
    return false;
  }

  uint32_t k_;
  std::vector<Pair> pairs_;
  std::vector<std::vector<bool>> senders_, receivers_, links_;
  std::vector<uint32_t> phase_;
  uint64_t visits_ = 0;
};

}  // namespace

RingAapc ring_aapc(uint32_t n) {
  std::vector<Pair> pairs;
  uint64_t hops = 0;
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      Pair p{s, d, {}};
      RingStep step = ring_step(s, d, n);
      uint32_t at = s;
      for (uint32_t h = 0; h < step.hops; ++h) {
        p.links.push_back(step.positive ? 2 * at : 2 * at + 1);
        at = step.positive ? (at + 1) % n : (at + n - 1) % n;
      }
      hops += p.links.size();
      pairs.push_back(std::move(p));
    }
  }
  // Longest first: they are the hardest to place.
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const Pair& a, const Pair& b) { return a.links.size() > b.links.size(); });
  const uint32_t k = std::max<uint32_t>(n, static_cast<uint32_t>((hops + 2 * n - 1) / (2 * n)));
  Search search(n, k, pairs);
  RingAapc out;
  if (!search.run()) return out;
  out.configurations = k;
  out.phase.assign(size_t{n} * n, 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    out.phase[pairs[i].s * n + pairs[i].d] = search.phase()[i];
  }
  return out;
}

}  // namespace asn::fabric_schedule

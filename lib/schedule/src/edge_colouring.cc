#include "edge_colouring.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <memory>

namespace asn::schedule::detail {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kDummy = std::numeric_limits<uint32_t>::max();
// Below this many edges (links in the L2 cache) one walk at a time beats interleaved walks.
constexpr size_t kSerialWalkEdges = size_t{1} << 17;
// Perfect matchings in graphs of up to this many vertices a side use augmenting paths only.
constexpr uint32_t kWalkVertices = 64;

// An edge of the working graph. Its left vertex is implicit: the edges of a d-regular
// (sub)graph are kept sorted by left vertex, so left vertex u owns positions [u*d, u*d + d).
// Both the Euler split (a stable partition) and the removal of a perfect matching (one edge
// out of every block) keep that layout, which saves the left endpoint and makes a left
// vertex's Euler pairing simply "position i pairs with i ^ 1".
struct WorkEdge {
  uint32_t right;
  uint32_t id;  // index into the caller's edges, or kDummy for a regularising edge
};

// splitmix64: small, fast, and seeded with a constant so that compiles are reproducible.
class Rng {
 public:
  uint32_t below(uint32_t bound) {  // uniform enough in [0, bound) (Lemire's multiply-shift)
    return static_cast<uint32_t>((next() >> 32) * bound >> 32);
  }

 private:
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_ = 0x5eed5eed5eed5eedull;
};

class Colourer {
 public:
  Colourer(uint32_t vertices, size_t edges, std::vector<uint32_t>& colour)
      : n_(vertices),
        link_(std::make_unique_for_overwrite<uint32_t[]>(edges + 1)),
        side_(std::make_unique_for_overwrite<uint8_t[]>(edges)),
        owner_(edges > kSerialWalkEdges ? std::make_unique_for_overwrite<uint32_t[]>(edges)
                                        : nullptr),
        pend_(vertices, kNone),
        mate_(vertices, kNone),
        mate_left_(vertices, kNone),
        match_left_(vertices, kNone),
        colour_(colour) {}

  // Colours the n-vertex d-regular graph e[0, m) with colours [c0, c0 + d); tmp is scratch
  // of the same size. The ranges are reused: children of a split live in tmp.
  void colour(WorkEdge* e, WorkEdge* tmp, size_t m, uint32_t d, uint32_t c0) {
    if (m == 0) return;
    while (d % 2 == 1 && d > 1) {
      take_matching(e, d, c0 + d - 1);
      m -= n_;
      --d;
    }
    if (d == 1) {
      paint(e, m, c0);
      return;
    }
    split(e, m);
    if (d == 2) {
      for (size_t i = 0; i < m; ++i) {
        if (e[i].id != kDummy) colour_[e[i].id] = c0 + side_[i];
      }
      return;
    }
    size_t half = m / 2;
    size_t lo = 0;
    size_t hi = half;
    for (size_t i = 0; i < m; ++i) {  // stable, so both halves keep the block layout
      uint8_t s = side_[i];
      tmp[s != 0 ? hi : lo] = e[i];
      hi += s;
      lo += 1u - s;
    }
    colour(tmp, e, half, d / 2, c0);
    colour(tmp + half, e + half, half, d / 2, c0 + d / 2);
  }

 private:
  void paint(const WorkEdge* e, size_t m, uint32_t c) {
    for (size_t i = 0; i < m; ++i) {
      if (e[i].id != kDummy) colour_[e[i].id] = c;
    }
  }

  // Euler partition of an even-degree regular graph: pair the edges at every vertex (at a
  // left vertex positions i and i ^ 1, at a right vertex in order of appearance); the pairs
  // form alternating cycles of even length, and colouring each cycle 0, 1, 0, 1, ... gives
  // every vertex exactly half of its edges on each side. Sets side_[0, m).
  void split(const WorkEdge* e, size_t m) {
    uint32_t* link = link_.get();
    uint32_t* pend = pend_.data();
    // Branch-free: the first edge at a right vertex waits in pend, the second pairs with it
    // (link[m] is a sink for the write the first one does not need).
    for (uint32_t i = 0; i < m; ++i) {
      uint32_t r = e[i].right;
      uint32_t p = pend[r];
      bool first = p == kNone;
      pend[r] = first ? i : kNone;
      link[i] = p;
      link[first ? m : p] = i;
    }
    if (m <= kSerialWalkEdges) {
      walk_cycle_serially(m);
    } else {
      walk_cycles(m);
    }
  }

  // One walk at a time: the fastest way while the links fit in the cache.
  void walk_cycle_serially(size_t m) {
    const uint32_t* link = link_.get();
    uint8_t* side = side_.get();
    std::fill(side, side + m, uint8_t{2});
    for (uint32_t i = 0; i < m; ++i) {
      if (side[i] != 2) continue;
      uint32_t cur = i;
      do {
        side[cur] = 0;
        uint32_t partner = cur ^ 1u;
        side[partner] = 1;
        cur = link[partner];
      } while (cur != i);
    }
  }

  // Colours the pairing cycles. A walk along one cycle is a chain of dependent loads from
  // memory; kWalks walks run interleaved so that their cache misses overlap. Each walk
  // labels its stretch of a cycle 0, 1, 0, 1, ...; where two stretches meet, the walks
  // record whether their labellings agree (union-find with parity), and a last pass makes
  // every walk agree with the root of its group. A stretch ends where its walk runs into an
  // edge another walk has labelled, or at its own start when the cycle closes.
  struct Walk {
    uint32_t id, start, cur;
    uint32_t next_scan, scan_end;  // its stretch of positions to look for new starts in
  };

  void walk_cycles(size_t m) {
    constexpr uint32_t kWalks = 16;
    std::fill(owner_.get(), owner_.get() + m, kNone);
    walk_parent_.clear();
    walk_parity_.clear();
    std::array<Walk, kWalks> walks;
    uint32_t active = 0;
    // Each walk scans its own stretch for new starts, so walks begin far apart.
    for (uint32_t w = 0; w < kWalks; ++w) {
      auto begin = static_cast<uint32_t>(m * w / kWalks);
      auto end = static_cast<uint32_t>(m * (w + 1) / kWalks);
      if (begin < end) walks[active++] = {kNone, 0, kNone, begin, end};
    }
    for (uint32_t w = 0; w < active;) {
      if (start_walk(walks[w])) {
        ++w;
      } else {
        walks[w] = walks[--active];
      }
    }
    while (active > 0) {
      for (uint32_t w = 0; w < active;) {
        if (step(walks[w]) || start_walk(walks[w])) {
          ++w;
        } else {
          walks[w] = walks[--active];  // its stretch is done: the last walk takes its place
        }
      }
    }
    uint8_t* side = side_.get();
    for (uint32_t i = 0; i < m; ++i) side[i] ^= parity_of(owner_[i]);
  }

  // Starts `walk` at the next unlabelled position of its stretch; false when there is none.
  bool start_walk(Walk& walk) {
    while (walk.next_scan < walk.scan_end && owner_[walk.next_scan] != kNone) ++walk.next_scan;
    if (walk.next_scan == walk.scan_end) return false;
    walk.id = static_cast<uint32_t>(walk_parent_.size());
    walk_parent_.push_back(walk.id);
    walk_parity_.push_back(0);
    walk.start = walk.cur = walk.next_scan;
    return true;
  }

  // Labels the next two edges of the walk's cycle 0 and 1; false when the walk has ended:
  // it closed its cycle or ran into edges another walk labelled (then the two are related).
  bool step(Walk& walk) {
    const uint32_t* link = link_.get();
    uint8_t* side = side_.get();
    uint32_t* owner = owner_.get();
    uint32_t cur = walk.cur;
    if (owner[cur] != kNone) {  // its own start (the cycle closed) or another walk's edge
      if (owner[cur] != walk.id) relate(walk.id, owner[cur], side[cur]);
      return false;
    }
    owner[cur] = walk.id;
    side[cur] = 0;
    // The link behind a walk's start is crossed by no walk when another walk began just
    // behind it: relate the two here (the edge behind would be labelled 1).
    uint32_t behind = link[cur];
    if (cur == walk.start && owner[behind] != kNone) {
      relate(walk.id, owner[behind], side[behind] ^ 1u);
    }
    uint32_t partner = cur ^ 1u;
    if (owner[partner] != kNone) {
      relate(walk.id, owner[partner], side[partner] ^ 1u);
      return false;
    }
    owner[partner] = walk.id;
    side[partner] = 1;
    walk.cur = link[partner];
    return true;
  }

  // Walk a labels an edge 0 where walk b labelled it `b_label`: a's labels must be flipped
  // relative to b's exactly when b_label is 1.
  void relate(uint32_t a, uint32_t b, uint32_t b_label) {
    uint32_t ra = find(a);
    uint32_t rb = find(b);
    if (ra == rb) return;  // already consistent: an Euler cycle has even length
    uint8_t flip = static_cast<uint8_t>(walk_parity_[a] ^ walk_parity_[b] ^ b_label);
    walk_parent_[ra] = rb;
    walk_parity_[ra] = flip;
  }

  // Root of walk w, compressing the path; walk_parity_[w] becomes w's parity to the root.
  uint32_t find(uint32_t w) {
    uint32_t root = w;
    uint8_t parity = 0;
    while (walk_parent_[root] != root) {
      parity ^= walk_parity_[root];
      root = walk_parent_[root];
    }
    while (walk_parent_[w] != root) {
      uint32_t up = walk_parent_[w];
      uint8_t up_parity = parity ^ walk_parity_[w];
      walk_parent_[w] = root;
      walk_parity_[w] = parity;
      w = up;
      parity = up_parity;
    }
    return root;
  }

  uint8_t parity_of(uint32_t w) {
    find(w);
    return walk_parity_[w];
  }

  // Finds a perfect matching of the d-regular graph e (d odd, > 1), colours it c and removes
  // it, leaving the graph (d - 1)-regular in the same layout.
  void take_matching(WorkEdge* e, uint32_t d, uint32_t c) {
    std::fill(mate_.begin(), mate_.end(), kNone);
    std::fill(match_left_.begin(), match_left_.end(), kNone);
    // Goel-Kapralov-Khanna: O(n log n) expected steps on a regular bipartite graph. The
    // budget is generous; past it, plain augmenting paths finish the job deterministically.
    // Graphs of few vertices (patterns on few ports) use augmenting paths alone: as fast
    // there, and the same code then serves as the fallback.
    uint64_t budget = n_ > kWalkVertices ? 64ull * n_ * (std::bit_width(n_) + 1) + 4096 : 0;
    // A greedy pass first: sequential, and it leaves the walks only the last few vertices.
    for (uint32_t u = 0; u < n_; ++u) {
      for (uint32_t pos = u * d; pos < u * d + d; ++pos) {
        uint32_t v = e[pos].right;
        if (mate_[v] == kNone) {
          mate_[v] = pos;
          mate_left_[v] = u;
          match_left_[u] = pos;
          break;
        }
      }
    }
    for (uint32_t u = 0; u < n_; ++u) {
      if (match_left_[u] != kNone) continue;
      if (budget > 0) {
        walk(e, d, u, budget);
      } else {
        augment(e, d, u);
      }
    }
    for (uint32_t u = 0; u < n_; ++u) {
      uint32_t pos = match_left_[u];
      if (e[pos].id != kDummy) colour_[e[pos].id] = c;
    }
    // Remove the matched edge of every block, shifting the rest down (never overlapping a
    // block not yet read: the write index is always at or below the read index).
    size_t out = 0;
    for (uint32_t u = 0; u < n_; ++u) {
      size_t begin = size_t{u} * d;
      for (size_t pos = begin; pos < begin + d; ++pos) {
        if (pos != match_left_[u]) e[out++] = e[pos];
      }
    }
  }

  // Random walk from the free left vertex u: take a random edge; if its right end is matched,
  // the displaced left vertex continues. Ends when a free right vertex is reached or the
  // budget runs out (then `augment` completes this vertex).
  void walk(const WorkEdge* e, uint32_t d, uint32_t u, uint64_t& budget) {
    uint32_t free = u;
    uint32_t lost = kNone;  // the edge `free` was just displaced from: not retaken at once
    while (true) {
      if (budget == 0) {
        augment(e, d, free);
        return;
      }
      --budget;
      uint32_t pos;
      do {
        pos = free * d + rng_.below(d);
      } while (pos == lost);
      uint32_t v = e[pos].right;
      uint32_t previous = mate_[v];
      uint32_t displaced = mate_left_[v];  // stored, not divided out: this loop is latency
      mate_[v] = pos;
      mate_left_[v] = free;
      match_left_[free] = pos;
      if (previous == kNone) return;
      free = displaced;
      match_left_[free] = kNone;
      lost = previous;
    }
  }

  // Breadth-first search for an augmenting path from the free left vertex f; one always
  // exists in a regular bipartite graph (Hall), so the matching grows by one.
  void augment(const WorkEdge* e, uint32_t d, uint32_t f) {
    visited_.assign(n_, 0);
    via_.assign(n_, kNone);
    queue_.clear();
    queue_.push_back(f);
    for (size_t head = 0; head < queue_.size(); ++head) {
      uint32_t x = queue_[head];
      for (uint32_t pos = x * d; pos < x * d + d; ++pos) {
        uint32_t v = e[pos].right;
        if (visited_[v] != 0) continue;
        visited_[v] = 1;
        via_[v] = pos;
        if (mate_[v] == kNone) {
          flip(e, d, f, v);
          return;
        }
        queue_.push_back(mate_left_[v]);
      }
    }
  }

  void flip(const WorkEdge* e, uint32_t d, uint32_t f, uint32_t v) {
    while (true) {
      uint32_t pos = via_[v];
      uint32_t x = pos / d;
      uint32_t old = match_left_[x];
      mate_[v] = pos;
      mate_left_[v] = x;
      match_left_[x] = pos;
      if (x == f) return;
      v = e[old].right;
    }
  }

  uint32_t n_;
  // Per position of the graph being split, allocated once for the largest (the top level)
  // and left uninitialised: every pass writes before it reads.
  std::unique_ptr<uint32_t[]> link_;   // partner at the right vertex
  std::unique_ptr<uint8_t[]> side_;    // half of the split
  std::unique_ptr<uint32_t[]> owner_;  // the walk that labelled each position
  std::vector<uint32_t> walk_parent_;  // union-find over walks
  std::vector<uint8_t> walk_parity_;   // a walk's labels relative to its parent's
  std::vector<uint32_t> pend_;
  std::vector<uint32_t> mate_;        // right vertex -> position of its matched edge
  std::vector<uint32_t> mate_left_;   // right vertex -> left vertex it is matched to
  std::vector<uint32_t> match_left_;  // left vertex -> position of its matched edge
  std::vector<uint8_t> visited_;
  std::vector<uint32_t> via_;
  std::vector<uint32_t> queue_;
  Rng rng_;
  std::vector<uint32_t>& colour_;
};

// Next-fit packing of vertices into bins of capacity `cap`: returns the bin of every vertex
// and the load of every bin. Two consecutive bins always hold more than cap together.
uint32_t pack(const std::vector<uint32_t>& degree, uint32_t cap, std::vector<uint32_t>& bin,
              std::vector<uint32_t>& load) {
  bin.assign(degree.size(), kNone);
  load.clear();
  for (size_t v = 0; v < degree.size(); ++v) {
    if (degree[v] == 0) continue;
    if (load.empty() || load.back() + degree[v] > cap) load.push_back(0);
    bin[v] = static_cast<uint32_t>(load.size() - 1);
    load.back() += degree[v];
  }
  return static_cast<uint32_t>(load.size());
}

}  // namespace

std::vector<uint32_t> colour_bipartite(std::span<const Connection> edges, uint32_t max_degree) {
  std::vector<uint32_t> colour(edges.size(), 0);
  if (edges.empty() || max_degree == 0) return colour;
  const uint32_t d = max_degree;

  uint32_t left_size = 0;
  uint32_t right_size = 0;
  for (const auto& e : edges) {
    left_size = std::max(left_size, e.from + 1);
    right_size = std::max(right_size, e.to + 1);
  }
  std::vector<uint32_t> left_degree(left_size, 0);
  std::vector<uint32_t> right_degree(right_size, 0);
  for (const auto& e : edges) {
    ++left_degree[e.from];
    ++right_degree[e.to];
  }
  std::vector<uint32_t> left_bin, left_load, right_bin, right_load;
  uint32_t n = std::max(pack(left_degree, d, left_bin, left_load),
                        pack(right_degree, d, right_bin, right_load));
  left_load.resize(n, 0);
  right_load.resize(n, 0);
  left_degree = {};
  right_degree = {};

  // Lay the d-regular graph out by left bin: real edges first in each block, then dummies to
  // right bins that still lack edges.
  size_t m = size_t{n} * d;
  auto a = std::make_unique_for_overwrite<WorkEdge[]>(m);
  auto b = std::make_unique_for_overwrite<WorkEdge[]>(m);
  std::vector<uint32_t> cursor(n);
  for (uint32_t u = 0; u < n; ++u) cursor[u] = u * d;
  for (size_t k = 0; k < edges.size(); ++k) {
    a[cursor[left_bin[edges[k].from]]++] = {right_bin[edges[k].to], static_cast<uint32_t>(k)};
  }
  uint32_t j = 0;
  for (uint32_t u = 0; u < n; ++u) {
    uint32_t end = (u + 1) * d;
    while (cursor[u] < end) {
      while (right_load[j] == d) ++j;
      uint32_t take = std::min(end - cursor[u], d - right_load[j]);
      for (uint32_t t = 0; t < take; ++t) a[cursor[u]++] = {j, kDummy};
      right_load[j] += take;
    }
  }
  Colourer colourer(n, m, colour);
  colourer.colour(a.get(), b.get(), m, d, 0);
  return colour;
}

}  // namespace asn::schedule::detail

// The baselines of 002 Ch. 5 as the seed describes them, on every connection's standard
// path (path 0): greedy (Fig 5.11), coloring (Fig 5.13), ordered AAPC (Fig 5.14).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core.hpp"

namespace asn::fabric_schedule::detail {

Routed route(const Target& t, std::span<const Conn> conns, std::span<const uint32_t> path_of) {
  Routed r;
  r.offset.reserve(conns.size() + 1);
  r.offset.push_back(0);
  std::vector<uint32_t> res, scratch;
  for (size_t i = 0; i < conns.size(); ++i) {
    resources_of(t, conns[i], path_of.empty() ? 0 : path_of[i], res, scratch);
    r.res.insert(r.res.end(), res.begin(), res.end());
    r.offset.push_back(r.res.size());
  }
  return r;
}

uint32_t slot_count(std::span<const uint32_t> slot_of) {
  uint32_t n = 0;
  for (uint32_t s : slot_of) n = std::max(n, s + 1);
  return n;
}

// Fig 5.11 fills configuration 1 with every connection, in order, that fits, then
// configuration 2 with the rest, ...: a connection lands in the first configuration where
// it conflicts with nothing placed before it, which is first-fit in the same order.
std::vector<uint32_t> greedy(const Target& t, std::span<const Conn> conns,
                             std::span<const uint32_t> order) {
  const Routed r = route(t, conns, {});
  SlotTable table(t.resources(), 64);
  std::vector<uint32_t> slot_of(conns.size(), 0);
  for (uint32_t i : order) {
    const uint32_t s = table.first_free(r.of(i));
    table.set(r.of(i), s, true);
    slot_of[i] = s;
  }
  return slot_of;
}

namespace {

// The conflict graph of Fig 5.13 line 1, as adjacency through shared resources: the users
// of every resource; a node's neighbours are the distinct users of its resources.
class ConflictGraph {
 public:
  explicit ConflictGraph(const Routed& r, uint32_t resources) : r_(r), stamp_(r.size(), 0) {
    std::vector<uint64_t> count(resources + 1, 0);
    for (uint32_t x : r.res) ++count[x + 1];
    std::partial_sum(count.begin(), count.end(), count.begin());
    first_ = count;
    users_.resize(r.res.size());
    for (uint32_t i = 0; i < r.size(); ++i) {
      for (uint32_t x : r.of(i)) users_[count[x]++] = i;
    }
  }
  // Calls f(j) once for every neighbour j of i (j != i).
  template <typename F>
  void neighbours(uint32_t i, F&& f) {
    ++epoch_;
    stamp_[i] = epoch_;
    for (uint32_t x : r_.of(i)) {
      for (uint64_t u = first_[x]; u < first_[x + 1]; ++u) {
        const uint32_t j = users_[u];
        if (stamp_[j] == epoch_) continue;
        stamp_[j] = epoch_;
        f(j);
      }
    }
  }

 private:
  const Routed& r_;
  std::vector<uint64_t> first_;
  std::vector<uint32_t> users_;
  std::vector<uint32_t> stamp_;
  uint32_t epoch_ = 0;
};

}  // namespace

// Fig 5.13: priority = links of the path / degree among the uncoloured (002 L1746); each
// round sorts the uncoloured by priority and takes, in that order, every node without an
// edge to one taken this round (lines 9-17). Ties: the longer path, then pattern order
// (this reproduces the order the seed prints for Fig 5.12: (0,2), (1,3), (2,4), (3,4)).
std::vector<uint32_t> coloring(const Target& t, std::span<const Conn> conns) {
  const Routed r = route(t, conns, {});
  ConflictGraph graph(r, t.resources());
  const uint32_t m = static_cast<uint32_t>(conns.size());
  std::vector<uint32_t> degree(m, 0), length(m, 0);
  for (uint32_t i = 0; i < m; ++i) {
    graph.neighbours(i, [&](uint32_t) { ++degree[i]; });
    length[i] = static_cast<uint32_t>(r.of(i).size() - 2);  // links, not the two ports
  }
  auto priority = [&](uint32_t i) {
    return degree[i] == 0 ? 1e300 : static_cast<double>(length[i]) / degree[i];
  };
  std::vector<uint32_t> slot_of(m, 0), uncoloured(m);
  std::iota(uncoloured.begin(), uncoloured.end(), 0u);
  std::vector<bool> done(m, false);
  std::vector<bool> busy(t.resources(), false);
  for (uint32_t k = 0; !uncoloured.empty(); ++k) {
    std::stable_sort(uncoloured.begin(), uncoloured.end(), [&](uint32_t a, uint32_t b) {
      const double pa = priority(a), pb = priority(b);
      return pa != pb ? pa > pb : length[a] > length[b];
    });
    std::vector<uint32_t> taken;
    for (uint32_t i : uncoloured) {
      auto res = r.of(i);
      if (std::any_of(res.begin(), res.end(), [&](uint32_t x) { return busy[x]; })) continue;
      for (uint32_t x : res) busy[x] = true;
      taken.push_back(i);
      slot_of[i] = k;
      done[i] = true;
    }
    for (uint32_t i : taken) {
      for (uint32_t x : r.of(i)) busy[x] = false;
      graph.neighbours(i, [&](uint32_t j) {
        if (!done[j]) --degree[j];
      });
    }
    std::erase_if(uncoloured, [&](uint32_t i) { return done[i]; });
  }
  return slot_of;
}

// Fig 5.14: rank every AAPC configuration by the summed path length of the pattern's
// connections in it, reorder the connections by configuration, highest rank first, and run
// the greedy algorithm.
std::vector<uint32_t> ordered_aapc(const Target& t, std::span<const Conn> conns) {
  if (t.aapc_phases() == 0) {
    throw std::invalid_argument("ordered AAPC needs AAPC configurations; " + t.name() +
                                " has none");
  }
  std::vector<uint64_t> rank(t.aapc_phases(), 0);
  std::vector<uint32_t> phase(conns.size()), links;
  for (size_t i = 0; i < conns.size(); ++i) {
    phase[i] = static_cast<uint32_t>(t.aapc_phase(conns[i].src, conns[i].dst));
    links.clear();
    t.path(conns[i].src, conns[i].dst, 0, links);
    rank[phase[i]] += links.size();
  }
  std::vector<uint32_t> order(conns.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (rank[phase[a]] != rank[phase[b]]) return rank[phase[a]] > rank[phase[b]];
    return phase[a] < phase[b];
  });
  return greedy(t, conns, order);
}

}  // namespace asn::fabric_schedule::detail

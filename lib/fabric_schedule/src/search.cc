// The default compiler's search. Why these steps: on a fabric with a choice of paths the
// lower bound is set by the busiest link, so the paths are spread first; first-fit that may
// still switch a connection to another candidate path uses the freedom the balancing left
// (the 2DFB's lanes A/B); and the local search removes whole slots, which is what the
// multiplexing degree counts (002 L1672), by moving each connection of the emptiest slot
// elsewhere, displacing at most one other connection per move.
#include "search.hpp"

#include <algorithm>

namespace asn::fabric_schedule::detail {

std::vector<uint32_t> balance_paths(const Target& t, std::span<const Conn> conns) {
  std::vector<uint32_t> path_of(conns.size(), 0);
  bool choice = false;
  for (const Conn& c : conns) choice = choice || t.minimal_paths(c.src, c.dst) > 1;
  if (!choice) return path_of;
  std::vector<uint32_t> load(t.links(), 0), links;
  auto add = [&](const Conn& c, uint32_t p, int delta) {
    links.clear();
    t.path(c.src, c.dst, p, links);
    for (uint32_t l : links) load[l] += delta;
  };
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i = 0; i < conns.size(); ++i) {
      const Conn& c = conns[i];
      const uint32_t n = t.minimal_paths(c.src, c.dst);
      if (n == 1) continue;
      if (pass > 0) add(c, path_of[i], -1);
      uint64_t best = UINT64_MAX;
      for (uint32_t p = 0; p < n; ++p) {
        links.clear();
        t.path(c.src, c.dst, p, links);
        uint64_t most = 0, sum = 0;
        for (uint32_t l : links) {
          most = std::max<uint64_t>(most, load[l]);
          sum += load[l];
        }
        const uint64_t cost = most << 32 | std::min<uint64_t>(sum, 0xffffffffu);
        if (cost < best) {
          best = cost;
          path_of[i] = p;
        }
      }
      add(c, path_of[i], +1);
    }
  }
  return path_of;
}

Placed first_fit(const Target& t, std::span<const Conn> conns, std::span<const uint32_t> order,
                 std::span<const uint32_t> hint, Effort& effort) {
  SlotTable table(t.resources(), 64);
  Placed out{std::vector<uint32_t>(conns.size(), 0),
             std::vector<uint32_t>(hint.begin(), hint.end())};
  std::vector<uint32_t> res, best_res, scratch;
  uint32_t slots = 0;
  for (uint32_t i : order) {
    const Conn& c = conns[i];
    resources_of(t, c, hint[i], best_res, scratch);
    uint32_t best = table.first_free(best_res);
    effort.spend_path(best_res.size());
    // The longer paths only where the minimal ones would open a slot.
    const uint32_t minimal = t.minimal_paths(c.src, c.dst);
    const uint32_t all = t.path_count(c.src, c.dst);
    for (uint32_t p = 0; p < all && best > 0; ++p) {
      if (p == minimal && best < slots) break;
      if (p == hint[i]) continue;
      resources_of(t, c, p, res, scratch);
      const uint32_t s = table.first_free(res);
      effort.spend_path(res.size());
      if (s < best) {
        best = s;
        out.path_of[i] = p;
        best_res.swap(res);
      }
    }
    table.set(best_res, best, true);
    out.slot_of[i] = best;
    slots = std::max(slots, best + 1);
  }
  return out;
}

}  // namespace asn::fabric_schedule::detail

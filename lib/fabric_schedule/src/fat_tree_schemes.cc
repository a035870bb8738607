// The fat-tree schemes of 000 Ch. 7 as schedulers: each fills one slot with the requests it
// grants (a pass of the scheme over the requests still waiting, all links free at the start
// of the slot), then the next slot with the rest.
//
// Readings: the pseudo-code (000 L1530-1545) never frees what a request reserved at the
// levels below the one where it failed, so a failed request keeps those links for the slot
// (the hardware's links stay set until the next configuration); both schemes do that. A
// request whose terminal sends or receives already in the slot waits for the next one.
#include <random>
#include <stdexcept>

#include "core.hpp"

namespace asn::fabric_schedule::detail {
namespace {

struct Request {
  uint32_t conn = 0;
  uint32_t levels = 0;  // H, the common ancestor's level
  uint32_t index = 0;   // the up ports chosen so far, base w
  bool alive = true;
};

uint32_t levels_of(const Target& t, const Conn& c) {
  uint32_t h = 0;
  for (uint32_t n = t.path_count(c.src, c.dst); n > 1; n /= t.fat_tree_width()) ++h;
  return h;
}

// Takes the requests whose terminal ports are free in this slot.
std::vector<Request> start_slot(const Target& t, std::span<const Conn> conns,
                                const std::vector<uint32_t>& waiting, std::vector<bool>& busy) {
  std::vector<Request> out;
  for (uint32_t i : waiting) {
    const uint32_t s = t.send_port(conns[i].src), d = t.receive_port(conns[i].dst);
    if (busy[s] || busy[d]) continue;
    busy[s] = busy[d] = true;
    out.push_back({i, levels_of(t, conns[i]), 0, true});
  }
  return out;
}

// Runs `pass` over the waiting requests slot by slot.
template <typename Pass>
Placed by_slots(const Target& t, std::span<const Conn> conns, Pass&& pass) {
  if (t.fat_tree_width() == 0) {
    throw std::invalid_argument("the level-wise and local random schemes need a fat tree; " +
                                t.name() + " is not one");
  }
  Placed out{std::vector<uint32_t>(conns.size(), 0), std::vector<uint32_t>(conns.size(), 0)};
  std::vector<uint32_t> waiting(conns.size());
  for (uint32_t i = 0; i < waiting.size(); ++i) waiting[i] = i;
  for (uint32_t slot = 0; !waiting.empty(); ++slot) {
    std::vector<bool> busy(t.resources(), false);
    std::vector<Request> reqs = start_slot(t, conns, waiting, busy);
    pass(reqs, busy);
    std::vector<bool> granted(conns.size(), false);
    for (const Request& r : reqs) {
      if (!r.alive) continue;
      granted[r.conn] = true;
      out.slot_of[r.conn] = slot;
      out.path_of[r.conn] = r.index;
    }
    std::erase_if(waiting, [&](uint32_t i) { return granted[i]; });
  }
  return out;
}

// The links of level h of a path: its up link and its down link.
struct LevelLinks {
  uint32_t up = 0;
  uint32_t down = 0;
};
LevelLinks level_links(const Target& t, const Conn& c, uint32_t index, uint32_t h, uint32_t levels,
                       std::vector<uint32_t>& scratch) {
  scratch.clear();
  t.path(c.src, c.dst, index, scratch);
  return {t.link_resource(scratch[h]), t.link_resource(scratch[2 * levels - 1 - h])};
}

}  // namespace

// 000 L1530-1545: level by level, every request takes the first port free both up from its
// source-side switch and down into its destination-side switch.
Placed level_wise(const Target& t, std::span<const Conn> conns) {
  std::vector<uint32_t> scratch;
  return by_slots(t, conns, [&](std::vector<Request>& reqs, std::vector<bool>& busy) {
    const uint32_t w = t.fat_tree_width();
    for (uint32_t h = 0, weight = 1;; ++h, weight *= w) {
      bool any = false;
      for (Request& r : reqs) {
        if (!r.alive || h >= r.levels) continue;
        any = true;
        r.alive = false;
        for (uint32_t port = 0; port < w; ++port) {
          const uint32_t index = r.index + port * weight;
          LevelLinks l = level_links(t, conns[r.conn], index, h, r.levels, scratch);
          if (busy[l.up] || busy[l.down]) continue;
          busy[l.up] = busy[l.down] = true;
          r.index = index;
          r.alive = true;
          break;
        }
      }
      if (!any) break;
    }
  });
}

// The local scheme it is compared with (000 L1478-1490): each request climbs through a
// random free up port at every level, knowing nothing of the down links; the down links its
// ports imply must then all be free, else the request fails.
Placed local_random(const Target& t, std::span<const Conn> conns, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<uint32_t> scratch;
  return by_slots(t, conns, [&](std::vector<Request>& reqs, std::vector<bool>& busy) {
    const uint32_t w = t.fat_tree_width();
    std::vector<uint32_t> free_ports;
    for (Request& r : reqs) {
      for (uint32_t h = 0, weight = 1; r.alive && h < r.levels; ++h, weight *= w) {
        free_ports.clear();
        for (uint32_t port = 0; port < w; ++port) {
          LevelLinks l =
              level_links(t, conns[r.conn], r.index + port * weight, h, r.levels, scratch);
          if (!busy[l.up]) free_ports.push_back(port);
        }
        if (free_ports.empty()) {
          r.alive = false;
          break;
        }
        r.index += free_ports[random() % free_ports.size()] * weight;
        busy[level_links(t, conns[r.conn], r.index, h, r.levels, scratch).up] = true;
      }
      for (uint32_t h = 0; r.alive && h < r.levels; ++h) {
        const uint32_t down = level_links(t, conns[r.conn], r.index, h, r.levels, scratch).down;
        if (busy[down]) r.alive = false;
      }
      for (uint32_t h = 0; r.alive && h < r.levels; ++h) {
        busy[level_links(t, conns[r.conn], r.index, h, r.levels, scratch).down] = true;
      }
    }
  });
}

}  // namespace asn::fabric_schedule::detail

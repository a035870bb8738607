// lib/circuit: the reservation protocols of 002 ch. 3 under random reserve/release storms,
// checked by bookkeeping of the test's own (not the library's), and bad input.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "asn/circuit/error.hpp"
#include "asn/circuit/fabric.hpp"
#include "asn/circuit/sim.hpp"  // torus(): ports 0..3 = +x, -x, +y, -y

namespace {

using namespace asn::circuit;

// Ports of a shortest path, by breadth-first search over the fabric's links.
std::vector<uint32_t> bfs_ports(const Fabric& f, uint32_t src, uint32_t dst) {
  std::vector<int64_t> via(f.nodes(), -1);
  std::queue<uint32_t> q;
  q.push(src);
  via[src] = -2;
  while (!q.empty()) {
    const uint32_t n = q.front();
    q.pop();
    for (size_t l = 0; l < f.links().size(); ++l) {
      const Link& k = f.links()[l];
      if (k.from == n && via[k.to] == -1) via[k.to] = static_cast<int64_t>(l), q.push(k.to);
    }
  }
  std::vector<uint32_t> ports;
  for (uint32_t n = dst; n != src; n = f.links()[via[n]].from) {
    ports.insert(ports.begin(), f.links()[via[n]].port);
  }
  return ports;
}

struct Circuit {
  std::vector<uint32_t> links;
  uint32_t slot = 0;
  Message first;
};

// A carrier in one process that delivers the messages in flight in a random order, keeping
// only each circuit's own order (what the library asks of a carrier), with holding.
class Storm {
 public:
  Storm(uint32_t side, uint32_t degree, Protocol p, uint64_t seed)
      : fabric_(torus(side, degree)), protocol_(p), rng_(seed) {
    for (uint32_t s = 0; s < fabric_.nodes(); ++s) {
      for (uint32_t d = 0; d < fabric_.nodes(); ++d) routes_[{s, d}] = bfs_ports(fabric_, s, d);
    }
    // The plan's slots: slot 0 on every third link, and the test's own record of them.
    for (uint32_t l = 0; l < fabric_.links().size(); l += 3) {
      fabric_.preload(l, 1);
      preloaded_.insert({l, 0});
    }
  }

  void run(int requests) {
    for (int i = 0; i < requests || !pending_.empty() || !held_.empty(); ++i) {
      if (i < requests) act();
      if (rng_() % 100 == 0) check();
      if (!pending_.empty()) deliver_one();
      if (pending_.empty() || (!held_.empty() && rng_() % 8 == 0)) expire_one();
    }
    check();
    while (!live_.empty()) {
      release(live_.begin()->first);
      while (!pending_.empty()) deliver_one();
    }
    check();
  }

  const Fabric& fabric() const { return fabric_; }
  int established = 0, failed = 0;

 private:
  void act() {
    if (!live_.empty() && rng_() % 3 == 0) {
      auto it = live_.begin();
      std::advance(it, rng_() % live_.size());
      release(it->first);
      return;
    }
    Request r;
    r.id = ++next_id_;
    r.src = static_cast<uint32_t>(rng_() % fabric_.nodes());
    r.dst = static_cast<uint32_t>((r.src + 1 + rng_() % (fabric_.nodes() - 1)) % fabric_.nodes());
    r.ports = routes_.at({r.src, r.dst});
    r.protocol = protocol_;
    r.pick = rng_();
    const Message m = fabric_.begin(r);
    pending_[r.id].push_back(m);
    firsts_[r.id] = m;
    in_flight_.insert(r.id);
  }

  void release(CircuitId id) {
    const Circuit c = live_.at(id);
    live_.erase(id);
    pending_[id].push_back(Fabric::release(c.first, c.slot));
  }

  void deliver_one() {
    auto it = pending_.begin();
    std::advance(it, rng_() % pending_.size());
    const Message m = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) pending_.erase(it);
    const Step s = fabric_.deliver(m);
    if (s.held) held_.push_back(m);
    for (const Message& out : s.send) pending_[out.id].push_back(out);
    if (s.freed) retry_held(m.path->links[m.at]);
    if (s.done) finish(*s.done);
  }

  void retry_held(uint32_t link) {
    for (auto it = held_.begin(); it != held_.end();) {
      if (it->path->links[it->at] == link) {
        pending_[it->id].push_front(*it);
        it = held_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void expire_one() {
    if (held_.empty()) return;
    const size_t i = rng_() % held_.size();
    Message m = held_[i];
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    m.expired = true;
    pending_[m.id].push_front(m);
  }

  void finish(const Outcome& o) {
    ASSERT_TRUE(in_flight_.erase(o.id)) << "an outcome for reservation " << o.id << " twice";
    if (!o.established) {
      ++failed;
      EXPECT_FALSE(o.reason.empty());
      return;
    }
    ++established;
    live_[o.id] = Circuit{firsts_[o.id].path->links, o.slot, firsts_[o.id]};
  }

  // Independent of the library's bookkeeping: the circuits the sources were told of.
  void check() {
    std::map<std::pair<uint32_t, uint32_t>, CircuitId> used;
    for (const auto& [id, c] : live_) {
      for (uint32_t l : c.links) {
        const auto key = std::make_pair(l, c.slot);
        EXPECT_FALSE(preloaded_.count(key)) << "circuit " << id << " on a preloaded slot";
        const auto [at, fresh] = used.emplace(key, id);
        EXPECT_TRUE(fresh) << "circuits " << at->second << " and " << id << " share slot " << c.slot
                           << " of link " << l;
      }
    }
    // Every slot the library holds belongs to a reservation in flight or a live circuit,
    // on that circuit's slot; preloaded slots are the plan's.
    const bool quiet = pending_.empty() && held_.empty();
    for (uint32_t l = 0; l < fabric_.links().size(); ++l) {
      for (uint32_t s = 0; s < fabric_.degree(); ++s) {
        const SlotState st = fabric_.slots(l).state(s);
        const CircuitId owner = fabric_.slots(l).owner(s);
        EXPECT_EQ(st == SlotState::kPreloaded, preloaded_.count({l, s}) == 1);
        if (st == SlotState::kBusy) {
          ASSERT_TRUE(live_.count(owner) || !quiet) << "link " << l << " slot " << s;
          if (live_.count(owner)) {
            EXPECT_EQ(live_.at(owner).slot, s);
          }
        }
        if (st == SlotState::kLock) {
          EXPECT_FALSE(quiet) << "slot " << s << " of link " << l << " still locked by " << owner
                              << " with nothing in flight";
        }
        if (quiet && st == SlotState::kBusy) {
          const auto it = used.find({l, s});
          EXPECT_TRUE(it != used.end() && it->second == owner) << "link " << l << " slot " << s;
        }
      }
    }
    if (quiet) {  // each live circuit holds its slot on every link of its path
      for (const auto& [id, c] : live_) {
        for (uint32_t l : c.links) EXPECT_EQ(fabric_.slots(l).owner(c.slot), id);
      }
    }
  }

  Fabric fabric_;
  Protocol protocol_;
  std::mt19937_64 rng_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> routes_;
  CircuitId next_id_ = 0;
  std::set<std::pair<uint32_t, uint32_t>> preloaded_;
  std::map<CircuitId, std::deque<Message>> pending_;
  std::vector<Message> held_;
  std::map<CircuitId, Message> firsts_;
  std::set<CircuitId> in_flight_;
  std::map<CircuitId, Circuit> live_;
};

class CircuitStorm : public ::testing::TestWithParam<std::string> {};

TEST_P(CircuitStorm, NoSharedSlotNothingLeftLocked) {
  Protocol p = parse_protocol(GetParam(), "protocol");
  p.hold_time = 5;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    Storm storm(4, 8, p, seed);
    storm.run(1000);
    EXPECT_GT(storm.established, 50);
    EXPECT_GT(storm.failed, 0) << "a storm that never fails tests no undo";
    for (uint32_t l = 0; l < storm.fabric().links().size(); ++l) {
      EXPECT_EQ(storm.fabric().slots(l).avail() | storm.fabric().slots(l).preloaded(), all_slots(8))
          << "link " << l;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryVariant, CircuitStorm,
                         ::testing::Values("FDC", "FDA", "FDO", "FD3", "FHC", "FHA", "FHO", "BDC",
                                           "BDA", "BDO", "BHC", "BHA", "BHO"));

// Delivers every message of the reservation, in order; returns its outcome.
Outcome settle(Fabric& f, Message first) {
  std::deque<Message> q{first};
  std::optional<Outcome> done;
  while (!q.empty()) {
    const Step s = f.deliver(q.front());
    q.pop_front();
    EXPECT_FALSE(s.held);
    for (const Message& m : s.send) q.push_back(m);
    if (s.done) {
      EXPECT_FALSE(done) << "two outcomes";
      done = s.done;
    }
  }
  EXPECT_TRUE(done) << "no outcome";
  return done.value_or(Outcome{});
}

Request line_request(CircuitId id, const std::string& protocol) {
  Request r;
  r.id = id;
  r.src = 0;
  r.dst = 3;
  r.ports = {0, 0, 0};
  r.protocol = parse_protocol(protocol, "protocol");
  return r;
}

Fabric line(uint32_t degree) {  // 0 -> 1 -> 2 -> 3 by port 0
  Fabric f(4, degree);
  for (uint32_t n = 0; n < 3; ++n) f.add_link(n, 0, n + 1);
  return f;
}

TEST(Circuit, FailedReservationLeavesNothingLocked) {
  for (const std::string p : {"FDA", "FDC", "BDA", "BDC"}) {
    Fabric f = line(4);
    f.preload(2, 0b0011);          // the plan's slots on the last link
    f.slots(2).lock(0b1100, 999);  // a circuit in the making holds the rest
    const Outcome o = settle(f, f.begin(line_request(1, p)));
    EXPECT_FALSE(o.established) << p;
    EXPECT_EQ(o.failed_hop, 2u) << p;
    EXPECT_NE(o.reason.find("node 2 port 0"), std::string::npos) << o.reason;
    EXPECT_EQ(f.slots(0).avail(), 0b1111u) << p;
    EXPECT_EQ(f.slots(1).avail(), 0b1111u) << p;
  }
}

TEST(Circuit, OneSlotOnEveryLinkNeverAPreloadedOne) {
  for (const std::string p : {"FDA", "FDC", "BDA", "BDC", "BDO", "FDO"}) {
    Fabric f = line(4);
    f.preload(1, 0b0101);
    f.slots(0).lock(0b0010, 999);
    const Outcome o = settle(f, f.begin(line_request(1, p)));
    if (!o.established) {  // conservative forward may offer a slot some link lacks
      EXPECT_EQ(p.substr(0, 2) + p.back(), "FDC") << o.reason;
      continue;
    }
    EXPECT_EQ(o.slot, 3u) << p;  // the only slot free on all three links
    for (uint32_t l = 0; l < 3; ++l) {
      EXPECT_EQ(f.slots(l).state(3), SlotState::kBusy);
      EXPECT_EQ(f.slots(l).owner(3), 1u);
      const SlotMask rest[] = {0b0101, 0b0010, 0b0111};  // nothing else left locked
      EXPECT_EQ(f.slots(l).avail(), rest[l]) << p << " link " << l;
    }
  }
}

TEST(Circuit, BadInputIsAClearErrorAndChangesNothing) {
  Fabric f = line(8);
  f.preload(1, 0b0000'1111);
  const auto error = [&](Request r) -> std::string {
    try {
      f.begin(r);
    } catch (const CircuitError& e) {
      return e.field() + "|" + e.what();
    }
    return "no error";
  };
  Request r = line_request(1, "BDC");
  r.src = 9;
  EXPECT_EQ(error(r).substr(0, 4), "src|") << error(r);
  r = line_request(1, "BDC");
  r.dst = 4;
  EXPECT_NE(error(r).find("dst: node 4 does not exist (nodes 0..3)"), std::string::npos);
  r = line_request(1, "BDC");
  r.ports = {0, 5, 0};
  EXPECT_NE(error(r).find("ports[1]: node 1 has no link on port 5"), std::string::npos) << error(r);
  r = line_request(1, "BDC");
  r.ports = {0, 0};
  EXPECT_NE(error(r).find("ends at node 2, not at dst 3"), std::string::npos) << error(r);
  r = line_request(1, "BD5");  // 5 slots; link 1 leaves 4 of 8 dynamic
  EXPECT_NE(error(r).find("cset_size: 5 slots asked; the path's links leave 4 of 8"),
            std::string::npos)
      << error(r);
  r = line_request(0, "BDC");
  EXPECT_EQ(error(r).substr(0, 3), "id|");
  r = line_request(1, "FHC");  // holding without a time
  EXPECT_EQ(error(r).substr(0, 10), "hold_time|");
  EXPECT_THROW(parse_protocol("XDC", "protocol"), CircuitError);
  EXPECT_THROW(parse_protocol("FD0", "protocol"), CircuitError);
  EXPECT_THROW(Fabric(4, 65), CircuitError);
  EXPECT_THROW(f.add_link(0, 1, 7), CircuitError);
  EXPECT_THROW(f.add_link(0, 0, 2), CircuitError);  // port 0 of node 0 is taken
  for (uint32_t l = 0; l < 3; ++l) {
    EXPECT_EQ(f.slots(l).avail() | f.slots(l).preloaded(), all_slots(8));
  }
  EXPECT_EQ(f.links().size(), 3u);
}

TEST(Circuit, ReleaseFreesTheSlotOnEveryLink) {
  Fabric f = line(4);
  const Message first = f.begin(line_request(1, "BDA"));
  const Outcome o = settle(f, first);
  ASSERT_TRUE(o.established);
  std::deque<Message> q{Fabric::release(first, o.slot)};
  while (!q.empty()) {
    const Step s = f.deliver(q.front());
    q.pop_front();
    for (const Message& m : s.send) q.push_back(m);
  }
  for (uint32_t l = 0; l < 3; ++l) EXPECT_EQ(f.slots(l).avail(), 0b1111u) << l;
}

}  // namespace

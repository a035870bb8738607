// Internal to the routing engine (routing_engine.cc, routing_modes.cc): one routing decision
// over a RouterView, the candidate ports it weighs and the modes' algorithms. The public
// interface and the readings of the seed are in asn/model/engines/routing_engine.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/topology/schedule.hpp"

namespace asn::model::engines::detail {

using topology::DestEntry;
using topology::DirectPorts;
using topology::kMaxDimensions;
using topology::kMaxPorts;
using topology::kNoPort;
using topology::PortMapEntry;
using topology::PortRole;
using topology::RouteRegisters;
using topology::RoutingMode;
using topology::ScheduleEntry;
using topology::ScheduleStep;

// One output port the packet could take, with what the priority encoder needs to know. No
// member initialisers: a Candidates buffer of 255 is not zeroed on every decision, and
// channel_candidate() sets every field.
struct Candidate {
  unsigned port;
  unsigned dim;
  uint32_t next;  // the router the port leads to
  VcClass vc_class;
  unsigned vc;        // the least occupied VC of its class
  unsigned first_vc;  // the VCs of its class: [first_vc, last_vc)
  unsigned last_vc;
  uint32_t occupancy;  // of that VC
  uint32_t queue;      // the port's output queue: every VC's packets
  bool room;           // the VC can take a packet
  bool usable;         // its Pi bit
};

// Candidates in priority order: higher dimension first, then lower port. A switch has at
// most 255 ports, so a fixed buffer keeps a decision free of allocation.
class Candidates {
 public:
  bool empty() const { return size_ == 0; }
  const Candidate* begin() const { return items_.data(); }
  const Candidate* end() const { return items_.data() + size_; }
  void add(const Candidate& c) {
    if (size_ < items_.size()) items_[size_++] = c;
  }
  void sort() {
    auto before = [](const Candidate& a, const Candidate& b) {
      return a.dim != b.dim ? a.dim > b.dim : a.port < b.port;
    };
    if (!std::is_sorted(begin(), end(), before)) {
      std::sort(items_.begin(), items_.begin() + size_, before);
    }
  }
  // The priority encoder's output Po, or nothing when Ps is false.
  const Candidate* first_usable() const {
    auto it = std::find_if(begin(), end(), [](const Candidate& c) { return c.usable; });
    return it == end() ? nullptr : it;
  }
  // The shortest-queued candidate of the highest dimension (the "higher dim link", L922).
  const Candidate* highest_dimension_least_occupied() const {
    if (empty()) return nullptr;
    const Candidate* best = begin();
    for (const Candidate& c : *this) {
      if (c.dim == begin()->dim && c.queue < best->queue) best = &c;
    }
    return best;
  }
  // The shortest-queued candidate of any dimension, ties by priority.
  const Candidate* least_occupied() const {
    return empty() ? nullptr : std::min_element(begin(), end(), [](auto& a, auto& b) {
      return a.queue < b.queue;
    });
  }

 private:
  std::array<Candidate, kMaxPorts> items_;
  size_t size_ = 0;
};

// One decision: the switch's registers read once, then the mode's algorithm. With `options`
// set, every choice the algorithm could make in some queue state is collected there instead
// (route_options), through the same candidate code.
class Decision {
 public:
  Decision(const RouterView& view, const PacketHeader& header,
           std::vector<RouteOption>* options = nullptr)
      : view_(view), header_(header), options_(options) {}

  RouteStatus load();
  RouteDecision run(uint32_t random);
  void escape_ports(std::vector<uint16_t>& out) const;

 private:
  RouteDecision route_static();
  RouteDecision route_minimal(PacketHeader next);
  RouteDecision route_ugal(uint32_t random);
  RouteDecision route_aldfb();

  uint32_t digit_of(uint32_t router, unsigned dim) const {
    return dim + 1 == regs_.r ? router / weight_[dim] : router / weight_[dim] % regs_.k;
  }
  uint32_t radix_of(unsigned dim) const { return dim + 1 == regs_.r ? regs_.last_radix : regs_.k; }
  unsigned lanes_of(unsigned dim) const { return topology::lanes_in(regs_, dim); }
  uint32_t router_with(unsigned dim, uint32_t digit) const {
    return own_ + (digit - regs_.own_digits[dim]) * weight_[dim];
  }
  // 004 L888: the 2r-digit link number, the ending router's digits above the starting
  // router's (see topology::Fabric::link_number).
  uint64_t link_number(uint32_t from, uint32_t to) const {
    return uint64_t{to} * weight_[regs_.r] + from;
  }
  // Dimensions still to correct for a destination entry (Dr), one bit each.
  unsigned dimensions_to_correct(const DestEntry& entry) const;
  // Dimensions in which two routers' digits differ: the minimal hops between them.
  unsigned hops_between(uint32_t a, uint32_t b) const;
  bool escape_policy() const { return mode_.vc_policy == topology::VcPolicy::kEscape; }

  // A port the port map names as a channel of this fabric, and its entry.
  bool channel_port(unsigned port, PortMapEntry& entry) const;
  bool channel_candidate(unsigned port, Candidate& out) const;
  bool direct_candidates(const DestEntry& entry, unsigned dims, Candidates& out) const;
  void detour_candidates(unsigned dims, uint32_t dest, Candidates& out) const;
  struct PortQueue {
    unsigned vc;            // the least occupied VC of the range asked for
    uint32_t vc_occupancy;  // its packets
    uint32_t total;         // the port's output queue: every VC's packets
  };
  PortQueue read_queue(unsigned port, unsigned first, unsigned last) const;

  RouteDecision fail(RouteStatus status) const {
    RouteDecision d;
    d.status = status;
    d.header = header_;
    return d;
  }
  RouteDecision hop(const Candidate& c, PacketHeader next) const;
  // The candidate when its VC has room (or under the seed's policy, which waits there);
  // else the escape hop.
  RouteDecision take(const Candidate& c, PacketHeader next) const;
  RouteDecision escape(PacketHeader next) const;
  RouteDecision deliver(PacketHeader next) const;
  // route_options: every candidate of `list` on every VC of its class, leaving with `next`.
  void offer(const Candidates& list, const PacketHeader& next) const;
  void offer_escape(PacketHeader next) const;

  const RouterView& view_;
  const PacketHeader& header_;
  std::vector<RouteOption>* options_;
  topology::RouteMode mode_;
  RouteRegisters regs_;
  std::array<uint32_t, kMaxDimensions + 1> weight_{};  // k^i
  uint32_t own_ = 0;
  uint32_t routers_ = 1;
  unsigned ports_ = 0;
  unsigned vcs_ = 1;
  uint32_t depth_ = 0;
  uint32_t dest_ = 0;  // destination router
  DestEntry dest_entry_;
  // The input link, when the packet came from another router.
  std::optional<PortMapEntry> arrival_;
  uint64_t link_in_ = 0;
};

}  // namespace asn::model::engines::detail

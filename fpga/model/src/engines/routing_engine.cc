#include <algorithm>
#include <array>
#include <bit>
#include <tuple>
#include <utility>
#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "routing_decision.hpp"

namespace asn::model::engines {
namespace detail {

RouteStatus Decision::load() {
  mode_ = view_.mode();
  if (!mode_.enable) return RouteStatus::kDisabled;
  regs_ = view_.registers();
  if (regs_.k < 2 || regs_.r > kMaxDimensions || regs_.lanes == 0 || regs_.last_lanes == 0 ||
      regs_.last_radix == 0 || (regs_.r > 0 && regs_.last_radix > regs_.k)) {
    return RouteStatus::kBadConfig;
  }
  weight_[0] = 1;
  for (unsigned dim = 0; dim < regs_.r; ++dim) {
    if (regs_.own_digits[dim] >= radix_of(dim)) return RouteStatus::kBadConfig;
    own_ += regs_.own_digits[dim] * weight_[dim];
    weight_[dim + 1] = weight_[dim] * regs_.k;
  }
  routers_ = regs_.r == 0 ? 1 : weight_[regs_.r - 1] * regs_.last_radix;
  ports_ = std::min(view_.port_count(), kMaxPorts);
  vcs_ = view_.vcs_per_port();
  depth_ = view_.queue_depth();
  if (vcs_ == 0) return RouteStatus::kBadConfig;

  if (header_.in_port >= ports_) return RouteStatus::kBadInputPort;
  const PortMapEntry in = view_.port_map(header_.in_port);
  if (in.role == PortRole::kChannel) {
    if (in.dimension >= regs_.r || in.digit >= radix_of(in.dimension) ||
        in.digit == regs_.own_digits[in.dimension]) {
      return RouteStatus::kBadInputPort;
    }
    arrival_ = in;
    link_in_ = link_number(router_with(in.dimension, in.digit), own_);
  } else if (in.role != PortRole::kTerminal) {
    return RouteStatus::kBadInputPort;
  }

  dest_ = header_.dest_terminal / regs_.k;
  if (dest_ >= routers_ || dest_ >= view_.dest_entries()) return RouteStatus::kBadDestination;
  dest_entry_ = view_.dest_entry(dest_);
  if (!dest_entry_.valid) return RouteStatus::kBadDestination;
  return RouteStatus::kOk;
}

unsigned Decision::dimensions_to_correct(const DestEntry& entry) const {
  unsigned dims = 0;
  for (unsigned dim = 0; dim < regs_.r; ++dim) {
    if (entry.dims[dim].port_a != kNoPort) dims |= 1u << dim;
  }
  return dims;
}

unsigned Decision::hops_between(uint32_t a, uint32_t b) const {
  unsigned hops = 0;
  for (unsigned dim = 0; dim < regs_.r; ++dim) hops += digit_of(a, dim) != digit_of(b, dim);
  return hops;
}

// Each VC's occupancy read once: the least occupied VC of [first, last) (ties to the lower)
// and the port's whole queue.
Decision::PortQueue Decision::read_queue(unsigned port, unsigned first, unsigned last) const {
  PortQueue queue{first, 0, 0};
  bool found = false;
  for (unsigned vc = 0; vc < vcs_; ++vc) {
    const uint32_t occupancy = view_.occupancy(port, vc);
    queue.total += occupancy;
    if (vc >= first && vc < last && (!found || occupancy < queue.vc_occupancy)) {
      queue.vc = vc;
      queue.vc_occupancy = occupancy;
      found = true;
    }
  }
  return queue;
}

bool Decision::channel_port(unsigned port, PortMapEntry& entry) const {
  if (port >= ports_) return false;
  entry = view_.port_map(port);
  return entry.role == PortRole::kChannel && entry.dimension < regs_.r &&
         entry.digit < radix_of(entry.dimension) &&
         entry.digit != regs_.own_digits[entry.dimension];
}

bool Decision::channel_candidate(unsigned port, Candidate& out) const {
  PortMapEntry entry;
  if (!channel_port(port, entry)) return false;
  out.port = port;
  out.dim = entry.dimension;
  out.next = router_with(entry.dimension, entry.digit);
  if (escape_policy()) {
    // VC 0 is the escape channel; with one VC there is no adaptive VC, and every hop is an
    // escape hop.
    out.vc_class = VcClass::kAdaptive;
    out.first_vc = vcs_ > 1 ? 1 : 0;
    out.last_vc = vcs_;
  } else {
    out.vc_class = arrival_ && link_in_ >= link_number(own_, out.next) ? VcClass::kReverse
                                                                       : VcClass::kForward;
    const unsigned half = vcs_ / 2;  // one VC: both classes share it
    out.first_vc = vcs_ >= 2 && out.vc_class == VcClass::kReverse ? half : 0;
    out.last_vc = vcs_ >= 2 && out.vc_class == VcClass::kForward ? half : vcs_;
  }
  const PortQueue queue = read_queue(port, out.first_vc, out.last_vc);
  out.vc = queue.vc;
  out.occupancy = queue.vc_occupancy;
  out.queue = queue.total;
  out.room = out.occupancy < depth_ && !(escape_policy() && vcs_ == 1);
  out.usable = out.room && out.queue < view_.threshold(port);
  return true;
}

// The direct ports of the dimensions in `dims` (Pr): port_a, port_b and, where the last
// dimension has more lanes, the ports after port_b.
bool Decision::direct_candidates(const DestEntry& entry, unsigned dims, Candidates& out) const {
  for (unsigned dim = regs_.r; dim-- > 0;) {
    if ((dims >> dim & 1) == 0) continue;
    const DirectPorts& direct = entry.dims[dim];
    const unsigned lanes = direct.port_b == kNoPort ? 1 : lanes_of(dim);
    for (unsigned lane = 0; lane < lanes; ++lane) {
      const unsigned port = topology::lane_port(direct, lane);
      Candidate c;
      if (!channel_candidate(port, c) || c.dim != dim) return false;
      out.add(c);
    }
  }
  out.sort();
  return true;
}

// Every port of the dimensions in `dims` that does not lead to the destination's digit.
// Ports are visited from the last down, so a port map numbered by dimension (as
// topology::Fabric numbers ports) gives the priority order at once, and sort() has nothing
// to do.
void Decision::detour_candidates(unsigned dims, uint32_t dest, Candidates& out) const {
  std::array<Candidate, kMaxPorts> found;
  unsigned count = 0;
  for (unsigned port = ports_; port-- > 0;) {
    const PortMapEntry entry = view_.port_map(port);
    if (entry.role != PortRole::kChannel || entry.dimension >= regs_.r ||
        (dims >> entry.dimension & 1) == 0 || entry.digit == digit_of(dest, entry.dimension)) {
      continue;  // checked before the queues are read: most ports are not detours
    }
    if (channel_candidate(port, found[count])) ++count;
  }
  // Found highest port first: each dimension's run is reversed back to the lower port first.
  for (unsigned i = 0; i < count;) {
    unsigned end = i;
    while (end < count && found[end].dim == found[i].dim) ++end;
    for (unsigned j = end; j-- > i;) out.add(found[j]);
    i = end;
  }
  out.sort();
}

RouteDecision Decision::hop(const Candidate& c, PacketHeader next) const {
  RouteDecision d;
  d.port = static_cast<uint16_t>(c.port);
  d.vc = static_cast<uint8_t>(c.vc);
  d.vc_class = c.vc_class;
  d.minimal = digit_of(c.next, c.dim) == digit_of(dest_, c.dim);
  d.header = next;
  return d;
}

RouteDecision Decision::take(const Candidate& c, PacketHeader next) const {
  if (!escape_policy() || c.room) return hop(c, next);
  return escape(next);
}

void Decision::escape_ports(std::vector<uint16_t>& out) const {
  out.clear();
  const unsigned dims = dimensions_to_correct(dest_entry_);
  if (dest_entry_.local || dims == 0) return;
  const unsigned dim = static_cast<unsigned>(std::bit_width(dims)) - 1;  // highest first
  const DirectPorts& direct = dest_entry_.dims[dim];
  const unsigned lanes = direct.port_b == kNoPort ? 1 : lanes_of(dim);
  for (unsigned lane = 0; lane < lanes; ++lane) {
    const unsigned port = topology::lane_port(direct, lane);
    PortMapEntry entry;
    if (!channel_port(port, entry) || entry.dimension != dim) continue;
    out.push_back(static_cast<uint16_t>(port));
  }
}

// The escape hop: the dimension-ordered minimal hop on VC 0, the lane whose VC 0 is least
// occupied. The packet routes minimally from here (`escaped`); a pending detour (h1) or
// intermediate router is dropped, so ALDFB still detours at most once per dimension.
RouteDecision Decision::escape(PacketHeader next) const {
  thread_local std::vector<uint16_t> ports;
  escape_ports(ports);
  if (ports.empty()) return fail(RouteStatus::kNoPort);
  unsigned best = ports.front();
  uint32_t best_occupancy = view_.occupancy(best, 0);
  for (uint16_t port : ports) {
    const uint32_t occupancy = view_.occupancy(port, 0);
    if (occupancy < best_occupancy) best = port, best_occupancy = occupancy;
  }
  RouteDecision d;
  d.port = static_cast<uint16_t>(best);
  d.vc = 0;
  d.vc_class = VcClass::kEscape;
  d.minimal = true;
  next.h1 = false;
  next.to_intermediate = false;
  next.escaped = true;
  d.header = next;
  return d;
}

RouteDecision Decision::deliver(PacketHeader next) const {
  const uint32_t terminal = header_.dest_terminal % regs_.k;
  for (unsigned port = 0; port < ports_; ++port) {
    const PortMapEntry entry = view_.port_map(port);
    if (entry.role != PortRole::kTerminal || entry.digit != terminal) continue;
    next.h1 = false;
    next.to_intermediate = false;
    // Ejection never waits on another switch: any VC of the terminal port (the seed's
    // forward half under its rule).
    const unsigned last = escape_policy() || vcs_ < 2 ? vcs_ : vcs_ / 2;
    if (options_) {
      for (unsigned vc = 0; vc < last; ++vc) {
        options_->push_back({static_cast<uint16_t>(port), static_cast<uint8_t>(vc),
                             VcClass::kForward, true, next});
      }
    }
    RouteDecision d;
    d.port = static_cast<uint16_t>(port);
    d.vc = static_cast<uint8_t>(read_queue(port, 0, last).vc);
    d.local = true;
    d.header = next;
    return d;
  }
  return fail(RouteStatus::kNoPort);
}

void Decision::offer(const Candidates& list, const PacketHeader& next) const {
  if (!options_) return;
  for (const Candidate& c : list) {
    if (escape_policy() && vcs_ == 1) continue;  // no adaptive VC: escape hops only
    for (unsigned vc = c.first_vc; vc < c.last_vc; ++vc) {
      options_->push_back(
          {static_cast<uint16_t>(c.port), static_cast<uint8_t>(vc), c.vc_class, false, next});
    }
  }
}

void Decision::offer_escape(PacketHeader next) const {
  if (!options_ || !escape_policy()) return;
  thread_local std::vector<uint16_t> ports;
  escape_ports(ports);
  next.h1 = false;
  next.to_intermediate = false;
  next.escaped = true;
  for (uint16_t port : ports) options_->push_back({port, 0, VcClass::kEscape, false, next});
}

// Algorithms 3 (L910-934) and 4 (L936-952), on the adaptive VCs.

RouteDecision Decision::run(uint32_t random) {
  if (const RouteStatus status = load(); status != RouteStatus::kOk) return fail(status);
  switch (mode_.mode) {
    case RoutingMode::kStatic:
      return route_static();
    case RoutingMode::kMinimal:
      return route_minimal(header_);
    case RoutingMode::kUgal:
      return route_ugal(random);
    case RoutingMode::kAldfb:
      return route_aldfb();
  }
  return fail(RouteStatus::kBadConfig);
}

}  // namespace detail

using detail::Decision;

std::string_view to_string(RouteStatus status) {
  switch (status) {
    case RouteStatus::kOk:
      return "ok";
    case RouteStatus::kDisabled:
      return "routing disabled (route.config.enable is 0)";
    case RouteStatus::kBadConfig:
      return "the ROUTE registers describe no fabric";
    case RouteStatus::kBadInputPort:
      return "the input port is not in the port map";
    case RouteStatus::kBadDestination:
      return "no valid dest_table entry for the destination router";
    case RouteStatus::kNoPort:
      return "the tables name no port to take";
    case RouteStatus::kNoSchedule:
      return "static mode without a programmed schedule for this fabric";
    case RouteStatus::kBadHeader:
      return "the packet header contradicts the tables";
  }
  return "?";
}

RouteDecision route_packet(const RouterView& view, const PacketHeader& header, uint32_t random) {
  return Decision(view, header).run(random);
}

RouteStatus route_options(const RouterView& view, const PacketHeader& header,
                          std::vector<RouteOption>& out) {
  out.clear();
  Decision decision(view, header, &out);
  const RouteDecision d = decision.run(0);
  if (d.status != RouteStatus::kOk) return d.status;
  if (view.mode().mode == topology::RoutingMode::kStatic) {
    // Static routes are fixed by the header: the decision is the only option.
    out.assign(1, {d.port, d.vc, d.vc_class, d.local, d.header});
  }
  std::sort(out.begin(), out.end(), [](const RouteOption& a, const RouteOption& b) {
    return std::tie(a.port, a.vc, a.header.h1, a.header.escaped, a.header.to_intermediate,
                    a.header.intermediate) < std::tie(b.port, b.vc, b.header.h1,
                                                      b.header.escaped, b.header.to_intermediate,
                                                      b.header.intermediate);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return RouteStatus::kOk;
}

RouteStatus escape_ports(const RouterView& view, const PacketHeader& header,
                         std::vector<uint16_t>& out) {
  out.clear();
  Decision decision(view, header);
  if (const RouteStatus status = decision.load(); status != RouteStatus::kOk) return status;
  decision.escape_ports(out);
  return RouteStatus::kOk;
}
}  // namespace asn::model::engines

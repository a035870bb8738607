#include "fabric.hpp"

#include <algorithm>
#include <bit>
#include <span>
#include <unordered_set>

#include "asn/topology/route_words.hpp"

namespace asn::sim::detail {
namespace {

// A free lane of a port's `free` list, or -1.
int free_lane(const std::vector<uint64_t>& free, unsigned port, unsigned lanes, uint64_t now) {
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (free[port * 2 + lane] <= now) return static_cast<int>(lane);
  }
  return -1;
}

}  // namespace

Network::Network(const Settings& settings, topology::RoutingMode mode, double load, uint64_t seed)
    : settings_(settings),
      load_(load),
      k_(settings.k),
      vcs_(settings.num_vcs),
      ring_cap_(settings.vc_buf_size),
      traffic_(settings, seed),
      random_(seed * 0x9e3779b97f4a7c15ull + 1),
      ugal_random_(seed ^ 0x5547414c5547414cull),
      operand_random_(seed ^ 0x6661616464616464ull) {
  const topology::Fabric fabric(settings.terminals, settings.k);
  const auto channel_mode = settings.channels == Channels::kDilated
                                ? topology::ChannelMode::kDilated
                                : topology::ChannelMode::kDoubleRate;
  routers_.resize(fabric.routers());
  for (Router& router : routers_) router.mode = {mode, true, settings.vc_rule};
  program(fabric, channel_mode);
  for (const Router& router : routers_) views_.emplace_back(router, settings);

  const uint32_t n = settings.terminals;
  source_ring_.resize(size_t{n} * settings.source_queue_packets);
  source_head_.assign(n, 0);
  source_count_.assign(n, 0);
  terminal_free_.assign(n, 0);
  const size_t wheel = settings.channel_latency + settings.vc_buf_size + 2;
  arrivals_.resize(wheel);
  credit_wheel_.resize(wheel);
  if (settings.pattern == Pattern::kTrace) {
    trace_ = read_trace(settings.trace_file, n, settings.vc_buf_size);
  }
}

// Each router's ROUTE block as asnd's fabric manager writes it (compute_route_tables, then
// encode_*_table), read back through the decoders the emulated board's view uses.
void Network::program(const topology::Fabric& fabric, topology::ChannelMode channel_mode) {
  const unsigned lanes_per_port = settings_.channels == Channels::kDoubleRate ? 2 : 1;
  for (uint32_t r = 0; r < routers_.size(); ++r) {
    Router& router = routers_[r];
    const topology::RouteTables tables = topology::compute_route_tables(fabric, r, channel_mode);
    const std::vector<uint32_t> config = topology::encode_config(tables.registers, router.mode);
    router.registers = topology::decode_config(config);
    router.mode = topology::decode_mode(config);
    router.ports = static_cast<unsigned>(tables.port_map.size());
    for (uint32_t word : topology::encode_port_map_table(tables.port_map, router.ports)) {
      router.port_map.push_back(topology::decode_port_map(word));
    }
    const auto dest_words = topology::encode_dest_table(tables.dest_table, fabric.routers());
    const size_t per = topology::encode_dest({}).size();
    for (size_t d = 0; d < fabric.routers(); ++d) {
      router.dest_table.push_back(
          topology::decode_dest(std::span<const uint32_t>(dest_words).subspan(d * per, per)));
    }

    const unsigned ports = router.ports;
    router.peer.assign(ports, {kNone, 0});
    router.lanes.assign(ports, 1);
    for (unsigned p = 0; p < ports; ++p) {
      if (router.port_map[p].role != PortRole::kChannel) continue;
      router.peer[p] = fabric.peer(r, p, channel_mode);
      router.lanes[p] = static_cast<uint8_t>(lanes_per_port);
    }
    const size_t vcs = size_t{ports} * vcs_;
    router.ring.assign(vcs * ring_cap_, kNone);
    router.ring_head.assign(vcs, 0);
    router.ring_count.assign(vcs, 0);
    router.occupied.assign((vcs + 63) / 64, 0);
    router.head_since.assign(vcs, 0);
    router.in_flits.assign(vcs, 0);
    router.credits.assign(vcs, settings_.vc_buf_size);
    router.waiting.assign(vcs, 0);
    router.out_free.assign(size_t{ports} * 2, 0);
    router.in_free.assign(size_t{ports} * 2, 0);
    router.grant_ptr.assign(vcs, 0);
    router.grant_vc_ptr.assign(ports, 0);
    router.accept_ptr.assign(ports, 0);
    if (settings_.internal_speedup > 1) {
      router.out_ring.assign(vcs * settings_.output_buffer_size, kNone);
      router.out_head.assign(vcs, 0);
      router.out_count.assign(vcs, 0);
      router.out_vc_ptr.assign(ports, 0);
    }
  }
}

uint32_t Network::new_packet() {
  if (free_packets_.empty()) {
    packets_.emplace_back();
    return static_cast<uint32_t>(packets_.size() - 1);
  }
  const uint32_t id = free_packets_.back();
  free_packets_.pop_back();
  packets_[id] = Packet{};
  return id;
}

void Network::push(Router& router, unsigned port, unsigned vc, uint32_t packet) {
  const size_t at = size_t{port} * vcs_ + vc;
  if (router.ring_count[at] >= ring_cap_)
    throw SimError("internal: VC overflow at port " + std::to_string(port) + " vc " +
                   std::to_string(vc));
  const size_t slot = (router.ring_head[at] + router.ring_count[at]) % ring_cap_;
  router.ring[at * ring_cap_ + slot] = packet;
  if (router.ring_count[at] == 0) {
    router.head_since[at] = now_;
    router.occupied[at / 64] |= uint64_t{1} << (at % 64);
  }
  ++router.ring_count[at];
  ++router.queued;
  if (packets_[packet].request != 0) router.hot.push_back(packet);
}

void Network::start_measurement() {
  measure_start_ = now_;
  window = {};
  total = {};
  latencies.clear();
  hops = detour_hops = repeated_detours = delivered_packets = reroutes = 0;
  cold_delivered_flits = hot_served = combines = wait_buffer_full = 0;
  cold_latencies.clear();
}

// Packets are drawn (Bernoulli, or the trace's records of this cycle) into source queues; each
// terminal moves its head packet into a VC of its router's terminal port with room for it.
void Network::inject() {
  const uint32_t n = settings_.terminals;
  const uint32_t cap = settings_.source_queue_packets;
  auto enqueue = [&](uint32_t source, uint32_t dest, uint32_t size, bool hot) {
    if (now_ >= measure_start_) {
      window.generated_flits += size;
      total.generated_flits += size;
    }
    if (source_count_[source] == cap) {
      if (now_ >= measure_start_) ++window.refused, ++total.refused;
      return;
    }
    const uint32_t id = new_packet();
    Packet& p = packets_[id];
    p.source = source;
    p.dest = dest;
    p.created = now_;
    p.size = size;
    p.arrival_header.dest_terminal = dest;
    if (hot) p.request = new_hot_request();
    source_ring_[size_t{source} * cap + (source_head_[source] + source_count_[source]) % cap] = id;
    ++source_count_[source];
    ++queued_;
  };
  if (settings_.pattern == Pattern::kTrace) {
    // A trace loses nothing: a record whose source queue is full waits, and the records after
    // it with it (the trace stays in order).
    for (; trace_next_ < trace_.size() && trace_[trace_next_].time <= now_; ++trace_next_) {
      const TraceRecord& t = trace_[trace_next_];
      if (source_count_[t.source] == cap) break;
      enqueue(t.source, t.destination, t.size, false);
    }
  } else {
    const double p = load_ / settings_.packet_size;
    for (uint32_t s = 0; s < n; ++s) {
      if (!random_.chance(p)) continue;
      const Traffic::Draw d = traffic_.draw(s, random_);
      enqueue(s, d.dest, settings_.packet_size, d.hot);
    }
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (source_count_[s] == 0 || terminal_free_[s] > now_) continue;
    const uint32_t id = source_ring_[size_t{s} * cap + source_head_[s]];
    const uint32_t size = packets_[id].size;
    Router& router = routers_[s / k_];
    const unsigned port = s % k_;  // terminal ports are 0..k-1 (topology::Fabric::port_info)
    unsigned best = vcs_;
    uint32_t best_free = 0;
    for (unsigned vc = 0; vc < vcs_; ++vc) {
      const uint32_t free = settings_.vc_buf_size - router.in_flits[port * vcs_ + vc];
      if (free >= size && free > best_free) best = vc, best_free = free;
    }
    if (best == vcs_) continue;
    source_head_[s] = (source_head_[s] + 1) % cap;
    --source_count_[s];
    --queued_;
    ++in_network_;
    terminal_free_[s] = now_ + size;
    if (try_combine(s / k_, id)) continue;  // merged in the router's queue: holds no VC
    router.in_flits[port * vcs_ + best] += size;
    packets_[id].ready = now_;
    push(router, port, best, id);
  }
}

void Network::route_head(uint32_t r, unsigned port, unsigned vc) {
  Router& router = routers_[r];
  const size_t at = size_t{port} * vcs_ + vc;
  Packet& p = packets_[router.ring[at * ring_cap_ + router.ring_head[at]]];
  if (p.ready > now_) return;
  if (p.routed) {
    if (!p.reroute || p.blocked_at >= now_) return;
    --router.waiting[size_t{p.out_port} * vcs_ + p.out_vc];  // the decision is undone
    if (now_ >= measure_start_) ++reroutes;
  }
  p.arrival_header.in_port = static_cast<uint16_t>(port);
  const engines::RouteDecision d = engines::route_packet(
      views_[r], p.arrival_header, static_cast<uint32_t>(ugal_random_.next()));
  if (d.status != engines::RouteStatus::kOk) {
    throw SimError("routing engine at router " + std::to_string(r) + ": " +
                   std::string(engines::to_string(d.status)));
  }
  p.routed = true;
  p.header = d.header;
  p.out_port = d.port;
  p.out_vc = d.vc;
  p.local = d.local;
  p.minimal = d.minimal;
  // Routing overlaps the wait behind earlier packets (a pipelined router): the packet may
  // request routing_delay cycles after it arrived, or now if it waited longer at the head.
  // Routing again a blocked head keeps its ready time: it paid the delay once.
  if (!p.reroute) p.ready = std::max<uint64_t>(p.ready + settings_.routing_delay, now_);
  p.reroute = false;
  ++router.waiting[size_t{d.port} * vcs_ + d.vc];
}

// Separable iSLIP: requests from every input VC whose head may go; each output chooses one of
// its requested VCs round-robin and grants that VC's requesting input nearest the VC's pointer;
// each input accepts the granting output nearest its pointer; pointers move one past the
// match, on the first iteration of the cycle's first pass only (iSLIP's rule).
void Network::allocate(uint32_t r, bool first_pass) {
  Router& router = routers_[r];
  const unsigned ports = router.ports;
  // The allocator's scratch, kept between calls (it runs for every router every cycle; a
  // member, not thread_local, whose every use checked its initialisation): grant, accept and
  // vc_grant are all kNone on entry and on return; only the entries used are reset.
  auto& [requests, inputs, outputs, out_vcs, grant, accept, vc_grant] = scratch_;
  if (grant.size() < ports) grant.assign(ports, kNone), accept.assign(ports, kNone);
  if (vc_grant.size() < size_t{ports} * vcs_) vc_grant.assign(size_t{ports} * vcs_, kNone);
  requests.clear();
  inputs.clear();
  const bool output_queues = settings_.internal_speedup > 1;
  // Only the occupied input VCs, in the order of a scan of every port and VC.
  unsigned lane_port = kNone;
  bool lane_free = false;
  for (size_t word = 0; word < router.occupied.size(); ++word) {
    for (uint64_t bits = router.occupied[word]; bits != 0; bits &= bits - 1) {
      const size_t at = word * 64 + static_cast<size_t>(std::countr_zero(bits));
      const unsigned port = static_cast<unsigned>(at / vcs_);
      const unsigned vc = static_cast<unsigned>(at % vcs_);
      if (port != lane_port) {
        lane_port = port;
        lane_free = free_lane(router.in_free, port, router.lanes[port], now_) >= 0;
      }
      if (!lane_free) continue;
      route_head(r, port, vc);
      Packet& p = packets_[router.ring[at * ring_cap_ + router.ring_head[at]]];
      if (!p.routed || p.ready > now_) continue;
      const size_t out_at = size_t{p.out_port} * vcs_ + p.out_vc;
      // No room at the output VC: the head is routed again next cycle. A head waiting only
      // for a busy lane keeps its decision (the VC it chose has room).
      const bool room = output_queues ? router.out_count[out_at] < settings_.output_buffer_size
                                      : p.local || router.credits[out_at] >= p.size;
      if (!room) {
        p.reroute = true;
        p.blocked_at = now_;
        continue;
      }
      if (!output_queues &&
          free_lane(router.out_free, p.out_port, router.lanes[p.out_port], now_) < 0) {
        continue;
      }
      if (inputs.empty() || inputs.back() != port) inputs.push_back(static_cast<uint16_t>(port));
      requests.push_back(
          {static_cast<uint16_t>(port), static_cast<uint8_t>(vc), p.out_port, p.out_vc, p.ready});
    }
  }
  if (requests.empty()) return;
  const unsigned iterations = settings_.alloc_iters;
  for (unsigned iteration = 0; iteration < iterations; ++iteration) {
    outputs.clear();
    out_vcs.clear();
    // Each output VC's candidate: round-robin over the inputs from that VC's own pointer;
    // between two requests at the same distance (two VCs of one input), the head that waited
    // longer. The pointer is per output VC, not per output port: a request exists only while
    // its output VC has room (credits, or a free output-queue slot), and with one pointer per
    // port the requests to the port's other VCs moved it past an input whose head waited for a
    // full VC each time that VC had room again, for ever (a head waited 50,791 cycles with
    // output queues, 4 VCs, adversarial load 1.0).
    for (uint32_t i = 0; i < requests.size(); ++i) {
      const Request& q = requests[i];
      if (q.in == 0xffff) continue;  // matched already
      const size_t out_at = size_t{q.out} * vcs_ + q.out_vc;
      const unsigned ptr = router.grant_ptr[out_at];
      auto rank = [&](const Request& x) {
        return std::pair((x.in + ports - ptr) % ports, x.since);
      };
      uint32_t& g = vc_grant[out_at];
      if (g == kNone) {
        out_vcs.push_back(static_cast<uint32_t>(out_at));
        if (grant[q.out] == kNone) {
          grant[q.out] = 0;  // marks the output as requested until its VC is chosen below
          outputs.push_back(q.out);
        }
        g = i;
      } else if (rank(q) < rank(requests[g])) {
        g = i;
      }
    }
    // Then the output chooses among its VCs round-robin from its VC pointer. Distances from
    // different VCs' pointers are not comparable: ranking all requests of a port by them let a
    // VC whose pointer stood just before its requesters win every cycle, while an input
    // waiting for the other VC stayed at the same distance from a pointer that moves only
    // when that VC is granted (randperm, minimal, load 1.0: a head waited from cycle 12 on for
    // an ejection port with 8 credits and an idle lane). A VC with room keeps it until it is
    // granted (only this output spends its credits or its queue's slots), so its requests
    // stay, the VC pointer reaches it, and its own pointer then reaches each of its inputs.
    // Each input then accepts the granting output nearest its pointer (the distances of
    // different outputs from one pointer differ: the order of the outputs does not matter).
    for (const unsigned out : outputs) {
      for (unsigned i = 0; i < vcs_; ++i) {
        const unsigned vc = (router.grant_vc_ptr[out] + i) % vcs_;
        const uint32_t g = vc_grant[size_t{out} * vcs_ + vc];
        if (g != kNone) {
          grant[out] = g;
          break;
        }
      }
      const Request& q = requests[grant[out]];
      uint32_t& a = accept[q.in];
      const unsigned distance = (out + ports - router.accept_ptr[q.in]) % ports;
      if (a == kNone || distance < (requests[a].out + ports - router.accept_ptr[q.in]) % ports) {
        a = grant[out];
      }
    }
    for (const uint32_t out_at : out_vcs) vc_grant[out_at] = kNone;
    for (const unsigned out : outputs) grant[out] = kNone;
    const bool last = iteration + 1 == iterations;
    bool matched = false;
    for (const unsigned in : inputs) {
      if (accept[in] == kNone) continue;
      Request& q = requests[accept[in]];
      accept[in] = kNone;
      const int lane = free_lane(router.in_free, in, router.lanes[in], now_);
      if (lane < 0) continue;
      // A later pass of the same cycle (a double-rate channel's second lane, output queues'
      // speedup) is one more iteration: its requests lack the inputs whose only lane the first
      // pass used, and moving the pointers past them starved them in lockstep (a terminal
      // input sent its other VC every first pass; every second pass moved the pointer of the
      // VC it waited for past it).
      if (first_pass && iteration == 0) {
        router.grant_ptr[size_t{q.out} * vcs_ + q.out_vc] = static_cast<uint16_t>((in + 1) % ports);
        router.grant_vc_ptr[q.out] = static_cast<uint8_t>((q.out_vc + 1) % vcs_);
        router.accept_ptr[in] = static_cast<uint16_t>((q.out + 1) % ports);
      }
      transfer(r, in, q.vc, static_cast<unsigned>(lane));
      matched = true;
      // This VC and, when the ports have no lane left, their other requests are done (for the
      // next iteration: the last has none).
      const unsigned out = q.out;
      q.in = 0xffff;
      if (last) continue;
      const bool in_full = free_lane(router.in_free, in, router.lanes[in], now_) < 0;
      // With output queues a switch output takes one packet a pass.
      const bool out_full =
          output_queues || free_lane(router.out_free, out, router.lanes[out], now_) < 0;
      for (Request& other : requests) {
        if (other.in == 0xffff) continue;
        if ((in_full && other.in == in) || (out_full && other.out == out)) other.in = 0xffff;
      }
    }
    if (!matched) break;
  }
}

// A granted packet leaves its input VC: straight onto the channel (input-queued), or into the
// output queue of its port and VC (internal_speedup >= 2).
void Network::transfer(uint32_t r, unsigned port, unsigned vc, unsigned lane_in) {
  const uint32_t id = leave_input(r, port, vc, lane_in);
  if (settings_.internal_speedup == 1) {
    send(r, id);
    return;
  }
  Router& router = routers_[r];
  const Packet& p = packets_[id];
  const size_t out_at = size_t{p.out_port} * vcs_ + p.out_vc;
  const uint32_t cap = settings_.output_buffer_size;
  router.out_ring[out_at * cap + (router.out_head[out_at] + router.out_count[out_at]) % cap] = id;
  ++router.out_count[out_at];
  ++router.out_queued;
}

uint32_t Network::leave_input(uint32_t r, unsigned port, unsigned vc, unsigned lane_in) {
  Router& router = routers_[r];
  const size_t at = size_t{port} * vcs_ + vc;
  const uint32_t id = router.ring[at * ring_cap_ + router.ring_head[at]];
  router.ring_head[at] = static_cast<uint16_t>((router.ring_head[at] + 1) % ring_cap_);
  if (--router.ring_count[at] == 0) router.occupied[at / 64] &= ~(uint64_t{1} << (at % 64));
  router.head_since[at] = now_ + 1;
  --router.queued;
  const Packet& p = packets_[id];
  --router.waiting[size_t{p.out_port} * vcs_ + p.out_vc];
  if (p.request != 0) std::erase(router.hot, id);
  // With speedup S the switch moves S flits a cycle: a 1-flit packet frees the input for the
  // next pass of the same cycle.
  router.in_free[port * 2 + lane_in] = settings_.internal_speedup == 1
                                           ? now_ + p.size
                                           : now_ + (p.size - 1) / settings_.internal_speedup;
  last_progress_ = now_;

  // The input buffer frees when the tail has left; upstream hears it a channel later.
  const size_t wheel = arrivals_.size();
  if (router.port_map[port].role == PortRole::kTerminal) {
    credit_wheel_[(now_ + p.size) % wheel].push_back(
        {r, static_cast<uint16_t>(port), static_cast<uint8_t>(vc), true, p.size});
  } else {
    const topology::PortEnd up = router.peer[port];
    credit_wheel_[(now_ + p.size - 1 + settings_.channel_latency) % wheel].push_back(
        {up.router, static_cast<uint16_t>(up.port), static_cast<uint8_t>(vc), false, p.size});
  }
  return id;
}

// The output queues feed their channels: per free lane, the first VC from the port's pointer
// whose head has room downstream (or goes to a terminal).
void Network::drain_outputs(uint32_t r) {
  Router& router = routers_[r];
  const uint32_t cap = settings_.output_buffer_size;
  for (unsigned port = 0; port < router.ports && router.out_queued > 0; ++port) {
    while (free_lane(router.out_free, port, router.lanes[port], now_) >= 0) {
      bool sent = false;
      for (unsigned i = 0; i < vcs_ && !sent; ++i) {
        const unsigned vc = (router.out_vc_ptr[port] + i) % vcs_;
        const size_t at = size_t{port} * vcs_ + vc;
        if (router.out_count[at] == 0) continue;
        const uint32_t id = router.out_ring[at * cap + router.out_head[at]];
        const Packet& p = packets_[id];
        if (!p.local && router.credits[at] < p.size) continue;
        router.out_head[at] = static_cast<uint16_t>((router.out_head[at] + 1) % cap);
        --router.out_count[at];
        --router.out_queued;
        router.out_vc_ptr[port] = static_cast<uint8_t>((vc + 1) % vcs_);
        send(r, id);
        sent = true;
      }
      if (!sent) break;
    }
  }
}

// The packet takes a lane of its output port: delivered to its terminal, or on its way to the
// next router.
void Network::send(uint32_t r, uint32_t id) {
  Router& router = routers_[r];
  Packet& p = packets_[id];
  const unsigned out = p.out_port;
  const size_t out_at = size_t{out} * vcs_ + p.out_vc;
  router.out_free[out * 2 + free_lane(router.out_free, out, router.lanes[out], now_)] =
      now_ + p.size;
  last_progress_ = now_;
  const size_t wheel = arrivals_.size();
  if (p.local) {
    ++delivered_all;
    --in_network_;
    deliver(id, now_ + settings_.channel_latency + p.size - 1);
    for (uint8_t d : p.dim_detours) repeated_detours += d >= 2 ? 1 : 0;
    free_packets_.push_back(id);
    return;
  }
  router.credits[out_at] -= p.size;
  ++p.hops;
  if (!p.minimal) {
    ++p.detours;
    ++p.dim_detours[router.port_map[out].dimension];
  }
  p.routed = false;
  p.reroute = false;
  p.arrival_header = p.header;
  const topology::PortEnd next = router.peer[out];
  p.ready = now_ + settings_.channel_latency;
  arrivals_[(now_ + settings_.channel_latency) % wheel].push_back(
      {next.router, static_cast<uint16_t>(next.port), p.out_vc, id});
}

void Network::step() {
  const size_t wheel = arrivals_.size();
  auto& arriving = arrivals_[now_ % wheel];
  for (const Arrival& a : arriving) {
    if (!try_combine(a.router, a.packet)) {
      push(routers_[a.router], a.port, a.vc, a.packet);
      continue;
    }
    // Merged on arrival: the buffer it would have held frees when its tail has arrived.
    const topology::PortEnd up = routers_[a.router].peer[a.port];
    credit_wheel_[(now_ + settings_.packet_size - 1 + settings_.channel_latency) % wheel].push_back(
        {up.router, static_cast<uint16_t>(up.port), a.vc, false, settings_.packet_size});
  }
  arriving.clear();
  release_wait_buffers();
  auto& credits = credit_wheel_[now_ % wheel];
  for (const Credit& c : credits) {
    Router& router = routers_[c.router];
    const size_t at = size_t{c.port} * vcs_ + c.vc;
    if (c.terminal) {
      router.in_flits[at] -= c.flits;
    } else {
      router.credits[at] += c.flits;
    }
  }
  credits.clear();
  inject();
  // A double-rate channel moves two packets a cycle, also from one VC: a second allocation
  // pass, in which only lanes still free (the second lane of a double-rate port) can match.
  // With output queues, internal_speedup passes of the switch, then the channels.
  const bool output_queues = settings_.internal_speedup > 1;
  const unsigned passes = output_queues                                 ? settings_.internal_speedup
                          : settings_.channels == Channels::kDoubleRate ? 2
                                                                        : 1;
  for (unsigned pass = 0; pass < passes; ++pass) {
    for (uint32_t r = 0; r < routers_.size(); ++r) {
      if (routers_[r].queued > 0) allocate(r, pass == 0);
    }
  }
  if (output_queues) {
    for (uint32_t r = 0; r < routers_.size(); ++r) {
      if (routers_[r].out_queued > 0) drain_outputs(r);
    }
  }
  ++now_;
}

// What the head of input VC `at` of router r waits for, once it has waited more than
// deadlock_cycles: room at the output VC it chose last (then the downstream input VC that has
// none is the next VC of the wait-for graph), a busy lane, or nothing it lacks (starvation).
Network::HeadWait Network::head_wait(uint32_t r, size_t at) const {
  HeadWait w;
  const Router& router = routers_[r];
  if (router.ring_count[at] == 0 || now_ - router.head_since[at] <= settings_.deadlock_cycles) {
    return w;
  }
  const Packet& p = packets_[router.ring[at * ring_cap_ + router.ring_head[at]]];
  if (!p.routed) return w;  // not yet routed: its input lane is busy, it waits for nothing else
  w.waited = now_ - router.head_since[at];
  const size_t out_at = size_t{p.out_port} * vcs_ + p.out_vc;
  const bool lane_idle =
      free_lane(router.out_free, p.out_port, router.lanes[p.out_port], now_) >= 0;
  const std::string output = "port " + std::to_string(p.out_port) + " VC " +
                             std::to_string(p.out_vc) + (p.local ? " (its terminal)" : "");
  const std::string lane = lane_idle ? "lane idle" : "lane busy";
  // The packet whose lack of credits blocks the output VC: the head itself (input-queued), or
  // the head of the full output queue (output-queued).
  const Packet* front = &p;
  if (!router.out_count.empty()) {
    const uint32_t cap = settings_.output_buffer_size;
    const std::string queue =
        "output queue " + std::to_string(router.out_count[out_at]) + "/" + std::to_string(cap);
    if (router.out_count[out_at] < cap) {
      w.kind = HeadWait::kStarved;
      w.what = output + ": " + queue + ", " + std::to_string(router.credits[out_at]) +
               " credits, " + lane;
      return w;
    }
    front = &packets_[router.out_ring[out_at * cap + router.out_head[out_at]]];
    w.what = queue + ", ";
  }
  const bool room = front->local || router.credits[out_at] >= front->size;
  w.what = output + ": " + w.what + std::to_string(router.credits[out_at]) + " credits, " + lane;
  if (room) {
    w.kind = lane_idle ? HeadWait::kStarved : HeadWait::kLane;
    return w;
  }
  w.kind = HeadWait::kNoRoom;
  const topology::PortEnd next = router.peer[p.out_port];
  w.next_router = next.router;
  w.next_at = size_t{next.port} * vcs_ + p.out_vc;
  return w;
}

std::string Network::vc_name(uint32_t r, size_t at) const {
  return "r" + std::to_string(r) + ":p" + std::to_string(at / vcs_) + "/vc" +
         std::to_string(at % vcs_);
}

// Scans the heads that waited more than deadlock_cycles. A deadlock is a cycle of them, each
// waiting for a downstream VC with no room whose own head is the next one (the wait-for graph
// has out-degree one: a head waits for one VC, whose head it waits behind). Starvation is a
// head that waited as long while its output VC has room and its lane is idle: the allocator
// (or the output's drain) passes it over. Only long-waiting heads are looked at closely, and
// the caller runs this every 1024 cycles.
Network::Stuck Network::check_stuck() {
  if (in_network_ == 0) return Stuck::kNone;
  const uint64_t limit = settings_.deadlock_cycles;
  std::vector<std::pair<uint32_t, size_t>> waiting_heads;
  for (uint32_t r = 0; r < routers_.size(); ++r) {
    const Router& router = routers_[r];
    if (router.queued == 0) continue;
    for (size_t at = 0; at < router.ring_count.size(); ++at) {
      if (router.ring_count[at] > 0 && now_ - router.head_since[at] > limit) {
        waiting_heads.emplace_back(r, at);
      }
    }
  }
  if (waiting_heads.empty()) return Stuck::kNone;
  uint64_t held = 0;
  for (const Router& router : routers_) held += router.queued + router.out_queued;
  const std::string where = " at cycle " + std::to_string(now_) + "; " + std::to_string(held) +
                            " packets wait in router buffers" +
                            (now_ - last_progress_ > limit ? ", no flit moves anywhere" : "");

  // Deadlock: follow each long-waiting head's chain of full VCs; a chain that comes back to
  // a VC on it closes a cycle.
  const HeadWait* starved = nullptr;
  HeadWait starved_wait;
  std::pair<uint32_t, size_t> starved_vc;
  // VCs from which a chain was followed to its end without closing a cycle: a later chain
  // that reaches one of them ends there too (keeps the scan linear at saturation).
  std::unordered_set<uint64_t> no_cycle;
  auto key = [](uint32_t r, size_t at) { return uint64_t{r} << 32 | at; };
  for (const auto& [r0, at0] : waiting_heads) {
    std::vector<std::pair<uint32_t, size_t>> chain;
    std::vector<HeadWait> waits;
    uint32_t r = r0;
    size_t at = at0;
    for (size_t step = 0; step <= waiting_heads.size(); ++step) {
      const auto seen = std::find(chain.begin(), chain.end(), std::pair(r, at));
      if (seen != chain.end()) {
        std::string text = "deadlock: a cycle of " + std::to_string(chain.end() - seen) +
                           " input VCs, each head waiting more than " + std::to_string(limit) +
                           " cycles for a downstream VC with no room:";
        for (auto it = seen; it != chain.end(); ++it) {
          const HeadWait& hw = waits[static_cast<size_t>(it - chain.begin())];
          text += " " + vc_name(it->first, it->second) + " (waited " + std::to_string(hw.waited) +
                  ", to " + hw.what + ") ->";
        }
        report_ = text + " " + vc_name(r, at) + where;
        return Stuck::kDeadlock;
      }
      if (step > 0 && no_cycle.contains(key(r, at))) break;
      HeadWait w = head_wait(r, at);
      if (step == 0 && w.kind == HeadWait::kStarved &&
          (!starved || w.waited > starved_wait.waited)) {
        starved_wait = w;
        starved = &starved_wait;
        starved_vc = {r, at};
      }
      if (w.kind != HeadWait::kNoRoom) break;
      chain.emplace_back(r, at);
      waits.push_back(w);
      r = w.next_router;
      at = w.next_at;
    }
    for (const auto& [r1, at1] : chain) no_cycle.insert(key(r1, at1));
  }
  if (starved) {
    report_ = "starvation: the head of " + vc_name(starved_vc.first, starved_vc.second) +
              " (router " + std::to_string(starved_vc.first) + " port " +
              std::to_string(starved_vc.second / vcs_) + " VC " +
              std::to_string(starved_vc.second % vcs_) + ") has waited " +
              std::to_string(starved->waited) + " cycles (deadlock_cycles " +
              std::to_string(limit) + ") for " + starved->what +
              ": its output VC has room, so it is passed over, not deadlocked" + where;
    return Stuck::kStarvation;
  }
  return Stuck::kNone;
}

}  // namespace asn::sim::detail

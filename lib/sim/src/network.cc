#include "asn/sim/network.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/sim/traffic.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "asn/topology/route_words.hpp"

namespace asn::sim {
namespace {

namespace engines = model::engines;
using topology::PortRole;

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct Packet {
  uint32_t source = 0;
  uint32_t dest = 0;
  uint64_t created = 0;
  // Before routing, the cycle it arrived at this router; after, the first cycle it may request
  // the switch.
  uint64_t ready = 0;
  uint32_t size = 1;
  uint16_t hops = 0;
  uint16_t detours = 0;
  std::array<uint8_t, topology::kMaxDimensions> dim_detours{};
  bool routed = false;  // at this router
  bool local = false;
  bool minimal = true;
  uint16_t out_port = 0;
  uint8_t out_vc = 0;
  engines::PacketHeader header;
};

// One router: its register image (programmed once, as asnd programs a board), its input VCs,
// the credits of its output VCs and the allocator's pointers.
struct Router {
  // The ROUTE block, decoded from the words asnd would write (see program()).
  topology::RouteRegisters registers;
  topology::RouteMode mode;
  std::vector<topology::PortMapEntry> port_map;
  std::vector<topology::DestEntry> dest_table;

  unsigned ports = 0;
  std::vector<topology::PortEnd> peer;  // channel ports: the far router and its port
  std::vector<uint8_t> lanes;           // per port: 2 for a double-rate channel, else 1
  // Input VCs [port * V + vc]: a ring of packet ids of `ring_cap` entries each.
  std::vector<uint32_t> ring;
  std::vector<uint16_t> ring_head;
  std::vector<uint16_t> ring_count;
  std::vector<uint64_t> head_since;  // the cycle the current head became head
  std::vector<uint32_t> in_flits;    // flits held (terminal ports: what the terminal sees)
  // Output VCs [port * V + vc].
  std::vector<uint32_t> credits;  // free flits at the downstream VC
  std::vector<uint32_t> waiting;  // packets routed to it here, not yet sent
  // Lanes [port * 2 + lane]: the cycle each is free again.
  std::vector<uint64_t> out_free;
  std::vector<uint64_t> in_free;
  std::vector<uint16_t> grant_ptr;
  std::vector<uint16_t> accept_ptr;
  uint32_t queued = 0;  // packets in the input VCs
};

// The routing engine's view of one simulated router: the register image and, as
// port[p].vc_occupancy, the router's own queue state (004 L846: the output queue's packets).
class SimRouterView final : public engines::RouterView {
 public:
  SimRouterView(const Router& router, const Settings& settings)
      : router_(router),
        vcs_(settings.num_vcs),
        buffer_(settings.vc_buf_size),
        packet_size_(settings.packet_size),
        depth_(queue_depth_packets(settings)),
        threshold_(threshold_packets(settings)) {}

  topology::RouteRegisters registers() const override { return router_.registers; }
  topology::RouteMode mode() const override { return router_.mode; }
  unsigned port_count() const override { return router_.ports; }
  topology::PortMapEntry port_map(unsigned port) const override { return router_.port_map[port]; }
  uint32_t dest_entries() const override {
    return static_cast<uint32_t>(router_.dest_table.size());
  }
  topology::DestEntry dest_entry(uint32_t router) const override {
    return router_.dest_table[router];
  }
  unsigned schedule_entries() const override { return 0; }
  topology::ScheduleEntry schedule_entry(unsigned) const override { return {}; }
  uint32_t threshold(unsigned) const override { return threshold_; }
  unsigned vcs_per_port() const override { return vcs_; }
  uint32_t queue_depth() const override { return depth_; }
  // An output VC's queue: packets routed to it and waiting here, plus the packets its
  // downstream buffer holds as far as the credits tell (an input-queued router keeps no
  // output queue; this is the queue the board's output would hold).
  uint32_t occupancy(unsigned port, unsigned vc) const override {
    const size_t at = size_t{port} * vcs_ + vc;
    uint32_t packets = router_.waiting[at];
    if (router_.port_map[port].role == PortRole::kChannel) {
      packets += (buffer_ - router_.credits[at] + packet_size_ - 1) / packet_size_;
    }
    return packets;
  }

 private:
  const Router& router_;
  unsigned vcs_;
  uint32_t buffer_;
  uint32_t packet_size_;
  uint32_t depth_;
  uint32_t threshold_;
};

struct Arrival {
  uint32_t router;
  uint16_t port;
  uint8_t vc;
  uint32_t packet;
};

struct Credit {
  uint32_t router;
  uint16_t port;
  uint8_t vc;
  bool terminal;  // to a terminal input port's count, else to an output VC's credits
  uint32_t flits;
};

// Counters of one measured window and of the whole measurement.
struct Counters {
  uint64_t generated_flits = 0;
  uint64_t delivered_flits = 0;
  uint64_t refused = 0;
};

class Network {
 public:
  Network(const Settings& settings, topology::RoutingMode mode, double load, uint64_t seed);

  void step();
  uint64_t now() const { return now_; }
  // A deadlock: some input VC's head has not moved for deadlock_cycles (the whole fabric or a
  // cycle of VCs within it; the rest may still move). Scans every VC: call it now and then.
  bool deadlocked();
  std::string deadlock_report() const;
  void start_measurement();
  bool busy() const { return in_network_ > 0; }
  bool trace_done() const {
    return trace_next_ >= trace_.size() && in_network_ == 0 && queued_ == 0;
  }

  Counters window;  // reset by the caller per window
  Counters total;   // since start_measurement()
  std::vector<uint32_t> latencies;
  uint64_t hops = 0;
  uint64_t detour_hops = 0;
  uint64_t repeated_detours = 0;
  uint64_t delivered_packets = 0;
  uint32_t routers() const { return static_cast<uint32_t>(routers_.size()); }
  uint64_t delivered_all = 0;

 private:
  void program(const topology::Fabric& fabric, topology::ChannelMode channel_mode);
  void inject();
  void allocate(uint32_t r);
  void route_head(uint32_t r, unsigned port, unsigned vc);
  void transfer(uint32_t r, unsigned port, unsigned vc, unsigned lane_in);
  uint32_t new_packet();
  void push(Router& router, unsigned port, unsigned vc, uint32_t packet);

  const Settings& settings_;
  double load_;
  uint32_t k_;
  unsigned vcs_;
  uint32_t ring_cap_;
  std::vector<Router> routers_;
  std::vector<SimRouterView> views_;
  std::vector<Packet> packets_;
  std::vector<uint32_t> free_packets_;
  // Source queues: a ring of `source_queue_packets` per terminal.
  std::vector<uint32_t> source_ring_;
  std::vector<uint32_t> source_head_;
  std::vector<uint32_t> source_count_;
  std::vector<uint64_t> terminal_free_;         // the injection link, busy for a packet's flits
  std::vector<std::vector<Arrival>> arrivals_;  // wheel, by cycle mod size
  std::vector<std::vector<Credit>> credit_wheel_;
  Traffic traffic_;
  std::vector<TraceRecord> trace_;
  size_t trace_next_ = 0;
  Random random_;
  Random ugal_random_;
  uint64_t now_ = 0;
  uint64_t last_progress_ = 0;
  uint64_t in_network_ = 0;  // packets in routers and on channels
  uint64_t queued_ = 0;      // packets in source queues
  uint64_t measure_start_ = std::numeric_limits<uint64_t>::max();
  uint32_t stuck_router_ = 0;
  size_t stuck_vc_ = 0;
};

Network::Network(const Settings& settings, topology::RoutingMode mode, double load, uint64_t seed)
    : settings_(settings),
      load_(load),
      k_(settings.k),
      vcs_(settings.num_vcs),
      ring_cap_(settings.vc_buf_size),
      traffic_(settings, seed),
      random_(seed * 0x9e3779b97f4a7c15ull + 1),
      ugal_random_(seed ^ 0x5547414c5547414cull) {
  const topology::Fabric fabric(settings.terminals, settings.k);
  const auto channel_mode = settings.channels == Channels::kDilated
                                ? topology::ChannelMode::kDilated
                                : topology::ChannelMode::kDoubleRate;
  routers_.resize(fabric.routers());
  for (Router& router : routers_) router.mode = {mode, true};
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
    router.head_since.assign(vcs, 0);
    router.in_flits.assign(vcs, 0);
    router.credits.assign(vcs, settings_.vc_buf_size);
    router.waiting.assign(vcs, 0);
    router.out_free.assign(size_t{ports} * 2, 0);
    router.in_free.assign(size_t{ports} * 2, 0);
    router.grant_ptr.assign(ports, 0);
    router.accept_ptr.assign(ports, 0);
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
  if (router.ring_count[at] == 0) router.head_since[at] = now_;
  ++router.ring_count[at];
  ++router.queued;
}

void Network::start_measurement() {
  measure_start_ = now_;
  window = {};
  total = {};
  latencies.clear();
  hops = detour_hops = repeated_detours = delivered_packets = 0;
}

// Packets are drawn (Bernoulli, or the trace's records of this cycle) into source queues; each
// terminal moves its head packet into a VC of its router's terminal port with room for it.
void Network::inject() {
  const uint32_t n = settings_.terminals;
  const uint32_t cap = settings_.source_queue_packets;
  auto enqueue = [&](uint32_t source, uint32_t dest, uint32_t size) {
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
    p.header.dest_terminal = dest;
    source_ring_[size_t{source} * cap + (source_head_[source] + source_count_[source]) % cap] = id;
    ++source_count_[source];
    ++queued_;
  };
  if (settings_.pattern == Pattern::kTrace) {
    for (; trace_next_ < trace_.size() && trace_[trace_next_].time <= now_; ++trace_next_) {
      const TraceRecord& t = trace_[trace_next_];
      enqueue(t.source, t.destination, t.size);
    }
  } else {
    const double p = load_ / settings_.packet_size;
    for (uint32_t s = 0; s < n; ++s) {
      if (random_.chance(p)) enqueue(s, traffic_.destination(s, random_), settings_.packet_size);
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
    router.in_flits[port * vcs_ + best] += size;
    source_head_[s] = (source_head_[s] + 1) % cap;
    --source_count_[s];
    --queued_;
    ++in_network_;
    packets_[id].ready = now_;
    push(router, port, best, id);
    terminal_free_[s] = now_ + size;
  }
}

void Network::route_head(uint32_t r, unsigned port, unsigned vc) {
  Router& router = routers_[r];
  const size_t at = size_t{port} * vcs_ + vc;
  Packet& p = packets_[router.ring[at * ring_cap_ + router.ring_head[at]]];
  if (p.routed || p.ready > now_) return;
  p.header.in_port = static_cast<uint16_t>(port);
  const engines::RouteDecision d =
      engines::route_packet(views_[r], p.header, static_cast<uint32_t>(ugal_random_.next()));
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
  p.ready = std::max<uint64_t>(p.ready + settings_.routing_delay, now_);
  ++router.waiting[size_t{d.port} * vcs_ + d.vc];
}

// A free lane of a port's `free` list, or -1.
int free_lane(const std::vector<uint64_t>& free, unsigned port, unsigned lanes, uint64_t now) {
  for (unsigned lane = 0; lane < lanes; ++lane) {
    if (free[port * 2 + lane] <= now) return static_cast<int>(lane);
  }
  return -1;
}

struct Request {
  uint16_t in;
  uint8_t vc;
  uint16_t out;
  uint64_t since;  // the cycle the head could first go
};

// Separable iSLIP: requests from every input VC whose head may go; each output grants the
// requesting input nearest its pointer; each input accepts the granting output nearest its
// pointer; pointers move one past the match, on the first iteration only (iSLIP's rule).
void Network::allocate(uint32_t r) {
  Router& router = routers_[r];
  const unsigned ports = router.ports;
  thread_local std::vector<Request> requests;
  thread_local std::vector<uint32_t> grant;   // per output: index into requests
  thread_local std::vector<uint32_t> accept;  // per input: index into requests
  requests.clear();
  for (unsigned port = 0; port < ports; ++port) {
    if (free_lane(router.in_free, port, router.lanes[port], now_) < 0) continue;
    for (unsigned vc = 0; vc < vcs_; ++vc) {
      const size_t at = size_t{port} * vcs_ + vc;
      if (router.ring_count[at] == 0) continue;
      route_head(r, port, vc);
      const Packet& p = packets_[router.ring[at * ring_cap_ + router.ring_head[at]]];
      if (!p.routed || p.ready > now_) continue;
      if (!p.local && router.credits[size_t{p.out_port} * vcs_ + p.out_vc] < p.size) continue;
      if (free_lane(router.out_free, p.out_port, router.lanes[p.out_port], now_) < 0) continue;
      requests.push_back(
          {static_cast<uint16_t>(port), static_cast<uint8_t>(vc), p.out_port, p.ready});
    }
  }
  if (requests.empty()) return;
  grant.assign(ports, kNone);
  accept.assign(ports, kNone);
  const unsigned iterations = settings_.alloc_iters;
  for (unsigned iteration = 0; iteration < iterations; ++iteration) {
    std::fill(grant.begin(), grant.end(), kNone);
    std::fill(accept.begin(), accept.end(), kNone);
    for (uint32_t i = 0; i < requests.size(); ++i) {
      const Request& q = requests[i];
      if (q.in == 0xffff) continue;  // matched already
      // Round-robin over inputs from the output's pointer; between two VCs of one input, the
      // one whose head has waited longer (a VC pointer shared by all outputs let one VC starve
      // behind its neighbour whenever the input served another output in between).
      auto rank = [&](const Request& x) {
        return std::pair((x.in + ports - router.grant_ptr[x.out]) % ports, x.since);
      };
      uint32_t& g = grant[q.out];
      if (g == kNone || rank(q) < rank(requests[g])) g = i;
    }
    bool matched = false;
    for (unsigned out = 0; out < ports; ++out) {
      if (grant[out] == kNone) continue;
      const Request& q = requests[grant[out]];
      uint32_t& a = accept[q.in];
      const unsigned distance = (out + ports - router.accept_ptr[q.in]) % ports;
      if (a == kNone || distance < (requests[a].out + ports - router.accept_ptr[q.in]) % ports) {
        a = grant[out];
      }
    }
    for (unsigned in = 0; in < ports; ++in) {
      if (accept[in] == kNone) continue;
      Request& q = requests[accept[in]];
      const int lane = free_lane(router.in_free, in, router.lanes[in], now_);
      if (lane < 0) continue;
      if (iteration == 0) {
        router.grant_ptr[q.out] = static_cast<uint16_t>((in + 1) % ports);
        router.accept_ptr[in] = static_cast<uint16_t>((q.out + 1) % ports);
      }
      transfer(r, in, q.vc, static_cast<unsigned>(lane));
      matched = true;
      // This VC and, when the ports have no lane left, their other requests are done.
      const unsigned out = q.out;
      q.in = 0xffff;
      const bool in_full = free_lane(router.in_free, in, router.lanes[in], now_) < 0;
      const bool out_full = free_lane(router.out_free, out, router.lanes[out], now_) < 0;
      for (Request& other : requests) {
        if (other.in == 0xffff) continue;
        if ((in_full && other.in == in) || (out_full && other.out == out)) other.in = 0xffff;
      }
    }
    if (!matched) break;
  }
}

void Network::transfer(uint32_t r, unsigned port, unsigned vc, unsigned lane_in) {
  Router& router = routers_[r];
  const size_t at = size_t{port} * vcs_ + vc;
  const uint32_t id = router.ring[at * ring_cap_ + router.ring_head[at]];
  router.ring_head[at] = static_cast<uint16_t>((router.ring_head[at] + 1) % ring_cap_);
  --router.ring_count[at];
  router.head_since[at] = now_ + 1;
  --router.queued;
  Packet& p = packets_[id];
  const unsigned out = p.out_port;
  const size_t out_at = size_t{out} * vcs_ + p.out_vc;
  --router.waiting[out_at];
  router.in_free[port * 2 + lane_in] = now_ + p.size;
  router.out_free[out * 2 + free_lane(router.out_free, out, router.lanes[out], now_)] =
      now_ + p.size;
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

  if (p.local) {
    const uint64_t delivered = now_ + settings_.channel_latency + p.size - 1;
    ++delivered_all;
    --in_network_;
    if (now_ >= measure_start_) {
      window.delivered_flits += p.size;
      total.delivered_flits += p.size;
    }
    if (p.created >= measure_start_) {
      latencies.push_back(static_cast<uint32_t>(delivered - p.created));
      hops += p.hops;
      detour_hops += p.detours;
      ++delivered_packets;
    }
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
  const topology::PortEnd next = router.peer[out];
  p.ready = now_ + settings_.channel_latency;
  arrivals_[(now_ + settings_.channel_latency) % wheel].push_back(
      {next.router, static_cast<uint16_t>(next.port), p.out_vc, id});
}

void Network::step() {
  const size_t wheel = arrivals_.size();
  auto& arriving = arrivals_[now_ % wheel];
  for (const Arrival& a : arriving) push(routers_[a.router], a.port, a.vc, a.packet);
  arriving.clear();
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
  const int passes = settings_.channels == Channels::kDoubleRate ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t r = 0; r < routers_.size(); ++r) {
      if (routers_[r].queued > 0) allocate(r);
    }
  }
  ++now_;
}

bool Network::deadlocked() {
  if (in_network_ == 0 || now_ - last_progress_ <= settings_.deadlock_cycles) {
    if (in_network_ == 0) return false;
  }
  for (uint32_t r = 0; r < routers_.size(); ++r) {
    const Router& router = routers_[r];
    if (router.queued == 0) continue;
    for (size_t at = 0; at < router.ring_count.size(); ++at) {
      if (router.ring_count[at] > 0 && now_ - router.head_since[at] > settings_.deadlock_cycles) {
        stuck_router_ = r;
        stuck_vc_ = at;
        return true;
      }
    }
  }
  return false;
}

std::string Network::deadlock_report() const {
  uint64_t held = 0;
  for (const Router& router : routers_) held += router.queued;
  const Router& router = routers_[stuck_router_];
  const unsigned port = static_cast<unsigned>(stuck_vc_ / vcs_), vc = stuck_vc_ % vcs_;
  const Packet& p = packets_[router.ring[stuck_vc_ * ring_cap_ + router.ring_head[stuck_vc_]]];
  std::string report = "deadlock: the head of router " + std::to_string(stuck_router_) + " port " +
                       std::to_string(port) + " VC " + std::to_string(vc) + " has not moved for " +
                       std::to_string(now_ - router.head_since[stuck_vc_]) +
                       " cycles (deadlock_cycles " + std::to_string(settings_.deadlock_cycles) +
                       ") at cycle " + std::to_string(now_);
  if (p.routed) {
    report += ", waiting for port " + std::to_string(p.out_port) + " VC " +
              std::to_string(p.out_vc) + " (" +
              std::to_string(router.credits[size_t{p.out_port} * vcs_ + p.out_vc]) +
              " credits, output free at cycle " + std::to_string(router.out_free[p.out_port * 2]) +
              ", ready at cycle " + std::to_string(p.ready) + ")";
  }
  report += "; " + std::to_string(held) + " packets wait in router buffers";
  if (now_ - last_progress_ > settings_.deadlock_cycles) report += ", no flit moves anywhere";
  return report;
}

double percentile(std::vector<uint32_t>& values, double fraction) {
  if (values.empty()) return 0;
  const size_t at =
      std::min(values.size() - 1, static_cast<size_t>(std::ceil(fraction * values.size())) - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(at), values.end());
  return values[at];
}

// Runs `cycles` cycles; false on a deadlock or a cancel.
bool run_for(Network& net, uint64_t cycles, PointResult& result, const std::atomic<bool>* cancel) {
  for (uint64_t c = 0; c < cycles; ++c) {
    net.step();
    if ((c & 1023) == 0) {
      if (net.deadlocked()) {
        result.deadlock = true;
        result.message = net.deadlock_report();
        return false;
      }
      if (cancel && cancel->load(std::memory_order_relaxed)) {
        result.cancelled = true;
        return false;
      }
    }
  }
  return true;
}

void summarise(Network& net, const Settings& settings, uint64_t measured, PointResult& result) {
  const double capacity = static_cast<double>(settings.terminals) * std::max<uint64_t>(measured, 1);
  result.offered = net.total.generated_flits / capacity;
  result.accepted = net.total.delivered_flits / capacity;
  result.packets = net.delivered_packets;
  if (!net.latencies.empty()) {
    double sum = 0;
    for (uint32_t l : net.latencies) sum += l;
    result.latency_mean = sum / net.latencies.size();
    result.latency_p50 = percentile(net.latencies, 0.50);
    result.latency_p99 = percentile(net.latencies, 0.99);
    result.hops_mean = static_cast<double>(net.hops) / net.delivered_packets;
  }
  result.nonminimal_share = net.hops == 0 ? 0 : static_cast<double>(net.detour_hops) / net.hops;
  result.repeated_detours = net.repeated_detours;
  result.cycles = net.now();
  result.routers = net.routers();
  result.saturated = net.total.refused > 0 || result.accepted < 0.95 * result.offered;
}

}  // namespace

PointResult simulate(const Settings& settings, topology::RoutingMode mode, double load,
                     uint64_t seed, const std::atomic<bool>* cancel) {
  PointResult result;
  result.mode = mode;
  result.load = load;
  Network net(settings, mode, load, seed);

  if (settings.pattern == Pattern::kTrace) {
    net.start_measurement();
    while (!net.trace_done()) {
      if (!run_for(net, 256, result, cancel)) break;
    }
    result.converged = !result.deadlock && !result.cancelled;
    summarise(net, settings, net.now(), result);
    result.saturated = false;
    return result;
  }

  if (!run_for(net, settings.warmup_cycles, result, cancel)) return result;
  net.start_measurement();
  const double capacity = static_cast<double>(settings.terminals) * settings.sample_cycles;
  double previous = -1;
  bool stalled = false;
  for (uint32_t sample = 1; sample <= settings.max_samples; ++sample) {
    net.window = {};
    if (!run_for(net, settings.sample_cycles, result, cancel)) break;
    const double accepted = net.window.delivered_flits / capacity;
    // A window that delivered nothing while packets wait is no steady state: keep running
    // until the deadlock detector decides.
    stalled = accepted == 0 && net.busy();
    const bool steady =
        !stalled && previous >= 0 &&
        std::abs(accepted - previous) <= settings.converge_tolerance * std::max(accepted, 1e-9);
    previous = accepted;
    if (steady && sample >= settings.min_samples) {
      result.converged = true;
      break;
    }
  }
  if (stalled && !result.deadlock && !result.cancelled) {
    run_for(net, settings.deadlock_cycles + 512, result, cancel);  // let the detector decide
  }
  if (result.deadlock || result.cancelled) return result;
  summarise(net, settings, net.now() - settings.warmup_cycles, result);
  return result;
}

uint64_t simulate_cycles(const Settings& settings, topology::RoutingMode mode, double load,
                         uint64_t seed, uint64_t cycles) {
  Network net(settings, mode, load, seed);
  for (uint64_t c = 0; c < cycles; ++c) net.step();
  return net.delivered_all;
}

}  // namespace asn::sim

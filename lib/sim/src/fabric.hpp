// Internal to lib/sim: the simulated fabric (routers, their routing-engine views, packets,
// channels) that simulate() drives; network.hpp describes the model.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/sim/combining.hpp"
#include "asn/sim/settings.hpp"
#include "asn/sim/traffic.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"

namespace asn::sim::detail {

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
  // A hot fetch-and-add (hotspot traffic): its key in Network's table of hot requests; 0 for
  // any other packet.
  uint64_t request = 0;
  uint16_t hops = 0;
  uint16_t detours = 0;
  std::array<uint8_t, topology::kMaxDimensions> dim_detours{};
  bool routed = false;  // at this router
  // Routed, but its output VC had no room: the next cycle routes it again (from
  // arrival_header, with no second routing_delay), so that a blocked head can take another
  // VC, e.g. the escape VC of Duato's rule, at every cycle it waits. `routed` stays true
  // and out_port/out_vc keep the decision until then: the deadlock check reads them.
  bool reroute = false;
  bool local = false;
  bool minimal = true;
  uint16_t out_port = 0;
  uint8_t out_vc = 0;
  uint64_t blocked_at = 0;  // the cycle it was found with no room at its output VC
  // The header it arrived with at this router (the engine's input), and the one the engine's
  // decision produced (what the next router receives).
  engines::PacketHeader arrival_header;
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
  std::vector<uint64_t> occupied;    // bit `at`: the input VC holds a packet (the allocator's scan)
  std::vector<uint64_t> head_since;  // the cycle the current head became head
  std::vector<uint32_t> in_flits;    // flits held (terminal ports: what the terminal sees)
  // Output VCs [port * V + vc].
  std::vector<uint32_t> credits;  // free flits at the downstream VC
  std::vector<uint32_t> waiting;  // packets routed to it here, not yet sent
  // Lanes [port * 2 + lane]: the cycle each is free again.
  std::vector<uint64_t> out_free;
  std::vector<uint64_t> in_free;
  std::vector<uint16_t> grant_ptr;    // per output VC [port * V + vc]: the input served first
  std::vector<uint8_t> grant_vc_ptr;  // per output port: the VC served first
  std::vector<uint16_t> accept_ptr;
  uint32_t queued = 0;  // packets in the input VCs
  // Output queues [port * V + vc] (internal_speedup >= 2 only): a ring of output_buffer_size.
  std::vector<uint32_t> out_ring;
  std::vector<uint16_t> out_head;
  std::vector<uint16_t> out_count;
  std::vector<uint8_t> out_vc_ptr;  // per port: the VC the channel serves first
  uint32_t out_queued = 0;
  // Combining (combining.cc): the hot requests in the input VCs, oldest first, and the wait
  // buffer's records in use (001 L641: one per merge, freed when the reply passes back).
  std::vector<uint32_t> hot;
  uint32_t wait_used = 0;
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
    uint32_t packets =
        router_.waiting[at] + (router_.out_count.empty() ? 0 : router_.out_count[at]);
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
  // kDeadlock: a cycle of input VCs whose heads each waited more than deadlock_cycles for a
  // downstream VC with no room (the next VC of the cycle). kStarvation: a head waited as long
  // while its output VC has room and its lane is idle. Scans every VC: call it now and then.
  enum class Stuck : uint8_t { kNone, kDeadlock, kStarvation };
  Stuck check_stuck();
  const std::string& stuck_report() const { return report_; }
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
  uint64_t reroutes = 0;  // heads routed again because their output VC had no room
  uint32_t routers() const { return static_cast<uint32_t>(routers_.size()); }
  uint64_t delivered_all = 0;

  // Hotspot traffic (combining.cc), over the measured period: requests other than the hot
  // fetch-and-adds (their delivered flits and latencies), hot requests served, merges, and
  // arrivals that found the wait buffer full. `returned` holds every hot reply of the run.
  uint64_t cold_delivered_flits = 0;
  std::vector<uint32_t> cold_latencies;
  uint64_t hot_served = 0;
  uint64_t combines = 0;
  uint64_t wait_buffer_full = 0;
  std::vector<FetchAdd> returned;
  uint64_t hot_memory() const { return memory_; }

 private:
  void program(const topology::Fabric& fabric, topology::ChannelMode channel_mode);
  void inject();
  void allocate(uint32_t r, bool first_pass);
  void route_head(uint32_t r, unsigned port, unsigned vc);
  void transfer(uint32_t r, unsigned port, unsigned vc, unsigned lane_in);
  uint32_t leave_input(uint32_t r, unsigned port, unsigned vc, unsigned lane_in);
  void send(uint32_t r, uint32_t packet);
  void drain_outputs(uint32_t r);
  uint32_t new_packet();
  void push(Router& router, unsigned port, unsigned vc, uint32_t packet);
  struct HeadWait {
    enum Kind : uint8_t { kShort, kNoRoom, kLane, kStarved } kind = kShort;
    uint64_t waited = 0;
    std::string what;          // the output VC it waits for and its state
    uint32_t next_router = 0;  // kNoRoom: the downstream input VC it waits for
    size_t next_at = 0;
  };
  HeadWait head_wait(uint32_t r, size_t at) const;

  // Combining (combining.cc).
  struct Combine {
    uint64_t absorbed;  // the request merged into the kept one
    uint64_t before;    // the kept request's operand then (what the wait buffer holds)
    uint32_t router;
    uint16_t kept_hop;  // the router's place on each request's path (channels crossed)
    uint16_t absorbed_hop;
  };
  struct HotRequest {
    uint64_t created = 0;
    uint64_t operand = 0;  // its own increment
    uint64_t total = 0;    // what it carries: its own and every request merged into it
    std::vector<Combine> combines;
  };
  uint64_t new_hot_request();
  bool try_combine(uint32_t r, uint32_t id);
  bool may_merge_here(const Packet& kept, uint32_t r) const;
  void deliver(uint32_t id, uint64_t delivered);
  void serve(uint64_t request, uint64_t value, uint64_t at, uint16_t hop);
  void release_wait_buffers();
  uint64_t reply_cycles(uint16_t routers) const {
    return uint64_t{routers} * (settings_.routing_delay + settings_.channel_latency);
  }
  std::string vc_name(uint32_t r, size_t at) const;

  struct Request {
    uint16_t in;
    uint8_t vc;
    uint16_t out;
    uint8_t out_vc;
    uint64_t since;  // the cycle the head could first go
  };
  struct AllocatorScratch {
    std::vector<Request> requests;
    std::vector<uint16_t> inputs;    // ports with a request, ascending
    std::vector<uint16_t> outputs;   // ports requested, in no order
    std::vector<uint32_t> out_vcs;   // output VCs requested
    std::vector<uint32_t> grant;     // per output: index into requests
    std::vector<uint32_t> accept;    // per input: index into requests
    std::vector<uint32_t> vc_grant;  // per output VC: index into requests
  };

  const Settings& settings_;
  AllocatorScratch scratch_;
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
  std::string report_;  // check_stuck()'s finding
  std::unordered_map<uint64_t, HotRequest> hot_requests_;
  uint64_t next_request_ = 1;
  uint64_t memory_ = 0;  // the hot address
  // Wait-buffer records to free: (cycle the reply passes, router).
  std::priority_queue<std::pair<uint64_t, uint32_t>, std::vector<std::pair<uint64_t, uint32_t>>,
                      std::greater<>>
      releases_;
  Random operand_random_;
};

}  // namespace asn::sim::detail

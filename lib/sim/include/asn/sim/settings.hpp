// asnsim's settings: the fabric, the router model, the traffic and the measurement of one
// run. Router-model names follow BookSim2's configuration keys (num_vcs, vc_buf_size,
// sw_allocator, alloc_iters, channel latency, routing_delay, packet_size, injection_rate);
// docs/asnsim.md lists the correspondence and where the models differ.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "asn/topology/route_tables.hpp"

namespace asn::sim {

// Bad settings, bad trace lines, unwritable output: the message names the field and what
// would be accepted.
class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How the doubled inter-router bandwidth is built (004 L335, L341).
enum class Channels : uint8_t {
  kDilated,     // two channels A and B of terminal rate per router pair (the default)
  kDoubleRate,  // one channel of twice the terminal rate per pair
  kPlain,       // one channel of terminal rate: the plain flattened butterfly (no dilation)
};

enum class Pattern : uint8_t {
  kUniform,
  kBenign,
  kAdversarial,
  kRouterShift,  // every terminal of router i to the same terminal of router (i + 1) mod routers
  kBitComplement,
  kRandomPermutation,
  kTranspose,
  kTrace,
  // Pfister and Norton's single hot spot (001 L487): each request goes to hot_node with
  // probability hot_fraction, else uniformly; the hot requests are fetch-and-adds to one
  // address there, which combining (when on) merges in the routers' queues.
  kHotspot,
};

// How the engine assigns VCs: route.config.vc_policy, programmed into every simulated router.
// kEscape: Duato's rule, VC 0 of every port is the escape VC (dimension-ordered minimal
// routing), VCs 1..V-1 are adaptive, and a packet takes the escape VC whenever the adaptive VC
// it would use has no room. kSeed: the seed's forward/reverse classes chosen by comparing link
// numbers (004 L893-935), which admits cyclic waits.
using VcRule = topology::VcPolicy;

struct Settings {
  // The fabric.
  uint32_t terminals = 64;
  uint32_t k = 4;
  Channels channels = Channels::kDilated;
  std::vector<topology::RoutingMode> modes = {topology::RoutingMode::kAldfb};
  // port[p].aldfb_threshold (packets), the T_h of every channel port, compared with the whole
  // port's output queue (all its VCs: the seed's priority encoder has one bit per output port).
  // 0: half the port's queue, max(1, num_vcs x vc depth / 2).
  uint32_t threshold = 0;
  VcRule vc_rule = VcRule::kEscape;

  // The router model (BookSim2 names).
  uint32_t num_vcs = 2;          // VCs per port, 2..8 (vc_rule says how the engine uses them)
  uint32_t vc_buf_size = 8;      // flits per VC
  uint32_t packet_size = 1;      // flits per packet
  uint32_t channel_latency = 1;  // cycles a flit spends on a channel (also credits)
  uint32_t routing_delay = 1;    // cycles from a packet's arrival to its switch request
  uint32_t alloc_iters = 1;      // iSLIP iterations per cycle
  // Switch passes per cycle. 1: input-queued (packets cross the switch onto the channel). 2 or
  // more: packets cross into per-VC output queues of output_buffer_size packets, which feed the
  // channel at its rate: the output-queued switch of the seed's board (004 L672-690).
  uint32_t internal_speedup = 1;
  uint32_t output_buffer_size = 16;  // packets per output VC (internal_speedup >= 2)

  // Traffic.
  Pattern pattern = Pattern::kUniform;
  std::vector<double> loads = {0.5};  // injection_rate, flits/cycle/terminal, in (0, 1]
  uint32_t adversarial_shift = 1;     // j of router i -> router i + j (in digit 0)
  std::string trace_file;
  double hot_fraction = 0.05;  // h of the hotspot pattern, in [0, 1]
  uint32_t hot_node = 0;       // the hot terminal (its memory holds the hot address)
  // Combining of the hot fetch-and-adds in the routers' input queues (001 L545-569), each router
  // keeping at most wait_buffer records for splitting replies (0: none, so no combining).
  bool combining = false;
  uint32_t wait_buffer = 16;
  // Packets one router merges into one queued request: 2 is the prototype's two-way switch
  // (001 Ch. 4, L67), 0 unlimited (001 L92, Ch. 5's "unlimited combining").
  uint32_t combine_ways = 0;

  // Measurement.
  uint64_t seed = 1;
  uint64_t warmup_cycles = 2000;
  uint64_t sample_cycles = 1000;  // one measured window
  uint32_t min_samples = 3;
  uint32_t max_samples = 30;
  double converge_tolerance = 0.01;    // relative change of the accepted rate between windows
  uint32_t source_queue_packets = 64;  // a full source queue marks saturation
  // A head waiting longer is checked: deadlock (a cycle of such heads, each waiting for a VC
  // with no room) or starvation (its output VC has room and its lane is idle).
  uint64_t deadlock_cycles = 1000;

  // Output.
  std::string out_dir;
  unsigned threads = 0;  // 0: every core
};

std::string to_string(topology::RoutingMode mode);
std::string to_string(Pattern pattern);
std::string to_string(Channels channels);
std::string to_string(VcRule rule);
VcRule parse_vc_rule(const std::string& text);  // "escape" or "seed"; SimError otherwise
topology::RoutingMode parse_mode(const std::string& text);  // SimError on an unknown mode
// "minimal,aldfb": modes separated by commas, each as parse_mode() takes it.
std::vector<topology::RoutingMode> parse_modes(const std::string& text);
Pattern parse_pattern(const std::string& text);
Channels parse_channels(const std::string& text);
bool parse_on_off(const std::string& field, const std::string& text);  // on/true, off/false
// "0.1:1.0:0.1" (first:last:step), "0.5" or "0.3,0.6,0.9". Loads must be in (0, 1].
std::vector<double> parse_loads(const std::string& text);

// Checks everything that can be checked before a run: the fabric (topology::Fabric's rules,
// the register limits), the router model, the loads, the pattern's needs (bit-complement and
// transpose need N a power of two, transpose an even number of bits), the trace file.
// Throws SimError naming the field.
void validate(const Settings& settings);

// The VC depth in packets (id.cap_ports.queue_depth), a port's queue (all its VCs) in packets,
// and the T_h used.
uint32_t queue_depth_packets(const Settings& settings);
uint32_t port_queue_packets(const Settings& settings);
uint32_t threshold_packets(const Settings& settings);

// YAML: the keys are the long flag names (terminals, k, mode, traffic, load, ...).
Settings load_settings_yaml(const std::string& path, Settings base = {});
std::string settings_yaml(const Settings& settings);

}  // namespace asn::sim

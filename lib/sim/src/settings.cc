#include "asn/sim/settings.hpp"

#include <yaml-cpp/yaml.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <sstream>

#include "asn/sim/traffic.hpp"
#include "asn/topology/error.hpp"
#include "asn/topology/fabric.hpp"

namespace asn::sim {

using topology::RoutingMode;

std::string to_string(RoutingMode mode) {
  switch (mode) {
    case RoutingMode::kStatic:
      return "static";
    case RoutingMode::kMinimal:
      return "minimal";
    case RoutingMode::kUgal:
      return "ugal";
    case RoutingMode::kAldfb:
      return "aldfb";
  }
  return "?";
}

std::string to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::kUniform:
      return "uniform";
    case Pattern::kBenign:
      return "benign";
    case Pattern::kAdversarial:
      return "adversarial";
    case Pattern::kRouterShift:
      return "routershift";
    case Pattern::kBitComplement:
      return "bitcomp";
    case Pattern::kRandomPermutation:
      return "randperm";
    case Pattern::kTranspose:
      return "transpose";
    case Pattern::kTrace:
      return "trace";
    case Pattern::kHotspot:
      return "hotspot";
  }
  return "?";
}

std::string to_string(Channels channels) {
  switch (channels) {
    case Channels::kDilated:
      return "dilated";
    case Channels::kDoubleRate:
      return "double-rate";
    case Channels::kPlain:
      return "plain";
  }
  return "?";
}

std::string to_string(VcRule rule) {
  switch (rule) {
    case VcRule::kEscape:
      return "escape";
    case VcRule::kSeed:
      return "seed";
  }
  return "?";
}

VcRule parse_vc_rule(const std::string& text) {
  for (VcRule r : {VcRule::kEscape, VcRule::kSeed}) {
    if (text == to_string(r)) return r;
  }
  throw SimError("vc_rule: unknown VC rule '" + text +
                 "' (escape: Duato's escape VC 0; seed: the seed's forward/reverse classes)");
}

RoutingMode parse_mode(const std::string& text) {
  for (RoutingMode m : {RoutingMode::kMinimal, RoutingMode::kUgal, RoutingMode::kAldfb}) {
    if (text == to_string(m)) return m;
  }
  throw SimError("mode: unknown routing mode '" + text + "' (aldfb, ugal, minimal)");
}

std::vector<RoutingMode> parse_modes(const std::string& text) {
  std::vector<RoutingMode> modes;
  std::stringstream in(text);
  for (std::string m; std::getline(in, m, ',');) modes.push_back(parse_mode(m));
  return modes;
}

Pattern parse_pattern(const std::string& text) {
  for (Pattern p : {Pattern::kUniform, Pattern::kBenign, Pattern::kAdversarial,
                    Pattern::kRouterShift, Pattern::kBitComplement, Pattern::kRandomPermutation,
                    Pattern::kTranspose, Pattern::kTrace, Pattern::kHotspot}) {
    if (text == to_string(p)) return p;
  }
  if (text == "random") return Pattern::kUniform;  // the seed's "random" (L610)
  throw SimError("traffic: unknown pattern '" + text +
                 "' (uniform or random, benign, adversarial, routershift, bitcomp, randperm, "
                 "transpose, trace, hotspot)");
}

bool parse_on_off(const std::string& field, const std::string& text) {
  if (text == "on" || text == "true") return true;
  if (text == "off" || text == "false") return false;
  throw SimError(field + ": '" + text + "' (on or off)");
}

Channels parse_channels(const std::string& text) {
  for (Channels c : {Channels::kDilated, Channels::kDoubleRate, Channels::kPlain}) {
    if (text == to_string(c)) return c;
  }
  if (text == "double") return Channels::kDoubleRate;  // asnsim's word before issue 28
  throw SimError("channels: unknown channel build '" + text + "' (dilated, double-rate, plain)");
}

namespace {

double parse_number(const std::string& text, const std::string& whole) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value)) {
    throw SimError("load: '" + whole +
                   "' is not a number, a list a,b,c or a range first:last:step");
  }
  return value;
}

void check_load(double load) {
  if (!(load > 0 && load <= 1)) {
    std::ostringstream s;
    s << "load: " << load << " is outside (0, 1] (a fraction of the terminal's injection rate)";
    throw SimError(s.str());
  }
}

}  // namespace

std::vector<double> parse_loads(const std::string& text) {
  std::vector<std::string> parts;
  char separator = text.find(':') != std::string::npos ? ':' : ',';
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  std::vector<double> loads;
  if (separator == ':') {
    if (parts.size() != 3) throw SimError("load: a range is first:last:step, got '" + text + "'");
    const double first = parse_number(parts[0], text), last = parse_number(parts[1], text),
                 step = parse_number(parts[2], text);
    if (step <= 0 || last < first) {
      throw SimError("load: range '" + text + "' needs first <= last and step > 0");
    }
    check_load(first);
    check_load(last);
    const auto count = static_cast<unsigned>(std::floor((last - first) / step + 1e-9)) + 1;
    if (count > 1000) throw SimError("load: range '" + text + "' has more than 1000 points");
    for (unsigned i = 0; i < count; ++i) {
      loads.push_back(std::round((first + i * step) * 1e9) / 1e9);  // 0.1 * 3 is 0.3, not 0.30..04
    }
  } else {
    for (const std::string& part : parts) loads.push_back(parse_number(part, text));
  }
  if (loads.empty()) throw SimError("load: no load given");
  for (double load : loads) check_load(load);
  return loads;
}

uint32_t queue_depth_packets(const Settings& s) {
  return s.packet_size == 0 ? 0 : s.vc_buf_size / s.packet_size;
}

uint32_t port_queue_packets(const Settings& s) { return s.num_vcs * queue_depth_packets(s); }

// Half a VC, whatever the VC count: an input-queued router's output "queue" (its waiting heads
// and the downstream buffer, which drains at the channel's rate) stays short while the inputs
// queue behind it, so half the whole port's queue was never reached and the lanes of a pair
// were never both used (benign traffic saturated at 0.5).
uint32_t threshold_packets(const Settings& s) {
  if (s.threshold != 0) return s.threshold;
  return std::max(1u, queue_depth_packets(s) / 2);
}

void validate(const Settings& s) {
  try {
    const topology::Fabric fabric(s.terminals, s.k);
    const auto mode = s.channels == Channels::kDilated ? topology::ChannelMode::kDilated
                                                       : topology::ChannelMode::kDoubleRate;
    if (fabric.k() > topology::kMaxK) throw SimError("k: at most 255 (geometry.k is 8 bits)");
    if (fabric.dimensions() > topology::kMaxDimensions) {
      throw SimError("terminals: " + std::to_string(fabric.dimensions()) +
                     " dimensions; the ROUTE block holds at most 4 (use a larger k)");
    }
    if (fabric.radix(mode) > topology::kMaxPorts) {
      throw SimError("k: the routers would have " + std::to_string(fabric.radix(mode)) +
                     " ports; port fields hold at most 255");
    }
  } catch (const topology::TopologyError& e) {
    throw SimError(std::string("fabric: ") + e.what());
  }
  if (s.modes.empty()) throw SimError("mode: no routing mode given (aldfb, ugal, minimal)");
  if (s.num_vcs < 2) {
    throw SimError(
        s.vc_rule == VcRule::kEscape
            ? "num_vcs: the escape VC rule needs at least 2 (one escape VC, one adaptive)"
            : "num_vcs: the seed VC rule needs at least 2 (a forward and a reverse VC, "
              "004 L893)");
  }
  if (s.num_vcs > 8) throw SimError("num_vcs: at most 8, the VCs port[p].vc_occupancy has");
  if (s.packet_size == 0) throw SimError("packet_size: at least 1 flit");
  if (s.vc_buf_size < s.packet_size || s.vc_buf_size > 4096) {
    throw SimError("vc_buf_size: packet_size.." + std::to_string(4096) +
                   " flits (a VC holds at least one whole packet: virtual cut-through)");
  }
  if (s.channel_latency == 0 || s.channel_latency > 1000) {
    throw SimError("channel_latency: 1..1000 cycles");
  }
  if (s.routing_delay == 0 || s.routing_delay > 1000)
    throw SimError("routing_delay: 1..1000 cycles");
  if (s.alloc_iters == 0 || s.alloc_iters > 8) throw SimError("alloc_iters: 1..8");
  if (s.internal_speedup == 0 || s.internal_speedup > 8) {
    throw SimError("internal_speedup: 1..8 (1: input-queued; 2 or more: output queues)");
  }
  if (s.output_buffer_size == 0 || s.output_buffer_size > 4096) {
    throw SimError("output_buffer_size: 1..4096 packets");
  }
  if (s.threshold > port_queue_packets(s)) {
    throw SimError("threshold: at most the port's queue, " + std::to_string(port_queue_packets(s)) +
                   " packets (num_vcs x vc_buf_size / packet_size)");
  }
  if (s.loads.empty()) throw SimError("load: no load given");
  for (double load : s.loads) check_load(load);
  const bool power_of_two = std::has_single_bit(s.terminals);
  if (s.pattern == Pattern::kBitComplement && !power_of_two) {
    throw SimError("traffic: bitcomp needs terminals a power of two");
  }
  if (s.pattern == Pattern::kTranspose &&
      (!power_of_two || (std::bit_width(s.terminals) - 1) % 2 != 0)) {
    throw SimError("traffic: transpose needs terminals an even power of two (4, 16, 64, ...)");
  }
  if (s.pattern == Pattern::kAdversarial && s.adversarial_shift == 0) {
    throw SimError("adversarial_shift: at least 1 (router i sends to router i + j)");
  }
  if (s.pattern == Pattern::kTrace) {
    if (s.trace_file.empty()) throw SimError("trace: traffic 'trace' needs --trace FILE");
    read_trace(s.trace_file, s.terminals, s.vc_buf_size);
  }
  if (!(s.hot_fraction >= 0 && s.hot_fraction <= 1)) {
    throw SimError("hot_fraction: a fraction in [0, 1] (of the requests sent to hot_node)");
  }
  if (s.hot_node >= s.terminals) {
    throw SimError("hot_node: a terminal, 0.." + std::to_string(s.terminals - 1));
  }
  if (s.combining && s.pattern != Pattern::kHotspot) {
    throw SimError("combining: needs traffic 'hotspot' (only its hot requests combine)");
  }
  if (s.wait_buffer > 65536) throw SimError("wait_buffer: 0..65536 records per router");
  if (s.combine_ways == 1 || s.combine_ways > 65536) {
    throw SimError("combine_ways: 0 (unlimited) or 2..65536 requests merged at one router");
  }
  if (s.sample_cycles == 0) throw SimError("sample_cycles: at least 1");
  if (s.min_samples == 0 || s.max_samples < s.min_samples) {
    throw SimError("min_samples, max_samples: 1 <= min_samples <= max_samples");
  }
  if (s.source_queue_packets == 0) throw SimError("source_queue: at least 1 packet");
  if (s.deadlock_cycles < 100) throw SimError("deadlock_cycles: at least 100");
}

namespace {

template <typename T>
void read(const YAML::Node& node, const char* key, T& into) {
  if (!node[key]) return;
  try {
    into = node[key].as<T>();
  } catch (const YAML::Exception&) {
    throw SimError(std::string(key) + ": '" + YAML::Dump(node[key]) + "' is not a valid value");
  }
}

std::string join_modes(const std::vector<RoutingMode>& modes) {
  std::string out;
  for (RoutingMode m : modes) out += (out.empty() ? "" : ",") + to_string(m);
  return out;
}

}  // namespace

Settings load_settings_yaml(const std::string& path, Settings s) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw SimError("config: " + path + ": " + e.what());
  }
  if (!root.IsMap()) throw SimError("config: " + path + " is not a YAML map of settings");
  static const char* kKnown[] = {"terminals",
                                 "k",
                                 "channels",
                                 "mode",
                                 "threshold",
                                 "vc_rule",
                                 "num_vcs",
                                 "vc_buf_size",
                                 "packet_size",
                                 "channel_latency",
                                 "routing_delay",
                                 "alloc_iters",
                                 "internal_speedup",
                                 "output_buffer_size",
                                 "sw_allocator",
                                 "traffic",
                                 "load",
                                 "adversarial_shift",
                                 "trace",
                                 "hot_fraction",
                                 "hot_node",
                                 "combining",
                                 "wait_buffer",
                                 "combine_ways",
                                 "seed",
                                 "warmup_cycles",
                                 "sample_cycles",
                                 "min_samples",
                                 "max_samples",
                                 "converge_tolerance",
                                 "source_queue",
                                 "deadlock_cycles",
                                 "out",
                                 "threads"};
  for (const auto& item : root) {
    const auto key = item.first.as<std::string>();
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      throw SimError("config: " + path + ": unknown setting '" + key + "'");
    }
  }
  std::string text;
  read(root, "terminals", s.terminals);
  read(root, "k", s.k);
  if (root["channels"]) s.channels = parse_channels(root["channels"].as<std::string>());
  if (root["mode"]) {
    s.modes = parse_modes(root["mode"].as<std::string>());
  }
  read(root, "threshold", s.threshold);
  if (root["vc_rule"]) s.vc_rule = parse_vc_rule(root["vc_rule"].as<std::string>());
  read(root, "num_vcs", s.num_vcs);
  read(root, "vc_buf_size", s.vc_buf_size);
  read(root, "packet_size", s.packet_size);
  read(root, "channel_latency", s.channel_latency);
  read(root, "routing_delay", s.routing_delay);
  read(root, "alloc_iters", s.alloc_iters);
  read(root, "internal_speedup", s.internal_speedup);
  read(root, "output_buffer_size", s.output_buffer_size);
  if (root["sw_allocator"] && root["sw_allocator"].as<std::string>() != "islip") {
    throw SimError("sw_allocator: only 'islip' is modelled");
  }
  if (root["traffic"]) s.pattern = parse_pattern(root["traffic"].as<std::string>());
  if (root["load"]) s.loads = parse_loads(root["load"].as<std::string>());
  read(root, "adversarial_shift", s.adversarial_shift);
  read(root, "trace", s.trace_file);
  read(root, "hot_fraction", s.hot_fraction);
  read(root, "hot_node", s.hot_node);
  if (root["combining"])
    s.combining = parse_on_off("combining", root["combining"].as<std::string>());
  read(root, "wait_buffer", s.wait_buffer);
  read(root, "combine_ways", s.combine_ways);
  read(root, "seed", s.seed);
  read(root, "warmup_cycles", s.warmup_cycles);
  read(root, "sample_cycles", s.sample_cycles);
  read(root, "min_samples", s.min_samples);
  read(root, "max_samples", s.max_samples);
  read(root, "converge_tolerance", s.converge_tolerance);
  read(root, "source_queue", s.source_queue_packets);
  read(root, "deadlock_cycles", s.deadlock_cycles);
  read(root, "out", s.out_dir);
  read(root, "threads", s.threads);
  return s;
}

std::string settings_yaml(const Settings& s) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "terminals" << YAML::Value << s.terminals;
  out << YAML::Key << "k" << YAML::Value << s.k;
  out << YAML::Key << "channels" << YAML::Value << to_string(s.channels);
  out << YAML::Key << "mode" << YAML::Value << join_modes(s.modes);
  out << YAML::Key << "threshold" << YAML::Value << threshold_packets(s);
  out << YAML::Key << "vc_rule" << YAML::Value << to_string(s.vc_rule);
  out << YAML::Key << "num_vcs" << YAML::Value << s.num_vcs;
  out << YAML::Key << "vc_buf_size" << YAML::Value << s.vc_buf_size;
  out << YAML::Key << "packet_size" << YAML::Value << s.packet_size;
  out << YAML::Key << "channel_latency" << YAML::Value << s.channel_latency;
  out << YAML::Key << "routing_delay" << YAML::Value << s.routing_delay;
  out << YAML::Key << "sw_allocator" << YAML::Value << "islip";
  out << YAML::Key << "alloc_iters" << YAML::Value << s.alloc_iters;
  out << YAML::Key << "internal_speedup" << YAML::Value << s.internal_speedup;
  out << YAML::Key << "output_buffer_size" << YAML::Value << s.output_buffer_size;
  out << YAML::Key << "traffic" << YAML::Value << to_string(s.pattern);
  std::ostringstream loads;
  for (size_t i = 0; i < s.loads.size(); ++i) loads << (i ? "," : "") << s.loads[i];
  out << YAML::Key << "load" << YAML::Value << loads.str();
  out << YAML::Key << "adversarial_shift" << YAML::Value << s.adversarial_shift;
  if (!s.trace_file.empty()) out << YAML::Key << "trace" << YAML::Value << s.trace_file;
  if (s.pattern == Pattern::kHotspot) {
    std::ostringstream h;  // as given (0.2), not yaml-cpp's 17 digits (0.20000000000000001)
    h << s.hot_fraction;
    out << YAML::Key << "hot_fraction" << YAML::Value << h.str();
    out << YAML::Key << "hot_node" << YAML::Value << s.hot_node;
    out << YAML::Key << "combining" << YAML::Value << (s.combining ? "on" : "off");
    out << YAML::Key << "wait_buffer" << YAML::Value << s.wait_buffer;
    out << YAML::Key << "combine_ways" << YAML::Value << s.combine_ways;
  }
  out << YAML::Key << "seed" << YAML::Value << s.seed;
  out << YAML::Key << "warmup_cycles" << YAML::Value << s.warmup_cycles;
  out << YAML::Key << "sample_cycles" << YAML::Value << s.sample_cycles;
  out << YAML::Key << "min_samples" << YAML::Value << s.min_samples;
  out << YAML::Key << "max_samples" << YAML::Value << s.max_samples;
  out << YAML::Key << "converge_tolerance" << YAML::Value << s.converge_tolerance;
  out << YAML::Key << "source_queue" << YAML::Value << s.source_queue_packets;
  out << YAML::Key << "deadlock_cycles" << YAML::Value << s.deadlock_cycles;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace asn::sim

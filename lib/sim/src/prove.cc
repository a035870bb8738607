#include "asn/sim/prove.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <span>
#include <unordered_map>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_words.hpp"

namespace asn::sim {
namespace {

namespace engines = model::engines;
using topology::ChannelMode;
using topology::PortRole;
using topology::RoutingMode;

ChannelMode channel_mode(Channels channels) {
  return channels == Channels::kDilated ? ChannelMode::kDilated : ChannelMode::kDoubleRate;
}

// One router's ROUTE block as asnd writes it (compute_route_tables, encode_*), read back with
// the decoders a board's view uses, and queues in one of two states: all empty, or every
// adaptive VC full (VC 0 empty) — the state in which only an escape can move a packet.
class RouterImage final : public engines::RouterView {
 public:
  RouterImage(ChannelMode channels, topology::RouteMode mode, unsigned vcs)
      : channels_(channels), requested_mode_(mode), vcs_(vcs) {}

  // Programs router `router` of `fabric`; the buffers are kept from one router to the next
  // (a 4096-router fabric's tables are 16 million entries).
  void program(const topology::Fabric& fabric, uint32_t router) {
    const topology::RouteTables tables = topology::compute_route_tables(fabric, router, channels_);
    const std::vector<uint32_t> config = topology::encode_config(tables.registers, requested_mode_);
    registers_ = topology::decode_config(config);
    mode_ = topology::decode_mode(config);
    const auto ports = static_cast<uint32_t>(tables.port_map.size());
    port_map_.clear();
    for (uint32_t word : topology::encode_port_map_table(tables.port_map, ports)) {
      port_map_.push_back(topology::decode_port_map(word));
    }
    const auto words = topology::encode_dest_table(tables.dest_table, fabric.routers());
    const size_t per = topology::encode_dest({}).size();
    dest_.resize(fabric.routers());
    for (size_t d = 0; d < fabric.routers(); ++d) {
      dest_[d] = topology::decode_dest(std::span<const uint32_t>(words).subspan(d * per, per));
    }
    adaptive_full_ = false;
  }

  void set_adaptive_full(bool full) { adaptive_full_ = full; }

  topology::RouteRegisters registers() const override { return registers_; }
  topology::RouteMode mode() const override { return mode_; }
  unsigned port_count() const override { return static_cast<unsigned>(port_map_.size()); }
  topology::PortMapEntry port_map(unsigned port) const override { return port_map_[port]; }
  uint32_t dest_entries() const override { return static_cast<uint32_t>(dest_.size()); }
  topology::DestEntry dest_entry(uint32_t router) const override { return dest_[router]; }
  unsigned schedule_entries() const override { return 0; }
  topology::ScheduleEntry schedule_entry(unsigned) const override { return {}; }
  uint32_t threshold(unsigned) const override { return kDepth; }
  unsigned vcs_per_port() const override { return vcs_; }
  uint32_t queue_depth() const override { return kDepth; }
  uint32_t occupancy(unsigned, unsigned vc) const override {
    return adaptive_full_ && vc > 0 ? kDepth : 0;
  }

 private:
  static constexpr uint32_t kDepth = 8;
  ChannelMode channels_;
  topology::RouteMode requested_mode_;
  unsigned vcs_;
  bool adaptive_full_ = false;
  topology::RouteRegisters registers_;
  topology::RouteMode mode_;
  std::vector<topology::PortMapEntry> port_map_;
  std::vector<topology::DestEntry> dest_;
};

std::string channel_name(uint32_t router, unsigned port, unsigned vc) {
  return "r" + std::to_string(router) + ":p" + std::to_string(port) + "/vc" + std::to_string(vc);
}

std::string join_cycle(const std::vector<std::string>& cycle) {
  std::string text;
  for (const std::string& c : cycle) text += c + " -> ";
  return text + cycle.front();
}

// A directed graph on dense vertex numbers; finds one cycle (iterative DFS).
std::vector<uint32_t> find_cycle(const std::vector<std::vector<uint32_t>>& adjacency) {
  enum : uint8_t { kWhite, kGrey, kBlack };
  std::vector<uint8_t> colour(adjacency.size(), kWhite);
  std::vector<std::pair<uint32_t, size_t>> stack;  // vertex, next edge index
  for (uint32_t root = 0; root < adjacency.size(); ++root) {
    if (colour[root] != kWhite) continue;
    stack.emplace_back(root, 0);
    colour[root] = kGrey;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == adjacency[v].size()) {
        colour[v] = kBlack;
        stack.pop_back();
        continue;
      }
      const uint32_t w = adjacency[v][next++];
      if (colour[w] == kGrey) {
        std::vector<uint32_t> cycle;
        auto it = std::find_if(stack.begin(), stack.end(), [w](auto& e) { return e.first == w; });
        for (; it != stack.end(); ++it) cycle.push_back(it->first);
        return cycle;
      }
      if (colour[w] == kWhite) {
        colour[w] = kGrey;
        stack.emplace_back(w, 0);
      }
    }
  }
  return {};
}

void check_request(const ProveRequest& q) {
  if (q.mode == RoutingMode::kStatic) {
    throw SimError("mode: static routes follow the TDM schedule, not the adaptive VC rule; "
                   "prove aldfb, ugal or minimal");
  }
  if (q.num_vcs < 1 || q.num_vcs > 8) {
    throw SimError("num_vcs: 1 to 8 (the VCs port[p].vc_occupancy has), not " +
                   std::to_string(q.num_vcs));
  }
  Settings s;
  s.terminals = q.terminals;
  s.k = q.k;
  s.channels = q.channels;
  s.num_vcs = std::max(q.num_vcs, 2u);
  s.modes = {q.mode};
  validate(s);  // the fabric's rules, with the same messages as a simulation's
}

// The escape VC rule: R1's graph over the escape channels, then every state's escape.
class EscapeProof {
 public:
  EscapeProof(const ProveRequest& q, const topology::Fabric& fabric)
      : q_(q), fabric_(fabric), channels_(channel_mode(q.channels)),
        routers_(fabric.routers()), ports_(fabric.radix(channels_)) {}

  Proof run() {
    escape_set_.assign(size_t{routers_} * routers_, kNoSet);
    sets_.resize(routers_);
    peers_.resize(size_t{routers_} * ports_);
    const std::vector<engines::PacketHeader> headers = header_states();
    const uint64_t inputs = 1 + fabric_.radix(channels_) - fabric_.k();  // a terminal, channels
    exhaustive_ = inputs * headers.size() * routers_ * routers_ <= q_.state_budget;
    RouterImage image(channels_, {q_.mode, true, q_.vc_policy}, q_.num_vcs);
    for (uint32_t x = 0; x < routers_; ++x) {
      image.program(fabric_, x);
      escape_sets(image, x);
      check_states(image, x, headers);
      if (!proof_.text.empty()) return proof_;
    }
    build_graph();
    const std::vector<uint32_t> cycle = find_cycle(adjacency_);
    proof_.channels = escape_channels_;
    if (!cycle.empty()) {
      for (uint32_t v : cycle) proof_.cycle.push_back(channel_name(v / ports_, v % ports_, 0));
      proof_.text = "NOT deadlock-free: the escape channels' dependency graph has a cycle of " +
                    std::to_string(cycle.size()) + " channels: " + join_cycle(proof_.cycle);
      return proof_;
    }
    proof_.deadlock_free = true;
    proof_.text =
        "deadlock-free (Duato, virtual cut-through): the escape sub-function (VC 0, "
        "dimension-ordered minimal hops) is defined at every router for every other "
        "destination, so connected, and its channel dependency graph is acyclic: " +
        std::to_string(proof_.edges) + " edges over " + std::to_string(proof_.channels) +
        " escape channels; every state has an escape: in " + std::to_string(proof_.states) +
        " states (" +
        (exhaustive_ ? std::string("every router, input port, header state and destination")
                     : "every router and header state, from a terminal and from the first "
                       "channel port of each dimension; destinations sampled evenly, 1 in " +
                           std::to_string(stride_)) +
        ") with every adaptive VC full, the engine chose a hop of the escape sub-function on "
        "VC 0";
    return proof_;
  }

 private:
  static constexpr uint16_t kNoSet = 0xffff;

  // The header states a packet can arrive with, per mode (the input port is set later).
  std::vector<engines::PacketHeader> header_states() const {
    std::vector<engines::PacketHeader> headers(1);
    headers.push_back({.escaped = true});
    if (q_.mode == RoutingMode::kAldfb) headers.push_back({.h1 = true});
    if (q_.mode == RoutingMode::kUgal) {
      headers.push_back({.to_intermediate = true});  // intermediate set per router
    }
    return headers;
  }

  // R1(x, d) for every destination d, as an index into this router's distinct port sets.
  void escape_sets(const RouterImage& image, uint32_t x) {
    std::vector<uint16_t> ports;
    std::unordered_map<uint16_t, uint16_t> by_first;  // R1 sets differ in their first port
    for (uint32_t d = 0; d < routers_; ++d) {
      if (d == x) continue;
      const engines::PacketHeader h{.dest_terminal = d * fabric_.k(), .in_port = 0};
      if (engines::escape_ports(image, h, ports) != engines::RouteStatus::kOk || ports.empty()) {
        proof_.text = "NOT deadlock-free: the escape sub-function is not connected: router " +
                      std::to_string(x) + " has no escape port towards router " +
                      std::to_string(d);
        return;
      }
      auto [it, added] = by_first.try_emplace(ports.front(), sets_[x].size());
      if (added) sets_[x].push_back(ports);
      escape_set_[size_t{x} * routers_ + d] = it->second;
    }
    for (unsigned p = fabric_.k(); p < ports_; ++p) {
      peers_[size_t{x} * ports_ + p] = fabric_.peer(x, p, channels_);
    }
  }

  // With every adaptive VC full, the engine must take a hop of R1 on VC 0.
  void check_states(RouterImage& image, uint32_t x, std::vector<engines::PacketHeader> headers) {
    if (!proof_.text.empty()) return;
    image.set_adaptive_full(true);
    std::vector<unsigned> inputs = {0};  // a terminal port
    for (unsigned p = fabric_.k(); p < ports_; ++p) {
      // Every channel port, or when that is too many, the first of each dimension.
      if (exhaustive_ || p == fabric_.dimension_base(fabric_.port_info(x, p, channels_).dimension,
                                                     channels_)) {
        inputs.push_back(p);
      }
    }
    if (!exhaustive_) {
      const uint64_t per_router = q_.state_budget / routers_;
      const uint64_t per_dest = uint64_t{inputs.size()} * headers.size();
      stride_ = std::max<uint64_t>(1, per_dest * routers_ / std::max<uint64_t>(per_router, 1));
    }
    for (uint32_t d = (x + 1) % stride_; d < routers_; d += static_cast<uint32_t>(stride_)) {
      if (d == x) continue;
      const std::vector<uint16_t>& escape = sets_[x][escape_set_[size_t{x} * routers_ + d]];
      for (unsigned in : inputs) {
        for (engines::PacketHeader h : headers) {
          const bool from_terminal = in < fabric_.k();
          if (from_terminal && (h.h1 || h.escaped || h.to_intermediate)) continue;
          h.dest_terminal = d * fabric_.k();
          h.in_port = static_cast<uint16_t>(in);
          if (h.to_intermediate) h.intermediate = (d + 1) % routers_ == x ? d : (d + 1) % routers_;
          const engines::RouteDecision r = engines::route_packet(image, h, d);
          ++proof_.states;
          const bool ok = r.status == engines::RouteStatus::kOk && r.vc == 0 &&
                          r.vc_class == engines::VcClass::kEscape && r.header.escaped &&
                          std::find(escape.begin(), escape.end(), r.port) != escape.end();
          if (!ok) {
            proof_.text = "NOT deadlock-free: a state without an escape: at router " +
                          std::to_string(x) + ", input port " + std::to_string(in) +
                          ", towards router " + std::to_string(d) +
                          (h.h1 ? ", h1" : "") + (h.escaped ? ", escaped" : "") +
                          (h.to_intermediate ? ", to an intermediate router" : "") +
                          ", with every adaptive VC full the engine chose port " +
                          std::to_string(r.port) + " VC " + std::to_string(r.vc) + " (" +
                          std::string(engines::to_string(r.status)) + "), not VC 0 of a port of "
                          "the escape sub-function";
            return;
          }
        }
      }
    }
  }

  // c = (x, p) -> c' = (y, p') for every destination d with p in R1(x, d), y its peer and
  // p' in R1(y, d). Edges deduplicated in a bit set per channel over the next router's ports.
  void build_graph() {
    const size_t words = (ports_ + 63) / 64;
    std::vector<uint64_t> bits(size_t{routers_} * ports_ * words, 0);
    std::vector<uint8_t> used(size_t{routers_} * ports_, 0);
    for (uint32_t x = 0; x < routers_; ++x) {
      for (uint32_t d = 0; d < routers_; ++d) {
        if (d == x) continue;
        for (uint16_t p : sets_[x][escape_set_[size_t{x} * routers_ + d]]) {
          used[size_t{x} * ports_ + p] = 1;
          const uint32_t y = peers_[size_t{x} * ports_ + p].router;
          if (y == d) continue;
          uint64_t* row = &bits[(size_t{x} * ports_ + p) * words];
          for (uint16_t q : sets_[y][escape_set_[size_t{y} * routers_ + d]]) {
            row[q / 64] |= uint64_t{1} << (q % 64);
          }
        }
      }
    }
    adjacency_.assign(size_t{routers_} * ports_, {});
    for (size_t c = 0; c < adjacency_.size(); ++c) {
      escape_channels_ += used[c];
      const uint32_t y = peers_[c].router;
      for (size_t w = 0; w < words; ++w) {
        for (uint64_t word = bits[c * words + w]; word != 0; word &= word - 1) {
          const auto q = static_cast<uint32_t>(w * 64 + std::countr_zero(word));
          adjacency_[c].push_back(y * ports_ + q);
          ++proof_.edges;
        }
      }
    }
  }

  const ProveRequest& q_;
  const topology::Fabric& fabric_;
  ChannelMode channels_;
  uint32_t routers_;
  uint32_t ports_;
  bool exhaustive_ = true;
  uint64_t stride_ = 1;
  std::vector<uint16_t> escape_set_;                        // [x * routers + d]
  std::vector<std::vector<std::vector<uint16_t>>> sets_;    // [x][set] -> ports
  std::vector<topology::PortEnd> peers_;                    // [x * ports + p]
  std::vector<std::vector<uint32_t>> adjacency_;
  uint64_t escape_channels_ = 0;
  Proof proof_;
};

// The seed's rule: every channel and VC, every state reachable by injection.
Proof prove_full_graph(const ProveRequest& q, const topology::Fabric& fabric) {
  const ChannelMode channels = channel_mode(q.channels);
  const uint32_t routers = fabric.routers();
  const uint32_t ports = fabric.radix(channels);
  std::vector<RouterImage> images(
      routers, RouterImage(channels, topology::RouteMode{q.mode, true, q.vc_policy}, q.num_vcs));
  for (uint32_t x = 0; x < routers; ++x) images[x].program(fabric, x);
  // A state: the packet waits in (router, input port, VC) with a header. Its outputs are
  // route_options; each non-local one is a dependency from its channel to the next.
  struct State {
    uint32_t router;
    engines::PacketHeader header;
    // The output channel it arrived by, (x * ports + p) * vcs + vc; injected at router x:
    // vertices + x (no channel: nothing waits on it).
    uint64_t channel;
  };
  auto key = [&](const State& s) {
    const engines::PacketHeader& h = s.header;
    return ((((s.channel * routers + h.dest_terminal / fabric.k()) * 2 +
              h.h1) * 2 + h.escaped) * 2 + h.to_intermediate) * (routers + 1) + h.intermediate;
  };
  const uint64_t vertices = uint64_t{routers} * ports * q.num_vcs;
  std::vector<std::vector<uint32_t>> adjacency(vertices);
  auto injected = [&](uint32_t x) { return vertices + x; };
  std::unordered_map<uint64_t, bool> seen;
  std::vector<State> work;
  for (uint32_t x = 0; x < routers; ++x) {
    for (uint32_t d = 0; d < routers; ++d) {
      if (d != x) work.push_back({x, {.dest_terminal = d * fabric.k(), .in_port = 0}, injected(x)});
    }
  }
  std::vector<engines::RouteOption> options;
  Proof proof;
  while (!work.empty()) {
    State s = work.back();
    work.pop_back();
    if (!seen.emplace(key(s), true).second) continue;
    if (seen.size() > q.full_graph_budget) {
      throw SimError("terminals: the full channel graph of this fabric passes " +
                     std::to_string(q.full_graph_budget) +
                     " states; prove the seed's rule on a smaller fabric");
    }
    if (engines::route_options(images[s.router], s.header, options) != engines::RouteStatus::kOk) {
      throw SimError("internal: the engine refused a reachable state at router " +
                     std::to_string(s.router));
    }
    for (const engines::RouteOption& o : options) {
      if (o.local) continue;
      const uint32_t out = (s.router * ports + o.port) * q.num_vcs + o.vc;
      if (s.channel < vertices) adjacency[s.channel].push_back(out);
      const topology::PortEnd next = fabric.peer(s.router, o.port, channels);
      engines::PacketHeader h = o.header;
      h.in_port = static_cast<uint16_t>(next.port);
      work.push_back({next.router, h, out});
    }
  }
  for (auto& edges : adjacency) {
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    proof.edges += edges.size();
    proof.channels += !edges.empty();
  }
  proof.states = seen.size();
  const std::vector<uint32_t> cycle = find_cycle(adjacency);
  if (cycle.empty()) {
    proof.deadlock_free = true;
    proof.text = "deadlock-free: the channel dependency graph of every VC over every state "
                 "reachable by injection (" + std::to_string(proof.states) + " states) is "
                 "acyclic: " + std::to_string(proof.edges) + " edges over " +
                 std::to_string(proof.channels) + " channels";
    return proof;
  }
  for (uint32_t v : cycle) {
    proof.cycle.push_back(channel_name(v / q.num_vcs / ports, v / q.num_vcs % ports,
                                       v % q.num_vcs));
  }
  proof.text = "NOT deadlock-free: the channel dependency graph (every VC, every state reachable "
               "by injection: " + std::to_string(proof.states) + " states, " +
               std::to_string(proof.edges) + " edges) has a cycle of " +
               std::to_string(cycle.size()) + " channels (router:output port/VC): " +
               join_cycle(proof.cycle);
  return proof;
}

}  // namespace

Proof prove(const ProveRequest& request) {
  check_request(request);
  const auto start = std::chrono::steady_clock::now();
  const topology::Fabric fabric(request.terminals, request.k);
  Proof proof = request.vc_policy == topology::VcPolicy::kEscape
                    ? EscapeProof(request, fabric).run()
                    : prove_full_graph(request, fabric);
  proof.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return proof;
}

std::vector<FabricShape> board_fabrics(unsigned max_ports, uint32_t max_routers,
                                       Channels channels) {
  std::vector<FabricShape> shapes;
  for (uint32_t k = 2; k <= topology::kMaxK && k <= max_ports; ++k) {
    // N = k^m x s, s in 1..k-1: every N that is a multiple of k^floor(log_k N) (004 L349).
    for (uint64_t power = k; power / k <= max_routers; power *= k) {
      for (uint32_t s = 1; s < k; ++s) {
        const uint64_t n = power * s;
        if (n / k > max_routers || n / k < 2) continue;
        const topology::Fabric fabric(n, k);
        if (fabric.dimensions() > topology::kMaxDimensions ||
            fabric.radix(channel_mode(channels)) > max_ports) {
          continue;
        }
        shapes.push_back({static_cast<uint32_t>(n), k, fabric.routers()});
      }
    }
  }
  std::sort(shapes.begin(), shapes.end(), [](const FabricShape& a, const FabricShape& b) {
    return std::tie(a.routers, a.k) < std::tie(b.routers, b.k);
  });
  return shapes;
}

}  // namespace asn::sim

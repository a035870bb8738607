// The fabrics a pattern is compiled for (issue 11 part 1): each gives every connection
// (src, dst) between two terminals its candidate paths as lists of directed links. A path
// uses one slot on every link (path multiplexing, 002 L240-312), so two connections conflict
// when they share a directed link, or when a terminal sends or receives on two of them at
// once (002 L649-652, L1833). Both kinds are "resources" here, numbered
//   [0, T)            terminal t's send port,
//   [T, 2T)           terminal t's receive port,
//   [2T, 2T + links)  the directed links,
// so a schedule is a colouring in which no two connections of one slot share a resource.
//
// A target also says where its links and terminals attach (switch, port), so that a schedule
// can be split into one crossbar configuration per switch and slot (fabric_plan.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace asn::fabric_schedule {

struct Conn {
  uint32_t src = 0;
  uint32_t dst = 0;
  friend bool operator==(const Conn&, const Conn&) = default;
};

// Where a terminal attaches, or one end of a link: a switch and its port. Ports are
// bidirectional: port p is input p and output p of the switch's crossbar.
struct Attach {
  uint32_t sw = 0;
  uint32_t port = 0;
};
struct LinkEnds {
  Attach from;  // leaves switch `from.sw` at output `from.port`
  Attach to;    // enters switch `to.sw` at input `to.port`
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;  // "torus 8x8", "2dfb N=64 k=4", ...
  virtual uint32_t terminals() const = 0;
  virtual uint32_t links() const = 0;  // directed links
  uint32_t resources() const { return 2 * terminals() + links(); }
  uint32_t send_port(uint32_t t) const { return t; }
  uint32_t receive_port(uint32_t t) const { return terminals() + t; }
  uint32_t link_resource(uint32_t link) const { return 2 * terminals() + link; }

  // Candidate paths of src -> dst (src != dst), at least one; path 0 is the target's
  // standard routing, what the seed's baselines use.
  virtual uint32_t path_count(uint32_t src, uint32_t dst) const = 0;
  // Paths 0 .. minimal_paths - 1 are minimal; the rest (a 2DFB's detours) are longer and
  // tried only where the minimal ones would need a new slot.
  virtual uint32_t minimal_paths(uint32_t src, uint32_t dst) const { return path_count(src, dst); }
  // Appends the links of path `index` to `out`, in order from src to dst.
  virtual void path(uint32_t src, uint32_t dst, uint32_t index,
                    std::vector<uint32_t>& out) const = 0;

  // The AAPC configuration of src -> dst on path 0 (002 L1750-1777): the all-to-all pattern
  // split into contention-free configurations; -1 when the target has no such split.
  virtual int64_t aapc_phase(uint32_t src, uint32_t dst) const;
  virtual uint32_t aapc_phases() const { return 0; }

  // A bound on the largest link load that holds for every choice of paths; the default is
  // exact for targets with one path per connection and 0 otherwise.
  virtual uint32_t link_lower_bound(std::span<const Conn> conns) const;
  // A fat tree's w (its paths are the up ports P_0..P_{H-1}, path index = those as base-w
  // digits, P_0 least significant; path(...) lists the H up links, then the H down links);
  // 0 for any other target.
  virtual uint32_t fat_tree_width() const { return 0; }

  // Wiring, for the per-switch plan.
  virtual uint32_t switches() const = 0;
  virtual std::string switch_name(uint32_t sw) const;  // "s<sw>"
  virtual Attach terminal_attach(uint32_t t) const = 0;
  virtual LinkEnds link_ends(uint32_t link) const = 0;
  virtual uint32_t switch_ports() const = 0;  // ports of the largest switch

  // Throws std::invalid_argument for a terminal outside the target or src == dst (a
  // terminal's circuit to itself returns its own data; the validator refuses it too).
  void check(const Conn& c) const;
};

// A linear array of n nodes, one terminal each, links i <-> i+1 (002 Fig 5.12).
std::unique_ptr<Target> make_linear_array(uint32_t nodes);
// An x by y torus, one terminal per node (node = row * x + column), X-Y routing along the
// shortest way in each ring; a tie (distance = ring / 2) goes the positive way from an even
// coordinate and the negative way from an odd one (odd-even routing, 002 L775, L1991).
std::unique_ptr<Target> make_torus(uint32_t x, uint32_t y);
// One crossbar of n ports: no links, only terminal ports (the TDM issue's case).
std::unique_ptr<Target> make_crossbar(uint32_t ports);
// The 2-dilated flattened butterfly (lib/topology's Fabric, dilated channels): candidate
// paths are the minimal ones, every order of the differing dimensions (ascending and
// descending only, beyond two) times every lane (A, B, ...) per hop; then, with `detours`,
// the paths that cross one differing dimension in two hops through another router of it
// (the detour that makes the fabric nonblocking, 004 L521), one per router and lane.
std::unique_ptr<Target> make_flattened_butterfly(uint64_t terminals, uint32_t k,
                                                 bool detours = true);
// The fat tree FT(l, w) of 000 Ch. 7: l levels of w^(l-1) switches, w children and w
// parents each; w^l terminals, terminal t at switch (0, t / w). Path index = the up ports
// P_0..P_{H-1} as base-w digits (P_0 least significant), H the common ancestor's level.
std::unique_ptr<Target> make_fat_tree(uint32_t levels, uint32_t w);

// A target from its text, as asnctl and CompileSchedule take it: "torus:8x8",
// "2dfb:1024:32" (":minimal" after it: no detours), "fat-tree:4:4", "crossbar:64",
// "linear:5". Throws std::invalid_argument naming what is accepted.
std::unique_ptr<Target> parse_target(std::string_view spec);

}  // namespace asn::fabric_schedule

// `asnsim prove`: is a fabric's routing deadlock-free, as the engine routes it from the tables
// asnd writes? One fabric, or every fabric a board can run (--sweep). lib/sim/prove.hpp.
#include "prove_main.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "asn/sim/prove.hpp"
#include "flag_names.hpp"

namespace {

using asn::sim::Channels;
using asn::sim::ProveRequest;
using asn::topology::RoutingMode;

void progress(size_t done, size_t total) {
  std::fprintf(stderr, "\r%zu/%zu fabrics proved", done, total);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace

int prove_main(int argc, char** argv) {
  CLI::App app{
      "asnsim prove: is the routing deadlock-free, as the board's engine routes from the tables "
      "asnd writes? Exit 0 when it is, 1 with a cycle of channels when it is not, 2 on bad "
      "input.",
      "asnsim prove"};
  ProveRequest q;
  std::string channels = "dilated", modes = "aldfb,ugal,minimal", vc_rule = "escape";
  bool sweep = false;
  unsigned max_ports = 255;
  uint32_t max_routers = 4096;
  app.add_option("--terminals", q.terminals, "N, terminals of the fabric")->capture_default_str();
  app.add_option("--k", q.k, "terminals per router")->capture_default_str();
  app.add_option("--channels", channels,
                 "dilated or double-rate (or double; plain routes as double-rate)")
      ->capture_default_str();
  app.add_option("--mode", modes, "modes, comma-separated: aldfb, ugal, minimal")
      ->capture_default_str();
  app.add_option(with_underscore_aliases("--num-vcs"), q.num_vcs, "VCs per port")
      ->capture_default_str();
  app.add_option(with_underscore_aliases("--vc-rule"), vc_rule,
                 "escape (what asnd programs) or seed (004 L893)")
      ->capture_default_str();
  app.add_flag(
      "--sweep", sweep,
      "every fabric a board of --max-ports ports and --max-routers destination entries "
      "can run (the emulated-255port profile by default), with each --channels kind given");
  app.add_option(with_underscore_aliases("--max-ports"), max_ports, "ports of the board (--sweep)")
      ->capture_default_str();
  app.add_option(with_underscore_aliases("--max-routers"), max_routers,
                 "destination entries of the board (--sweep)")
      ->capture_default_str();
  uint64_t states = 0;
  app.add_option("--states", states,
                 "engine calls of the every-state-has-an-escape check per fabric; past it "
                 "destinations are sampled evenly (default: 4,000,000, or 20,000 a fabric "
                 "with --sweep)");
  CLI11_PARSE(app, argc, argv);
  q.state_budget = states != 0 ? states : sweep ? 20'000 : q.state_budget;

  std::vector<RoutingMode> mode_list;
  std::vector<Channels> channel_list;
  try {
    mode_list = asn::sim::parse_modes(modes);
    q.vc_policy = asn::sim::parse_vc_rule(vc_rule);
    std::stringstream in(channels);
    for (std::string c; std::getline(in, c, ',');) {
      channel_list.push_back(asn::sim::parse_channels(c));
    }
  } catch (const asn::sim::SimError& e) {
    std::cerr << "asnsim prove: " << e.what() << "\n";
    return 2;
  }

  if (!sweep) {
    int status = 0;
    for (Channels c : channel_list) {
      for (RoutingMode m : mode_list) {
        q.channels = c;
        q.mode = m;
        asn::sim::Proof proof;
        try {
          proof = asn::sim::prove(q);
        } catch (const asn::sim::SimError& e) {
          std::cerr << "asnsim prove: " << e.what() << "\n";
          return 2;
        }
        std::printf("N=%u k=%u %s, %s, %u VCs, vc rule %s (%.2f s):\n  %s\n", q.terminals, q.k,
                    asn::sim::to_string(c).c_str(), asn::sim::to_string(m).c_str(), q.num_vcs,
                    vc_rule.c_str(), proof.seconds, proof.text.c_str());
        if (!proof.deadlock_free) status = 1;
      }
    }
    return status;
  }

  // The sweep: every fabric, every channel kind and mode given.
  std::vector<std::pair<Channels, asn::sim::FabricShape>> work;
  for (Channels c : channel_list) {
    for (const auto& shape : asn::sim::board_fabrics(max_ports, max_routers, c)) {
      work.emplace_back(c, shape);
    }
  }
  size_t done = 0, failed = 0;
  double slowest = 0;
  std::string slowest_name;
  for (const auto& [c, shape] : work) {
    for (RoutingMode m : mode_list) {
      q.terminals = shape.terminals;
      q.k = shape.k;
      q.channels = c;
      q.mode = m;
      const asn::sim::Proof proof = asn::sim::prove(q);
      const std::string name = "N=" + std::to_string(shape.terminals) +
                               " k=" + std::to_string(shape.k) + " " + asn::sim::to_string(c) +
                               " " + asn::sim::to_string(m);
      if (!proof.deadlock_free) {
        ++failed;
        std::fprintf(stderr, "\n%s: %s\n", name.c_str(), proof.text.c_str());
      }
      if (proof.seconds > slowest) slowest = proof.seconds, slowest_name = name;
    }
    progress(++done, work.size());
  }
  std::printf(
      "%zu fabrics x %zu modes (up to %u routers, %u ports), vc rule %s: %zu not "
      "deadlock-free; slowest %s, %.2f s\n",
      work.size(), mode_list.size(), max_routers, max_ports, vc_rule.c_str(), failed,
      slowest_name.c_str(), slowest);
  return failed == 0 ? 0 : 1;
}

// asnsim: sweeps offered load for each routing mode on a simulated 2DFB whose routers run the
// emulated board's routing engine (lib/sim), and writes the results (docs/asnsim.md).
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "asn/sim/report.hpp"
#include "asn/sim/settings.hpp"
#include "asn/sim/sweep.hpp"
#include "circuits_main.hpp"
#include "flag_names.hpp"
#include "prove_main.hpp"

namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_interrupt(int) {
  g_cancel = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

void show_progress(size_t done, size_t total) {
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / std::max<size_t>(total, 1));
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu points", filled,
               "########################################", kWidth - filled, "", done, total);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "prove") return prove_main(argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "circuits") {
    return circuits_main(argc - 1, argv + 1);
  }
  using asn::sim::Settings;
  CLI::App app{"asnsim: 2DFB fabric simulator running the switch's own routing engine"};
  app.footer(
      "asnsim prove [--help]: is the routing deadlock-free, as the engine routes from the tables "
      "asnd writes? (docs/asnsim.md)\nasnsim circuits [--help]: 002's TDM path reservation "
      "protocols compared on a torus");
  std::string config, channels, mode, traffic, load, vc_rule, combining;
  Settings cli;
  // Each flag writes into `cli`; after parsing, the flags given override the config file.
  std::vector<std::pair<CLI::Option*, std::function<void(Settings&)>>> given;
  auto flag = [&]<typename T>(const std::string& name, T Settings::*field,
                              const std::string& help) {
    CLI::Option* opt =
        app.add_option(with_underscore_aliases(name), cli.*field, help)->capture_default_str();
    given.emplace_back(opt, [&cli, field](Settings& s) { s.*field = cli.*field; });
  };
  app.add_option("-c,--config", config,
                 "YAML file of settings (keys: the long flag names with underscores, num_vcs)");
  flag("--terminals", &Settings::terminals, "N, terminals of the fabric");
  flag("--k", &Settings::k, "terminals per router (the fabric is k-ary)");
  auto* channels_opt =
      app.add_option("--channels", channels,
                     "dilated (A/B), double-rate (one 2x channel; or double), plain (no dilation)")
          ->default_str("dilated");
  auto* mode_opt =
      app.add_option("--mode", mode, "routing modes, comma-separated: aldfb, ugal, minimal")
          ->default_str("aldfb");
  flag("--threshold", &Settings::threshold,
       "T_h in packets, compared with the port's whole queue (0: half a VC, VC depth / 2)");
  auto* vc_rule_opt =
      app.add_option(with_underscore_aliases("--vc-rule"), vc_rule,
                     "escape (Duato: VC 0 dimension-ordered escape, 1..V-1 adaptive) or seed "
                     "(forward/reverse classes by link number)")
          ->default_str("escape");
  flag("--num-vcs", &Settings::num_vcs, "virtual channels per port (BookSim num_vcs)");
  flag("--vc-buf-size", &Settings::vc_buf_size, "flits per VC (BookSim vc_buf_size)");
  flag("--packet-size", &Settings::packet_size, "flits per packet (BookSim packet_size)");
  flag("--channel-latency", &Settings::channel_latency,
       "cycles per channel (BookSim channel latency)");
  flag("--routing-delay", &Settings::routing_delay,
       "cycles from arrival to switch request (BookSim routing_delay + 1)");
  flag("--alloc-iters", &Settings::alloc_iters, "iSLIP iterations (BookSim alloc_iters)");
  flag("--internal-speedup", &Settings::internal_speedup,
       "switch passes per cycle; 2 or more adds output queues (BookSim internal_speedup)");
  flag("--output-buffer-size", &Settings::output_buffer_size,
       "packets per output VC queue (BookSim output_buffer_size)");
  auto* traffic_opt =
      app.add_option(
             "--traffic", traffic,
             "uniform (random), benign, adversarial (router i -> i+j in digit 0), routershift "
             "(router i -> i+1 across the grid), bitcomp, randperm (one per seed), "
             "transpose, trace, hotspot")
          ->default_str("uniform");
  auto* load_opt =
      app.add_option("--load", load, "offered load(s) in (0,1]: 0.5, 0.2,0.5 or 0.1:1.0:0.1")
          ->default_str("0.5");
  flag("--adversarial-shift", &Settings::adversarial_shift,
       "j of adversarial traffic (router i -> router i+j, in digit 0)");
  flag("--trace", &Settings::trace_file, "trace file: lines 'time source destination size'");
  flag("--hot-fraction", &Settings::hot_fraction,
       "hotspot: h, the fraction of requests that are fetch-and-adds to the hot node");
  flag("--hot-node", &Settings::hot_node, "hotspot: the hot terminal");
  auto* combining_opt =
      app.add_option("--combining", combining,
                     "hotspot: on merges hot requests in router queues (001), off does not")
          ->default_str("off");
  flag("--wait-buffer", &Settings::wait_buffer,
       "combining: wait-buffer records per router (full: no more combining there)");
  flag("--combine-ways", &Settings::combine_ways,
       "combining: packets merged into one at a router (2: two-way switch; 0: unlimited)");
  flag("--seed", &Settings::seed, "seed of every random choice");
  flag("--warmup-cycles,--warmup", &Settings::warmup_cycles, "warm-up cycles");
  flag("--sample-cycles,--sample", &Settings::sample_cycles, "cycles of one measured window");
  flag("--min-samples", &Settings::min_samples, "windows measured at least");
  flag("--max-samples", &Settings::max_samples, "windows measured at most");
  flag("--converge-tolerance", &Settings::converge_tolerance,
       "relative change of accepted rate between windows that counts as converged");
  flag("--source-queue", &Settings::source_queue_packets, "source queue packets (full: saturated)");
  flag("--deadlock-cycles", &Settings::deadlock_cycles,
       "cycles a head may wait before the run checks it for deadlock (a cycle of full VCs) or "
       "starvation (its VC has room, its lane is idle)");
  flag("--out", &Settings::out_dir, "output directory (CSV, settings.yaml, SVG and PNG plots)");
  flag("--threads", &Settings::threads, "points run in parallel (0: every core)");
  CLI11_PARSE(app, argc, argv);

  Settings s;
  try {
    if (!config.empty()) s = asn::sim::load_settings_yaml(config, s);
    for (auto& [opt, apply] : given) {
      if (opt->count() > 0) apply(s);
    }
    if (channels_opt->count() > 0) s.channels = asn::sim::parse_channels(channels);
    if (mode_opt->count() > 0) s.modes = asn::sim::parse_modes(mode);
    if (vc_rule_opt->count() > 0) s.vc_rule = asn::sim::parse_vc_rule(vc_rule);
    if (traffic_opt->count() > 0) s.pattern = asn::sim::parse_pattern(traffic);
    if (load_opt->count() > 0) s.loads = asn::sim::parse_loads(load);
    if (combining_opt->count() > 0) s.combining = asn::sim::parse_on_off("combining", combining);
    if (s.pattern == asn::sim::Pattern::kTrace) s.loads = {s.loads.front()};  // load unused
    asn::sim::validate(s);
    if (!s.out_dir.empty()) asn::sim::prepare_output_dir(s.out_dir);
  } catch (const asn::sim::SimError& e) {
    std::cerr << "asnsim: " << e.what() << "\n";
    return 2;
  }

  std::signal(SIGINT, on_interrupt);
  asn::sim::Results results;
  try {
    results = asn::sim::run_sweep(s, &g_cancel, show_progress);
  } catch (const std::exception& e) {
    std::cerr << "\nasnsim: " << e.what() << "\n";
    return 1;
  }
  if (g_cancel) std::cerr << "\nasnsim: interrupted; writing the points that finished\n";
  std::cout << asn::sim::summary_table(results);
  if (s.pattern == asn::sim::Pattern::kHotspot) std::cout << asn::sim::hotspot_table(results);
  if (!s.out_dir.empty()) {
    const std::string problems = asn::sim::write_outputs(s.out_dir, s, results);
    if (!problems.empty()) std::cerr << "asnsim: " << problems << "\n";
    std::cerr << "asnsim: results in " << s.out_dir << "\n";
  }
  // 3: a point deadlocked; 4: a point starved (and none deadlocked). Both are in the table
  // and the CSV.
  bool starved = false, unserial = false;
  for (const auto& r : results) {
    if (r && r->deadlock) return 3;
    starved = starved || (r && r->starvation);
    unserial = unserial || (r && !r->serial_order_error.empty());
  }
  if (starved) return 4;
  if (unserial) return 5;  // combining returned values of no serial order
  return g_cancel ? 130 : 0;
}

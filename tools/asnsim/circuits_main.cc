// `asnsim circuits`: throughput and latency against request rate for the path reservation
// protocols of 002 ch. 3 (forward / backward, dropping / holding, conservative / aggressive /
// optimal cset) on a torus, every reservation run by lib/circuit (docs/asnsim.md).
#include "circuits_main.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "asn/circuit/error.hpp"
#include "asn/circuit/sim.hpp"
#include "circuits_plot.hpp"
#include "flag_names.hpp"

namespace {

using asn::circuit::SimResult;
using asn::circuit::SimSettings;

template <typename T>
std::vector<T> split(const std::string& list, const std::string& field) {
  std::vector<T> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    std::istringstream v(item);
    T x{};
    if (!(v >> x) || !v.eof()) {
      throw asn::circuit::CircuitError(asn::circuit::ErrorKind::kInvalidArgument, field,
                                       "'" + item + "' is not a number");
    }
    out.push_back(x);
  }
  if (out.empty()) {
    throw asn::circuit::CircuitError(asn::circuit::ErrorKind::kInvalidArgument, field,
                                     "empty; a comma-separated list");
  }
  return out;
}

// Every (protocol, hold time, rate): dropping protocols once, holding ones per hold time.
std::vector<SimSettings> points(const SimSettings& base, const std::string& protocols,
                                const std::string& rates, const std::string& holds) {
  std::vector<SimSettings> out;
  const auto rate_list = split<double>(rates, "rates");
  const auto hold_list = split<uint32_t>(holds, "hold-times");
  std::stringstream in(protocols);
  for (std::string name; std::getline(in, name, ',');) {
    SimSettings s = base;
    s.protocol = asn::circuit::parse_protocol(name, "protocols");
    const bool holding = s.protocol.on_block == asn::circuit::OnBlock::kHold;
    for (uint32_t h : holding ? hold_list : std::vector<uint32_t>{0}) {
      s.protocol.hold_time = h;
      for (double r : rate_list) {
        s.rate = r;
        out.push_back(s);
      }
    }
  }
  return out;
}

std::string csv(const std::vector<SimSettings>& pts, const std::vector<SimResult>& res) {
  std::ostringstream o;
  o << "protocol,hold_time,degree,size,rate,throughput,throughput_per_node,latency,"
       "latency_total,messages,attempts,failures,control_messages\n";
  for (size_t i = 0; i < pts.size(); ++i) {
    const SimSettings& s = pts[i];
    const SimResult& r = res[i];
    o << asn::circuit::to_string(s.protocol) << ',' << s.protocol.hold_time << ',' << s.degree
      << ',' << s.side << ',' << s.rate << ',' << r.throughput << ','
      << r.throughput / (s.side * s.side) << ',' << r.latency << ',' << r.latency_total << ','
      << r.messages << ',' << r.attempts << ',' << r.failures << ',' << r.events << '\n';
  }
  return o.str();
}

// Per protocol and hold time: the maximum throughput over the rates and the latency at the
// lowest rate, the two numbers 002 compares protocols by (002 L512).
void summary(const std::vector<SimSettings>& pts, const std::vector<SimResult>& res) {
  std::map<std::pair<std::string, uint32_t>, std::pair<double, double>> best;
  std::map<std::pair<std::string, uint32_t>, double> low_rate;
  for (size_t i = 0; i < pts.size(); ++i) {
    const auto key =
        std::make_pair(asn::circuit::to_string(pts[i].protocol), pts[i].protocol.hold_time);
    auto [it, fresh] = best.emplace(key, std::make_pair(res[i].throughput, res[i].latency));
    if (res[i].throughput > it->second.first) it->second.first = res[i].throughput;
    if (fresh || pts[i].rate < low_rate[key]) {
      low_rate[key] = pts[i].rate;
      it->second.second = res[i].latency;
    }
  }
  std::printf("%-9s %5s %15s %18s\n", "protocol", "hold", "max throughput", "latency (rate)");
  for (const auto& [key, v] : best) {
    std::printf("%-9s %5u %15.3f %9.1f (%.4f)\n", key.first.c_str(), key.second, v.first, v.second,
                low_rate[key]);
  }
}

// throughput.svg and latency.svg: per protocol (and hold time), against the rate.
bool write_plots(const std::filesystem::path& dir, const std::vector<SimSettings>& pts,
                 const std::vector<SimResult>& res) {
  std::map<std::string, std::vector<std::pair<double, double>>> thr, lat;
  for (size_t i = 0; i < pts.size(); ++i) {
    std::string name = asn::circuit::to_string(pts[i].protocol);
    if (pts[i].protocol.on_block == asn::circuit::OnBlock::kHold) {
      name += " hold " + std::to_string(pts[i].protocol.hold_time);
    }
    const double nodes = pts[i].side * pts[i].side;
    thr[name].emplace_back(pts[i].rate, res[i].throughput / nodes);
    if (res[i].latency > 0) lat[name].emplace_back(pts[i].rate, res[i].latency);
  }
  for (auto* m : {&thr, &lat}) {
    for (auto& [name, v] : *m) std::sort(v.begin(), v.end());
  }
  std::ofstream t(dir / "throughput.svg"), l(dir / "latency.svg");
  t << circuits_svg(thr, "Throughput (002 Fig 3.4a)", "messages per node per time unit", false);
  l << circuits_svg(lat, "Latency to the first packet (002 Fig 3.4b)", "time units (log)", true);
  return t.good() && l.good();
}

struct Flags {
  SimSettings base;
  std::string protocols = "FDC,FDA,FDO,BDC,BDA,BDO";
  std::string rates = "0.002,0.003,0.004,0.006,0.008,0.01,0.012,0.016,0.02,0.025,0.03";
  std::string holds = "10";
  std::string out;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
};

void add_flags(CLI::App& app, Flags& f) {
  SimSettings& b = f.base;
  app.add_option("--size", b.side, "the torus is SIZE x SIZE")->capture_default_str();
  app.add_option("--degree", b.degree, "multiplexing degree: slots per link (1..64)")
      ->capture_default_str();
  app.add_option("--message", b.message, "packets per message")->capture_default_str();
  app.add_option("--control", b.control,
                 "time units per control message hop (processing + propagation)")
      ->capture_default_str();
  app.add_option("--protocols", f.protocols,
                 "comma-separated: F|B (forward, backward), D|H (dropping, holding), C|A|O|N "
                 "(conservative, aggressive, optimal per 002 Table 3.1, or a cset size N)")
      ->capture_default_str();
  app.add_option("--rates", f.rates, "requests per node per time unit, comma-separated")
      ->capture_default_str();
  app.add_option(with_underscore_aliases("--hold-times"), f.holds,
                 "time units a holding protocol keeps a blocked RES, comma-separated")
      ->capture_default_str();
  app.add_option("--mrt", b.mrt, "maximum retransmit time: a retry after 0..MRT-1")
      ->capture_default_str();
  app.add_option(with_underscore_aliases("--mrt-fda"), b.mrt_fda,
                 "the same for forward aggressive (002 L526)")
      ->capture_default_str();
  app.add_option("--time", b.time, "time units simulated per point")->capture_default_str();
  app.add_option("--warmup", b.warmup, "of which the first are not measured")
      ->capture_default_str();
  app.add_option("--seed", b.seed, "random seed (same seed, same numbers)")->capture_default_str();
  app.add_option("--threads", f.threads, "points run in parallel")->capture_default_str();
  app.add_option("--out", f.out,
                 "directory for circuits.csv, throughput.svg and latency.svg (created)");
}

}  // namespace

int circuits_main(int argc, char** argv) {
  CLI::App app{
      "asnsim circuits: 002 ch. 3's path reservation protocols on a torus, throughput and "
      "latency against request rate, every reservation run by lib/circuit. Exit 2 on bad input.",
      "asnsim circuits"};
  Flags f;
  add_flags(app, f);
  CLI11_PARSE(app, argc, argv);

  std::vector<SimSettings> pts;
  std::vector<SimResult> res;
  try {
    pts = points(f.base, f.protocols, f.rates, f.holds);
    std::error_code ec;
    if (!f.out.empty() && (std::filesystem::create_directories(f.out, ec), ec)) {
      throw asn::circuit::CircuitError(asn::circuit::ErrorKind::kInvalidArgument, "out",
                                       "cannot create " + f.out + ": " + ec.message());
    }
    res = asn::circuit::simulate_all(pts, f.threads, [](size_t done, size_t total) {
      std::fprintf(stderr, "\r%zu/%zu points", done, total);
      if (done == total) std::fputc('\n', stderr);
    });
  } catch (const asn::circuit::CircuitError& e) {
    std::cerr << "asnsim circuits: --" << e.what() << "\n";
    return 2;
  }
  summary(pts, res);
  if (f.out.empty()) return 0;
  std::ofstream csv_file(std::filesystem::path(f.out) / "circuits.csv");
  csv_file << csv(pts, res);
  if (!csv_file.good() || !write_plots(f.out, pts, res)) {
    std::cerr << "asnsim circuits: cannot write circuits.csv and the plots under " << f.out << "\n";
    return 1;
  }
  return 0;
}

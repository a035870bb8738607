#include "asn/sim/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

namespace asn::sim {
namespace {

std::string fixed(double value, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << value;
  return s.str();
}

std::string state(const PointResult& r) {
  if (r.deadlock) return "deadlock";
  if (r.starvation) return "starvation";
  if (!r.serial_order_error.empty()) return "no-serial-order";
  if (r.saturated) return "saturated";
  return r.converged ? "ok" : "not-converged";
}

double metric_of(const PointResult& r, Metric metric) {
  switch (metric) {
    case Metric::kAccepted:
      return r.accepted;
    case Metric::kLatencyMean:
      return r.latency_mean;
    case Metric::kLatencyP99:
      return r.latency_p99;
  }
  return 0;
}

const char* metric_title(Metric metric) {
  switch (metric) {
    case Metric::kAccepted:
      return "accepted throughput (fraction of injection capacity)";
    case Metric::kLatencyMean:
      return "mean latency (cycles)";
    case Metric::kLatencyP99:
      return "p99 latency (cycles)";
  }
  return "";
}

const char* metric_file(Metric metric) {
  switch (metric) {
    case Metric::kAccepted:
      return "throughput";
    case Metric::kLatencyMean:
      return "latency_mean";
    case Metric::kLatencyP99:
      return "latency_p99";
  }
  return "";
}

// Per mode, all its points in load order (stuck ones too: they are drawn as marks).
std::map<std::string, std::vector<const PointResult*>> by_mode(const Results& results) {
  std::map<std::string, std::vector<const PointResult*>> modes;
  for (const auto& r : results) {
    if (r) modes[to_string(r->mode)].push_back(&*r);
  }
  for (auto& [mode, points] : modes) {
    std::sort(points.begin(), points.end(), [](auto* a, auto* b) { return a->load < b->load; });
  }
  return modes;
}

// A deadlocked or starved point measured nothing: it is marked, not plotted as a value.
bool stuck(const PointResult& r) { return r.deadlock || r.starvation; }

// One colour per mode, the same in every plot and in the PNGs; red marks stuck points.
const char* mode_colour(const std::string& mode) {
  if (mode == "aldfb") return "#1f77b4";
  if (mode == "ugal") return "#2ca02c";
  if (mode == "minimal") return "#ff7f0e";
  return "#9467bd";
}
constexpr const char* kStuckColour = "#d62728";

// Latency axes go logarithmic when the measured values span more than a decade (a saturated
// point's latency dwarfs the rest).
// The smallest positive measured value of `metric` (0 if none).
double lowest(const Results& results, Metric metric) {
  double lo = 0;
  for (const auto& r : results) {
    if (!r || stuck(*r)) continue;
    const double v = metric_of(*r, metric);
    if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
  }
  return lo;
}

bool log_axis(const Results& results, Metric metric) {
  if (metric == Metric::kAccepted) return false;
  double lo = 0, hi = 0;
  for (const auto& r : results) {
    if (!r || stuck(*r)) continue;
    const double v = metric_of(*r, metric);
    if (v <= 0) continue;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  return lo > 0 && hi / lo > 10;
}

}  // namespace

std::string csv(const Results& results) {
  std::ostringstream out;
  out << "mode,load,offered,accepted,latency_mean,latency_p50,latency_p99,hops_mean,"
         "nonminimal_share,packets,cycles,state,repeated_detours,vc_rule,hot_bound,"
         "cold_accepted,cold_latency_mean,cold_latency_p99,hot_requests,combines,"
         "wait_buffer_full\n";
  for (const auto& r : results) {
    if (!r) continue;
    out << to_string(r->mode) << ',' << r->load << ',' << fixed(r->offered, 4) << ','
        << fixed(r->accepted, 4) << ',' << fixed(r->latency_mean, 2) << ',' << r->latency_p50 << ','
        << r->latency_p99 << ',' << fixed(r->hops_mean, 3) << ',' << fixed(r->nonminimal_share, 4)
        << ',' << r->packets << ',' << r->cycles << ',' << state(*r) << ',' << r->repeated_detours
        << ',' << to_string(r->vc_rule) << ',' << fixed(r->hot_bound, 4) << ','
        << fixed(r->cold_accepted, 4) << ',' << fixed(r->cold_latency_mean, 2) << ','
        << r->cold_latency_p99 << ',' << r->hot_requests << ',' << r->combines << ','
        << r->wait_buffer_full << '\n';
  }
  return out.str();
}

std::string summary_table(const Results& results) {
  std::ostringstream out;
  out << std::left << std::setw(8) << "mode" << std::right << std::setw(6) << "load"
      << std::setw(10) << "accepted" << std::setw(10) << "lat.mean" << std::setw(8) << "p50"
      << std::setw(8) << "p99" << std::setw(7) << "hops" << std::setw(8) << "nonmin"
      << "  state\n";
  for (const auto& r : results) {
    if (!r) continue;
    out << std::left << std::setw(8) << to_string(r->mode) << std::right << std::setw(6)
        << fixed(r->load, 2) << std::setw(10) << fixed(r->accepted, 3) << std::setw(10)
        << fixed(r->latency_mean, 1) << std::setw(8) << r->latency_p50 << std::setw(8)
        << r->latency_p99 << std::setw(7) << fixed(r->hops_mean, 2) << std::setw(8)
        << fixed(r->nonminimal_share, 3) << "  " << state(*r);
    if (r->deadlock || r->starvation) out << " (" << r->message << ")";
    if (!r->serial_order_error.empty()) out << " (" << r->serial_order_error << ")";
    out << '\n';
  }
  return out.str();
}

std::string hotspot_table(const Results& results) {
  std::ostringstream out;
  out << "\nhotspot:\n"
      << std::left << std::setw(8) << "mode" << std::right << std::setw(6) << "load"
      << std::setw(10) << "accepted" << std::setw(8) << "bound" << std::setw(8) << "cold"
      << std::setw(10) << "cold.lat" << std::setw(10) << "cold.p99" << std::setw(10) << "hot"
      << std::setw(10) << "combines" << std::setw(8) << "wbfull" << '\n';
  for (const auto& r : results) {
    if (!r) continue;
    out << std::left << std::setw(8) << to_string(r->mode) << std::right << std::setw(6)
        << fixed(r->load, 2) << std::setw(10) << fixed(r->accepted, 3) << std::setw(8)
        << fixed(r->hot_bound, 3) << std::setw(8) << fixed(r->cold_accepted, 3) << std::setw(10)
        << fixed(r->cold_latency_mean, 1) << std::setw(10) << r->cold_latency_p99 << std::setw(10)
        << r->hot_requests << std::setw(10) << r->combines << std::setw(8) << r->wait_buffer_full
        << '\n';
  }
  return out.str();
}

std::string svg_plot(const Settings& settings, const Results& results, Metric metric) {
  const double width = 680, height = 440, left = 70, right = 170, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto modes = by_mode(results);
  const bool log_y = log_axis(results, metric);
  double y_min = 0, y_max = 1.0;
  if (metric != Metric::kAccepted) {
    double lo = 0;
    for (const auto& [mode, points] : modes) {
      for (const PointResult* p : points) {
        if (stuck(*p)) continue;
        const double v = metric_of(*p, metric);
        y_max = std::max(y_max, v);
        if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
      }
    }
    if (log_y) {
      y_min = std::pow(10.0, std::floor(std::log10(lo)));
      y_max = std::pow(10.0, std::ceil(std::log10(y_max)));
    } else {
      y_max *= 1.1;
    }
  }
  auto x_of = [&](double x) { return left + x * plot_w; };
  auto y_of = [&](double y) {
    if (log_y) {
      const double f = (std::log10(std::max(y, y_min)) - std::log10(y_min)) /
                       (std::log10(y_max) - std::log10(y_min));
      return top + plot_h - f * plot_h;
    }
    return top + plot_h - (y - y_min) / (y_max - y_min) * plot_h;
  };

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\">" << metric_title(metric)
      << " vs offered load: N=" << settings.terminals << ", k=" << settings.k << ", "
      << to_string(settings.pattern) << (log_y ? " (log scale)" : "") << "</text>\n";
  for (int i = 0; i <= 5; ++i) {  // x grid and ticks
    const double fx = i / 5.0;
    out << "<line x1=\"" << x_of(fx) << "\" y1=\"" << top << "\" x2=\"" << x_of(fx) << "\" y2=\""
        << top + plot_h << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << x_of(fx) << "\" y=\"" << top + plot_h + 16
        << "\" text-anchor=\"middle\">" << fixed(fx, 1) << "</text>\n";
  }
  std::vector<double> y_ticks;
  if (log_y) {
    for (double y = y_min; y <= y_max * 1.001; y *= 10) y_ticks.push_back(y);
  } else {
    for (int i = 0; i <= 5; ++i) y_ticks.push_back(y_min + (y_max - y_min) * i / 5.0);
  }
  for (double fy : y_ticks) {
    out << "<line x1=\"" << left << "\" y1=\"" << y_of(fy) << "\" x2=\"" << left + plot_w
        << "\" y2=\"" << y_of(fy) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 6 << "\" y=\"" << y_of(fy) + 4 << "\" text-anchor=\"end\">"
        << fixed(fy, metric == Metric::kAccepted ? 1 : 0) << "</text>\n";
  }
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 10
      << "\" text-anchor=\"middle\">offered load (fraction of injection capacity)</text>\n";
  const bool latency = metric != Metric::kAccepted;
  bool any_saturated = false, any_stuck = false;
  double legend_y = top + 20;
  for (const auto& [mode, points] : modes) {
    const char* c = mode_colour(mode);
    // Segments between measured points; into a saturated point dashed on latency plots (its
    // latency is the run's, not a steady state's).
    const PointResult* previous = nullptr;
    for (const PointResult* p : points) {
      if (stuck(*p)) {
        previous = nullptr;  // no line through a point that measured nothing
        continue;
      }
      if (previous) {
        const bool dashed = latency && (p->saturated || previous->saturated);
        out << "<line x1=\"" << fixed(x_of(previous->load), 1) << "\" y1=\""
            << fixed(y_of(metric_of(*previous, metric)), 1) << "\" x2=\"" << fixed(x_of(p->load), 1)
            << "\" y2=\"" << fixed(y_of(metric_of(*p, metric)), 1) << "\" stroke=\"" << c
            << "\" stroke-width=\"2\"" << (dashed ? " stroke-dasharray=\"5,4\"" : "") << "/>\n";
      }
      previous = p;
    }
    for (const PointResult* p : points) {
      const double x = x_of(p->load);
      if (stuck(*p)) {
        // A red X on the load axis, labelled: the point ended without a measurement.
        any_stuck = true;
        const double y = top + plot_h - 8;
        out << "<path class=\"stuck\" d=\"M" << fixed(x - 5, 1) << ',' << fixed(y - 5, 1) << " L"
            << fixed(x + 5, 1) << ',' << fixed(y + 5, 1) << " M" << fixed(x - 5, 1) << ','
            << fixed(y + 5, 1) << " L" << fixed(x + 5, 1) << ',' << fixed(y - 5, 1)
            << "\" stroke=\"" << kStuckColour << "\" stroke-width=\"2.5\"/>\n"
            << "<text x=\"" << fixed(x, 1) << "\" y=\"" << fixed(y - 9, 1)
            << "\" text-anchor=\"middle\" font-size=\"10\" fill=\"" << kStuckColour << "\">" << mode
            << " " << (p->deadlock ? "deadlock" : "starvation") << "</text>\n";
        continue;
      }
      const double y = y_of(metric_of(*p, metric));
      any_saturated = any_saturated || p->saturated;
      out << "<circle cx=\"" << fixed(x, 1) << "\" cy=\"" << fixed(y, 1) << "\" r=\""
          << (p->saturated ? 4 : 3) << "\" fill=\"" << (p->saturated ? "white" : c)
          << "\" stroke=\"" << c << "\" stroke-width=\"1.5\"/>\n";
    }
    out << "<line x1=\"" << left + plot_w + 15 << "\" y1=\"" << legend_y << "\" x2=\""
        << left + plot_w + 40 << "\" y2=\"" << legend_y << "\" stroke=\"" << c
        << "\" stroke-width=\"2\"/>\n<text x=\"" << left + plot_w + 45 << "\" y=\"" << legend_y + 4
        << "\">" << mode << "</text>\n";
    legend_y += 20;
  }
  const double note_x = left + plot_w + 15;
  if (any_saturated) {
    out << "<circle cx=\"" << note_x + 12 << "\" cy=\"" << legend_y << "\" r=\"4\" fill=\"white\" "
        << "stroke=\"black\"/>\n<text x=\"" << note_x + 30 << "\" y=\"" << legend_y + 4
        << "\" font-size=\"10\">saturated" << (latency ? ": latency grows" : "") << "</text>\n";
    if (latency) {
      out << "<text x=\"" << note_x + 30 << "\" y=\"" << legend_y + 16
          << "\" font-size=\"10\">with the run (dashed)</text>\n";
      legend_y += 12;
    }
    legend_y += 20;
  }
  if (any_stuck) {
    out << "<path d=\"M" << note_x + 7 << ',' << legend_y - 5 << " L" << note_x + 17 << ','
        << legend_y + 5 << " M" << note_x + 7 << ',' << legend_y + 5 << " L" << note_x + 17 << ','
        << legend_y - 5 << "\" stroke=\"" << kStuckColour << "\" stroke-width=\"2.5\"/>\n<text x=\""
        << note_x + 30 << "\" y=\"" << legend_y + 4
        << "\" font-size=\"10\">deadlock / starvation:</text>\n<text x=\"" << note_x + 30
        << "\" y=\"" << legend_y + 16 << "\" font-size=\"10\">nothing measured</text>\n";
  }
  out << "</svg>\n";
  return out.str();
}

void prepare_output_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw SimError("out: cannot create directory '" + dir + "'" +
                   (ec ? ": " + ec.message() : std::string()));
  }
  const fs::path probe = fs::path(dir) / ".asnsim-write-test";
  {
    std::ofstream test(probe);
    if (!test || !(test << "x") || !test.flush()) {
      throw SimError("out: cannot write in directory '" + dir + "'");
    }
  }
  fs::remove(probe, ec);
}

namespace {

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out.flush());
}

// gnuplot reads results.csv; one PNG per plot.
std::string gnuplot_pngs(const std::filesystem::path& dir, const Settings& settings,
                         const Results& results) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return "gnuplot not found (apt-get install gnuplot-nox): PNG plots skipped";
  }
  const auto modes = by_mode(results);
  std::ostringstream script;
  script << "set datafile separator ','\nset terminal pngcairo size 800,520 noenhanced\n"
         << "set key below\nset grid\nset xlabel 'offered load'\nset xrange [0:1]\n";
  const struct {
    Metric metric;
    int column;
  } plots[] = {{Metric::kAccepted, 4}, {Metric::kLatencyMean, 5}, {Metric::kLatencyP99, 7}};
  const std::string data = "'" + (dir / "results.csv").string() + "'";
  for (const auto& plot : plots) {
    const bool log_y = log_axis(results, plot.metric);
    const std::string y = "$" + std::to_string(plot.column);
    script << "set output '" << (dir / (std::string(metric_file(plot.metric)) + ".png")).string()
           << "'\nset title '" << metric_title(plot.metric) << ": N=" << settings.terminals
           << " k=" << settings.k << " " << to_string(settings.pattern) << "'\nset ylabel '"
           << metric_title(plot.metric) << "'\n"
           << (log_y ? "set logscale y\nset yrange [*:*]\n" : "unset logscale y\n")
           << (plot.metric == Metric::kAccepted ? "set yrange [0:1.05]\n"
               : log_y                          ? ""
                                                : "set yrange [0:*]\n")
           << "plot ";
    bool first = true;
    for (const auto& [mode, points] : modes) {
      const std::string is_mode = "strcol(1) eq '" + mode + "'";
      const std::string colour = std::string("lc rgb '") + mode_colour(mode) + "'";
      // Measured points joined; saturated ones again as hollow circles; stuck ones as a red X
      // on the load axis (they measured nothing).
      script << (first ? "" : ", ") << data << " using 2:(" << is_mode
             << " && strcol(12) ne 'deadlock' && strcol(12) ne 'starvation' ? " << y
             << " : NaN) with linespoints pt 7 " << colour << " title '" << mode << "'";
      script << ", " << data << " using 2:(" << is_mode << " && strcol(12) eq 'saturated' ? " << y
             << " : NaN) with points pt 6 ps 1.6 " << colour;
      // One key entry for the hollow marker, not one per mode (the colour is the mode's).
      if (first) {
        script << " title 'hollow: saturated"
               << (plot.metric == Metric::kAccepted ? "" : ", latency grows with the run") << "'";
      } else {
        script << " notitle";
      }
      bool has_stuck = false;
      for (const PointResult* p : points) has_stuck = has_stuck || stuck(*p);
      if (has_stuck) {
        script << ", " << data << " using 2:(" << is_mode
               << " && (strcol(12) eq 'deadlock' || strcol(12) eq 'starvation') ? "
               << (log_y ? fixed(lowest(results, plot.metric), 2) : std::string("0"))
               << " : NaN) with points pt 2 ps 2 lw 2 lc rgb '" << kStuckColour << "' title '"
               << mode << ": deadlock/starvation'";
      }
      first = false;
    }
    script << "\n";
  }
  const std::filesystem::path file = dir / "plots.gp";
  if (!write_file(file, script.str())) return "cannot write " + file.string();
  const std::string command = "gnuplot '" + file.string() + "' 2>&1";
  if (std::system(command.c_str()) != 0) return "gnuplot failed on " + file.string();
  return "";
}

}  // namespace

std::string write_outputs(const std::string& dir, const Settings& settings,
                          const Results& results) {
  namespace fs = std::filesystem;
  const fs::path out(dir);
  std::string problems;
  auto note = [&](const std::string& p) {
    if (!p.empty()) problems += (problems.empty() ? "" : "; ") + p;
  };
  if (!write_file(out / "results.csv", csv(results))) note("cannot write results.csv");
  if (!write_file(out / "settings.yaml", settings_yaml(settings)))
    note("cannot write settings.yaml");
  for (Metric m : {Metric::kAccepted, Metric::kLatencyMean, Metric::kLatencyP99}) {
    const std::string name = std::string(metric_file(m)) + ".svg";
    if (!write_file(out / name, svg_plot(settings, results, m))) note("cannot write " + name);
  }
  note(gnuplot_pngs(out, settings, results));
  return problems;
}

}  // namespace asn::sim

#include "asn/sim/report.hpp"

#include <algorithm>
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

// Per mode, its points in load order. A deadlocked point measured nothing: it is left out of
// the plots (the CSV and the table name it).
std::map<std::string, std::vector<const PointResult*>> by_mode(const Results& results) {
  std::map<std::string, std::vector<const PointResult*>> modes;
  for (const auto& r : results) {
    if (r && !r->deadlock) modes[to_string(r->mode)].push_back(&*r);
  }
  for (auto& [mode, points] : modes) {
    std::sort(points.begin(), points.end(), [](auto* a, auto* b) { return a->load < b->load; });
  }
  return modes;
}

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};

}  // namespace

std::string csv(const Results& results) {
  std::ostringstream out;
  out << "mode,load,offered,accepted,latency_mean,latency_p50,latency_p99,hops_mean,"
         "nonminimal_share,packets,cycles,state,repeated_detours,vc_rule\n";
  for (const auto& r : results) {
    if (!r) continue;
    out << to_string(r->mode) << ',' << r->load << ',' << fixed(r->offered, 4) << ','
        << fixed(r->accepted, 4) << ',' << fixed(r->latency_mean, 2) << ',' << r->latency_p50 << ','
        << r->latency_p99 << ',' << fixed(r->hops_mean, 3) << ',' << fixed(r->nonminimal_share, 4)
        << ',' << r->packets << ',' << r->cycles << ',' << state(*r) << ',' << r->repeated_detours
        << ',' << to_string(r->vc_rule) << '\n';
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
    out << '\n';
  }
  return out.str();
}

std::string svg_plot(const Settings& settings, const Results& results, Metric metric) {
  const double width = 640, height = 420, left = 70, right = 130, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto modes = by_mode(results);
  double y_max = metric == Metric::kAccepted ? 1.0 : 1.0;
  for (const auto& [mode, points] : modes) {
    for (const PointResult* p : points) y_max = std::max(y_max, metric_of(*p, metric));
  }
  if (metric != Metric::kAccepted) y_max *= 1.1;
  const double x_max = 1.0;
  auto x_of = [&](double x) { return left + x / x_max * plot_w; };
  auto y_of = [&](double y) { return top + plot_h - y / y_max * plot_h; };

  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\">" << metric_title(metric)
      << " vs offered load: N=" << settings.terminals << ", k=" << settings.k << ", "
      << to_string(settings.pattern) << "</text>\n";
  for (int i = 0; i <= 5; ++i) {  // grid and ticks
    const double fx = i / 5.0, fy = y_max * i / 5.0;
    out << "<line x1=\"" << x_of(fx * x_max) << "\" y1=\"" << top << "\" x2=\"" << x_of(fx * x_max)
        << "\" y2=\"" << top + plot_h << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << x_of(fx * x_max) << "\" y=\"" << top + plot_h + 16
        << "\" text-anchor=\"middle\">" << fixed(fx * x_max, 1) << "</text>\n"
        << "<line x1=\"" << left << "\" y1=\"" << y_of(fy) << "\" x2=\"" << left + plot_w
        << "\" y2=\"" << y_of(fy) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << left - 6 << "\" y=\"" << y_of(fy) + 4 << "\" text-anchor=\"end\">"
        << fixed(fy, metric == Metric::kAccepted ? 1 : 0) << "</text>\n";
  }
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\""
      << plot_h << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 10
      << "\" text-anchor=\"middle\">offered load (fraction of injection capacity)</text>\n";
  size_t colour = 0;
  for (const auto& [mode, points] : modes) {
    const char* c = kColours[colour % std::size(kColours)];
    out << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\" points=\"";
    for (const PointResult* p : points) {
      out << fixed(x_of(p->load), 1) << ',' << fixed(y_of(metric_of(*p, metric)), 1) << ' ';
    }
    out << "\"/>\n";
    for (const PointResult* p : points) {
      out << "<circle cx=\"" << fixed(x_of(p->load), 1) << "\" cy=\""
          << fixed(y_of(metric_of(*p, metric)), 1) << "\" r=\"3\" fill=\"" << c << "\"/>\n";
    }
    const double ly = top + 20 + 20 * static_cast<double>(colour);
    out << "<line x1=\"" << left + plot_w + 15 << "\" y1=\"" << ly << "\" x2=\""
        << left + plot_w + 40 << "\" y2=\"" << ly << "\" stroke=\"" << c
        << "\" stroke-width=\"2\"/>\n<text x=\"" << left + plot_w + 45 << "\" y=\"" << ly + 4
        << "\">" << mode << "</text>\n";
    ++colour;
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
         << "set key outside right\nset grid\nset xlabel 'offered load'\nset xrange [0:1]\n";
  const struct {
    Metric metric;
    int column;
  } plots[] = {{Metric::kAccepted, 4}, {Metric::kLatencyMean, 5}, {Metric::kLatencyP99, 7}};
  for (const auto& plot : plots) {
    script << "set output '" << (dir / (std::string(metric_file(plot.metric)) + ".png")).string()
           << "'\nset title '" << metric_title(plot.metric) << ": N=" << settings.terminals
           << " k=" << settings.k << " " << to_string(settings.pattern) << "'\nset ylabel '"
           << metric_title(plot.metric) << "'\n"
           << (plot.metric == Metric::kAccepted ? "set yrange [0:1.05]\n" : "set yrange [0:*]\n")
           << "plot ";
    bool first = true;
    for (const auto& [mode, points] : modes) {
      script << (first ? "" : ", ") << "'" << (dir / "results.csv").string()
             << "' using 2:(strcol(1) eq '" << mode << "' && strcol(12) ne 'deadlock' ? $"
             << plot.column << " : NaN) with linespoints title '" << mode << "'";
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

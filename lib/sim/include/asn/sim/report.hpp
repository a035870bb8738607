// asnsim's outputs: the CSV of every point, the summary table, the plots (SVG written here,
// PNG through gnuplot when it is installed) and the settings file that repeats the run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "asn/sim/network.hpp"
#include "asn/sim/settings.hpp"

namespace asn::sim {

using Results = std::vector<std::optional<PointResult>>;

std::string csv(const Results& results);
std::string summary_table(const Results& results);
// Hotspot runs: per point, the accepted rate against the no-combining bound, the other
// requests' rate and latency, hot requests served and merges.
std::string hotspot_table(const Results& results);

// One plot: y against offered load, one polyline per mode.
enum class Metric : uint8_t { kAccepted, kLatencyMean, kLatencyP99 };
std::string svg_plot(const Settings& settings, const Results& results, Metric metric);

// Creates `dir` if needed and checks a file can be written there. SimError if not.
void prepare_output_dir(const std::string& dir);
// Writes results.csv, settings.yaml, throughput.svg, latency_mean.svg, latency_p99.svg and,
// when gnuplot is found, the same plots as PNG. Returns what it could not do (empty if all).
std::string write_outputs(const std::string& dir, const Settings& settings, const Results& results);

}  // namespace asn::sim

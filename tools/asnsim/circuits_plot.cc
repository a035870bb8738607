#include "circuits_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace {

constexpr double kW = 720, kH = 440, kLeft = 70, kRight = 150, kTop = 40, kBottom = 50;
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

struct Range {
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
  double at(double v, double from, double to) const {
    return hi > lo ? from + (v - lo) / (hi - lo) * (to - from) : (from + to) / 2;
  }
};

}  // namespace

std::string circuits_svg(
    const std::map<std::string, std::vector<std::pair<double, double>>>& series,
    const std::string& title, const std::string& y_label, bool log_y) {
  const auto fy = [&](double y) { return log_y ? std::log10(std::max(y, 1e-9)) : y; };
  Range xs, ys;
  for (const auto& [name, pts] : series) {
    for (const auto& [x, y] : pts) xs.add(x), ys.add(fy(y));
  }
  if (!log_y) ys.lo = std::min(ys.lo, 0.0);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kW) + "\" height=\"" +
                  num(kH) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(kW / 2) + "\" y=\"22\" text-anchor=\"middle\">" + title + "</text>\n";
  const double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop;
  s += "<rect x=\"" + num(x0) + "\" y=\"" + num(y1) + "\" width=\"" + num(x1 - x0) +
       "\" height=\"" + num(y0 - y1) + "\" fill=\"none\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // axis labels at the ends and three between
    const double xv = xs.lo + (xs.hi - xs.lo) * i / 4, yv = ys.lo + (ys.hi - ys.lo) * i / 4;
    s += "<text x=\"" + num(xs.at(xv, x0, x1)) + "\" y=\"" + num(y0 + 18) +
         "\" text-anchor=\"middle\">" + num(xv) + "</text>\n";
    s += "<text x=\"" + num(x0 - 6) + "\" y=\"" + num(ys.at(yv, y0, y1) + 4) +
         "\" text-anchor=\"end\">" + num(log_y ? std::pow(10, yv) : yv) + "</text>\n";
  }
  s += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(kH - 10) +
       "\" text-anchor=\"middle\">requests per node per time unit</text>\n";
  s += "<text x=\"14\" y=\"" + num((y0 + y1) / 2) + "\" transform=\"rotate(-90 14 " +
       num((y0 + y1) / 2) + ")\" text-anchor=\"middle\">" + y_label + "</text>\n";
  size_t k = 0;
  for (const auto& [name, pts] : series) {
    const char* colour = kColours[k % std::size(kColours)];
    s += "<polyline fill=\"none\" stroke=\"" + std::string(colour) +
         "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : pts)
      s += num(xs.at(x, x0, x1)) + "," + num(ys.at(fy(y), y0, y1)) + " ";
    s += "\"/>\n<text x=\"" + num(x1 + 10) + "\" y=\"" + num(y1 + 16 + 18.0 * k) + "\" fill=\"" +
         colour + "\">" + name + "</text>\n";
    ++k;
  }
  return s + "</svg>\n";
}

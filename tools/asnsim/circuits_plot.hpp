// The plots of `asnsim circuits`: y against request rate, one polyline per protocol (and hold
// time), as 002's Fig 3.4 draws them. lib/sim's svg_plot is bound to its own results type.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

// series: name -> (x, y) points in increasing x. log_y for latency, which spans decades past
// saturation.
std::string circuits_svg(
    const std::map<std::string, std::vector<std::pair<double, double>>>& series,
    const std::string& title, const std::string& y_label, bool log_y);

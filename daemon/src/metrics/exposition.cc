#include "metrics/exposition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace asn::metrics {

namespace {

bool valid_name(std::string_view name, bool colon_allowed) {
  if (name.empty()) return false;
  auto first = [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (colon_allowed && c == ':');
  };
  if (!first(name.front())) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [&](char c) { return first(c) || (c >= '0' && c <= '9'); });
}

// Integers (every value asnd exports today) print without an exponent or a fraction;
// the rest as the shortest text that reads back the same.
std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<int64_t>(value));
  }
  return fmt::format("{}", value);
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Exposition::family(std::string_view name, Type type, std::string_view help) {
  if (!valid_name(name, true)) {
    throw std::logic_error(fmt::format("metric name \"{}\" is not [a-zA-Z_:][a-zA-Z0-9_:]*", name));
  }
  const bool total = name.size() > 6 && name.substr(name.size() - 6) == "_total";
  if ((type == Type::kCounter) != total) {
    throw std::logic_error(
        fmt::format("metric {}: a counter's name, and only its, ends in _total", name));
  }
  if (std::find(declared_.begin(), declared_.end(), name) != declared_.end()) {
    throw std::logic_error(fmt::format("metric {} declared twice", name));
  }
  declared_.emplace_back(name);
  current_ = name;
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                       type == Type::kCounter ? "counter" : "gauge");
}

void Exposition::sample(const Labels& labels, double value) {
  if (current_.empty()) throw std::logic_error("a metric sample before any family");
  text_ += current_;
  if (!labels.empty()) {
    text_ += '{';
    bool first = true;
    for (const auto& [name, v] : labels) {
      if (!valid_name(name, false) || name.starts_with("__")) {
        throw std::logic_error(fmt::format("metric {}: label name \"{}\"", current_, name));
      }
      if (!first) text_ += ',';
      first = false;
      text_ += fmt::format("{}=\"{}\"", name, escape_label_value(v));
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += format_value(value);
  text_ += '\n';
}

}  // namespace asn::metrics

// The Prometheus text exposition format (version 0.0.4), written by hand: asnd has no client
// library (Debian 12 has no prometheus-cpp), and the format is small: per family a `# HELP`
// line, a `# TYPE` line, then its samples `name{label="value",...} value`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asn::metrics {

enum class Type { kCounter, kGauge };

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value as the format wants it: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view value);
// HELP text: backslash and newline escaped.
std::string escape_help(std::string_view help);

// Builds one scrape's text. Each family is declared once, before its samples; a sample of a
// family other than the last declared, or a name or label that breaks the naming rules
// ([a-zA-Z_:][a-zA-Z0-9_:]*, labels without the reserved "__" prefix), throws
// std::logic_error: those are asnd's bugs, never the operator's input.
class Exposition {
 public:
  // A counter's name ends in "_total" (checked).
  void family(std::string_view name, Type type, std::string_view help);
  void sample(const Labels& labels, double value);
  void sample(double value) { sample({}, value); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::string current_;  // the family samples go to
  std::vector<std::string> declared_;
};

}  // namespace asn::metrics

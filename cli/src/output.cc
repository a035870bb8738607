#include "output.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace asnctl {

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::add_row(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::print(std::FILE* out, int indent) const {
  std::vector<size_t> widths(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::fprintf(out, "%s\n", line.c_str());
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

void KeyValues::add(std::string key, std::string value) {
  items_.emplace_back(std::move(key), std::move(value));
}

void KeyValues::print(std::FILE* out, int indent) const {
  size_t width = 0;
  for (const auto& [key, value] : items_) width = std::max(width, key.size());
  for (const auto& [key, value] : items_) {
    std::fprintf(out, "%*s%s:%*s%s\n", indent, "", key.c_str(),
                 static_cast<int>(width - key.size() + 2), "", value.c_str());
  }
}

std::string hex(uint64_t value, int digits) {
  return strprintf("0x%0*llx", digits, static_cast<unsigned long long>(value));
}

std::string hex_and_decimal(uint64_t value, uint32_t width_bits) {
  int digits = width_bits == 0 ? 0 : static_cast<int>((width_bits + 3) / 4);
  return strprintf("%s (%llu)", hex(value, digits).c_str(), static_cast<unsigned long long>(value));
}

std::string format_duration(uint64_t seconds) {
  const uint64_t days = seconds / 86400;
  const uint64_t hours = seconds / 3600 % 24;
  const uint64_t minutes = seconds / 60 % 60;
  const uint64_t secs = seconds % 60;
  std::string out;
  auto add = [&out](uint64_t n, const char* unit) {
    if (!out.empty()) out += ' ';
    out += std::to_string(n) + unit;
  };
  if (days > 0) add(days, "d");
  if (days > 0 || hours > 0) add(hours, "h");
  if (days > 0 || hours > 0 || minutes > 0) add(minutes, "m");
  add(secs, "s");
  return out;
}

std::string strprintf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(static_cast<size_t>(std::max(size, 0)), '\0');
  std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

std::string to_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    throw std::runtime_error("cannot print " + message.GetTypeName() +
                             " as JSON: " + status.ToString());
  }
  // protobuf indents by one space per level; two read better. Strings hold no raw
  // newlines (JSON escapes them), so every space after a newline is indentation.
  std::string indented;
  indented.reserve(out.size() * 3 / 2);
  bool line_start = true;
  for (char c : out) {
    if (line_start && c == ' ') {
      indented += "  ";
      continue;
    }
    line_start = c == '\n';
    indented += c;
  }
  while (!indented.empty() && indented.back() == '\n') indented.pop_back();
  return indented;
}

std::string without_empty_list(const std::string& json, std::string_view key) {
  const std::string field = "\"" + std::string(key) + "\": []";
  std::vector<std::string> kept;
  size_t start = 0;
  while (start <= json.size()) {
    size_t end = json.find('\n', start);
    if (end == std::string::npos) end = json.size();
    std::string line = json.substr(start, end - start);
    start = end + 1;
    // One field a line, and strings hold no raw newline: a line is the field or is not.
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const std::string_view field_text = std::string_view(line).substr(indent);
    if (field_text == field + ",") continue;
    if (field_text == field) {  // the last field: the one before it loses its comma
      if (!kept.empty() && kept.back().ends_with(',')) kept.back().pop_back();
      continue;
    }
    kept.push_back(std::move(line));
  }
  std::string out;
  for (const auto& line : kept) out += (out.empty() ? "" : "\n") + line;
  return out;
}

void print_json(const google::protobuf::Message& message) {
  std::printf("%s\n", to_json(message).c_str());
}

void print_json_array_text(const std::vector<std::string>& elements) {
  if (elements.empty()) {
    std::printf("[]\n");
    return;
  }
  std::string out = "[\n";
  for (size_t i = 0; i < elements.size(); ++i) {
    // Indent each element's lines by two spaces inside the array.
    out += "  ";
    for (char c : elements[i]) {
      out += c;
      if (c == '\n') out += "  ";
    }
    out += i + 1 < elements.size() ? ",\n" : "\n";
  }
  out += "]\n";
  std::fputs(out.c_str(), stdout);
}

void print_desired_state_outcome(bool dry_run, bool changed, uint64_t revision) {
  const auto rev = static_cast<unsigned long long>(revision);
  if (dry_run) {
    std::printf("dry run: nothing was changed (desired state revision %llu)\n", rev);
  } else if (!changed) {
    std::printf("unchanged: it is already so (desired state revision %llu)\n", rev);
  } else {
    std::printf("desired state revision %llu: kept across restarts and board resets\n", rev);
  }
}

std::string frequency(uint64_t hz) {
  if (hz >= 1000000 && hz % 1000000 == 0) return std::to_string(hz / 1000000) + " MHz";
  return std::to_string(hz) + " Hz";
}

}  // namespace asnctl

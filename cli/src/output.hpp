// Output for people (aligned tables, key-value blocks) and for programs (JSON of the
// response messages).
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace asnctl {

enum class OutputFormat { kTable, kJson };

// Columns aligned on the widest cell, separated by two spaces, with a header row. No
// colors: the output is the same on a terminal and in a pipe.
class Table {
 public:
  explicit Table(std::vector<std::string> header);

  void add_row(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }

  // `indent` spaces in front of every line.
  void print(std::FILE* out, int indent = 0) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "label:  value" lines with the values aligned, as `systemctl status` shows them.
class KeyValues {
 public:
  void add(std::string key, std::string value);
  void print(std::FILE* out, int indent = 2) const;

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

// 0x-prefixed hex, zero-padded to `digits` (no padding for 0).
std::string hex(uint64_t value, int digits = 0);

// A register value as "0x0000002a (42)": hex padded to the value's width, then decimal.
std::string hex_and_decimal(uint64_t value, uint32_t width_bits);

// "3d 4h 5m 6s", leaving out leading zero units ("42s", "5m 0s").
std::string format_duration(uint64_t seconds);
// A clock rate: "125 MHz" when whole megahertz, else "1234 Hz".
std::string frequency(uint64_t hz);

// The last line of a change to asnd's desired state: a dry run, a change that changed
// nothing, or the revision now kept across restarts and board resets.
void print_desired_state_outcome(bool dry_run, bool changed, uint64_t revision);

// Printf into a std::string.
std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

// A message as indented JSON with the .proto field names and every field (zeros and empty
// strings too); 64-bit integers are strings, as the proto3 JSON mapping has it.
std::string to_json(const google::protobuf::Message& message);

// `json` (to_json's) without the fields `"key": []`: a list the command did not ask for,
// which printed empty would read as "there are none".
std::string without_empty_list(const std::string& json, std::string_view key);

// Prints to stdout: one message, or a JSON array of messages.
void print_json(const google::protobuf::Message& message);
template <typename M>
void print_json_array(const std::vector<M>& messages);

void print_json_array_text(const std::vector<std::string>& elements);

template <typename M>
void print_json_array(const std::vector<M>& messages) {
  std::vector<std::string> elements;
  elements.reserve(messages.size());
  for (const auto& m : messages) elements.push_back(to_json(m));
  print_json_array_text(elements);
}

}  // namespace asnctl

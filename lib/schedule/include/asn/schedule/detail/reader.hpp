// Typed access to the YAML tree with errors that carry the file, line, column and the key
// path ("phases[1].slot_length"), and say what would be accepted. Shared by the plan reader,
// the fabric file reader and lib/fabric_spec, so that their errors read alike.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "asn/schedule/detail/yaml_tree.hpp"
#include "asn/schedule/error.hpp"
#include "asn/schedule/plan.hpp"
#include "asn/schedule/plan_file.hpp"

namespace asn::schedule::detail {

// "a.b" and "a[3]".
std::string child_field(const std::string& field, std::string_view key);
std::string index_field(const std::string& field, size_t index);

// A map's entries after checking the keys against the known ones.
struct MapView {
  const YamlNode* node = nullptr;
  std::string field;
  std::vector<std::pair<const YamlNode*, const YamlNode*>> entries;  // key, value

  const YamlNode* get(std::string_view key) const;  // the value, or nullptr
  const YamlNode* key(std::string_view key) const;  // the key node, or nullptr
  std::string field_of(std::string_view key) const { return child_field(field, key); }
};

class YamlReader {
 public:
  YamlReader(std::string file, const ParseLimits& limits)
      : file_(std::move(file)), limits_(limits) {}

  const std::string& file() const { return file_; }
  const ParseLimits& limits() const { return limits_; }

  // Throws PlanError at the node (plus `column_offset` columns into a scalar's text).
  [[noreturn]] void fail(const YamlNode& node, const std::string& field, std::string message,
                         uint32_t column_offset = 0) const;
  [[noreturn]] void fail_at(Mark mark, const std::string& field, std::string message) const;

  // A map whose keys are all in `known` (an unknown key fails with a suggestion; a key
  // given twice fails naming the first). `example` shows what a right value looks like.
  MapView map(const YamlNode& node, const std::string& field,
              std::initializer_list<std::string_view> known, std::string_view example) const;
  // A sequence (a null value counts as empty).
  const std::vector<YamlNode>& sequence(const YamlNode& node, const std::string& field,
                                        std::string_view example) const;
  const std::string& scalar(const YamlNode& node, const std::string& field,
                            std::string_view example) const;
  uint64_t integer(const YamlNode& node, const std::string& field, uint64_t min,
                   uint64_t max) const;
  int64_t signed_integer(const YamlNode& node, const std::string& field, int64_t min,
                         int64_t max) const;
  bool boolean(const YamlNode& node, const std::string& field) const;
  // 1-64 characters of A-Z a-z 0-9 _ . -
  std::string name(const YamlNode& node, const std::string& field) const;
  Length length(const YamlNode& node, const std::string& field) const;

  // Adds to the count of connections in the plan; fails at `node` past max_connections.
  void spend_connections(uint64_t count, const YamlNode& node, const std::string& field,
                         std::string_view what);

 private:
  std::string file_;
  const ParseLimits& limits_;
  uint64_t connections_ = 0;
};

// What a node is, for "expected X (got a list)".
std::string_view describe_kind(const YamlNode& node);

}  // namespace asn::schedule::detail

// A bounded YAML reader: yaml-cpp's event parser feeding a small tree of our own, so that
// every limit of ParseLimits is enforced while parsing (yaml-cpp's own node tree would be
// built in full first, at several hundred bytes a node, and expands aliases).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/schedule/plan_file.hpp"

namespace asn::schedule::detail {

struct YamlNode {
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  bool quoted = false;  // a scalar written in quotes (its text starts one column later)
  Mark mark;
  std::string scalar;
  std::vector<YamlNode> children;  // a sequence's items; a map's keys and values alternating

  bool is_map() const { return kind == Kind::kMap; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_null() const { return kind == Kind::kNull; }
};

// Parses the one YAML document of `text`. An empty text gives a null node. Throws
// PlanError (file, line, column) on a YAML syntax error, a second document, an alias, a key
// that is not a scalar, or any limit passed.
YamlNode read_yaml(std::string_view text, const std::string& file, const ParseLimits& limits);

}  // namespace asn::schedule::detail

#include "asn/schedule/detail/reader.hpp"

#include <charconv>

#include "text.hpp"

namespace asn::schedule::detail {

std::string child_field(const std::string& field, std::string_view key) {
  return field.empty() ? std::string(key) : cat(field, ".", key);
}

std::string index_field(const std::string& field, size_t index) {
  return cat(field, "[", index, "]");
}

const YamlNode* MapView::get(std::string_view name) const {
  for (const auto& [k, v] : entries) {
    if (k->scalar == name) return v;
  }
  return nullptr;
}

const YamlNode* MapView::key(std::string_view name) const {
  for (const auto& [k, v] : entries) {
    if (k->scalar == name) return k;
  }
  return nullptr;
}

std::string_view describe_kind(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::kNull:
      return "nothing";
    case YamlNode::Kind::kScalar:
      return "a single value";
    case YamlNode::Kind::kSequence:
      return "a list";
    case YamlNode::Kind::kMap:
      return "a map of keys";
  }
  return "?";
}

void YamlReader::fail_at(Mark mark, const std::string& field, std::string message) const {
  Problem problem;
  problem.file = file_;
  problem.mark = mark;
  problem.field = field;
  problem.message = std::move(message);
  throw PlanError(std::move(problem));
}

void YamlReader::fail(const YamlNode& node, const std::string& field, std::string message,
                      uint32_t column_offset) const {
  Mark mark = node.mark;
  if (mark.known()) mark.column += column_offset + (node.quoted ? 1 : 0);
  fail_at(mark, field, std::move(message));
}

MapView YamlReader::map(const YamlNode& node, const std::string& field,
                        std::initializer_list<std::string_view> known,
                        std::string_view example) const {
  MapView view;
  view.node = &node;
  view.field = field;
  if (node.is_null()) return view;
  if (!node.is_map()) {
    fail(node, field, cat("expected keys such as ", example, " (got ", describe_kind(node), ")"));
  }
  std::vector<std::string> names(known.begin(), known.end());
  for (size_t i = 0; i + 1 < node.children.size(); i += 2) {
    const YamlNode& key = node.children[i];
    std::string key_field = child_field(field, key.scalar);
    bool is_known = false;
    for (auto k : known) is_known = is_known || key.scalar == k;
    if (!is_known) {
      fail(key, key_field, cat("unknown key", did_you_mean(key.scalar, names)));
    }
    if (const YamlNode* first = view.key(key.scalar)) {
      fail(key, key_field, cat("given twice (first at line ", first->mark.line, ")"));
    }
    view.entries.emplace_back(&key, &node.children[i + 1]);
  }
  return view;
}

const std::vector<YamlNode>& YamlReader::sequence(const YamlNode& node, const std::string& field,
                                                  std::string_view example) const {
  static const std::vector<YamlNode> kEmpty;
  if (node.is_null()) return kEmpty;
  if (!node.is_sequence()) {
    fail(node, field, cat("expected a list such as ", example, " (got ", describe_kind(node), ")"));
  }
  return node.children;
}

const std::string& YamlReader::scalar(const YamlNode& node, const std::string& field,
                                      std::string_view example) const {
  if (!node.is_scalar()) {
    fail(node, field, cat("expected ", example, " (got ", describe_kind(node), ")"));
  }
  return node.scalar;
}

uint64_t YamlReader::integer(const YamlNode& node, const std::string& field, uint64_t min,
                             uint64_t max) const {
  std::string expected = cat("a whole number from ", min, " to ", max);
  const std::string& text = scalar(node, field, expected);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    fail(node, field, cat(quote(text), " is not ", expected));
  }
  return value;
}

int64_t YamlReader::signed_integer(const YamlNode& node, const std::string& field, int64_t min,
                                   int64_t max) const {
  std::string expected = cat("a whole number from ", min, " to ", max);
  const std::string& text = scalar(node, field, expected);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    fail(node, field, cat(quote(text), " is not ", expected));
  }
  return value;
}

bool YamlReader::boolean(const YamlNode& node, const std::string& field) const {
  const std::string& text = scalar(node, field, "on or off");
  if (text == "true" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "no" || text == "off") return false;
  fail(node, field, cat(quote(text), " is not on or off (also: true/false, yes/no)"));
}

std::string YamlReader::name(const YamlNode& node, const std::string& field) const {
  const std::string& text = scalar(node, field, "a name such as 'halo-exchange'");
  bool ok = !text.empty() && text.size() <= 64;
  for (char c : text) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-');
  }
  if (!ok) fail(node, field, cat(quote(text), " is not a name: use 1-64 of A-Z a-z 0-9 _ . -"));
  return text;
}

Length YamlReader::length(const YamlNode& node, const std::string& field) const {
  const std::string& text =
      scalar(node, field, "a length such as '1 us', '500 ns' or '125 cycles'");
  std::string why;
  std::optional<Length> length = parse_length(text, &why);
  if (!length) {
    fail(node, field,
         cat(quote(text), " is not a length: ", why,
             " (write a number and a unit: '2 us', '500 ns', '1.5 ms', '250 cycles')"));
  }
  length->mark = node.mark;
  return *length;
}

void YamlReader::spend_connections(uint64_t count, const YamlNode& node, const std::string& field,
                                   std::string_view what) {
  if (count > limits_.max_connections || connections_ + count > limits_.max_connections) {
    fail(node, field,
         cat(what, " makes ", count, " connections; with the ", connections_,
             " before it that passes the plan's limit of ", limits_.max_connections,
             " (max_connections)"));
  }
  connections_ += count;
}

}  // namespace asn::schedule::detail

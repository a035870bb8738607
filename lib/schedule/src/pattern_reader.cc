#include "pattern_reader.hpp"

#include "generators.hpp"
#include "text.hpp"

namespace asn::schedule::detail {
namespace {

constexpr std::string_view kConnectionSyntax =
    " (a connection is 'IN -> OUT' such as '3 -> 5', data from input 3 to output 5, or "
    "'OUT <- IN' such as '5 <- 3'; in a pattern, 'x2' after it repeats it)";
constexpr uint64_t kMaxRepeat = 65535;

struct ParsedConnection {
  uint32_t from = 0;
  uint32_t to = 0;
  uint64_t count = 1;
};

// "3 -> 5", "5 <- 3", "3->5 x2". Errors point at the column of the offending character.
class ConnectionText {
 public:
  ConnectionText(const YamlReader& reader, const YamlNode& node, const std::string& field)
      : reader_(reader),
        node_(node),
        field_(field),
        text_(reader.scalar(node, field, cat("a connection such as '3 -> 5'", kConnectionSyntax))) {
  }

  ParsedConnection parse(bool allow_count) {
    ParsedConnection c;
    uint64_t first = port();
    skip_spaces();
    bool forward = text_.compare(at_, 2, "->") == 0;
    if (!forward && text_.compare(at_, 2, "<-") != 0) fail("expected '->' or '<-'");
    at_ += 2;
    uint64_t second = port();
    c.from = static_cast<uint32_t>(forward ? first : second);
    c.to = static_cast<uint32_t>(forward ? second : first);
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == 'x') {
      if (!allow_count) {
        fail("a repeat count belongs in a pattern; a slot makes each connection once");
      }
      ++at_;
      size_t start = at_;
      c.count = number(kMaxRepeat, "a repeat count");
      if (c.count == 0) fail_at(start, "a repeat count is at least 1");
      skip_spaces();
    }
    if (at_ != text_.size()) fail("unexpected text");
    return c;
  }

 private:
  void skip_spaces() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t')) ++at_;
  }

  uint64_t port() {
    skip_spaces();
    return number(reader_.limits().max_port, "a port number");
  }

  uint64_t number(uint64_t max, std::string_view what) {
    size_t start = at_;
    uint64_t value = 0;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
      value = value * 10 + static_cast<uint64_t>(text_[at_] - '0');
      if (value > max) fail_at(start, cat(what, " is at most ", max));
      ++at_;
    }
    if (at_ == start) fail(cat("expected ", what));
    return value;
  }

  [[noreturn]] void fail(std::string_view message) { fail_at(at_, message); }

  [[noreturn]] void fail_at(size_t column, std::string_view message) {
    std::string rest = column < text_.size() ? cat(" at ", quote(text_.substr(column))) : "";
    reader_.fail(node_, field_, cat(quote(text_), ": ", message, rest, kConnectionSyntax),
                 static_cast<uint32_t>(column));
  }

  const YamlReader& reader_;
  const YamlNode& node_;
  const std::string& field_;
  const std::string& text_;
  size_t at_ = 0;
};

// `ports:` of a generator: a count N (ports 0..N-1), a range "A..B", or a list.
std::vector<uint32_t> read_ports(const YamlReader& reader, const YamlNode& node,
                                 const std::string& field) {
  const uint32_t max_port = reader.limits().max_port;
  constexpr std::string_view kForms =
      " (ports: a count N for ports 0..N-1, a range such as '8..15', or a list such as "
      "[0, 2, 4])";
  std::vector<uint32_t> ports;
  if (node.is_sequence()) {
    std::vector<bool> seen(size_t{max_port} + 1, false);
    for (size_t i = 0; i < node.children.size(); ++i) {
      std::string item_field = index_field(field, i);
      auto port = static_cast<uint32_t>(reader.integer(node.children[i], item_field, 0, max_port));
      if (seen[port])
        reader.fail(node.children[i], item_field, cat("port ", port, " is listed twice"));
      seen[port] = true;
      ports.push_back(port);
    }
    return ports;
  }
  const std::string& text = reader.scalar(node, field, cat("ports", kForms));
  size_t dots = text.find("..");
  if (dots == std::string::npos) {
    auto count = static_cast<uint32_t>(reader.integer(node, field, 1, uint64_t{max_port} + 1));
    for (uint32_t p = 0; p < count; ++p) ports.push_back(p);
    return ports;
  }
  YamlNode low = node;
  low.scalar = text.substr(0, dots);
  YamlNode high = node;
  high.scalar = text.substr(dots + 2);
  uint64_t first = reader.integer(low, field, 0, max_port);
  uint64_t last = reader.integer(high, field, 0, max_port);
  if (first > last) reader.fail(node, field, cat(quote(text), " is an empty range", kForms));
  for (uint64_t p = first; p <= last; ++p) ports.push_back(static_cast<uint32_t>(p));
  return ports;
}

const YamlNode& required(const YamlReader& reader, const MapView& params, const YamlNode& at,
                         std::string_view key, std::string_view example) {
  const YamlNode* value = params.get(key);
  if (value == nullptr) {
    reader.fail(at, params.field, cat("needs '", key, ":' (", example, ")"));
  }
  return *value;
}

// A grid generator's `rows`, `cols` and `ports` (default 0..rows*cols-1).
struct Grid {
  uint32_t rows = 0;
  uint32_t cols = 0;
  std::vector<uint32_t> ports;
};

Grid read_grid(const YamlReader& reader, const MapView& params, const YamlNode& at,
               std::string_view example) {
  Grid grid;
  const uint64_t most = uint64_t{reader.limits().max_port} + 1;
  grid.rows = static_cast<uint32_t>(reader.integer(required(reader, params, at, "rows", example),
                                                   params.field_of("rows"), 1, most));
  grid.cols = static_cast<uint32_t>(reader.integer(required(reader, params, at, "cols", example),
                                                   params.field_of("cols"), 1, most));
  uint64_t nodes = uint64_t{grid.rows} * grid.cols;
  if (nodes > most) {
    reader.fail(at, params.field,
                cat(grid.rows, " x ", grid.cols, " is more than ", most, " ports"));
  }
  if (const YamlNode* ports = params.get("ports")) {
    grid.ports = read_ports(reader, *ports, params.field_of("ports"));
    if (grid.ports.size() != nodes) {
      reader.fail(*ports, params.field_of("ports"),
                  cat("lists ", grid.ports.size(), " ports for a ", grid.rows, " x ", grid.cols,
                      " grid of ", nodes));
    }
  } else {
    for (uint32_t p = 0; p < nodes; ++p) grid.ports.push_back(p);
  }
  return grid;
}

// What a generator makes: connections between positions of its port list.
struct Generated {
  std::vector<uint32_t> ports;
  std::vector<IndexPair> pairs;
};

// Each generator reads its parameters (`value`, under `field`), checks the connection budget
// before expanding, and expands. Errors about the whole generator point at its key.
Generated all_to_all_of(YamlReader& reader, const YamlNode& key, const YamlNode& value,
                        const std::string& field) {
  constexpr std::string_view kExample = "e.g. 'all_to_all: {ports: 16}'";
  MapView params = reader.map(value, field, {"ports"}, kExample);
  Generated g;
  g.ports = read_ports(reader, required(reader, params, key, "ports", kExample),
                       params.field_of("ports"));
  reader.spend_connections(all_to_all_count(g.ports.size()), key, field, "all_to_all");
  all_to_all(static_cast<uint32_t>(g.ports.size()), g.pairs);
  return g;
}

Generated shift_of(YamlReader& reader, const YamlNode& key, const YamlNode& value,
                   const std::string& field) {
  constexpr std::string_view kExample = "e.g. 'shift: {ports: 16, by: 1}'";
  MapView params = reader.map(value, field, {"ports", "by"}, kExample);
  Generated g;
  g.ports = read_ports(reader, required(reader, params, key, "ports", kExample),
                       params.field_of("ports"));
  const YamlNode& by_node = required(reader, params, key, "by", kExample);
  int64_t by = reader.signed_integer(by_node, params.field_of("by"), -65536, 65536);
  if (by % static_cast<int64_t>(g.ports.size()) == 0) {
    reader.fail(by_node, params.field_of("by"),
                cat("shifting ", g.ports.size(), " ports by ", by,
                    " connects every port to itself; use a shift that is not a multiple of the "
                    "port count"));
  }
  reader.spend_connections(g.ports.size(), key, field, "shift");
  shift(static_cast<uint32_t>(g.ports.size()), by, g.pairs);
  return g;
}

Generated transpose_of(YamlReader& reader, const YamlNode& key, const YamlNode& value,
                       const std::string& field) {
  constexpr std::string_view kExample = "e.g. 'transpose: {rows: 4, cols: 8}'";
  MapView params = reader.map(value, field, {"rows", "cols", "ports"}, kExample);
  Grid grid = read_grid(reader, params, key, kExample);
  reader.spend_connections(grid.ports.size(), key, field, "transpose");
  Generated g;
  transpose(grid.rows, grid.cols, g.pairs);
  g.ports = std::move(grid.ports);
  return g;
}

Generated mesh_of(YamlReader& reader, const YamlNode& key, const YamlNode& value,
                  const std::string& field) {
  constexpr std::string_view kExample = "e.g. 'mesh: {rows: 4, cols: 4, wrap: off}'";
  MapView params = reader.map(value, field, {"rows", "cols", "wrap", "ports"}, kExample);
  Grid grid = read_grid(reader, params, key, kExample);
  bool wrap = false;
  if (const YamlNode* w = params.get("wrap")) wrap = reader.boolean(*w, params.field_of("wrap"));
  reader.spend_connections(mesh_count(grid.rows, grid.cols, wrap), key, field, "mesh");
  Generated g;
  mesh(grid.rows, grid.cols, wrap, g.pairs);
  g.ports = std::move(grid.ports);
  return g;
}

void read_generator(YamlReader& reader, const YamlNode& node, const std::string& field,
                    std::vector<Connection>& out) {
  constexpr std::string_view kKinds =
      "'all_to_all: {ports: 16}', 'shift: {ports: 16, by: 1}', "
      "'transpose: {rows: 4, cols: 4}' or 'mesh: {rows: 4, cols: 4}'";
  MapView generator = reader.map(node, field, {"all_to_all", "shift", "transpose", "mesh"}, kKinds);
  if (generator.entries.size() != 1) {
    reader.fail(node, field, cat("a generator is exactly one of ", kKinds));
  }
  const YamlNode& key = *generator.entries[0].first;
  const YamlNode& value = *generator.entries[0].second;
  const std::string kind_field = child_field(field, key.scalar);
  Generated g = key.scalar == "all_to_all"  ? all_to_all_of(reader, key, value, kind_field)
                : key.scalar == "shift"     ? shift_of(reader, key, value, kind_field)
                : key.scalar == "transpose" ? transpose_of(reader, key, value, kind_field)
                                            : mesh_of(reader, key, value, kind_field);
  for (const auto& p : g.pairs) out.push_back({g.ports[p.from], g.ports[p.to], key.mark});
}

}  // namespace

std::vector<Connection> read_pattern(YamlReader& reader, const YamlNode& node,
                                     const std::string& field) {
  const auto& items =
      reader.sequence(node, field, "['0 -> 1', '1 -> 0 x2', {all_to_all: {ports: 16}}]");
  std::vector<Connection> pattern;
  for (size_t i = 0; i < items.size(); ++i) {
    const YamlNode& item = items[i];
    std::string item_field = index_field(field, i);
    if (item.is_map()) {
      read_generator(reader, item, item_field, pattern);
      continue;
    }
    if (!item.is_scalar()) {
      reader.fail(item, item_field,
                  cat("expected a connection such as '3 -> 5' or a generator such as "
                      "'all_to_all: {ports: 16}' (got ",
                      describe_kind(item), ")"));
    }
    ParsedConnection c = ConnectionText(reader, item, item_field).parse(true);
    reader.spend_connections(c.count, item, item_field, "the connection");
    for (uint64_t k = 0; k < c.count; ++k) pattern.push_back({c.from, c.to, item.mark});
  }
  return pattern;
}

std::vector<Slot> read_slots(YamlReader& reader, const YamlNode& node, const std::string& field) {
  const auto& items = reader.sequence(node, field, "[['0 -> 1', '1 -> 0'], ['0 -> 2'], []]");
  if (items.size() > reader.limits().max_slots) {
    reader.fail(node, field,
                cat(items.size(), " slots is more than the limit of ", reader.limits().max_slots,
                    " (max_slots; tdm.slots_in_use is 16 bits)"));
  }
  std::vector<Slot> slots(items.size());
  for (size_t k = 0; k < items.size(); ++k) {
    const YamlNode& item = items[k];
    std::string slot_field = index_field(field, k);
    slots[k].mark = item.mark;
    if (item.is_null()) continue;
    if (!item.is_sequence()) {
      reader.fail(item, slot_field,
                  cat("a slot is a list of connections such as ['0 -> 1', '2 -> 3'], or [] when "
                      "empty (got ",
                      describe_kind(item), ")"));
    }
    reader.spend_connections(item.children.size(), item, slot_field, "the slot");
    for (size_t i = 0; i < item.children.size(); ++i) {
      const YamlNode& c_node = item.children[i];
      ParsedConnection c = ConnectionText(reader, c_node, index_field(slot_field, i)).parse(false);
      slots[k].connections.push_back({c.from, c.to, c_node.mark});
    }
  }
  return slots;
}

}  // namespace asn::schedule::detail

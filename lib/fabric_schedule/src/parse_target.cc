// parse_target(): the fabric target as asnctl's --fabric and CompileSchedule's
// fabric_target spell it.
#include <charconv>
#include <string>

#include "asn/fabric_schedule/target.hpp"
#include "asn/text/text.hpp"

namespace asn::fabric_schedule {
namespace {

constexpr const char* kAccepted =
    "accepted: torus:XxY, 2dfb:N:k[:minimal], fat-tree:LEVELS:W, crossbar:PORTS, linear:NODES";

// The numbers of "a:b:c" (or "a x b" for the torus) after the kind.
std::vector<uint64_t> numbers(std::string_view text, char separator, std::string_view spec,
                              std::string* tail) {
  std::vector<uint64_t> out;
  while (!text.empty()) {
    uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data()) {
      if (tail != nullptr && !out.empty()) {
        *tail = std::string(text);
        return out;
      }
      throw std::invalid_argument("fabric target " + text::quoted(spec) +
                                  ": expected a number at " + text::quoted(text) + "; " +
                                  kAccepted);
    }
    out.push_back(value);
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (!text.empty() && text.front() == separator) text.remove_prefix(1);
  }
  return out;
}

uint32_t small(uint64_t value, std::string_view spec) {
  if (value > (uint64_t{1} << 31)) {
    throw std::invalid_argument("fabric target " + text::quoted(spec) + ": " +
                                std::to_string(value) + " is too large");
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

std::unique_ptr<Target> parse_target(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  auto bad = [&] {
    // Quoted (escaped): the spec comes from a request, and what() ends at a NUL.
    return std::invalid_argument("fabric target " + text::quoted(spec) + ": " + kAccepted);
  };
  std::string tail;
  if (kind == "torus") {
    auto n = numbers(rest, 'x', spec, nullptr);
    if (n.size() != 2) throw bad();
    return make_torus(small(n[0], spec), small(n[1], spec));
  }
  if (kind == "2dfb") {
    auto n = numbers(rest, ':', spec, &tail);
    if (n.size() != 2 || !(tail.empty() || tail == "minimal")) throw bad();
    return make_flattened_butterfly(n[0], small(n[1], spec), tail.empty());
  }
  if (kind == "fat-tree") {
    auto n = numbers(rest, ':', spec, nullptr);
    if (n.size() != 2) throw bad();
    return make_fat_tree(small(n[0], spec), small(n[1], spec));
  }
  if (kind == "crossbar" || kind == "linear") {
    auto n = numbers(rest, ':', spec, nullptr);
    if (n.size() != 1) throw bad();
    return kind == "crossbar" ? make_crossbar(small(n[0], spec))
                              : make_linear_array(small(n[0], spec));
  }
  throw bad();
}

}  // namespace asn::fabric_schedule

#include "parse.hpp"

#include <CLI/CLI.hpp>
#include <cctype>
#include <map>
#include <string>

#include "errors.hpp"
#include "output.hpp"

namespace asnctl {

std::optional<uint64_t> parse_number(std::string_view text, uint64_t max) {
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    if (value > (max - digit) / base) return std::nullopt;
    value = value * base + digit;
  }
  return value;
}

asn::v1::RegisterRef parse_ref(std::string_view item) {
  asn::v1::RegisterRef ref;
  if (item.empty()) throw UsageError("an empty register name");
  if (std::isdigit(static_cast<unsigned char>(item[0]))) {
    auto offset = parse_number(item, UINT32_MAX);
    if (!offset) {
      throw UsageError("bad offset '" + std::string(item) +
                       "': expected a decimal number or 0x hex up to 0xffffffff");
    }
    ref.set_offset(static_cast<uint32_t>(*offset));
  } else {
    ref.set_name(std::string(item));
  }
  return ref;
}

asn::v1::RegisterWrite parse_write(std::string_view item) {
  auto eq = item.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError("'" + std::string(item) + "' is not NAME=VALUE (or OFFSET=VALUE)");
  }
  std::string_view target = item.substr(0, eq);
  std::string_view value_text = item.substr(eq + 1);
  if (target.empty()) {
    throw UsageError("'" + std::string(item) + "' names no register before '='");
  }
  auto value = parse_number(value_text);
  if (!value) {
    throw UsageError("bad value '" + std::string(value_text) + "' in '" + std::string(item) +
                     "': expected a decimal number or 0x hex up to 64 bits");
  }
  asn::v1::RegisterWrite write;
  *write.mutable_ref() = parse_ref(target);
  write.set_value(*value);
  return write;
}

std::string describe_ref(const asn::v1::RegisterRef& ref) {
  switch (ref.target_case()) {
    case asn::v1::RegisterRef::kName:
      return ref.name();
    case asn::v1::RegisterRef::kOffset:
      return hex(ref.offset());
    default:
      return "(empty)";
  }
}

std::vector<uint32_t> parse_port_list(std::string_view text) {
  constexpr uint64_t kMaxPort = 254;
  std::vector<uint32_t> ports;
  auto bad = [&](const std::string& why) {
    throw UsageError("ports '" + std::string(text) + "': " + why +
                     " (expected e.g. 3, 0-5 or 1,4,7)");
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t dash = item.find('-');
    const auto first = parse_number(item.substr(0, dash), kMaxPort);
    const auto last =
        dash == std::string_view::npos ? first : parse_number(item.substr(dash + 1), kMaxPort);
    if (!first || !last) bad("'" + std::string(item) + "' is not a port number 0-254 or a range");
    if (*last < *first) bad("the range '" + std::string(item) + "' runs backwards");
    for (uint64_t p = *first; p <= *last; ++p) ports.push_back(static_cast<uint32_t>(p));
    if (ports.size() > kMaxPort + 1) bad("more than 255 ports");
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ports;
}

uint64_t parse_bytes(const std::string& what, const std::string& text) {
  std::string digits = text;
  uint64_t scale = 1;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K':
      case 'k':
        scale = uint64_t{1} << 10;
        break;
      case 'M':
        scale = uint64_t{1} << 20;
        break;
      case 'G':
        scale = uint64_t{1} << 30;
        break;
      case 'T':
        scale = uint64_t{1} << 40;
        break;
      default:
        break;
    }
    if (scale != 1) digits.pop_back();
  }
  size_t used = 0;
  uint64_t value = 0;
  try {
    value = std::stoull(digits, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (digits.empty() || used != digits.size() || digits[0] == '-' ||
      (scale != 1 && value > UINT64_MAX / scale)) {
    throw UsageError(what + ": '" + text +
                     "' is not a byte count (decimal or 0x hex, optionally with K, M, G or T)");
  }
  return value * scale;
}

void add_channels_option(CLI::App* sub, std::string& channels) {
  sub->add_option("--channels", channels, "dilated (two channels A, B) or double-rate")
      ->transform(CLI::Transformer(std::map<std::string, std::string>{{"double", "double-rate"}})
                      .description(""))
      ->check(CLI::IsMember({"dilated", "double-rate"}).description(""));
}

}  // namespace asnctl

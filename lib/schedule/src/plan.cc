#include "asn/schedule/plan.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::array<std::string_view, 4> kPolicyNames = {"fixed", "ses", "sla", "preempt"};
constexpr std::array<std::string_view, 2> kAlgorithmNames = {"optimal", "greedy"};

struct UnitName {
  std::string_view name;
  LengthUnit unit;
};
// "µs" is accepted too; written back as "us".
constexpr std::array<UnitName, 6> kUnits = {{{"ns", LengthUnit::kNanoseconds},
                                             {"us", LengthUnit::kMicroseconds},
                                             {"\xc2\xb5s", LengthUnit::kMicroseconds},
                                             {"ms", LengthUnit::kMilliseconds},
                                             {"cycles", LengthUnit::kCycles},
                                             {"cycle", LengthUnit::kCycles}}};

constexpr int kMaxDecimals = 9;
constexpr int kMaxDigits = 18;  // so that the digits fit in 64 bits with room to spare

// Powers of ten of the unit below one second: ns 9, us 6, ms 3; cycles 0.
int unit_exponent(LengthUnit unit) {
  switch (unit) {
    case LengthUnit::kNanoseconds:
      return 9;
    case LengthUnit::kMicroseconds:
      return 6;
    case LengthUnit::kMilliseconds:
      return 3;
    case LengthUnit::kCycles:
      return 0;
  }
  return 0;
}

unsigned __int128 pow10(int exponent) {
  unsigned __int128 value = 1;
  for (int i = 0; i < exponent; ++i) value *= 10;
  return value;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::string_view to_string(Policy policy) { return kPolicyNames[static_cast<size_t>(policy)]; }

std::optional<Policy> parse_policy(std::string_view text) {
  std::string name = lower(text);
  for (size_t i = 0; i < kPolicyNames.size(); ++i) {
    if (name == kPolicyNames[i]) return static_cast<Policy>(i);
  }
  return std::nullopt;
}

std::string_view to_string(Algorithm algorithm) {
  return kAlgorithmNames[static_cast<size_t>(algorithm)];
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  std::string name = lower(text);
  for (size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (name == kAlgorithmNames[i]) return static_cast<Algorithm>(i);
  }
  return std::nullopt;
}

std::string_view to_string(Method method) {
  switch (method) {
    case Method::kExplicit:
      return "explicit";
    case Method::kClosedForm:
      return "closed form";
    case Method::kColouring:
      return "edge colouring";
    case Method::kGreedy:
      return "greedy (000 Ch. 5)";
  }
  return "?";
}

std::string Length::to_string() const {
  std::string number = std::to_string(digits);
  if (decimals > 0) {
    uint64_t scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10;
    std::string fraction = std::to_string(digits % scale);
    number = cat(digits / scale, ".", std::string(decimals - fraction.size(), '0'), fraction);
  }
  switch (unit) {
    case LengthUnit::kCycles:
      return number + (digits == 1 && decimals == 0 ? " cycle" : " cycles");
    case LengthUnit::kNanoseconds:
      return number + " ns";
    case LengthUnit::kMicroseconds:
      return number + " us";
    case LengthUnit::kMilliseconds:
      return number + " ms";
  }
  return number;
}

std::optional<Cycles> to_cycles(const Length& length, uint64_t clock_hz, Rounding rounding) {
  // cycles = digits / 10^decimals * clock_hz / 10^unit_exponent (cycles: no clock).
  const bool time = length.unit != LengthUnit::kCycles;
  unsigned __int128 numerator = length.digits;
  if (time) numerator *= clock_hz;
  unsigned __int128 denominator = pow10(length.decimals + unit_exponent(length.unit));
  unsigned __int128 quotient = numerator / denominator;
  unsigned __int128 remainder = numerator % denominator;
  if (rounding == Rounding::kUp && remainder != 0) ++quotient;
  if (rounding == Rounding::kNearest && remainder * 2 >= denominator) ++quotient;
  if (quotient > UINT64_MAX) return std::nullopt;
  return Cycles{static_cast<uint64_t>(quotient), remainder == 0};
}

std::optional<Length> parse_length(std::string_view text, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Length> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  std::string_view rest = trim(text);
  Length length;
  int significant = 0;
  auto digit = [&](char c) {
    if (length.digits != 0 || c != '0') ++significant;  // leading zeros do not count
    length.digits = length.digits * 10 + static_cast<uint64_t>(c - '0');
    return significant <= kMaxDigits;
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  bool whole = false;
  for (; i < rest.size() && is_digit(rest[i]); ++i) {
    whole = true;
    if (!digit(rest[i])) return fail(cat("more than ", kMaxDigits, " digits"));
  }
  if (i < rest.size() && rest[i] == '.') {
    size_t fraction = ++i;
    for (; i < rest.size() && is_digit(rest[i]); ++i) {
      if (!digit(rest[i])) return fail(cat("more than ", kMaxDigits, " digits"));
      if (++length.decimals > kMaxDecimals) {
        return fail(cat("more than ", kMaxDecimals, " decimals"));
      }
    }
    if (i == fraction) return fail("a decimal point needs digits after it");
  } else if (!whole) {
    return fail("it does not start with a number");
  }
  std::string_view unit = trim(rest.substr(i));
  if (unit.empty()) {
    return fail("it has no unit: cycles, or a time that the board's clock turns into cycles");
  }
  for (const auto& u : kUnits) {
    if (unit == u.name) {
      length.unit = u.unit;
      if (length.unit == LengthUnit::kCycles && length.decimals > 0) {
        // "1.50 cycles" is whole; "1.5 cycles" is not.
        while (length.decimals > 0 && length.digits % 10 == 0) {
          length.digits /= 10;
          --length.decimals;
        }
        if (length.decimals > 0) return fail("cycles are whole: drop the fraction");
      }
      return length;
    }
  }
  return fail(cat("unknown unit ", detail::quote(unit), " (units: ns, us, ms, cycles)"));
}

const Part* Phase::find_part(std::string_view switch_name) const {
  for (const auto& part : parts) {
    if (part.switch_name == switch_name) return &part;
  }
  return nullptr;
}

uint32_t Phase::slot_count() const {
  size_t count = 0;
  for (const auto& part : parts) count = std::max(count, part.slots.size());
  return static_cast<uint32_t>(count);
}

const Phase* Plan::find_phase(std::string_view phase_name) const {
  for (const auto& phase : phases) {
    if (phase.name == phase_name) return &phase;
  }
  return nullptr;
}

}  // namespace asn::schedule

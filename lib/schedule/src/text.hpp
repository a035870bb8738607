// Small string helpers for messages; suggestions and quoting are asn_text's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/text/text.hpp"

namespace asn::schedule::detail {

using text::did_you_mean;
using text::join;

// Throws a PlanError of one problem at `mark` of `file` (the file's own checks, before any
// field is known: the prescan and the YAML tree).
[[noreturn]] void fail(const std::string& file, Mark mark, std::string message);

// Outside text quoted for a message: escaped, and cut after 40 bytes.
inline std::string quote(std::string_view text) { return text::quoted(text, 40); }

inline void append(std::string& out, std::string_view text) { out += text; }
inline void append(std::string& out, const char* text) { out += text; }
inline void append(std::string& out, const std::string& text) { out += text; }
inline void append(std::string& out, char c) { out += c; }
template <typename T>
requires std::is_integral_v<T>
void append(std::string& out, T value) { out += std::to_string(value); }

// cat("slot ", 3, " of ", name): the pieces concatenated.
template <typename... Args>
std::string cat(const Args&... args) {
  std::string out;
  (append(out, args), ...);
  return out;
}

}  // namespace asn::schedule::detail

// Small string helpers for the lock library's messages; quoting of outside text is asn_text's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "asn/locks/range.hpp"
#include "asn/text/text.hpp"

namespace asn::locks::detail {

// A 128-bit count or end in decimal.
std::string decimal(uint128 value);

// A file id as it may appear in a message: escaped, quoted, cut after 40 bytes.
inline std::string quote(std::string_view file) { return text::quoted(file, 40); }

inline void append(std::string& out, std::string_view text) { out += text; }
inline void append(std::string& out, const char* text) { out += text; }
inline void append(std::string& out, const std::string& text) { out += text; }
template <typename T>
requires std::is_integral_v<T>
void append(std::string& out, T value) { out += std::to_string(value); }

// cat("range ", 3, " is empty"): the pieces concatenated.
template <typename... Args>
std::string cat(const Args&... args) {
  std::string out;
  (append(out, args), ...);
  return out;
}

}  // namespace asn::locks::detail

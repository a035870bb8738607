// Small string helpers for messages (the library depends on nothing but yaml-cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace asn::schedule::detail {

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

// "'a', 'b' and 'c'" style listing: "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// " (did you mean 'x'?)" for the closest candidate within a few edits, else
// " (one of: a, b, c)"; "" without candidates.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

// The text quoted for a message, shortened to at most 40 characters.
std::string quote(std::string_view text);

}  // namespace asn::schedule::detail

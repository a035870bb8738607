// Text for messages, shared by asnd, asnctl and the libraries: did-you-mean suggestions,
// and strings from outside (a client, a file) made safe to echo.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace asn::text {

// Levenshtein distance.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate within a few edits of `wrong` (the closest), if any. Candidates whose length
// alone rules them out are not compared, so a hostile input costs no quadratic work.
std::optional<std::string> closest(std::string_view wrong,
                                   const std::vector<std::string>& candidates);

// " (did you mean 'scratch'?)" when one candidate is close, else " (one of: a, b, c)";
// "" without candidates.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

// Outside text as it may appear in a message or a log line: control characters, quotes,
// backslashes and bytes past ASCII escaped (\n, \x00, ...), cut after `max_bytes` with "...".
std::string escaped(std::string_view text, size_t max_bytes = 80);
// The same in single quotes, with the full length after a cut one: 'abc...' (3000000 bytes).
std::string quoted(std::string_view text, size_t max_bytes = 80);

// A whole message made safe to carry and print: control bytes written as escaped() writes
// them (\x00), its own line breaks and tabs and UTF-8 left as they are, nothing cut. The
// error types pass their messages through it: what() is a C string, so a NUL from a
// request would end the message there.
std::string printable(std::string_view message);

// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

inline void append(std::string& out, std::string_view text) { out += text; }
inline void append(std::string& out, const char* text) { out += text; }
inline void append(std::string& out, const std::string& text) { out += text; }
inline void append(std::string& out, char c) { out += c; }
template <typename T>
requires std::is_integral_v<T>
void append(std::string& out, T value) { out += std::to_string(value); }

// cat("slot ", 3, " of ", name): the pieces of a message concatenated, numbers in decimal.
template <typename... Args>
std::string cat(const Args&... args) {
  std::string out;
  (append(out, args), ...);
  return out;
}

}  // namespace asn::text

// Text for messages: did-you-mean suggestions, and client strings made safe to echo.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace asn {

// Levenshtein distance.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate within a few edits of `wrong` (the closest), if any.
std::optional<std::string> closest(std::string_view wrong,
                                   const std::vector<std::string>& candidates);

// " (did you mean 'scratch'?)" when one candidate is close, else " (one of: a, b, c)".
// Inputs longer than any candidate could be close to are not compared (no quadratic work
// on a hostile name).
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

// A client-supplied string as it may appear in a message or a log line: control
// characters, quotes, backslashes and bytes past ASCII escaped (\n, \x00, ...), cut after
// `max_bytes` of input with "...".
std::string escaped(std::string_view text, size_t max_bytes = 80);
// The same in single quotes, with the full length after a cut one: 'abc...' (3000000 bytes).
std::string quoted(std::string_view text, size_t max_bytes = 80);

}  // namespace asn

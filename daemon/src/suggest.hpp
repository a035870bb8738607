// "Did you mean" for names people type: registers, fields, config keys.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace asn {

size_t edit_distance(std::string_view a, std::string_view b);

// " (did you mean 'x'?)" for the closest candidate within a few edits, else
// " (one of: a, b, c)"; "" when there are no candidates.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates);

}  // namespace asn

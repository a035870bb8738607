// Small string helpers for messages; suggestions and quoting are asn_text's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "asn/schedule/plan.hpp"
#include "asn/text/text.hpp"

namespace asn::schedule::detail {

using text::cat;
using text::did_you_mean;
using text::join;

// Throws a PlanError of one problem at `mark` of `file` (the file's own checks, before any
// field is known: the prescan and the YAML tree).
[[noreturn]] void fail(const std::string& file, Mark mark, std::string message);

// Outside text quoted for a message: escaped, and cut after 40 bytes.
inline std::string quote(std::string_view text) { return text::quoted(text, 40); }

}  // namespace asn::schedule::detail

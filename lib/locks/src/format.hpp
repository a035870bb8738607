// Small string helpers for the lock library's messages; quoting of outside text is asn_text's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "asn/locks/range.hpp"
#include "asn/text/text.hpp"

namespace asn::locks::detail {

// A 128-bit count or end in decimal.
std::string decimal(uint128 value);

// A file id as it may appear in a message: escaped, quoted, cut after 40 bytes.
inline std::string quote(std::string_view file) { return text::quoted(file, 40); }

using text::cat;

}  // namespace asn::locks::detail

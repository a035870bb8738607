// A pass over the raw text before yaml-cpp sees it, enforcing the limits yaml-cpp would
// otherwise exceed slowly: file size, NUL bytes, line count and length, and the size of a
// flow collection ([...] or {...}) and of a quoted scalar, which yaml-cpp reads in full
// (holding a few hundred bytes a token) before it reports any of their contents.
#pragma once

#include <string>
#include <string_view>

#include "asn/schedule/plan_file.hpp"

namespace asn::schedule::detail {

// Throws PlanError at the place a limit is passed.
void prescan(std::string_view text, const std::string& file, const ParseLimits& limits);

}  // namespace asn::schedule::detail

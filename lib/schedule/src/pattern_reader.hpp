// The parts of a plan file that list connections: `pattern:` (connections and generators)
// and `slots:` (explicit slots). Internal to the parser.
#pragma once

#include <string>
#include <vector>

#include "asn/schedule/detail/reader.hpp"
#include "asn/schedule/plan.hpp"

namespace asn::schedule::detail {

std::vector<Connection> read_pattern(YamlReader& reader, const YamlNode& node,
                                     const std::string& field);

std::vector<Slot> read_slots(YamlReader& reader, const YamlNode& node, const std::string& field);

}  // namespace asn::schedule::detail

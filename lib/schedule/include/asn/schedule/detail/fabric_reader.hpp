// The fabric file's shared part (name, switches' names, endpoints and timeouts, arm_margin)
// read from a YAML tree, for lib/fabric_spec: it reads the same file once and adds the
// topology, routing, routers and profiles, so that both readers agree on this part and
// word its errors alike.
#pragma once

#include <string>

#include "asn/schedule/detail/yaml_tree.hpp"
#include "asn/schedule/fabric_file.hpp"

namespace asn::schedule::detail {

// As parse_fabric_file, from a tree read_yaml gave. Throws PlanError.
FabricFile read_fabric_file(const YamlNode& root, std::string file);

}  // namespace asn::schedule::detail

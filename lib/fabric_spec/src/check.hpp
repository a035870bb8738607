// The checks of a fabric spec as a whole, shared by the file reader (which adds where in the
// file each finding is) and the document reader (which has no file).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/fabric_spec/lock_map.hpp"

namespace asn::fabric::detail {

struct Finding {
  std::string switch_name;  // "" for the fabric's own settings
  // The field, within the switch ("router", "profile") or the file ("topology.k",
  // "routing.thresholds.4", "fabric").
  std::string key;
  std::string message;  // what is wrong and what would be accepted
};

// Every finding, switches in the spec's order.
std::vector<Finding> check_spec(const FabricSpec& spec);

// The lock map's assignments: slot ranges within 0..kLockSlots-1 that do not overlap, each
// owned by a switch (one of `switches`, when given). Fields are "locks.owners[i].slots|switch".
void check_lock_map(const LockMap& map, const std::set<std::string, std::less<>>* switches,
                    std::vector<Finding>& findings);

// [a-z0-9][a-z0-9._-]{0,62}: a fabric or switch name that is one etcd key segment.
bool is_key_segment(std::string_view name);

}  // namespace asn::fabric::detail

// The fabric's lock map (issue 25, item 6): which switch serves the locks of which files.
//
// The seed's metadata server names the switch that owns a file's locks (004 L1192-1262); we
// have no metadata server, so the fabric file does, as Redis Cluster does with hash slots: a
// file id's slot is lock_slot(id), FNV-1a 64 of its bytes modulo kLockSlots, and the map gives
// each slot range an owning switch. A client (libasnclient) computes the same slot.
//
// Epochs: every assignment carries the map epoch at which its switch got its slots, numbered
// by `asnctl fabric apply` (number_lock_map) from what etcd held before: a slot that keeps its
// owner keeps its epoch, a slot that changes owner gets one above every epoch the map ever
// had. A switch serves a slot only at the epoch etcd holds for it, so an owner that missed a
// move (it was stopped, or cut off) learns from the epoch that its table is stale.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "asn/fabric/v1/fabric.pb.h"
#include "asn/fabric_spec/lock_slot.hpp"

namespace asn::fabric {

using LockMap = v1::LockMap;
using LockAssignment = v1::LockAssignment;

// <prefix>/fabrics/<name>/locks
std::string lock_map_key(std::string_view prefix, std::string_view fabric);
// <prefix>/fabrics/<name>/lock-tokens/<switch>: written by the switch's asnd only to move
// etcd's revision on, which its fencing tokens embed (daemon/src/locks/lock_manager_fabric.cc);
// its value is the switch's name and nothing reads it.
std::string lock_tokens_key(std::string_view prefix, std::string_view fabric,
                            std::string_view name);

// The assignment holding `slot`, or nullptr (no switch owns it).
const LockAssignment* lock_owner(const LockMap& map, uint32_t slot);

// Numbers `wanted`'s epochs against the map etcd holds (`stored`, null: none): an assignment
// whose every slot had the same owner keeps the highest epoch those slots had; any other gets
// stored.epoch + 1 (one new epoch per apply). wanted.epoch becomes the highest epoch ever. A
// wanted map with no assignments where etcd holds one keeps its epoch: epochs never go down.
void number_lock_map(LockMap& wanted, const LockMap* stored);

// A lock map document back from etcd; throws std::invalid_argument when it is not one, or its
// assignments are not ascending, disjoint, within 0..kLockSlots-1, each with an owner.
LockMap parse_lock_map_document(std::string_view json);

}  // namespace asn::fabric

// The lock map: slots, epochs and its checks (asn/fabric_spec/lock_map.hpp).
#include "asn/fabric_spec/lock_map.hpp"

#include <algorithm>
#include <stdexcept>

#include "asn/text/text.hpp"
#include "check.hpp"

namespace asn::fabric {

using text::cat;

std::string lock_map_key(std::string_view prefix, std::string_view fabric) {
  return cat(prefix, "/fabrics/", fabric, "/locks");
}

std::string lock_tokens_key(std::string_view prefix, std::string_view fabric,
                            std::string_view name) {
  return cat(prefix, "/fabrics/", fabric, "/lock-tokens/", name);
}

const LockAssignment* lock_owner(const LockMap& map, uint32_t slot) {
  for (const LockAssignment& a : map.assignments()) {
    if (a.first_slot() <= slot && slot <= a.last_slot()) return &a;
  }
  return nullptr;
}

void number_lock_map(LockMap& wanted, const LockMap* stored) {
  const uint64_t before = stored != nullptr ? stored->epoch() : 0;
  bool moved = false;
  for (LockAssignment& a : *wanted.mutable_assignments()) {
    // Kept only if every slot of it had this owner: then the highest epoch they had.
    uint64_t kept = 0;
    bool same = stored != nullptr;
    for (uint32_t slot = a.first_slot(); same && slot <= a.last_slot(); ++slot) {
      const LockAssignment* was = lock_owner(*stored, slot);
      same = was != nullptr && was->owner() == a.owner();
      if (same) kept = std::max(kept, was->epoch());
    }
    if (same) {
      a.set_epoch(kept);
    } else {
      a.set_epoch(before + 1);
      moved = true;
    }
  }
  wanted.set_epoch(moved ? before + 1 : before);
}

namespace detail {

void check_lock_map(const LockMap& map, const std::set<std::string, std::less<>>* switches,
                    std::vector<Finding>& findings) {
  std::vector<std::pair<uint32_t, size_t>> by_first;  // first slot, index
  for (int i = 0; i < map.assignments_size(); ++i) {
    const LockAssignment& a = map.assignments(i);
    const std::string field = cat("locks.owners[", i, "]");
    if (a.first_slot() > a.last_slot() || a.last_slot() >= kLockSlots) {
      findings.push_back({"", cat(field, ".slots"),
                          cat("slots ", a.first_slot(), "-", a.last_slot(),
                              " is no slot range: give FIRST-LAST with 0 <= FIRST <= LAST <= ",
                              kLockSlots - 1, ", or one slot")});
      continue;
    }
    if (a.owner().empty() || (switches != nullptr && !switches->contains(a.owner()))) {
      findings.push_back({"", cat(field, ".switch"),
                          cat(a.owner().empty() ? std::string("no switch")
                                                : cat("switch ", text::quoted(a.owner(), 40)),
                              " is not a switch of this fabric: name one of its 'switches:'")});
    }
    by_first.emplace_back(a.first_slot(), static_cast<size_t>(i));
  }
  std::sort(by_first.begin(), by_first.end());
  for (size_t j = 1; j < by_first.size(); ++j) {
    const LockAssignment& prev = map.assignments(static_cast<int>(by_first[j - 1].second));
    const LockAssignment& next = map.assignments(static_cast<int>(by_first[j].second));
    if (next.first_slot() <= prev.last_slot()) {
      findings.push_back(
          {"", cat("locks.owners[", by_first[j].second, "].slots"),
           cat("slots ", next.first_slot(), "-", next.last_slot(), " (switch '", next.owner(),
               "') overlap slots ", prev.first_slot(), "-", prev.last_slot(), " (switch '",
               prev.owner(), "', locks.owners[", by_first[j - 1].second,
               "]): every slot has one owner; give ranges that do not overlap")});
    }
  }
}

}  // namespace detail
}  // namespace asn::fabric

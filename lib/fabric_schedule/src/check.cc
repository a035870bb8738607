// The independent conflict check: its own walk over the target's paths and its own set of
// (slot, resource) pairs, so that a bug in the compiler's tables cannot hide here.
#include <algorithm>
#include <string>

#include "asn/fabric_schedule/compile.hpp"

namespace asn::fabric_schedule {

std::optional<std::string> find_conflict(const Target& t, std::span<const Conn> conns,
                                         const Schedule& s) {
  if (s.slot_of.size() != conns.size() || s.path_of.size() != conns.size()) {
    return "the schedule has " + std::to_string(s.slot_of.size()) + " slots and " +
           std::to_string(s.path_of.size()) + " paths for " + std::to_string(conns.size()) +
           " connections";
  }
  // (slot, resource, connection), sorted: two alike in the first two are a conflict.
  std::vector<std::tuple<uint32_t, uint64_t, uint32_t>> uses;
  std::vector<uint32_t> links;
  for (uint32_t i = 0; i < conns.size(); ++i) {
    const Conn& c = conns[i];
    if (s.slot_of[i] >= s.slots) {
      return "connection " + std::to_string(i) + " is in slot " + std::to_string(s.slot_of[i]) +
             " of " + std::to_string(s.slots);
    }
    if (s.path_of[i] >= t.path_count(c.src, c.dst)) {
      return "connection " + std::to_string(i) + " has no path " + std::to_string(s.path_of[i]);
    }
    links.clear();
    t.path(c.src, c.dst, s.path_of[i], links);
    // Resource keys of the check's own: 0 send port, 1 receive port, 2 link.
    uses.emplace_back(s.slot_of[i], uint64_t{c.src} << 2 | 0, i);
    uses.emplace_back(s.slot_of[i], uint64_t{c.dst} << 2 | 1, i);
    for (uint32_t l : links) uses.emplace_back(s.slot_of[i], uint64_t{l} << 2 | 2, i);
  }
  std::sort(uses.begin(), uses.end());
  for (size_t j = 1; j < uses.size(); ++j) {
    const auto& [slot, key, a] = uses[j - 1];
    if (slot != std::get<0>(uses[j]) || key != std::get<1>(uses[j])) continue;
    static const char* kKinds[] = {"send port of terminal ", "receive port of terminal ", "link "};
    return "connections " + std::to_string(a) + " and " + std::to_string(std::get<2>(uses[j])) +
           " share the " + kKinds[key & 3] + std::to_string(key >> 2) + " in slot " +
           std::to_string(slot);
  }
  return std::nullopt;
}

}  // namespace asn::fabric_schedule

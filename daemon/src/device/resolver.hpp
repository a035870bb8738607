// The names operators use for registers ("port[2].control.enable",
// "tdm.slot_table[3].out[5]", "route.dest_table_active[0].w1") and byte offsets, resolved
// against a board's layout. Pure functions of a DeviceLayout: no bus access.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "device/layout.hpp"
#include "device/target.hpp"

namespace asn {

// Names longer than this are refused before any lookup.
inline constexpr size_t kMaxRegisterNameBytes = 256;

// Throw asn::Error: kInvalidArgument for a malformed name or offset, kNotFound for one that
// names nothing on this board (with the closest real name for a misspelling).
Target resolve_name(const DeviceLayout& layout, std::string_view name);
Target resolve_offset(const DeviceLayout& layout, uint32_t offset);

// Every target of the board in address order, a few at a time: registers (each array
// element, 64-bit registers as one value) and, when asked, every word of every implemented
// table and ring entry. `block` filters: "" all, "port" all ports, "port[2]" one (refused
// at construction when it names no block). A dump of millions of words never holds more
// than what next() returned.
class TargetCursor {
 public:
  TargetCursor(std::shared_ptr<const DeviceLayout> layout, std::string_view block,
               bool include_tables);
  ~TargetCursor();
  TargetCursor(TargetCursor&&) noexcept;
  TargetCursor& operator=(TargetCursor&&) noexcept;

  // Up to `max` more targets; empty once all were returned.
  std::vector<Target> next(size_t max);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// All of them at once.
std::vector<Target> enumerate_targets(const DeviceLayout& layout, std::string_view block,
                                      bool include_tables);

}  // namespace asn

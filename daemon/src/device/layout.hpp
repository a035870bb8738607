// What the Device knows about the board it drives, found by walking the block list (as
// Corundum's drivers do): the blocks with their versions, the capabilities and the map
// version. A DeviceLayout never changes once built; after a board reset the Device walks
// again and publishes a new one, so a reader holding a snapshot is never torn.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "bus/register_bus.hpp"

namespace asn {

struct DeviceBlock {
  const regmap::BlockDesc* desc;
  uint32_t base;
  unsigned index;    // port number for per-port blocks, else 0
  uint16_t version;  // as the board reports it; within desc->min_version..desc->version
  std::string name;  // "id", "port[3]"
};

// The capabilities the board reports (id.cap_count words), by index. A newer board may
// report more than this asnd knows (kept, shown by index); an older one fewer (absent).
class Capabilities {
 public:
  Capabilities() = default;
  Capabilities(const regmap::RegisterMap& map, std::vector<uint32_t> values)
      : map_(&map), values_(std::move(values)) {}

  bool has(regmap::Cap cap) const { return regmap::index_of(cap) < values_.size(); }
  // 0 when the board does not report it.
  uint32_t get(regmap::Cap cap) const { return has(cap) ? values_[regmap::index_of(cap)] : 0; }
  uint32_t get(uint16_t index) const { return index < values_.size() ? values_[index] : 0; }
  std::optional<uint32_t> find(std::string_view name) const;
  const std::vector<uint32_t>& values() const { return values_; }
  // The map's description of capability `index`, or nullptr for one this asnd does not know.
  const regmap::CapabilityDesc* desc(size_t index) const;

 private:
  const regmap::RegisterMap* map_ = nullptr;
  std::vector<uint32_t> values_;
};

struct DeviceLayout {
  const regmap::RegisterMap* map = nullptr;
  std::vector<DeviceBlock> blocks;  // address order
  Capabilities caps;
  uint16_t major = 0;
  uint16_t minor = 0;
  uint16_t kind = 0;

  // The instance of block `type`; block() throws kNotFound when the board has none.
  const DeviceBlock* find(uint16_t type, unsigned index = 0) const;
  const DeviceBlock& block(uint16_t type, unsigned index = 0) const;
  unsigned count(uint16_t type) const;
  // The board's ports, and every service's one answer to a port it lacks (issue 28): throws
  // kNotFound "port 6 does not exist: the board has ports 0 to 5", `then` appended.
  unsigned ports() const { return caps.get(regmap::Cap::kPorts); }
  void require_port(uint32_t port, std::string_view then = {}) const;
  // Entries of a table or ring the board implements: its entries_from capability, or the
  // fixed count of a table that has one.
  uint32_t entries(uint16_t entries_from, uint32_t fixed = 0) const {
    return entries_from == regmap::kFixedEntries ? fixed : caps.get(entries_from);
  }
  // The block an absolute offset falls in, and the offset within it.
  struct Located {
    const DeviceBlock* block;
    uint32_t rel;
  };
  std::optional<Located> locate(uint32_t offset) const;
  uint32_t end() const;  // one past the last block
};

// Walks the board's blocks. Throws asn::Error (kHardware) when the magic is wrong, the
// register map's major version or a block's version is one this asnd does not support, the
// block list is malformed (a loop, a block past the end), or a capability is beyond what
// the register map allows; the message names both the value found and the value expected.
std::shared_ptr<const DeviceLayout> walk_board(RegisterBus& bus, const regmap::RegisterMap& map);

// Name of a board kind or port medium from the register map ("netfpga-1g"), or "0x..".
std::string board_kind_name(uint32_t kind);
std::string port_media_name(uint32_t media);

}  // namespace asn

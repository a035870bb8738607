// The seam between asnd and a board: 32-bit reads and writes of the register space, and
// batches of them. Backends: EmulatedBus (the in-process model), later NetlinkBus (asn.ko).
// Nothing above the Device layer uses a bus directly.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace asn {

struct BusOp {
  enum class Kind : uint8_t { kRead, kWrite };
  Kind kind;
  uint32_t offset;
  uint32_t value;  // written, or filled in by a read

  static BusOp read(uint32_t offset) { return {Kind::kRead, offset, 0}; }
  static BusOp write(uint32_t offset, uint32_t value) { return {Kind::kWrite, offset, value}; }
};

class RegisterBus {
 public:
  virtual ~RegisterBus() = default;

  // What the bus reaches, for messages: "emulated board 'asn0' (netfpga-1g)".
  virtual std::string describe() const = 0;

  // Throw asn::Error (kHardware) on a bus error, naming the offset.
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;

  // Runs the operations in order as one transaction (no other bus user interleaves). Reads
  // fill in their value. Every operation is attempted, as a posted PCIe batch would be;
  // afterwards a failure throws asn::Error (kHardware) naming the first failing operation.
  virtual void execute(std::span<BusOp> ops) = 0;
};

}  // namespace asn

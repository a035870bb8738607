// The seam between asnd and a board: 32-bit reads and writes of the register space, batches
// of them, the identity of the board behind it, and the events the board signals.
// Backends: EmulatedBus (the in-process model), later the kernel bus (asn.ko over generic
// netlink). Nothing above the Device layer uses a bus directly.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace asn {

class StripeDataPort;

struct BusOp {
  enum class Kind : uint8_t { kRead, kWrite };
  Kind kind;
  uint32_t offset;
  uint32_t value;  // written, or filled in by a read

  static BusOp read(uint32_t offset) { return {Kind::kRead, offset, 0}; }
  static BusOp write(uint32_t offset, uint32_t value) { return {Kind::kWrite, offset, value}; }
};

// Which board a bus reaches, as the backend knows it (not as the configuration asked).
struct BoardIdentity {
  std::string backend;   // "emulated"
  std::string name;      // the board's name on this host
  std::string profile;   // the emulated board's profile; empty for real boards
  std::string location;  // where it lives: the memory file, or the PCI address
};

// What a board signals: its interrupts as the driver (or the emulated bus) receives them,
// and what it notices about the board itself.
struct BusEvent {
  enum class Kind : uint8_t {
    kBankSwapped,           // an armed or committed bank swap happened (block_type says where)
    kCompletionsAvailable,  // a from-board ring has new entries (block_type says which block)
    kLinkChange,            // a port's link went up or down
    kGenerationChanged,     // the board was reset: it forgot its configuration
    kBoardFailed,           // the board can no longer be used (detail says why)
    kReconnected,  // the bus lost the board (driver reloaded, board re-bound) and found the
                   // same board again (detail says how); it may have changed meanwhile
  };
  Kind kind;
  uint16_t block_type = 0;
  uint32_t generation = 0;  // kGenerationChanged: the new generation
  std::string detail;
};

const char* to_string(BusEvent::Kind kind);

class RegisterBus {
 public:
  virtual ~RegisterBus() = default;

  // What the bus reaches, for messages: "emulated board 'asn0' (netfpga-1g)".
  virtual std::string describe() const = 0;
  virtual BoardIdentity identity() const = 0;

  // Throw asn::Error (kHardware) on a bus error, naming the offset.
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;

  // Runs the operations in order as one transaction (no other bus user interleaves). Reads
  // fill in their value. Every operation is attempted, as a posted PCIe batch would be;
  // afterwards a failure throws asn::Error (kHardware) naming the first failing operation.
  virtual void execute(std::span<BusOp> ops) = 0;

  // Where the bus delivers events, on a thread of its own; the handler must return quickly.
  // Set it once, before events matter; an empty handler drops them.
  virtual void set_event_handler(std::function<void(const BusEvent&)> handler) = 0;

  // The striping data path's client side (bus/stripe_data_port.hpp): only the emulated
  // board has one; on a real board the data arrives on the ports, not through asnd.
  virtual StripeDataPort* stripe_data_port() { return nullptr; }
};

}  // namespace asn

// A bus for tests that forwards to another (the emulated board) but makes chosen words read
// differently, as a board with other firmware, damaged memory or none would, and counts
// writes.
#pragma once

#include <atomic>
#include <map>

#include "bus/register_bus.hpp"

namespace asn::test {

class PatchedBus final : public RegisterBus {
 public:
  explicit PatchedBus(RegisterBus& inner) : inner_(inner) {}
  std::map<uint32_t, uint32_t> patches;
  std::atomic<uint64_t> writes{0};   // read by a test while a server thread writes
  bool no_stripe_data_port = false;  // as a real board: file data never passes through asnd

  std::string describe() const override { return "patched " + inner_.describe(); }
  BoardIdentity identity() const override { return inner_.identity(); }
  void set_event_handler(std::function<void(const BusEvent&)>) override {}
  uint32_t read32(uint32_t offset) override {
    auto it = patches.find(offset);
    return it != patches.end() ? it->second : inner_.read32(offset);
  }
  void write32(uint32_t offset, uint32_t value) override {
    ++writes;
    inner_.write32(offset, value);
  }
  // The striping data path is the inner board's (patches are of registers only).
  StripeDataPort* stripe_data_port() override {
    return no_stripe_data_port ? nullptr : inner_.stripe_data_port();
  }
  void execute(std::span<BusOp> ops) override {
    for (auto& op : ops) {
      if (op.kind == BusOp::Kind::kRead) {
        op.value = read32(op.offset);
      } else {
        write32(op.offset, op.value);
      }
    }
  }

 private:
  RegisterBus& inner_;
};

}  // namespace asn::test

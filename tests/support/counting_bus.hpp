// A bus for tests that forwards to another and counts the transactions made on it (a batch
// is one; read32 and write32 one each).
#pragma once

#include "bus/register_bus.hpp"

namespace asn::test {

class CountingBus final : public RegisterBus {
 public:
  explicit CountingBus(RegisterBus& inner) : inner_(inner) {}
  int transactions = 0;
  std::string describe() const override { return inner_.describe(); }
  BoardIdentity identity() const override { return inner_.identity(); }
  void set_event_handler(std::function<void(const BusEvent&)>) override {}
  uint32_t read32(uint32_t offset) override {
    ++transactions;
    return inner_.read32(offset);
  }
  void write32(uint32_t offset, uint32_t value) override {
    ++transactions;
    inner_.write32(offset, value);
  }
  void execute(std::span<BusOp> ops) override {
    ++transactions;
    inner_.execute(ops);
  }

 private:
  RegisterBus& inner_;
};

}  // namespace asn::test

// The kernel backend: a RegisterBus over asn.ko's generic netlink family "asn" (libnl-genl-3).
// A batch of reads or writes is one netlink message (the driver checks it whole against the
// register map before the first access); a mixed batch is split into runs of one kind, in
// order. Events: set_event_handler() starts a thread on a second socket joined to the
// family's "events" group and maps each notification to a BusEvent.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "bus/register_bus.hpp"

struct nl_sock;

namespace asn {

struct KernelBusOptions {
  // The board's PCI address ("0000:03:00.0"); empty: the only board asn.ko has bound.
  std::string device;
};

class KernelBus final : public RegisterBus {
 public:
  // Throws asn::Error with a clear reason: no driver (family "asn" missing), no board (asn.ko
  // bound to none, or not to the one asked for).
  explicit KernelBus(const KernelBusOptions& options);
  ~KernelBus() override;
  KernelBus(const KernelBus&) = delete;
  KernelBus& operator=(const KernelBus&) = delete;

  std::string describe() const override;
  BoardIdentity identity() const override;
  uint32_t read32(uint32_t offset) override;
  void write32(uint32_t offset, uint32_t value) override;
  void execute(std::span<BusOp> ops) override;
  void set_event_handler(std::function<void(const BusEvent&)> handler) override;

 private:
  void run(std::span<BusOp> ops, bool write);  // one message, ops all of one kind
  void event_loop();                           // the event thread
  void stop_events();

  std::mutex mu_;
  nl_sock* sock_ = nullptr;
  int family_ = 0;
  uint32_t dev_index_ = 0;
  std::string name_;  // "asn0"
  std::string bdf_;
  int events_group_ = -1;
  std::function<void(const BusEvent&)> handler_;  // set before the thread starts
  nl_sock* events_sock_ = nullptr;
  int stop_pipe_[2] = {-1, -1};
  std::thread events_thread_;
};

}  // namespace asn

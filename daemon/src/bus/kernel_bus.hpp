// The kernel backend: a RegisterBus over asn.ko's generic netlink family "asn" (libnl-genl-3).
// A batch of reads or writes is one netlink message (the driver checks it whole against the
// register map before the first access); a mixed batch is split into runs of one kind, in
// order. Events: set_event_handler() starts a thread on a second socket joined to the
// family's "events" group and maps each notification to a BusEvent.
//
// The board is named by its PCI address and by the binding asn.ko gave it at probe (never by
// the driver's index, which names another board after a re-bind). When asn.ko refuses a
// request because the board or the driver went away or the board was bound again, the bus
// looks the board up again: the same board (PCI address, board kind, serial) is used on,
// and reported as a kReconnected event so that the reconciler checks it; another board at
// that address is never written, and every call fails, saying what was found, until the
// right one is back.
//
// Writes, and reads of clients' data, come only from the board's owner: the socket that
// showed asn.ko an fd of the board's node /dev/asn/BDF opened for writing. The node's group
// (asn, by udev) decides who may drive the board, not a capability; one owner at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

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
  struct Board {
    uint32_t index = 0;
    std::string name, pci;
    uint32_t kind = 0, owner_pid = 0;
    uint64_t serial = 0, binding = 0;
  };
  // Resolves the family (and its events group) again and lists its boards; throws
  // kUnavailable when the driver is not there.
  std::vector<Board> list_boards();
  // Finds this bus's board again after it was lost (mu_ held); throws kUnavailable while it
  // is missing or another board has its address.
  void reconnect(const std::string& why);
  // Makes this bus's socket the board's owner (ASN_CMD_BOARD_OWN with an fd of /dev/asn/BDF
  // opened for writing): only the owner writes, or reads clients' data.
  void own();
  void run(std::span<BusOp> ops, bool write);  // one message, ops all of one kind
  int send(std::span<BusOp> ops, bool write, std::string& message);
  void event_loop(int group);  // the event thread, joined to `group`
  void stop_events();

  std::mutex mu_;
  nl_sock* sock_ = nullptr;
  int family_ = 0;  // mu_
  mutable std::mutex name_mu_;
  std::string name_;  // "asn0" (name_mu_; may change when the board is bound again)
  std::string bdf_;
  uint32_t kind_ = 0;
  uint64_t serial_ = 0;
  uint64_t binding_ = 0;                     // mu_
  bool lost_ = false;                        // mu_: the next call looks the board up first
  std::atomic<bool> family_changed_{false};  // the events thread saw asn.ko go or come
  int events_group_ = -1;
  std::function<void(const BusEvent&)> handler_;  // set before the thread starts
  nl_sock* events_sock_ = nullptr;
  int stop_pipe_[2] = {-1, -1};
  std::thread events_thread_;
};

}  // namespace asn

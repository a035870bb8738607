// A network of switches whose links carry TDM circuits: the slots of every link, and the
// source's side of ReserveCircuit / ReleaseCircuit (validate, compose the first message).
// The messages then go hop by hop through handle() (protocol.hpp); deliver() is that for a
// carrier that keeps the whole network in one process (asnsim, the tests).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "asn/circuit/protocol.hpp"
#include "asn/circuit/slots.hpp"

namespace asn::circuit {

struct Link {
  uint32_t from = 0;
  uint32_t port = 0;  // from's output port
  uint32_t to = 0;
};

// ReserveCircuit(src, dst, slots, hold): the path is the output port taken at each switch
// from src on (the fabric's routing chose it).
struct Request {
  CircuitId id = 0;  // unique among the reservations in flight and the circuits (not 0)
  uint32_t src = 0;
  uint32_t dst = 0;
  std::vector<uint32_t> ports;
  Protocol protocol;
  uint64_t pick = 0;  // the source's random number
};

class Fabric {
 public:
  // Every link has `degree` slots (the multiplexing degree).
  Fabric(uint32_t nodes, uint32_t degree);

  uint32_t nodes() const { return nodes_; }
  uint32_t degree() const { return degree_; }
  // Adds the link from (from, port) to `to`; returns its index. CircuitError if a node does
  // not exist or the port is taken.
  uint32_t add_link(uint32_t from, uint32_t port, uint32_t to);
  const std::vector<Link>& links() const { return links_; }
  LinkSlots& slots(uint32_t link) { return slots_.at(link); }
  const LinkSlots& slots(uint32_t link) const { return slots_.at(link); }
  // The link leaving `node` by `port`, or -1.
  int64_t link_at(uint32_t node, uint32_t port) const;

  // The plan's slots on a link: never offered to a reservation.
  void preload(uint32_t link, SlotMask slots) { slots_.at(link).preload(slots); }

  // The path of `r`; CircuitError naming the field (src, dst, ports[i], id) if a node or port
  // does not exist, the ports do not lead from src to dst, or src == dst.
  std::shared_ptr<const Path> route(const Request& r) const;
  // The source's first message (forward RES, backward PROB). Validates as route() does and
  // the cset size: more slots than a link of the path leaves dynamic is ResourceExhausted.
  // Changes nothing.
  Message begin(const Request& r) const;
  // ReleaseCircuit: the REL of an established circuit, to deliver at the source.
  static Message release(const Message& first, uint32_t slot);

  // handle() at the switch the message is for, on the link it keeps.
  Step deliver(const Message& m);

 private:
  uint32_t nodes_;
  uint32_t degree_;
  std::vector<Link> links_;
  std::vector<LinkSlots> slots_;
  std::vector<std::vector<int64_t>> out_;  // out_[node][port] = link or -1
};

}  // namespace asn::circuit

// The path reservation protocols of 002 ch. 3 as per-switch hop logic: handle() takes one
// control message arriving at a switch and that switch's outgoing link on the path, updates
// the link's slots, and returns the messages to send on. asnd carries them over gRPC between
// neighbours, asnsim through its event queue; both run this code.
//
// Carrier's duties: deliver each message to path->nodes[at]; keep the order of one circuit's
// messages between two neighbours (a REL never overtakes the ACK before it); with holding,
// keep a held message and offer it again when its link frees a slot (Step::freed), and once
// more with expired = true once it has been held there, in all, the protocol's hold_time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asn/circuit/slots.hpp"

namespace asn::circuit {

// Forward: RES locks on the way to the destination (002 L432-439). Backward: PROB probes on
// the way there, RES locks on the way back (002 L462-471).
enum class Direction : uint8_t { kForward, kBackward };
// Dropping releases at once and tells the source; holding waits up to hold_time (002 L397-399).
enum class OnBlock : uint8_t { kDrop, kHold };
// How many slots the first RES.cset offers (002 L443, L475, L482-484, Table 3.1).
enum class CsetPolicy : uint8_t {
  kConservative,  // one slot
  kAggressive,    // every dynamic slot (forward) / all of PROB.init (backward)
  kOptimal,       // the seed's Table 3.1 (002 L533-539), its rule of thumb past it
  kSized,         // cset_size slots
};

struct Protocol {
  Direction direction = Direction::kBackward;
  OnBlock on_block = OnBlock::kDrop;
  CsetPolicy cset = CsetPolicy::kOptimal;
  uint32_t cset_size = 1;  // kSized only
  uint32_t hold_time = 0;  // kHold: time units a blocked RES waits at a switch
};

// "BDO", "FHA", ... (002 L497, L504: the names); parse_protocol throws CircuitError naming `field`.
std::string to_string(const Protocol& p);
Protocol parse_protocol(const std::string& name, const std::string& field);

// The initial cset size the policy asks for, given the multiplexing degree.
uint32_t cset_size(const Protocol& p, uint32_t degree);
// 002 L482-484: `size` consecutive slots (cyclically) of the slots of `from` in order, from a
// start chosen by `pick`; all of `from` when it has no more than `size`.
SlotMask cset_window(SlotMask from, uint32_t size, uint64_t pick);
// One slot of a non-empty `cset`, chosen by `pick` (the destination's / source's choice).
uint32_t pick_slot(SlotMask cset, uint64_t pick);

// The path of a circuit: links[i] leaves nodes[i] by port ports[i] for nodes[i + 1].
struct Path {
  std::vector<uint32_t> nodes;
  std::vector<uint32_t> ports;
  std::vector<uint32_t> links;  // the carrier's link index of each hop
  size_t hops() const { return links.size(); }
};

enum class Kind : uint8_t { kProb, kRes, kAck, kFail, kNack, kRel };
std::string to_string(Kind k);

struct Message {
  Kind kind = Kind::kRes;
  CircuitId id = 0;
  std::shared_ptr<const Path> path;
  uint32_t at = 0;    // index into path->nodes of the switch that processes it
  SlotMask cset = 0;  // RES.cset / PROB.init
  uint32_t slot = 0;  // ACK.channel, REL's slot
  Protocol protocol;
  uint32_t size = 1;        // the initial cset size (the destination's choice in backward)
  uint64_t pick = 0;        // the source's random number, for every choice along the path
  bool expired = false;     // a held RES offered for the last time
  uint32_t failed_hop = 0;  // FAIL / NACK: the hop whose link had no slot
};

struct Outcome {
  CircuitId id = 0;
  bool established = false;
  uint32_t slot = 0;        // established: the circuit's slot on every link of its path
  uint32_t failed_hop = 0;  // not: the hop (link index on the path) that had no slot
  std::string reason;       // not: why, for the operator
};

struct Step {
  std::vector<Message> send;    // each to be processed at path->nodes[m.at]
  std::optional<Outcome> done;  // the reservation ended at the source
  bool held = false;            // the switch keeps the message (holding; nothing changed)
  bool freed = false;           // slots of the outgoing link became AVAIL: retry held ones
};

// `outgoing`: the slots of path->links[m.at], null at the destination (m.at == hops()).
Step handle(const Message& m, LinkSlots* outgoing);

}  // namespace asn::circuit

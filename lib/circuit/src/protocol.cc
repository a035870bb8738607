// The per-switch hop logic of 002 ch. 3. Hop i's switch is path->nodes[i]; it keeps the slots
// of path->links[i], the link it sends on towards the destination (002 L411), so forward
// messages lock at the hop they arrive at and backward ones at the hop they arrive at too.
#include "asn/circuit/protocol.hpp"

#include <stdexcept>
#include <string>

namespace asn::circuit {

namespace {

Message next(const Message& m, Kind kind, uint32_t at) {
  Message out = m;
  out.kind = kind;
  out.at = at;
  out.expired = false;
  return out;
}

Outcome failed(const Message& m) {
  Outcome o;
  o.id = m.id;
  o.failed_hop = m.failed_hop;
  const std::string link = "link " + std::to_string(m.failed_hop) + " of the path (node " +
                           std::to_string(m.path->nodes[m.failed_hop]) + " port " +
                           std::to_string(m.path->ports[m.failed_hop]) + ")";
  o.reason = m.kind == Kind::kNack && m.protocol.direction == Direction::kBackward && m.cset == 0
                 ? "no slot free on every link: the probe found none left at " + link
                 : "no slot of the offered set free on " + link;
  if (m.expired) o.reason += " after holding " + std::to_string(m.protocol.hold_time);
  return o;
}

// Back towards the source: the message at hop `at` - 1, or the outcome at the source.
void to_source(Step& step, const Message& m, Kind kind) {
  if (m.at == 0) {
    Message here = next(m, kind, 0);
    here.expired = m.expired;
    step.done = failed(here);
  } else {
    step.send.push_back(next(m, kind, m.at - 1));
    step.send.back().expired = m.expired;  // for the reason the source gives
  }
}

// A RES or PROB that found no slot: hold it, or give up (dropping; 002 L432, L462).
bool blocked(Step& step, const Message& m, bool may_hold) {
  if (may_hold && m.protocol.on_block == OnBlock::kHold && !m.expired) {
    step.held = true;
    return true;
  }
  Message fail = m;
  fail.failed_hop = m.at;
  fail.cset = m.kind == Kind::kProb ? 0 : m.cset;
  if (m.protocol.direction == Direction::kForward) {
    // FAIL/NACK of the forward scheme unlocks on its way back (002 L426).
    to_source(step, fail, Kind::kFail);
  } else {
    // Backward: NACK to the source, FAIL to the destination to unlock what RES locked
    // on hops at + 1 .. (002 L462).
    to_source(step, fail, Kind::kNack);
    if (m.kind == Kind::kRes && m.at + 1 < m.path->hops()) {
      step.send.push_back(next(fail, Kind::kFail, m.at + 1));
    }
  }
  return false;
}

void established(Step& step, const Message& m, uint32_t slot) {
  Outcome o;
  o.id = m.id;
  o.established = true;
  o.slot = slot;
  step.done = o;
}

Step forward(const Message& m, LinkSlots* link);
Step backward(const Message& m, LinkSlots* link);

}  // namespace

Step handle(const Message& m, LinkSlots* outgoing) {
  if (!m.path || m.at > m.path->hops() || (outgoing == nullptr) != (m.at == m.path->hops())) {
    throw std::logic_error("circuit message delivered to a switch not on its path");
  }
  if (m.kind == Kind::kRel) {
    Step step;
    step.freed = outgoing->release(m.id, m.slot);
    if (m.at + 1 < m.path->hops()) step.send.push_back(next(m, Kind::kRel, m.at + 1));
    return step;
  }
  return m.protocol.direction == Direction::kForward ? forward(m, outgoing) : backward(m, outgoing);
}

namespace {

Step forward(const Message& m, LinkSlots* link) {
  Step step;
  switch (m.kind) {
    case Kind::kRes: {
      if (link == nullptr) {  // the destination chooses the slot (002 L437-439)
        step.send.push_back(next(m, Kind::kAck, m.at - 1));
        step.send.back().slot = pick_slot(m.cset, m.pick);
        return step;
      }
      const SlotMask c = m.cset & link->avail();
      if (c == 0) {
        blocked(step, m, true);
        return step;
      }
      link->lock(c, m.id);
      step.send.push_back(next(m, Kind::kRes, m.at + 1));
      step.send.back().cset = c;
      return step;
    }
    case Kind::kAck:
      if (!link->commit(m.id, m.slot)) throw std::logic_error("ACK of a slot not locked");
      step.freed = true;
      if (m.at == 0) {
        established(step, m, m.slot);
      } else {
        step.send.push_back(next(m, Kind::kAck, m.at - 1));
      }
      return step;
    case Kind::kFail:
      step.freed = link->unlock(m.id) > 0;
      to_source(step, m, Kind::kFail);
      return step;
    default:
      throw std::logic_error("forward reservation got a " + to_string(m.kind));
  }
}

// RES on its way back to the source: lock, or fail; at the source choose and ACK (002 L469-471).
Step backward_res(const Message& m, LinkSlots* link) {
  Step step;
  const SlotMask c = m.cset & link->avail();
  if (c == 0) {
    blocked(step, m, true);
    return step;
  }
  link->lock(c, m.id);
  if (m.at > 0) {
    step.send.push_back(next(m, Kind::kRes, m.at - 1));
    step.send.back().cset = c;
    return step;
  }
  const uint32_t slot = pick_slot(c, m.pick);
  link->commit(m.id, slot);
  step.freed = c != (SlotMask{1} << slot);
  established(step, m, slot);
  if (m.path->hops() > 1) {
    step.send.push_back(next(m, Kind::kAck, 1));
    step.send.back().slot = slot;
  }
  return step;
}

Step backward(const Message& m, LinkSlots* link) {
  Step step;
  switch (m.kind) {
    case Kind::kProb: {
      if (link == nullptr) {  // the destination forms RES from PROB.init (002 L462, L475, L484)
        Message res = next(m, Kind::kRes, m.at - 1);
        res.cset = cset_window(m.cset, m.size, m.pick);
        step.send.push_back(res);
        return step;
      }
      Message probe = m;
      probe.cset = m.cset & link->avail();
      if (probe.cset == 0) {
        blocked(step, probe, false);  // no holding on a probe (002 L473)
        return step;
      }
      step.send.push_back(next(probe, Kind::kProb, m.at + 1));
      return step;
    }
    case Kind::kRes:
      return backward_res(m, link);
    case Kind::kAck:
      if (!link->commit(m.id, m.slot)) throw std::logic_error("ACK of a slot not locked");
      step.freed = true;
      if (m.at + 1 < m.path->hops()) step.send.push_back(next(m, Kind::kAck, m.at + 1));
      return step;
    case Kind::kFail:
      step.freed = link->unlock(m.id) > 0;
      if (m.at + 1 < m.path->hops()) step.send.push_back(next(m, Kind::kFail, m.at + 1));
      return step;
    case Kind::kNack:
      to_source(step, m, Kind::kNack);
      return step;
    default:
      throw std::logic_error("backward reservation got a " + to_string(m.kind));
  }
}

}  // namespace

}  // namespace asn::circuit

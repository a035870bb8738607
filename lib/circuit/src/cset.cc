// The choices of the protocols: the initial cset size and which slots it holds.
#include <algorithm>
#include <bit>
#include <string>

#include "asn/circuit/error.hpp"
#include "asn/circuit/protocol.hpp"

namespace asn::circuit {

namespace {

// splitmix64: one pick serves several independent choices along a path.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The n-th (from 0) set bit of m; m has more than n.
uint32_t nth_slot(SlotMask m, uint32_t n) {
  for (; n > 0; --n) m &= m - 1;
  return static_cast<uint32_t>(std::countr_zero(m));
}

}  // namespace

uint32_t cset_size(const Protocol& p, uint32_t degree) {
  switch (p.cset) {
    case CsetPolicy::kConservative:
      return 1;
    case CsetPolicy::kAggressive:
      return degree;
    case CsetPolicy::kSized:
      return p.cset_size;
    case CsetPolicy::kOptimal:
      break;
  }
  // Table 3.1 (002 L533-539) where it has the degree; past it the rule of thumb of 002 L528:
  // a third of the degree forward, a tenth backward (at least 1).
  const bool fwd = p.direction == Direction::kForward;
  switch (degree) {
    case 4:
      return 1;
    case 8:
      return fwd ? 2 : 1;
    case 16:
      return fwd ? 5 : 2;
    case 32:
      return fwd ? 10 : 3;
    default:
      return std::max<uint32_t>(1, fwd ? degree / 3 : degree / 10);
  }
}

// 002 L482 reads "RES.cset = {m mod N, m+1 mod N, ..., N+s-1 mod N}"; the last term is
// broken OCR (it would not have s elements): we read it as m+s-1 mod N, s slots from m. L482-484
// also name the backward set "ACK.cset" from "RES.INIT"; from the protocol's prose (L462, L475)
// it is RES.cset, formed by the destination from PROB.init, and that is what we build.
SlotMask cset_window(SlotMask from, uint32_t size, uint64_t pick) {
  const uint32_t n = slot_count(from);
  if (n <= size) return from;
  const uint32_t start = static_cast<uint32_t>(mix(pick) % n);
  SlotMask out = 0;
  for (uint32_t i = 0; i < size; ++i) out |= SlotMask{1} << nth_slot(from, (start + i) % n);
  return out;
}

uint32_t pick_slot(SlotMask cset, uint64_t pick) {
  return nth_slot(cset, static_cast<uint32_t>(mix(mix(pick)) % slot_count(cset)));
}

std::string to_string(const Protocol& p) {
  std::string s = p.direction == Direction::kForward ? "F" : "B";
  s += p.on_block == OnBlock::kDrop ? "D" : "H";
  switch (p.cset) {
    case CsetPolicy::kConservative:
      return s + "C";
    case CsetPolicy::kAggressive:
      return s + "A";
    case CsetPolicy::kOptimal:
      return s + "O";
    case CsetPolicy::kSized:
      return s + std::to_string(p.cset_size);
  }
  return s;
}

Protocol parse_protocol(const std::string& name, const std::string& field) {
  Protocol p;
  const auto bad = [&] {
    return CircuitError(ErrorKind::kInvalidArgument, field,
                        "'" + name +
                            "' is not a protocol; accepted: F or B (forward, backward), D or H "
                            "(dropping, holding), then C, A, O or a cset size (FDC, BHA, BD4)");
  };
  if (name.size() < 3) throw bad();
  if (name[0] != 'F' && name[0] != 'B') throw bad();
  if (name[1] != 'D' && name[1] != 'H') throw bad();
  p.direction = name[0] == 'F' ? Direction::kForward : Direction::kBackward;
  p.on_block = name[1] == 'D' ? OnBlock::kDrop : OnBlock::kHold;
  const std::string rest = name.substr(2);
  if (rest == "C") {
    p.cset = CsetPolicy::kConservative;
  } else if (rest == "A") {
    p.cset = CsetPolicy::kAggressive;
  } else if (rest == "O") {
    p.cset = CsetPolicy::kOptimal;
  } else if (rest.find_first_not_of("0123456789") == std::string::npos && rest.size() <= 2 &&
             std::stoul(rest) >= 1) {
    p.cset = CsetPolicy::kSized;
    p.cset_size = static_cast<uint32_t>(std::stoul(rest));
  } else {
    throw bad();
  }
  return p;
}

std::string to_string(Kind k) {
  switch (k) {
    case Kind::kProb:
      return "PROB";
    case Kind::kRes:
      return "RES";
    case Kind::kAck:
      return "ACK";
    case Kind::kFail:
      return "FAIL";
    case Kind::kNack:
      return "NACK";
    case Kind::kRel:
      return "REL";
  }
  return "?";
}

}  // namespace asn::circuit

// The real-time greedy scheduler of 000 Ch. 5 (L949-1002): an N x N array of scheduling
// logic modules SL(u,v) that, in one clock, updates the configuration B^(s) of one target
// slot s from the request matrix R. Kept as a selectable baseline (Algorithm::kGreedy) and as
// a model of the hardware for tests.
//
// One step, as the seed describes it:
//  - Pre-scheduling (Table 5.1): L(u,v) = 1 when the connection u -> v is realised in slot s
//    but no longer requested (release), or requested and realised in no slot, B*(u,v) = 0
//    (establish).
//  - Availability: A(.,v) starts at AO(v) = "output v is used in slot s" and propagates
//    through the rows; D(u,.) starts at AI(u) = "input u is used in slot s" and propagates
//    through the columns. Rotating priority: the propagation starts at row a and column b
//    and wraps around (L1000), so requests nearer the origin win.
//  - Action (Table 5.2): the table as printed is inconsistent: its "release" row (L=1, A=1,
//    D=1) is also what a blocked request to establish looks like, and both action rows
//    toggle B "1 -> 0". We decide from the current bit, as the prose does: with
//    B(s)(u,v) = 1 the module releases (and frees A and D for the modules after it); with
//    B(s)(u,v) = 0 it establishes when A = 0 and D = 0 (and marks both used), else the
//    request stays blocked this clock.
#pragma once

#include <cstdint>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule {

// R: R(u,v) = 1 when input u requests a circuit to output v.
class RequestMatrix {
 public:
  explicit RequestMatrix(uint32_t ports) : ports_(ports), bits_(size_t{ports} * ports, 0) {}
  uint32_t ports() const { return ports_; }
  bool get(uint32_t input, uint32_t output) const {
    return bits_[size_t{input} * ports_ + output] != 0;
  }
  void set(uint32_t input, uint32_t output, bool requested = true) {
    bits_[size_t{input} * ports_ + output] = requested ? 1 : 0;
  }

 private:
  uint32_t ports_;
  std::vector<uint8_t> bits_;
};

class GreedyScheduler {
 public:
  // An N-port crossbar with K slots, all empty.
  GreedyScheduler(uint32_t ports, uint32_t slots);

  uint32_t ports() const { return ports_; }
  uint32_t slots() const { return slots_; }

  struct StepResult {
    uint32_t established = 0;
    uint32_t released = 0;
    uint32_t blocked = 0;  // requests that wanted to establish but found a port in use
  };
  // One clock of the scheduling logic on slot `slot` with the priority origin (a, b).
  StepResult step(const RequestMatrix& requests, uint32_t slot, uint32_t a, uint32_t b);

  bool connected(uint32_t slot, uint32_t input, uint32_t output) const;  // B^(s)(u,v)
  bool established(uint32_t input, uint32_t output) const;               // B*(u,v)
  // B^(s) as connections, in output order.
  Slot slot_connections(uint32_t slot) const;

 private:
  uint32_t ports_;
  uint32_t slots_;
  static constexpr uint32_t kNone = 0xffffffffu;
  std::vector<uint32_t> input_of_;  // [slot * ports + output]: the input, or kNone
  std::vector<uint32_t> realised_;  // [input * ports + output]: slots realising the pair
};

}  // namespace asn::schedule

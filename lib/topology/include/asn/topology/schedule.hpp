// The conflict-free static routing schedule of 004 §2.3.2 (L376-431).
//
// A schedule row covers one dimension in two cycles: in each cycle a packet either waits or
// crosses one channel S_A^(j) / S_B^(j) of length j (the channel from digit x to digit
// (x + j) mod k, lane A or B; L319-323, L341). For every length d = 1..k-1 there are k rows
// T_d^(p), p = 0..k-1 (the seed's p = 1..k), whose channel lengths add up to d mod k.
//
// Readings (the printed matrices, Eq 11-12, are OCR-damaged):
// - The rows for k = 4 are read off the 2-D example (L412-429), the least damaged matrix:
//   its first two columns hold the initial schedule B for lengths 3, 0, 1, 2 (T_11..T_14)
//   and its last two the final schedule F for lengths 2 and 3, which are exactly the mirror
//   images of the B rows (L402). They agree with every legible statement of the prose: T_1^(3)
//   steps S_A^(2) then S_A^(3) (L394), T_1^(1) and T_3^(3) share S_A^(1) while T_1^(1) and
//   T_3^(1) do not (L396). Rows for k = 2 and 3 are built by the same rules (below).
// - The rules: every row sums to its length; the initial-part property (L389): two rows
//   with the same channel in the second cycle have the same first cycle, so packets that
//   meet on a channel started at the same router; and the k rows of a length can serve any
//   mix of up to k requests of one router (L389, L396), which the selection below finds.
// - Such a schedule exists only for k <= 4: a router whose k requests all have length d has
//   2 direct rows (S_A^(d), S_B^(d)) and needs k - 2 two-hop rows, each ending on its own
//   second-cycle channel; by the initial-part property a second-cycle channel serves one
//   length only, so (k-1)(k-2) of them are needed and a router has 2(k-1).
// - Higher dimensions (L398-431): the initial schedule B routes dimension 0, its mirror image
//   F (the final schedule) dimension 1. The seed's example gives both parts the same row p;
//   that conflicts (two routers sending to one router pick p independently and meet on the
//   same F channel). F's final-part property makes packets that meet on a channel share their
//   destination router, so it is the destination router that picks the F rows of the
//   packets it receives, as the source picks the B rows of the packets it sends.
// - Three or more dimensions are not scheduled: the seed composes two parts only, and for
//   k >= 3 none exists at two cycles per dimension: the k^2 packets of one dimension-0 line
//   can meet at one router for the middle dimension, which sends at most 4(k-1) in two cycles.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "asn/topology/fabric.hpp"

namespace asn::topology {

// One cycle of a row: the channel of length `length` (1..k-1) on `lane` (0 = A, 1 = B), or no
// hop when length is 0.
struct ScheduleStep {
  uint8_t length = 0;
  uint8_t lane = 0;

  bool hop() const { return length != 0; }
  friend bool operator==(const ScheduleStep&, const ScheduleStep&) = default;
};

// The two cycles of one dimension.
struct ScheduleRow {
  std::array<ScheduleStep, 2> steps;

  ScheduleRow mirrored() const { return {{steps[1], steps[0]}}; }
  friend bool operator==(const ScheduleRow&, const ScheduleRow&) = default;
};

// The rows chosen for one packet: `initial_row` for dimension 0 (picked by its source router),
// `final_row` for dimension 1 (picked by its destination router; 0 in a 1-D fabric).
struct StaticRoute {
  uint8_t initial_row = 0;
  uint8_t final_row = 0;
};

// A terminal that sends nothing in plan_static_routes().
inline constexpr uint32_t kIdle = UINT32_MAX;

class StaticSchedule {
 public:
  // Why this fabric has no static schedule, or nothing when it has one.
  static std::optional<std::string> unsupported(const Fabric& fabric);
  // The schedule for k = 2..4. Throws TopologyError("k") otherwise.
  explicit StaticSchedule(uint32_t k);
  // The schedule of a fabric; throws TopologyError naming the field unsupported() objects to.
  static StaticSchedule for_fabric(const Fabric& fabric);

  uint32_t k() const { return k_; }
  // B: T_d^(p) of the initial schedule, d = 1..k-1, p = 0..k-1.
  const ScheduleRow& initial_row(unsigned length, unsigned row) const;
  // F: the mirror image of B (L402).
  ScheduleRow final_row(unsigned length, unsigned row) const {
    return initial_row(length, row).mirrored();
  }

  // The rows one router gives its requests (one length 0..k-1 each, at most k of them) so
  // that no two use the same channel in the same cycle: a result p per request, 0 for
  // length 0. Independent of the order of the requests up to ties. Throws TopologyError
  // ("lengths") for more than k requests or a length >= k.
  std::vector<uint8_t> select(std::span<const uint8_t> lengths) const;

 private:
  uint32_t k_;
  std::vector<ScheduleRow> rows_;  // (length - 1) * k + row
};

// Rows for every packet of a traffic pattern: destinations[t] is the terminal that terminal t
// sends to, or kIdle; no terminal receives twice. Throws TopologyError("destinations") for a
// bad pattern and as for_fabric() for an unsupported fabric.
std::vector<StaticRoute> plan_static_routes(const Fabric& fabric,
                                            std::span<const uint32_t> destinations);

}  // namespace asn::topology

// The modes' algorithms: ALDFB (004 L910-952), minimal adaptive, UGAL-L and static, over the
// candidates of routing_engine.cc. The readings of the seed are in routing_engine.hpp.
#include <array>
#include <optional>
#include <utility>

#include "routing_decision.hpp"

namespace asn::model::engines::detail {

RouteDecision Decision::route_aldfb() {
  if (dest_entry_.local) return deliver(header_);  // s_d == d_d
  const unsigned dr = dimensions_to_correct(dest_entry_);
  if (dr == 0) return fail(RouteStatus::kNoPort);
  if (header_.escaped && escape_policy()) return route_minimal(header_);
  unsigned pr_dims = dr;
  if (header_.h1 && arrival_ && (dr >> arrival_->dimension & 1) != 0) {
    pr_dims = 1u << arrival_->dimension;  // the minimal hop after a detour (see the header)
  }
  Candidates direct;
  if (!direct_candidates(dest_entry_, pr_dims, direct)) return fail(RouteStatus::kNoPort);
  PacketHeader next = header_;
  next.h1 = false;
  offer(direct, next);
  offer_escape(next);
  PacketHeader detour = next;
  detour.h1 = true;
  Candidates detours;
  // The detours are looked at only when they are needed (every port of Dr is read), or when
  // route_options collects every choice.
  if (options_ && !header_.h1) {
    detour_candidates(dr, dest_, detours);
    offer(detours, detour);
  }
  if (const Candidate* po = direct.first_usable()) return hop(*po, next);  // lines 8-10
  if (header_.h1) return take(*direct.highest_dimension_least_occupied(), next);  // 12-14

  // Algorithm 4: the status of all ports of Dr; a detour sets h1.
  if (!options_) detour_candidates(dr, dest_, detours);
  if (const Candidate* po = detours.first_usable()) return hop(*po, detour);
  return take(*direct.highest_dimension_least_occupied(), next);
}

RouteDecision Decision::route_minimal(PacketHeader next) {
  if (dest_entry_.local) return deliver(next);
  Candidates direct;
  if (!direct_candidates(dest_entry_, dimensions_to_correct(dest_entry_), direct) ||
      direct.empty()) {
    return fail(RouteStatus::kNoPort);
  }
  offer(direct, next);
  offer_escape(next);
  const Candidate* c = direct.first_usable();
  return c ? hop(*c, next) : take(*direct.least_occupied(), next);
}

RouteDecision Decision::route_ugal(uint32_t random) {
  PacketHeader next = header_;
  if (next.to_intermediate && next.intermediate == own_) next.to_intermediate = false;
  if (dest_entry_.local) return deliver(next);
  if (next.escaped && escape_policy()) return route_minimal(next);

  if (!next.to_intermediate && !arrival_) {
    // At the source, UGAL-L: the minimal path unless hops x queue says the path through the
    // drawn intermediate router is shorter.
    Candidates direct;
    if (!direct_candidates(dest_entry_, dimensions_to_correct(dest_entry_), direct) ||
        direct.empty()) {
      return fail(RouteStatus::kNoPort);
    }
    offer(direct, next);
    if (options_) {
      for (uint32_t i = 0; i < routers_ && i < view_.dest_entries(); ++i) {
        if (i == own_ || i == dest_) continue;
        const DestEntry entry = view_.dest_entry(i);
        Candidates toward;
        if (!entry.valid || !direct_candidates(entry, dimensions_to_correct(entry), toward)) {
          continue;
        }
        PacketHeader via = next;
        via.to_intermediate = true;
        via.intermediate = i;
        offer(toward, via);
      }
    }
    const uint32_t intermediate = random % routers_;
    if (intermediate != own_ && intermediate != dest_ && intermediate < view_.dest_entries()) {
      const DestEntry entry = view_.dest_entry(intermediate);
      Candidates toward;
      if (entry.valid && !entry.local &&
          direct_candidates(entry, dimensions_to_correct(entry), toward) && !toward.empty()) {
        // BookSim's UGAL-L adds a constant bias towards the minimal path; ours is the minimal
        // port's T_h, so that benign traffic (short, even queues) is not sent around.
        const Candidate& minimal = *direct.least_occupied();
        const uint64_t minimal_cost = uint64_t{hops_between(own_, dest_)} * minimal.queue;
        const uint64_t detour_cost =
            uint64_t{hops_between(own_, intermediate) + hops_between(intermediate, dest_)} *
                toward.least_occupied()->queue +
            view_.threshold(minimal.port);
        if (minimal_cost > detour_cost) {
          next.to_intermediate = true;
          next.intermediate = intermediate;
        }
      }
    }
  }
  const uint32_t target = next.to_intermediate ? next.intermediate : dest_;
  if (target >= routers_ || target >= view_.dest_entries()) return fail(RouteStatus::kBadHeader);
  const DestEntry entry = target == dest_ ? dest_entry_ : view_.dest_entry(target);
  if (!entry.valid || entry.local) return fail(RouteStatus::kBadHeader);
  Candidates toward;
  if (!direct_candidates(entry, dimensions_to_correct(entry), toward) || toward.empty()) {
    return fail(RouteStatus::kNoPort);
  }
  offer(toward, next);
  offer_escape(next);
  const Candidate* c = toward.first_usable();
  return c ? hop(*c, next) : take(*toward.least_occupied(), next);
}

// The schedule's rows for one dimension of a 1-D or 2-D fabric (topology/schedule.hpp).
RouteDecision Decision::route_static() {
  if (dest_entry_.local) return deliver(header_);
  const unsigned k = regs_.k;
  if (regs_.r > 2 || view_.schedule_entries() < (k - 1) * k) return fail(RouteStatus::kNoSchedule);
  if (header_.initial_row >= k || header_.final_row >= k) return fail(RouteStatus::kBadHeader);

  // Dimension 0 first (the initial part), then dimension 1 (the final part, mirrored).
  const unsigned dim = digit_of(dest_, 0) != regs_.own_digits[0] ? 0 : 1;
  const bool mirrored = dim == 1;
  const unsigned p = mirrored ? header_.final_row : header_.initial_row;
  auto row_of = [&](unsigned length) -> std::optional<std::array<ScheduleStep, 2>> {
    const ScheduleEntry e = view_.schedule_entry((length - 1) * k + p);
    std::array<ScheduleStep, 2> steps = {ScheduleStep{e.first_length, e.first_lane},
                                         ScheduleStep{e.second_length, e.second_lane}};
    if ((steps[0].length + steps[1].length) % k != length || steps[0].length >= k ||
        steps[1].length >= k) {
      return std::nullopt;  // not a row of this length: no schedule programmed
    }
    if (mirrored) std::swap(steps[0], steps[1]);
    return steps;
  };

  const uint32_t own_digit = regs_.own_digits[dim];
  const unsigned remaining = (digit_of(dest_, dim) + k - own_digit) % k;
  ScheduleStep step;
  if (arrival_ && arrival_->dimension == dim) {
    // Mid-row: the input port names the hop taken, its length and lane (with one
    // double-rate channel per peer, S_A and S_B share the port and only the length tells).
    const uint8_t taken = static_cast<uint8_t>((own_digit + k - arrival_->digit) % k);
    const auto row = row_of((taken + remaining) % k);
    if (!row) return fail(RouteStatus::kNoSchedule);
    if ((*row)[0].length != taken || (lanes_of(dim) > 1 && (*row)[0].lane != arrival_->lane)) {
      return fail(RouteStatus::kBadHeader);
    }
    step = (*row)[1];
  } else {
    const auto row = row_of(remaining);
    if (!row) return fail(RouteStatus::kNoSchedule);
    step = (*row)[0].hop() ? (*row)[0] : (*row)[1];
  }

  // The channel of that length and lane: the direct ports to the router one step away.
  if (step.length == 0) return fail(RouteStatus::kBadHeader);  // a row ending early
  const uint32_t neighbour = router_with(dim, (own_digit + step.length) % k);
  if (neighbour >= view_.dest_entries()) return fail(RouteStatus::kNoPort);
  const DirectPorts direct = view_.dest_entry(neighbour).dims[dim];
  const unsigned port = topology::lane_port(direct, step.lane);
  Candidate c;
  if (!channel_candidate(port, c) || c.dim != dim) return fail(RouteStatus::kNoPort);
  return hop(c, header_);
}

}  // namespace asn::model::engines::detail

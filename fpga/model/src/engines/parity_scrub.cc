// The parity path's scrub (issue 27 item 4, Linux md's `check` and `repair` through
// sync_action): every stripe of a group's file read from its members, its parity recomputed
// from its data and compared (asn::stripe::check_stripe); a repair writes back the unit(s)
// asn::stripe::repair_stripe corrected. It runs as one client request (ParityPath's lock), so
// no write of the group tears a stripe while it is compared; the group entry is re-read
// between batches as a rebuild does, and a failed mark set meanwhile ends the scrub.
#include <array>
#include <bit>
#include <span>
#include <string>

#include "parity_path.hpp"

namespace asn::model::detail::engines {

void ParityPath::require_redundancy(const Group& group, bool repair) {
  const auto failed = static_cast<unsigned>(std::popcount(group.failed));
  const unsigned parity = group.geometry.parity_members;
  if (repair && failed > 0) {
    throw StripeError(StripeError::Kind::kTooManyFailed,
                      name(group.index) + ": " + std::to_string(failed) +
                          " member(s) failed; a repair needs every member to tell a wrong unit "
                          "from a right one: rebuild the failed member(s) first");
  }
  if (failed >= parity) {
    throw StripeError(StripeError::Kind::kTooManyFailed,
                      name(group.index) + ": " + std::to_string(failed) +
                          " member(s) failed and RAID " +
                          std::to_string(static_cast<unsigned>(group.geometry.raid)) + " has " +
                          std::to_string(parity) +
                          " parity member(s): no redundancy is left to check against; rebuild "
                          "the failed member(s) first");
  }
}

stripe::ScrubReport ParityPath::scrub_stripes(Group& group, bool write, const Progress& progress) {
  stripe::ScrubReport report;
  const uint64_t S = group.geometry.stripe_bytes();
  const uint64_t stripes = (storage_->file_size(group.index) + S - 1) / S;
  const uint64_t batch = stripes_per_batch(group);
  for (uint64_t s = 0; s < stripes; ++s) {
    if (s != 0 && s % batch == 0) {
      checkpoint(group);
      // A member failed meanwhile: its rebuilt units would be checked by the equation that
      // rebuilt them; the caller's rule holds to the end.
      require_redundancy(group, write);
      if (progress) progress(s, stripes);
    }
    scrub_stripe(group, s, write, report);
  }
  if (progress) progress(stripes, stripes);
  return report;
}

void ParityPath::scrub_stripe(const Group& group, uint64_t s, bool write,
                              stripe::ScrubReport& report) {
  const stripe::Geometry& g = group.geometry;
  const unsigned d = g.data_members;
  const stripe::StripeMap map = stripe::map_stripe(g, s);
  std::array<unsigned, 2> lost{};
  unsigned lost_count = 0;
  for (unsigned r = 0; r < g.members() && lost_count < lost.size(); ++r) {
    if (group.lost(member_of(map, d, r))) lost[lost_count++] = r;
  }
  load_stripe(group, s, 0, /*all=*/true);
  ++report.stripes;
  report.bytes_read += uint64_t{g.members() - lost_count} * g.unit_bytes;
  const stripe::StripeCheck check = stripe::check_stripe(
      g, group.lane->buffers->units, std::span<const unsigned>(lost.data(), lost_count),
      group.lane->buffers->scratch, g.unit_bytes);
  if (check.mismatch == stripe::Mismatch::kNone) return;
  ++report.mismatches;
  stripe::ScrubFinding finding;
  finding.stripe = s;
  finding.mismatch = check.mismatch;
  if (check.mismatch != stripe::Mismatch::kUnlocated)
    finding.member = member_of(map, d, check.unit);
  if (write) {
    for (unsigned r : stripe::repair_stripe(g, group.lane->buffers->units, check,
                                            group.lane->buffers->scratch, g.unit_bytes)) {
      send_unit(group, member_of(map, d, r), s, group.lane->buffers->unit(r));
      ++(r < d ? group.lane->pending.data_units : group.lane->pending.parity_units);
    }
    finding.repaired = true;
    ++report.repaired;
  }
  if (report.findings.size() < stripe::ScrubReport::kMaxFindings) {
    report.findings.push_back(finding);
  }
}

}  // namespace asn::model::detail::engines

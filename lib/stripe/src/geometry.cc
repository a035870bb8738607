// Stripe geometry (issue 10, 004 L1131): validation and Linux md's layouts.
#include "asn/stripe/geometry.hpp"

#include <bit>

namespace asn::stripe {
namespace {

const char* raid_name(Raid raid) {
  switch (raid) {
    case Raid::k4:
      return "RAID 4";
    case Raid::k5:
      return "RAID 5";
    case Raid::k6:
      return "RAID 6";
  }
  return "RAID ?";
}

}  // namespace

std::optional<std::string> validate(const Geometry& g) {
  if (g.raid != Raid::k4 && g.raid != Raid::k5 && g.raid != Raid::k6) {
    return "RAID level " + std::to_string(static_cast<unsigned>(g.raid)) +
           " is not supported; accepted: 4, 5, 6";
  }
  if (g.data_members < 2) {
    return std::to_string(g.data_members) +
           " data members is too few; accepted: at least 2 data members";
  }
  const unsigned want = parity_members_of(g.raid);
  if (g.parity_members != want) {
    return std::string(raid_name(g.raid)) + " with " + std::to_string(g.parity_members) +
           " parity members; accepted: exactly " + std::to_string(want) + " for " +
           raid_name(g.raid);
  }
  if (g.members() > kMaxMembers) {
    return std::to_string(g.members()) + " members (" + std::to_string(g.data_members) +
           " data + " + std::to_string(g.parity_members) +
           " parity) is too many; accepted: at most " + std::to_string(kMaxMembers) + " members";
  }
  if (!std::has_single_bit(g.unit_bytes) || g.unit_bytes < kMinUnitBytes ||
      g.unit_bytes > kMaxUnitBytes) {
    const char* what = !std::has_single_bit(g.unit_bytes) ? "is not a power of two"
                       : g.unit_bytes < kMinUnitBytes     ? "is too small"
                                                          : "is too large";
    return "unit " + std::to_string(g.unit_bytes) + " " + what +
           "; accepted: " + std::to_string(kMinUnitBytes) + " .. " + std::to_string(kMaxUnitBytes) +
           ", powers of two";
  }
  return std::nullopt;
}

// The layouts of Linux md, drivers/md/raid5.c raid5_compute_sector(), where `stripe` is
// the stripe number (chunk number / data disks) and dd_idx the data unit's index in it:
//   level 4 (ALGORITHM_PARITY_N):  pd_idx = data_disks; dd_idx unchanged.
//   level 5 ALGORITHM_LEFT_SYMMETRIC (md's default):
//     pd_idx = data_disks - stripe % raid_disks;  dd_idx = (pd_idx + 1 + dd_idx) % raid_disks
//   level 6 ALGORITHM_LEFT_SYMMETRIC:
//     pd_idx = raid_disks - 1 - stripe % raid_disks;  qd_idx = (pd_idx + 1) % raid_disks;
//     dd_idx = (pd_idx + 2 + dd_idx) % raid_disks
// (For level 5 data_disks = raid_disks - 1, so both parities start at the last member.)
StripeMap map_stripe(const Geometry& g, uint64_t stripe) {
  StripeMap map;
  const unsigned d = g.data_members;
  const unsigned n = g.members();
  map.data_member.resize(d);
  if (n == 0) return map;
  if (g.raid == Raid::k4) {
    for (unsigned i = 0; i < d; ++i) map.data_member[i] = i;
    map.p_member = d;
    return map;
  }
  const unsigned pd = n - 1 - static_cast<unsigned>(stripe % n);
  map.p_member = pd;
  if (g.raid == Raid::k6) {
    map.q_member = (pd + 1) % n;
    for (unsigned i = 0; i < d; ++i) map.data_member[i] = (pd + 2 + i) % n;
  } else {
    for (unsigned i = 0; i < d; ++i) map.data_member[i] = (pd + 1 + i) % n;
  }
  return map;
}

}  // namespace asn::stripe

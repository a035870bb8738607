// Stripe groups (issue 10, 004 L1131-1190): how a file's bytes are laid out over the data
// and parity members of a group, for RAID 4 (dedicated parity, the seed's), RAID 5 (rotating
// parity) and RAID 6 (P+Q). The layouts are Linux md's (left-symmetric for 5 and 6, md's
// default), so members written by the switch read back with standard tools. Pure: no gRPC,
// no register bus; the switch's parity path (fpga/model), asnd and the tests share it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace asn::stripe {

enum class Raid : uint8_t { k4 = 4, k5 = 5, k6 = 6 };

inline constexpr uint32_t kMinUnitBytes = 4096;     // 4 KiB
inline constexpr uint32_t kMaxUnitBytes = 1 << 20;  // 1 MiB
inline constexpr unsigned kMaxMembers = 64;         // the group table's member masks

// How many parity members a group of this level has: 2 (P and Q) for RAID 6, else 1.
constexpr unsigned parity_members_of(Raid raid) { return raid == Raid::k6 ? 2 : 1; }

// A group's shape. Members are numbered 0..members()-1: the data members in the order the
// operator gave them, then the parity members. For RAID 4 data unit i of every stripe is on
// member i and P on member data_members; for RAID 5 and 6 the roles rotate per stripe.
struct Geometry {
  Raid raid = Raid::k5;
  unsigned data_members = 0;    // data units per stripe, at least 2
  unsigned parity_members = 0;  // 1 for RAID 4 and 5, 2 for RAID 6
  uint32_t unit_bytes = 0;      // a power of two, kMinUnitBytes..kMaxUnitBytes

  unsigned members() const { return data_members + parity_members; }
  uint64_t stripe_bytes() const { return uint64_t{data_members} * unit_bytes; }
};

// Why the geometry cannot be a group ("unit 3000 is not a power of two; accepted: 4096 ..
// 1048576, powers of two"), or nullopt.
std::optional<std::string> validate(const Geometry& geometry);

// Where the units of one stripe live: data_member[i] holds data unit i, p_member holds P and
// q_member Q (RAID 6 only). Each member holds exactly one unit of every stripe, at byte
// offset stripe * unit_bytes of its own store.
struct StripeMap {
  std::vector<unsigned> data_member;
  unsigned p_member = 0;
  std::optional<unsigned> q_member;
};
StripeMap map_stripe(const Geometry& geometry, uint64_t stripe);

}  // namespace asn::stripe

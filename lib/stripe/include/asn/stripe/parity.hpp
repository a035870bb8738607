// Parity of one stripe: P (XOR) for RAID 4 and 5, P and Q for RAID 6 (P with ISA-L's xor_gen,
// P and Q with md's raid6 loop in vectors): GF(2^8) with polynomial 0x11D and generator 2,
// byte-identical to Linux md raid6 and ISA-L's pq_gen. And reconstruction of up to one (RAID 4/5) or two (RAID 6) lost units of a
// stripe, data or parity, byte-exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "asn/stripe/geometry.hpp"

namespace asn::stripe {

// data: geometry.data_members buffers of `len` bytes each; p, q: `len` bytes (q only for
// RAID 6, else nullptr). len is a multiple of 32 (every unit size is).
void compute_parity(const Geometry& geometry, std::span<const uint8_t* const> data, uint8_t* p,
                    uint8_t* q, size_t len);

// Rebuilds the lost units of one stripe in place. units: data_members data buffers, then P,
// then Q for RAID 6 (every buffer `len` bytes); lost: indices into units (0..data_members-1
// data, data_members P, data_members+1 Q), at most parity_members of them, distinct. The
// buffers of lost units are overwritten; the others are read only. Returns false (and
// changes nothing) when more units are lost than the layout tolerates.
bool reconstruct(const Geometry& geometry, std::span<uint8_t* const> units,
                 std::span<const unsigned> lost, size_t len);

// ---- scrub (issue 27 item 4: Linux md's check and repair) ---------------------------------

// What disagrees in a stripe whose parity does not match its data.
enum class Mismatch : uint8_t {
  kNone,
  kP,     // P (RAID 4/5: P and the data disagree, which is wrong is unknown: md rewrites P;
          // RAID 6: Q agrees with the data, so P alone is wrong)
  kQ,     // RAID 6: Q alone is wrong (P agrees with the data)
  kData,  // RAID 6: one data unit is wrong, located from P and Q (Anvin, section 5)
  // RAID 6: P and Q both disagree and no single data unit explains it, or a member is lost
  // and only one equation is left: the data is taken as right, as md's repair does.
  kUnlocated,
};

// The verdict on one stripe: `unit` indexes the units as reconstruct's do (the data unit for
// kData; data_members for kP, data_members + 1 for kQ).
struct StripeCheck {
  Mismatch mismatch = Mismatch::kNone;
  unsigned unit = 0;
};

// Verifies one stripe. units: as reconstruct's, every buffer filled (the units in `lost`
// rebuilt by reconstruct beforehand, which makes the equation it used hold: what is left is
// checked); scratch: two buffers of `len` bytes, 64-byte aligned, into which the parity
// recomputed from the data goes (P, then Q for RAID 6); the repair below reads them.
StripeCheck check_stripe(const Geometry& geometry, std::span<uint8_t* const> units,
                         std::span<const unsigned> lost, std::span<uint8_t* const> scratch,
                         size_t len);

// Makes the stripe consistent after check_stripe found `check` (same buffers, unchanged
// since): rewrites P and/or Q from the data, or for kData corrects the located data unit.
// Returns the indices of the units it changed (the ones to write back).
std::vector<unsigned> repair_stripe(const Geometry& geometry, std::span<uint8_t* const> units,
                                    const StripeCheck& check, std::span<uint8_t* const> scratch,
                                    size_t len);

// One stripe that did not check, as a scrub of a group's file reports it.
struct ScrubFinding {
  uint64_t stripe = 0;
  Mismatch mismatch = Mismatch::kNone;
  unsigned member = 0;  // the group's member holding the wrong unit (kP, kQ, kData)
  bool repaired = false;
};

// A scrub of a group's file: md's mismatch_cnt is `mismatches`, counted in stripes.
struct ScrubReport {
  static constexpr size_t kMaxFindings = 1000;  // listed; the counts go on past it
  uint64_t stripes = 0;                         // checked
  uint64_t mismatches = 0;
  uint64_t repaired = 0;
  uint64_t bytes_read = 0;            // member bytes read
  std::vector<ScrubFinding> findings;  // by stripe, the first kMaxFindings
};

namespace detail {
// The P and Q kernels compute_parity chooses from, widest first (it takes the first the CPU
// has): the tests run every one this CPU has against a byte loop.
struct PqKernel {
  const char* name;
  // P and Q of the data from byte 0 up to the bytes it returns; the rest is left.
  size_t (*vectors)(std::span<const uint8_t* const> data, uint8_t* p, uint8_t* q, size_t len);
  bool supported;
};
std::span<const PqKernel> pq_kernels();
// P and Q of all `len` bytes with `kernel` (and the word loop for its tail).
void compute_pq_with(const PqKernel& kernel, std::span<const uint8_t* const> data, uint8_t* p,
                     uint8_t* q, size_t len);
}  // namespace detail

}  // namespace asn::stripe

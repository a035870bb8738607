// Parity of one stripe: P (XOR) for RAID 4 and 5, P and Q for RAID 6, computed with ISA-L
// (xor_gen, pq_gen): GF(2^8) with polynomial 0x11D and generator 2, byte-identical to Linux
// md raid6. And reconstruction of up to one (RAID 4/5) or two (RAID 6) lost units of a
// stripe, data or parity, byte-exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

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

}  // namespace asn::stripe

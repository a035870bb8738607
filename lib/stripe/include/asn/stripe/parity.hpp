// Parity of one stripe: P (XOR) for RAID 4 and 5, P and Q for RAID 6 (P with ISA-L's xor_gen,
// P and Q with md's raid6 loop in vectors): GF(2^8) with polynomial 0x11D and generator 2,
// byte-identical to Linux md raid6 and ISA-L's pq_gen. And reconstruction of up to one (RAID 4/5) or two (RAID 6) lost units of a
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

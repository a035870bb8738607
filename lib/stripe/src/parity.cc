// Parity of a stripe and the rebuild of lost units (issue 10, 004 L1131: the switch computes
// the parity of a client's stripe on the fly; the seed's is RAID 4's P, we add RAID 6's Q).
//
// P is the XOR of the data units, Q = sum over i of g^i * D_i in GF(2^8) with polynomial 0x11D
// and generator g = 2, Linux md's raid6 (lib/raid6) and ISA-L's pq_gen alike. Two lost units
// are rebuilt as in H. Peter Anvin, "The mathematics of RAID-6".
//
// ISA-L's vector routines (xor_gen, gf_vect_mul) need their buffers 32-byte aligned (their
// AVX2/AVX-512 code uses aligned loads) and a length that is a multiple of 32. When every
// buffer of a call is 64-byte aligned and the length a multiple of 32 we use them; otherwise a
// portable word loop with the same results, so callers with odd buffers are correct, only
// slower.
//
// P and Q together are ours, not ISA-L's pq_gen: its AVX2 code writes P and Q with
// non-temporal stores, past the cache to memory, and so runs at 2.4 GB/s of data (3 data
// units of 64 KiB, CPU time, this machine) where memcpy of the same bytes runs at 40: 0.06x
// memcpy against our target of 0.8x. md's own raid6 loop (lib/raid6/avx2.c: Horner, the
// multiply by 2 as an add and a masked XOR of 0x1D) in GCC vectors runs at 25 GB/s in AVX2
// and 13 in SSE2 (tests/unit/stripe_parity_test.cc checks every kernel against a byte loop
// and against ISA-L's pq_gen).
#include "asn/stripe/parity.hpp"

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace asn::stripe {
namespace {

constexpr size_t kAlign = 64;
// ISA-L takes int lengths: longer buffers go in chunks of this (a multiple of kAlign).
constexpr size_t kChunk = size_t{1} << 30;

// GF(2^8), polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D), generator 2.
struct GfTables {
  std::array<uint8_t, 512> exp{};
  std::array<uint8_t, 256> log{};
};
constexpr GfTables make_tables() {
  GfTables t;
  unsigned v = 1;
  for (unsigned i = 0; i < 255; ++i) {
    t.exp[i] = static_cast<uint8_t>(v);
    t.exp[i + 255] = static_cast<uint8_t>(v);
    t.log[v] = static_cast<uint8_t>(i);
    v <<= 1;
    if (v & 0x100) v ^= 0x11D;
  }
  return t;
}
constexpr GfTables kGf = make_tables();

uint8_t gf_mul8(uint8_t a, uint8_t b) {
  if (a == 0 || b == 0) return 0;
  return kGf.exp[kGf.log[a] + kGf.log[b]];
}
uint8_t gf_inv8(uint8_t a) { return kGf.exp[255 - kGf.log[a]]; }  // a != 0
uint8_t gf_pow2(unsigned k) { return kGf.exp[k % 255]; }          // g^k

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlign == 0; }

bool vector_ok(std::span<const uint8_t* const> bufs, size_t len) {
  if (len % 32 != 0) return false;
  return std::all_of(bufs.begin(), bufs.end(), [](const uint8_t* b) { return aligned(b); });
}

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, sizeof v); }

// Multiplies each byte of a word by g = 2 in GF(2^8) (md's raid6 int.uc trick).
uint64_t mul2_64(uint64_t v) {
  const uint64_t hi = v & 0x8080808080808080ULL;
  return ((v << 1) & 0xFEFEFEFEFEFEFEFEULL) ^ ((hi >> 7) * 0x1D);
}
uint8_t mul2_8(uint8_t v) { return static_cast<uint8_t>((v << 1) ^ ((v & 0x80) ? 0x1D : 0)); }

// Runs ISA-L's xor_gen or pq_gen over `bufs` (sources, then the parity buffers) in chunks
// of kChunk bytes; false when the buffers do not suit it (alignment, length) or it refused,
// and the caller computes the parity itself.
bool isal_chunked(int (*gen)(int, int, void**), std::span<const uint8_t* const> bufs, size_t len) {
  if (!vector_ok(bufs, len)) return false;
  std::vector<void*> arr(bufs.size());
  for (size_t off = 0; off < len; off += kChunk) {
    const size_t n = std::min(kChunk, len - off);
    for (size_t i = 0; i < bufs.size(); ++i) arr[i] = const_cast<uint8_t*>(bufs[i]) + off;
    if (gen(static_cast<int>(arr.size()), static_cast<int>(n), arr.data()) != 0) return false;
  }
  return true;
}

// dst = XOR of srcs (at least one source). dst may not alias a source.
void gen_p(std::span<const uint8_t* const> srcs, uint8_t* dst, size_t len) {
  std::vector<const uint8_t*> all(srcs.begin(), srcs.end());
  all.push_back(dst);
  if (srcs.size() >= 2 && isal_chunked(xor_gen, all, len)) return;
  size_t off = 0;
  for (; off + 8 <= len; off += 8) {
    uint64_t v = 0;
    for (const uint8_t* s : srcs) v ^= load64(s + off);
    store64(dst + off, v);
  }
  for (; off < len; ++off) {
    uint8_t v = 0;
    for (const uint8_t* s : srcs) v ^= s[off];
    dst[off] = v;
  }
}

// P and Q of srcs from byte `from` on, a word (then a byte) at a time: the tail the vector
// kernels leave, or all of it.
void pq_words(std::span<const uint8_t* const> srcs, uint8_t* p, uint8_t* q, size_t from,
              size_t len) {
  // Horner, from the highest data index down: q = ((D_{n-1} * g + D_{n-2}) * g + ...) + D_0.
  size_t off = from;
  for (; off + 8 <= len; off += 8) {
    uint64_t pv = 0, qv = 0;
    for (size_t i = srcs.size(); i-- > 0;) {
      const uint64_t d = load64(srcs[i] + off);
      pv ^= d;
      qv = mul2_64(qv) ^ d;
    }
    store64(p + off, pv);
    store64(q + off, qv);
  }
  for (; off < len; ++off) {
    uint8_t pv = 0, qv = 0;
    for (size_t i = srcs.size(); i-- > 0;) {
      pv ^= srcs[i][off];
      qv = static_cast<uint8_t>(mul2_8(qv) ^ srcs[i][off]);
    }
    p[off] = pv;
    q[off] = qv;
  }
}

// P and Q in vectors of W bytes, two at a time (two independent chains keep the pipeline
// full: 10% over one, four spill), Horner as pq_words; a byte times g = 2 is v + v, XOR 0x1D
// where its top bit was set (md's raid6 avx2.c, its "x2" form). No alignment needed: loads
// and stores are memcpy. Returns the bytes done, a multiple of 2W; inlined into a caller
// compiled for the instruction set that W needs.
template <size_t W>
[[gnu::always_inline]] inline size_t pq_vectors(std::span<const uint8_t* const> srcs, uint8_t* p,
                                                uint8_t* q, size_t len) {
  typedef uint8_t Bytes __attribute__((vector_size(W)));
  typedef int8_t SignedBytes __attribute__((vector_size(W)));
  constexpr size_t kStep = 2 * W;
  size_t off = 0;
  for (; off + kStep <= len; off += kStep) {
    Bytes pv[2]{};
    Bytes qv[2]{};
    for (size_t i = srcs.size(); i-- > 0;) {
      for (size_t k = 0; k < 2; ++k) {
        Bytes d;
        std::memcpy(&d, srcs[i] + off + k * W, W);
        pv[k] ^= d;
        const Bytes top = (Bytes)((SignedBytes)qv[k] < 0);  // 0xFF where the top bit is set
        qv[k] = (qv[k] + qv[k]) ^ (top & uint8_t{0x1D}) ^ d;
      }
    }
    for (size_t k = 0; k < 2; ++k) {
      std::memcpy(p + off + k * W, &pv[k], W);
      std::memcpy(q + off + k * W, &qv[k], W);
    }
  }
  return off;
}

size_t pq_vectors16(std::span<const uint8_t* const> srcs, uint8_t* p, uint8_t* q, size_t len) {
  return pq_vectors<16>(srcs, p, q, len);
}
size_t pq_none(std::span<const uint8_t* const>, uint8_t*, uint8_t*, size_t) { return 0; }
#if defined(__x86_64__)
[[gnu::target("avx2")]] size_t pq_vectors32(std::span<const uint8_t* const> srcs, uint8_t* p,
                                            uint8_t* q, size_t len) {
  return pq_vectors<32>(srcs, p, q, len);
}
bool has_avx2() { return __builtin_cpu_supports("avx2"); }
#else
size_t pq_vectors32(std::span<const uint8_t* const>, uint8_t*, uint8_t*, size_t) { return 0; }
bool has_avx2() { return false; }
#endif

const std::array<detail::PqKernel, 3> kPqKernels{{
    {"avx2", pq_vectors32, has_avx2()},
    {"vector16", pq_vectors16, true},
    {"words", pq_none, true},
}};

void pq_with(const detail::PqKernel& kernel, std::span<const uint8_t* const> srcs, uint8_t* p,
             uint8_t* q, size_t len) {
  pq_words(srcs, p, q, kernel.vectors(srcs, p, q, len), len);
}

// p = XOR of srcs, q = sum g^i * srcs[i] (at least two sources). p, q alias no source.
void gen_pq(std::span<const uint8_t* const> srcs, uint8_t* p, uint8_t* q, size_t len) {
  static const detail::PqKernel& widest = kPqKernels[has_avx2() ? 0 : 1];
  pq_with(widest, srcs, p, q, len);
}

// dst = c * src in GF(2^8). dst may not alias src.
void mul_vec(uint8_t c, const uint8_t* src, uint8_t* dst, size_t len) {
  const std::array<const uint8_t*, 2> bufs{src, dst};
  if (vector_ok(bufs, len)) {
    unsigned char tbl[32];
    gf_vect_mul_init(c, tbl);
    bool ok = true;
    for (size_t off = 0; off < len && ok; off += kChunk) {
      const size_t n = std::min(kChunk, len - off);
      ok = gf_vect_mul(static_cast<int>(n), tbl, const_cast<uint8_t*>(src) + off, dst + off) == 0;
    }
    if (ok) return;
  }
  std::array<uint8_t, 256> table;
  for (unsigned v = 0; v < 256; ++v) table[v] = gf_mul8(c, static_cast<uint8_t>(v));
  for (size_t i = 0; i < len; ++i) dst[i] = table[src[i]];
}

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Scratch = std::unique_ptr<uint8_t, FreeDeleter>;
Scratch scratch(size_t len) {
  const size_t size = (len + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlign, size));
  if (p == nullptr) throw std::bad_alloc();
  return Scratch(p);
}

bool shape_ok(const Geometry& g) {
  return (g.raid == Raid::k4 || g.raid == Raid::k5 || g.raid == Raid::k6) && g.data_members >= 2 &&
         g.parity_members == parity_members_of(g.raid);
}

// The single data unit whose error explains P + P' and Q + Q' (both not all zero), or
// nullopt. An error E in data unit z gives, byte by byte, P + P' = E and Q + Q' = g^z E, so
// z = log(Q + Q') - log(P + P') wherever E is not zero, the same z for every such byte and
// zero in both where E is zero (Anvin, "The mathematics of RAID-6", section 5). Bytewise: it
// runs only on a stripe that did not check.
std::optional<unsigned> locate_data(const uint8_t* p, const uint8_t* p2, const uint8_t* q,
                                    const uint8_t* q2, unsigned data_members, size_t len) {
  std::optional<unsigned> z;
  for (size_t i = 0; i < len; ++i) {
    const uint8_t pd = p[i] ^ p2[i];
    const uint8_t qd = q[i] ^ q2[i];
    if (pd == 0 && qd == 0) continue;
    if (pd == 0 || qd == 0) return std::nullopt;  // no data error leaves one of them whole
    const unsigned here = (kGf.log[qd] + 255u - kGf.log[pd]) % 255;
    if (here >= data_members || (z && *z != here)) return std::nullopt;
    z = here;
  }
  return z;
}

}  // namespace

namespace detail {
std::span<const PqKernel> pq_kernels() { return kPqKernels; }
void compute_pq_with(const PqKernel& kernel, std::span<const uint8_t* const> data, uint8_t* p,
                     uint8_t* q, size_t len) {
  pq_with(kernel, data, p, q, len);
}
}  // namespace detail

void compute_parity(const Geometry& g, std::span<const uint8_t* const> data, uint8_t* p, uint8_t* q,
                    size_t len) {
  if (!shape_ok(g) || data.size() < g.data_members || p == nullptr || len == 0) return;
  const auto srcs = data.first(g.data_members);
  if (g.raid == Raid::k6) {
    if (q == nullptr) return;
    gen_pq(srcs, p, q, len);
  } else {
    gen_p(srcs, p, len);
  }
}

bool reconstruct(const Geometry& g, std::span<uint8_t* const> units, std::span<const unsigned> lost,
                 size_t len) {
  if (!shape_ok(g)) return false;
  const unsigned d = g.data_members;
  const unsigned n = g.members();
  if (units.size() < n || lost.size() > g.parity_members) return false;
  for (size_t i = 0; i < lost.size(); ++i) {
    if (lost[i] >= n) return false;
    for (size_t j = 0; j < i; ++j) {
      if (lost[j] == lost[i]) return false;
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    if (units[i] == nullptr) return false;
  }
  if (lost.empty() || len == 0) return true;

  const unsigned pi = d;      // index of P
  const unsigned qi = d + 1;  // index of Q (RAID 6)
  uint8_t* const P = units[pi];
  uint8_t* const Q = g.raid == Raid::k6 ? units[qi] : nullptr;
  std::vector<const uint8_t*> data(units.begin(), units.begin() + d);

  // The lost units, data first, in index order.
  std::vector<unsigned> gone(lost.begin(), lost.end());
  std::sort(gone.begin(), gone.end());

  // A data unit from P and the other data units.
  auto data_from_p = [&](unsigned x) {
    std::vector<const uint8_t*> srcs;
    for (unsigned i = 0; i < d; ++i) {
      if (i != x) srcs.push_back(units[i]);
    }
    srcs.push_back(P);
    gen_p(srcs, units[x], len);
  };

  if (gone.size() == 1) {
    const unsigned x = gone[0];
    if (x < d) {
      data_from_p(x);
    } else if (x == pi) {
      gen_p(data, P, len);
    } else {  // Q: recompute it, P into scratch (P itself is read only)
      Scratch sp = scratch(len);
      gen_pq(data, sp.get(), Q, len);
    }
    return true;
  }

  // RAID 6, two lost units: gone[0] < gone[1].
  const unsigned x = gone[0];
  const unsigned y = gone[1];
  if (x == pi && y == qi) {  // P and Q
    gen_pq(data, P, Q, len);
    return true;
  }
  if (y == qi) {  // D_x and Q: D_x from P, then Q
    data_from_p(x);
    Scratch sp = scratch(len);
    gen_pq(data, sp.get(), Q, len);
    return true;
  }
  Scratch sa = scratch(len);
  Scratch sb = scratch(len);
  if (y == pi) {
    // D_x and P: with D_x zeroed, Q' = Q + g^x D_x, so D_x = g^-x (Q + Q'); then P.
    std::memset(units[x], 0, len);
    gen_pq(data, P, sb.get(), len);  // P' is scratch here: P is lost
    const std::array<const uint8_t*, 2> qq{Q, sb.get()};
    gen_p(qq, sa.get(), len);  // g^x D_x
    mul_vec(gf_pow2(255 - x % 255), sa.get(), units[x], len);
    gen_p(data, P, len);
    return true;
  }
  // D_x and D_y (x < y): with both zeroed, Pxy = P + P' = D_x + D_y and
  // Qxy = Q + Q' = g^x D_x + g^y D_y. Then (Anvin, section 4)
  //   D_x = A Pxy + B Qxy,  A = g^(y-x) / (g^(y-x) + 1),  B = g^-x / (g^(y-x) + 1)
  //   D_y = Pxy + D_x.
  uint8_t* const Dx = units[x];
  uint8_t* const Dy = units[y];
  std::memset(Dx, 0, len);
  std::memset(Dy, 0, len);
  gen_pq(data, sa.get(), sb.get(), len);  // P', Q'
  const std::array<const uint8_t*, 2> pp{P, sa.get()};
  const std::array<const uint8_t*, 2> qq{Q, sb.get()};
  gen_p(pp, Dy, len);  // Pxy
  gen_p(qq, Dx, len);  // Qxy
  const uint8_t gyx = gf_pow2(y - x);
  const uint8_t denom = gf_inv8(static_cast<uint8_t>(gyx ^ 1));
  const uint8_t a = gf_mul8(gyx, denom);
  const uint8_t b = gf_mul8(gf_pow2(255 - x % 255), denom);
  mul_vec(a, Dy, sa.get(), len);  // A Pxy
  mul_vec(b, Dx, sb.get(), len);  // B Qxy
  const std::array<const uint8_t*, 2> ab{sa.get(), sb.get()};
  gen_p(ab, Dx, len);  // D_x
  const std::array<const uint8_t*, 2> yx{Dy, Dx};
  gen_p(yx, sa.get(), len);  // Pxy + D_x
  std::memcpy(Dy, sa.get(), len);
  return true;
}

StripeCheck check_stripe(const Geometry& g, std::span<uint8_t* const> units,
                         std::span<const unsigned> lost, std::span<uint8_t* const> scratch,
                         size_t len) {
  if (!shape_ok(g) || units.size() < g.members() || scratch.size() < g.parity_members ||
      len == 0) {
    return {};
  }
  const unsigned d = g.data_members;
  const bool raid6 = g.raid == Raid::k6;
  const std::vector<const uint8_t*> data(units.begin(), units.begin() + d);
  if (raid6) {
    gen_pq(data, scratch[0], scratch[1], len);
  } else {
    gen_p(data, scratch[0], len);
  }
  const bool p_bad = std::memcmp(units[d], scratch[0], len) != 0;
  const bool q_bad = raid6 && std::memcmp(units[d + 1], scratch[1], len) != 0;
  if (!p_bad && !q_bad) return {};
  // A lost unit was rebuilt from one equation: one is left, which says that something
  // disagrees, not what.
  if (!lost.empty()) return {Mismatch::kUnlocated, 0};
  if (!q_bad) return {Mismatch::kP, d};
  if (!p_bad) return {Mismatch::kQ, d + 1};
  if (auto z = locate_data(units[d], scratch[0], units[d + 1], scratch[1], d, len)) {
    return {Mismatch::kData, *z};
  }
  return {Mismatch::kUnlocated, 0};
}

std::vector<unsigned> repair_stripe(const Geometry& g, std::span<uint8_t* const> units,
                                    const StripeCheck& check, std::span<uint8_t* const> scratch,
                                    size_t len) {
  const unsigned d = g.data_members;
  const bool raid6 = g.raid == Raid::k6;
  switch (check.mismatch) {
    case Mismatch::kNone:
      return {};
    case Mismatch::kP:
      std::memcpy(units[d], scratch[0], len);
      return {d};
    case Mismatch::kQ:
      std::memcpy(units[d + 1], scratch[1], len);
      return {d + 1};
    case Mismatch::kData: {
      // D_z + E, E = P + P': then P and Q hold for the data as it was written.
      uint8_t* dz = units[check.unit];
      for (size_t i = 0; i < len; ++i) dz[i] ^= units[d][i] ^ scratch[0][i];
      return {check.unit};
    }
    case Mismatch::kUnlocated:
      std::memcpy(units[d], scratch[0], len);
      if (!raid6) return {d};
      std::memcpy(units[d + 1], scratch[1], len);
      return {d, d + 1};
  }
  return {};
}

}  // namespace asn::stripe

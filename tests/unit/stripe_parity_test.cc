// Stripe parity (lib/stripe, issue 10, 004 L1131): P and Q against a straightforward byte
// loop written here (its own GF(2^8) multiply, shift and reduce by 0x11D), and the rebuild
// of every lost unit and every lost pair, byte-exact, on random data; the scrub's check and
// repair of a stripe (issue 27 item 4): RAID 6 locates a wrong data unit from P and Q.
#include <gtest/gtest.h>
#include <isa-l/raid.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "asn/stripe/parity.hpp"

namespace asn::stripe {
namespace {

// GF(2^8) multiply, polynomial 0x11D, the schoolbook way.
uint8_t ref_mul(uint8_t a, uint8_t b) {
  unsigned r = 0;
  unsigned x = a;
  for (int bit = 0; bit < 8; ++bit) {
    if (b & (1u << bit)) r ^= x;
    x <<= 1;
    if (x & 0x100) x ^= 0x11D;
  }
  return static_cast<uint8_t>(r);
}

// P = XOR of the data, Q = sum g^i D_i with g = 2.
void ref_parity(const std::vector<const uint8_t*>& data, uint8_t* p, uint8_t* q, size_t len) {
  for (size_t off = 0; off < len; ++off) {
    uint8_t pv = 0;
    uint8_t qv = 0;
    uint8_t coef = 1;  // g^i
    for (const uint8_t* d : data) {
      pv ^= d[off];
      qv ^= ref_mul(coef, d[off]);
      coef = ref_mul(coef, 2);
    }
    p[off] = pv;
    if (q != nullptr) q[off] = qv;
  }
}

// Buffers of `len` bytes, 64-byte aligned, or at `skew` bytes past an aligned address.
class Buffers {
 public:
  Buffers(size_t count, size_t len, size_t skew = 0) : len_(len) {
    for (size_t i = 0; i < count; ++i) {
      storage_.emplace_back(static_cast<uint8_t*>(std::aligned_alloc(64, (len + 191) / 64 * 64)));
      ptrs_.push_back(storage_.back().get() + skew);
    }
  }
  uint8_t* operator[](size_t i) const { return ptrs_[i]; }
  const std::vector<uint8_t*>& ptrs() const { return ptrs_; }
  void randomize(std::mt19937& rng) {
    for (uint8_t* p : ptrs_) {
      for (size_t i = 0; i < len_; ++i) p[i] = static_cast<uint8_t>(rng());
    }
  }
  std::vector<std::vector<uint8_t>> copy() const {
    std::vector<std::vector<uint8_t>> out;
    for (uint8_t* p : ptrs_) out.emplace_back(p, p + len_);
    return out;
  }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  size_t len_;
  std::vector<std::unique_ptr<uint8_t, Free>> storage_;
  std::vector<uint8_t*> ptrs_;
};

Geometry geo(Raid raid, unsigned data) {
  return Geometry{raid, data, raid == Raid::k6 ? 2u : 1u, 65536};
}

TEST(StripeParityTest, ReferenceMultiplyIsTheRaid6Field) {
  EXPECT_EQ(ref_mul(0x80, 2), 0x1D);  // x^8 = x^4 + x^3 + x^2 + 1
  EXPECT_EQ(ref_mul(2, 2), 4);
  uint8_t v = 1;
  for (int i = 0; i < 255; ++i) {
    v = ref_mul(v, 2);
    if (i < 254) {
      EXPECT_NE(v, 1) << i;  // 2 generates the whole group
    }
  }
  EXPECT_EQ(v, 1);
}

void check_parity(Raid raid, unsigned d, size_t len, size_t skew, std::mt19937& rng) {
  const Geometry g = geo(raid, d);
  Buffers data(d, len, skew);
  data.randomize(rng);
  Buffers out(2, len, skew);
  std::vector<uint8_t> p(len), q(len);
  std::vector<const uint8_t*> srcs(data.ptrs().begin(), data.ptrs().end());
  ref_parity(srcs, p.data(), raid == Raid::k6 ? q.data() : nullptr, len);
  std::memset(out[0], 0xEE, len);
  std::memset(out[1], 0xEE, len);
  compute_parity(g, srcs, out[0], raid == Raid::k6 ? out[1] : nullptr, len);
  ASSERT_EQ(std::memcmp(out[0], p.data(), len), 0)
      << "P, RAID " << static_cast<int>(raid) << ", " << d << " data, len " << len;
  if (raid == Raid::k6) {
    ASSERT_EQ(std::memcmp(out[1], q.data(), len), 0) << "Q, " << d << " data, len " << len;
  }
}

TEST(StripeParityTest, MatchesByteLoopReference) {
  std::mt19937 rng(1);
  for (Raid raid : {Raid::k4, Raid::k5, Raid::k6}) {
    for (unsigned d = 2; d <= 16; ++d) {
      for (size_t len : {32, 64, 96, 4096, 65536}) check_parity(raid, d, len, 0, rng);
    }
  }
}

// Buffers that ISA-L cannot take (not aligned, or an odd length) go through the portable
// loop: the same bytes.
TEST(StripeParityTest, UnalignedBuffersAndOddLengths) {
  std::mt19937 rng(2);
  for (Raid raid : {Raid::k5, Raid::k6}) {
    for (unsigned d : {2u, 3u, 8u}) {
      for (size_t skew : {1, 8, 32}) check_parity(raid, d, 4096, skew, rng);
      for (size_t len : {1, 7, 33, 1000}) check_parity(raid, d, len, 0, rng);
    }
  }
}

// compute_parity takes the widest P and Q kernel this CPU has; every one it could take on
// another CPU (AVX2, 16-byte vectors, words) gives the byte loop's bytes, at lengths that end
// inside a vector pair, and ISA-L's pq_gen's (the RAID 6 every other tool writes).
TEST(StripeParityTest, EveryPqKernelMatchesTheByteLoopAndIsaL) {
  std::mt19937 rng(5);
  int kernels_run = 0;
  for (const detail::PqKernel& kernel : detail::pq_kernels()) {
    if (!kernel.supported) continue;
    ++kernels_run;
    for (unsigned d : {2u, 3u, 5u, 16u}) {
      for (size_t len : {1, 31, 64, 96, 4096 + 40}) {
        for (size_t skew : {0, 3}) {
          Buffers data(d, len, skew);
          data.randomize(rng);
          const std::vector<const uint8_t*> srcs(data.ptrs().begin(), data.ptrs().end());
          std::vector<uint8_t> p(len), q(len), want_p(len), want_q(len);
          ref_parity(srcs, want_p.data(), want_q.data(), len);
          detail::compute_pq_with(kernel, srcs, p.data(), q.data(), len);
          ASSERT_EQ(p, want_p) << kernel.name << ", " << d << " data, len " << len;
          ASSERT_EQ(q, want_q) << kernel.name << ", " << d << " data, len " << len;
        }
      }
    }
  }
  EXPECT_GE(kernels_run, 2);  // the 16-byte vectors and the words run everywhere

  for (unsigned d : {2u, 3u, 8u}) {
    const size_t len = 65536;
    Buffers units(d + 2, len);
    units.randomize(rng);
    std::vector<void*> isal(units.ptrs().begin(), units.ptrs().end());
    ASSERT_EQ(pq_gen(static_cast<int>(d + 2), static_cast<int>(len), isal.data()), 0);
    const std::vector<const uint8_t*> srcs(units.ptrs().begin(), units.ptrs().begin() + d);
    std::vector<uint8_t> p(len), q(len);
    compute_parity(geo(Raid::k6, d), srcs, p.data(), q.data(), len);
    EXPECT_EQ(std::memcmp(p.data(), units[d], len), 0) << d << " data: P";
    EXPECT_EQ(std::memcmp(q.data(), units[d + 1], len), 0) << d << " data: Q";
  }
}

// Every unit of a stripe of `d` data units (then P, then Q), parity computed.
Buffers stripe(const Geometry& g, size_t len, size_t skew, std::mt19937& rng) {
  Buffers units(g.members(), len, skew);
  units.randomize(rng);
  std::vector<const uint8_t*> srcs(units.ptrs().begin(), units.ptrs().begin() + g.data_members);
  compute_parity(g, srcs, units[g.data_members],
                 g.raid == Raid::k6 ? units[g.data_members + 1] : nullptr, len);
  return units;
}

void check_rebuild(const Geometry& g, std::vector<unsigned> lost, size_t len, size_t skew,
                   std::mt19937& rng) {
  Buffers units = stripe(g, len, skew, rng);
  const auto want = units.copy();
  for (unsigned l : lost) {
    for (size_t i = 0; i < len; ++i) units[l][i] = static_cast<uint8_t>(rng());
  }
  ASSERT_TRUE(reconstruct(g, units.ptrs(), lost, len));
  const auto got = units.copy();
  for (unsigned i = 0; i < g.members(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "RAID " << static_cast<int>(g.raid) << ", " << g.data_members
                               << " data, lost " << lost[0]
                               << (lost.size() > 1 ? "+" + std::to_string(lost[1]) : "")
                               << ", unit " << i << ", len " << len << ", skew " << skew;
  }
}

TEST(StripeReconstructTest, EverySingleLostUnit) {
  std::mt19937 rng(3);
  for (Raid raid : {Raid::k4, Raid::k5, Raid::k6}) {
    for (unsigned d : {2u, 3u, 5u, 16u}) {
      const Geometry g = geo(raid, d);
      for (unsigned l = 0; l < g.members(); ++l) check_rebuild(g, {l}, 4096, 0, rng);
    }
  }
}

TEST(StripeReconstructTest, EveryLostPairRaid6) {
  std::mt19937 rng(4);
  for (unsigned d : {2u, 3u, 4u, 8u, 16u}) {
    const Geometry g = geo(Raid::k6, d);
    for (unsigned x = 0; x < g.members(); ++x) {
      for (unsigned y = 0; y < g.members(); ++y) {
        if (x != y) check_rebuild(g, {x, y}, 4096, 0, rng);
      }
    }
  }
}

TEST(StripeReconstructTest, LostPairsOnUnalignedBuffers) {
  std::mt19937 rng(5);
  const Geometry g = geo(Raid::k6, 5);
  for (unsigned x = 0; x < g.members(); ++x) {
    for (unsigned y = x + 1; y < g.members(); ++y) {
      check_rebuild(g, {x, y}, 4096, 3, rng);
      check_rebuild(g, {y, x}, 100, 0, rng);
    }
  }
}

TEST(StripeReconstructTest, LargeUnits) {
  std::mt19937 rng(6);
  const Geometry g = geo(Raid::k6, 8);
  check_rebuild(g, {0, 7}, kMaxUnitBytes, 0, rng);
  check_rebuild(g, {3, 8}, kMaxUnitBytes, 0, rng);
}

void expect_refused(const Geometry& g, std::vector<unsigned> lost) {
  std::mt19937 rng(7);
  Buffers units = stripe(g, 4096, 0, rng);
  const auto before = units.copy();
  EXPECT_FALSE(reconstruct(g, units.ptrs(), lost, 4096));
  EXPECT_EQ(units.copy(), before);
}

TEST(StripeReconstructTest, RefusesWhatTheLayoutCannotRebuild) {
  expect_refused(geo(Raid::k6, 4), {0, 1, 2});          // three lost
  expect_refused(geo(Raid::k6, 4), {0, 4, 5});          // three lost, with P and Q
  expect_refused(geo(Raid::k5, 4), {0, 1});             // two lost on RAID 5
  expect_refused(geo(Raid::k4, 3), {3, 0});             // two lost on RAID 4
  expect_refused(geo(Raid::k6, 4), {1, 1});             // a duplicate
  expect_refused(geo(Raid::k5, 4), {5});                // out of range (members are 0..4)
  expect_refused(geo(Raid::k6, 4), {0, 6});             // out of range (members are 0..5)
  expect_refused(Geometry{Raid::k6, 4, 1, 4096}, {0});  // not a RAID 6 shape
}

TEST(StripeReconstructTest, NothingLostChangesNothing) {
  std::mt19937 rng(8);
  const Geometry g = geo(Raid::k6, 4);
  Buffers units = stripe(g, 4096, 0, rng);
  const auto before = units.copy();
  EXPECT_TRUE(reconstruct(g, units.ptrs(), {}, 4096));
  EXPECT_EQ(units.copy(), before);
}

// ---- scrub (issue 27 item 4) -------------------------------------------------------------

// Corrupts `unit` of a consistent stripe at a few bytes, checks and repairs it: the verdict
// must be `want` (at unit `at` for kP, kQ, kData) and the repair must give back the stripe
// as it was where the culprit could be told (every kind but kUnlocated).
void check_scrub(const Geometry& g, std::vector<unsigned> corrupt, Mismatch want, unsigned at,
                 std::mt19937& rng) {
  const size_t len = 4096;
  Buffers units = stripe(g, len, 0, rng);
  Buffers scratch(2, len);
  const auto was = units.copy();
  for (size_t k = 0; k < corrupt.size(); ++k) {
    for (size_t i = 7 * k; i < 7 * k + 5; ++i) units[corrupt[k]][i] ^= static_cast<uint8_t>(i + 1);
  }
  const StripeCheck check = check_stripe(g, units.ptrs(), {}, scratch.ptrs(), len);
  ASSERT_EQ(check.mismatch, want) << "corrupt unit " << corrupt[0];
  if (want != Mismatch::kUnlocated) {
    EXPECT_EQ(check.unit, at);
  }
  const std::vector<unsigned> changed = repair_stripe(g, units.ptrs(), check, scratch.ptrs(), len);
  EXPECT_EQ(check_stripe(g, units.ptrs(), {}, scratch.ptrs(), len).mismatch, Mismatch::kNone);
  if (want == Mismatch::kUnlocated || g.raid != Raid::k6) return;
  EXPECT_EQ(changed, std::vector<unsigned>{at});
  EXPECT_EQ(units.copy(), was) << "RAID 6 repairs the culprit itself";
}

TEST(StripeCheckTest, AConsistentStripeChecks) {
  std::mt19937 rng(7);
  for (Raid raid : {Raid::k4, Raid::k5, Raid::k6}) {
    const Geometry g = geo(raid, 4);
    Buffers units = stripe(g, 4096, 0, rng);
    Buffers scratch(2, 4096);
    EXPECT_EQ(check_stripe(g, units.ptrs(), {}, scratch.ptrs(), 4096).mismatch, Mismatch::kNone);
  }
}

TEST(StripeCheckTest, Raid5ReportsPAndRewritesIt) {
  std::mt19937 rng(8);
  const Geometry g = geo(Raid::k5, 3);
  for (unsigned u = 0; u <= g.data_members; ++u) check_scrub(g, {u}, Mismatch::kP, 3, rng);
}

TEST(StripeCheckTest, Raid6LocatesEveryDataUnitAndTellsPFromQ) {
  std::mt19937 rng(9);
  for (unsigned d : {2u, 3u, 5u, 16u}) {
    const Geometry g = geo(Raid::k6, d);
    for (unsigned u = 0; u < d; ++u) check_scrub(g, {u}, Mismatch::kData, u, rng);
    check_scrub(g, {d}, Mismatch::kP, d, rng);
    check_scrub(g, {d + 1}, Mismatch::kQ, d + 1, rng);
    // Two data units wrong: no single one explains P and Q.
    check_scrub(g, {0, 1}, Mismatch::kUnlocated, 0, rng);
  }
}

TEST(StripeCheckTest, WithALostUnitAMismatchIsUnlocated) {
  std::mt19937 rng(10);
  const Geometry g = geo(Raid::k6, 4);
  Buffers units = stripe(g, 4096, 0, rng);
  Buffers scratch(2, 4096);
  units[1][3] ^= 0x40;  // a wrong data unit
  const std::vector<unsigned> lost{0};
  ASSERT_TRUE(reconstruct(g, units.ptrs(), lost, 4096));  // from P: P then holds
  EXPECT_EQ(check_stripe(g, units.ptrs(), lost, scratch.ptrs(), 4096).mismatch,
            Mismatch::kUnlocated);
}

}  // namespace
}  // namespace asn::stripe

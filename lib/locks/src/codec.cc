#include "codec.hpp"

#include <bit>

namespace asn::locks::detail {
namespace {

constexpr uint64_t kMul1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kMul2 = 0x4cf5ad432745937fULL;

uint64_t fmix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

uint64_t load(const uint8_t* at, size_t n) {
  uint64_t value = 0;
  std::memcpy(&value, at, n);
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap64(value);
  return value;
}

}  // namespace

// Two lanes of murmur3's 64-bit mixing over 16-byte blocks (so that the multiplications of
// the lanes overlap), then the tail and the length.
uint64_t checksum64(std::span<const uint8_t> bytes, uint64_t seed) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h1 = seed ^ 0x9e3779b97f4a7c15ULL;
  uint64_t h2 = ~seed;
  for (; n >= 16; p += 16, n -= 16) {
    h1 = std::rotl(h1 ^ (load(p, 8) * kMul1), 31) * kMul2 + 0x52dce729;
    h2 = std::rotl(h2 ^ (load(p + 8, 8) * kMul2), 33) * kMul1 + 0x38495ab5;
  }
  if (n >= 8) {
    h1 = std::rotl(h1 ^ (load(p, 8) * kMul1), 31) * kMul2 + 0x52dce729;
    p += 8;
    n -= 8;
  }
  if (n > 0) h2 = std::rotl(h2 ^ (load(p, n) * kMul2), 33) * kMul1 + 0x38495ab5;
  h1 ^= bytes.size();
  return fmix(h1 + fmix(h2));
}

}  // namespace asn::locks::detail

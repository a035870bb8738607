// Byte ranges of a lock request and their rules (issue 9). A request names its ranges in one
// of the two ways of 004 L1194 and L1198: list locking (a list of offset-length pairs, for
// unstructured access) or datatype locking (a strided pattern: `count` blocks of
// `block_length` bytes, `stride` bytes apart, for structured access). Both come down to the
// same list of ranges here.
//
// Ranges are half-open, [offset, offset + length), in a 64-bit file: the last byte a range
// may cover is 2^64 - 1, so the end of a range needs 65 bits (end() is 128-bit). A length
// of 0 is an empty range, refused (not "to the end of the file" as in POSIX): lock to the
// end of the space with length 2^64 - offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "asn/locks/error.hpp"

namespace asn::locks {

__extension__ typedef unsigned __int128 uint128;

// 2^64: one past the last byte of a file.
inline constexpr uint128 kSpaceEnd = uint128{1} << 64;

// The most ranges one request may name (list entries or strided blocks), unless the table is
// configured otherwise: enough for any real access pattern, small enough that a hostile
// request cannot make the table allocate without bound.
inline constexpr size_t kDefaultMaxRanges = 65536;

enum class Mode : uint8_t { kShared, kExclusive };

// "shared", "exclusive".
std::string_view name(Mode mode);

// Two locks on overlapping bytes can coexist only if both are shared.
constexpr bool compatible(Mode a, Mode b) { return a == Mode::kShared && b == Mode::kShared; }

struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;

  uint128 end() const { return uint128{offset} + length; }
  // The last byte (inclusive); only for a range validate() accepts.
  uint64_t last() const { return offset + (length - 1); }

  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// Whether the two ranges share a byte (touching ranges do not).
bool overlaps(const ByteRange& a, const ByteRange& b);

// "[100, 200)"; an end of 2^64 is written 2^64.
std::string to_string(const ByteRange& range);

// Datatype locking: blocks i = 0..count-1 at offset + i * stride, each block_length bytes.
struct Strided {
  uint64_t offset = 0;
  uint64_t block_length = 0;
  uint64_t stride = 0;  // at least block_length when count > 1 (stride == block_length:
                        // contiguous blocks); ignored when count == 1
  uint64_t count = 0;

  friend bool operator==(const Strided&, const Strided&) = default;
};

// The ranges of a request: a list (list locking) or a strided pattern (datatype locking).
using RangeSpec = std::variant<std::vector<ByteRange>, Strided>;

// The rules for a list of ranges: at least one range and at most `max_ranges`; no empty
// range; none past 2^64; no two overlapping (touching is fine); any order. nullopt when the
// list follows them; otherwise an invalid-argument error naming the first bad range by index
// (for an overlap, the later of the two, with both in the message).
std::optional<LockError> validate(std::span<const ByteRange> ranges,
                                  size_t max_ranges = kDefaultMaxRanges);
inline std::optional<LockError> validate(const std::vector<ByteRange>& ranges,
                                         size_t max_ranges = kDefaultMaxRanges) {
  return validate(std::span<const ByteRange>(ranges), max_ranges);
}

// The rules for a strided pattern: 1 <= count <= max_ranges, block_length >= 1, stride >=
// block_length when count > 1, and the last block ending at or before 2^64 (the error then
// names the first block past it and how many blocks would fit).
std::optional<LockError> validate(const Strided& strided, size_t max_ranges = kDefaultMaxRanges);

std::optional<LockError> validate(const RangeSpec& spec, size_t max_ranges = kDefaultMaxRanges);

// The blocks of a strided pattern, block 0 first (so in offset order). Throws the LockError
// validate() returns, before allocating anything.
std::vector<ByteRange> expand(const Strided& strided, size_t max_ranges = kDefaultMaxRanges);

// The ranges of either kind, in offset order. Throws the LockError validate() returns.
std::vector<ByteRange> sorted_ranges(const RangeSpec& spec, size_t max_ranges = kDefaultMaxRanges);

}  // namespace asn::locks

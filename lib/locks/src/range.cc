#include "asn/locks/range.hpp"

#include <algorithm>
#include <numeric>

#include "format.hpp"

namespace asn::locks {
namespace detail {

std::string decimal(uint128 value) {
  std::string out;
  do {
    out.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace detail

namespace {

using detail::cat;
using detail::decimal;

LockError invalid(const std::string& message, std::optional<size_t> index = {}) {
  return LockError(ErrorKind::kInvalidArgument, message, index);
}

std::string end_text(uint128 end) { return end == kSpaceEnd ? "2^64" : decimal(end); }

// The first overlap of a list whose ranges are each valid, if any (004 L1194: list locking names
// noncontiguous regions).
std::optional<LockError> find_overlap(std::span<const ByteRange> ranges) {
  if (ranges.size() < 2) return std::nullopt;  // the common case, without allocating
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a].offset < ranges[b].offset; });
  // In offset order, a range that overlaps any later one overlaps the next one.
  for (size_t k = 1; k < order.size(); ++k) {
    size_t a = order[k - 1];
    size_t b = order[k];
    if (ranges[a].end() <= ranges[b].offset) continue;
    size_t later = std::max(a, b);
    size_t earlier = std::min(a, b);
    return invalid(cat("range ", later, " ", to_string(ranges[later]), " overlaps range ", earlier,
                       " ", to_string(ranges[earlier]),
                       ": the ranges of one request must not overlap (touching is fine)"),
                   later);
  }
  return std::nullopt;
}

// The first block of a strided pattern that ends past 2^64 (there is one).
uint64_t first_block_past_end(const Strided& s) {
  uint128 room = kSpaceEnd - s.offset;  // bytes from the offset to the end of the space
  if (uint128{s.block_length} > room) return 0;
  return static_cast<uint64_t>((room - s.block_length) / s.stride) + 1;
}

}  // namespace

std::string_view name(Mode mode) { return mode == Mode::kShared ? "shared" : "exclusive"; }

bool overlaps(const ByteRange& a, const ByteRange& b) {
  return a.offset < b.end() && b.offset < a.end();
}

std::string to_string(const ByteRange& range) {
  return cat("[", range.offset, ", ", end_text(range.end()), ")");
}

std::optional<LockError> validate(std::span<const ByteRange> ranges, size_t max_ranges) {
  if (ranges.empty()) return invalid("no ranges: a request names at least one range");
  if (ranges.size() > max_ranges) {
    return invalid(cat(ranges.size(), " ranges in one request; at most ", max_ranges,
                       " are accepted (split the request, or describe a regular pattern as "
                       "strided)"));
  }
  for (size_t i = 0; i < ranges.size(); ++i) {
    const ByteRange& r = ranges[i];
    if (r.length == 0) {
      return invalid(
          cat("range ", i, " at offset ", r.offset, " is empty: a range covers at least one byte"),
          i);
    }
    if (r.end() > kSpaceEnd) {
      return invalid(cat("range ", i, " at offset ", r.offset, " with length ", r.length,
                         " ends at ", decimal(r.end()), ", past 2^64: at most ",
                         decimal(kSpaceEnd - r.offset), " bytes fit from that offset"),
                     i);
    }
  }
  return find_overlap(ranges);
}

std::optional<LockError> validate(const Strided& s, size_t max_ranges) {
  if (s.count == 0) return invalid("count is 0: a strided request covers at least one block");
  if (s.block_length == 0) {
    return invalid("block length is 0: a block covers at least one byte");
  }
  if (s.count > max_ranges) {
    return invalid(
        cat("count ", s.count, ": at most ", max_ranges, " blocks are accepted in one request"));
  }
  if (s.count > 1 && s.stride < s.block_length) {
    return invalid(cat("stride ", s.stride, " is less than the block length ", s.block_length,
                       ": the blocks would overlap; the stride must be at least the block "
                       "length"));
  }
  uint128 stride = s.count > 1 ? s.stride : 0;
  uint128 end = uint128{s.offset} + uint128{s.count - 1} * stride + s.block_length;
  if (end <= kSpaceEnd) return std::nullopt;
  uint64_t bad = first_block_past_end(s);
  uint128 bad_offset = uint128{s.offset} + uint128{bad} * stride;
  return invalid(cat("block ", bad, " at offset ", decimal(bad_offset), " ends at ",
                     decimal(bad_offset + s.block_length), ", past 2^64: ", bad,
                     " blocks fit from offset ", s.offset, " with stride ", s.stride),
                 bad);
}

std::optional<LockError> validate(const RangeSpec& spec, size_t max_ranges) {
  if (const auto* list = std::get_if<std::vector<ByteRange>>(&spec)) {
    return validate(std::span<const ByteRange>(*list), max_ranges);
  }
  return validate(std::get<Strided>(spec), max_ranges);
}

std::vector<ByteRange> expand(const Strided& s, size_t max_ranges) {
  if (auto error = validate(s, max_ranges)) throw *error;
  std::vector<ByteRange> out;
  out.reserve(s.count);
  for (uint64_t i = 0; i < s.count; ++i) out.push_back({s.offset + i * s.stride, s.block_length});
  return out;
}

std::vector<ByteRange> sorted_ranges(const RangeSpec& spec, size_t max_ranges) {
  if (const auto* strided = std::get_if<Strided>(&spec)) return expand(*strided, max_ranges);
  const auto& list = std::get<std::vector<ByteRange>>(spec);
  if (auto error = validate(std::span<const ByteRange>(list), max_ranges)) throw *error;
  std::vector<ByteRange> out = list;
  std::sort(out.begin(), out.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  return out;
}

}  // namespace asn::locks

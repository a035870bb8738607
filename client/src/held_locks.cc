#include "held_locks.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace asn::client {

namespace {

// [offset, end) with end saturated at 2^64 - 1: the last byte of the file space is never
// locked alone by a client that tracks its locks (asnd checks the ranges, not this).
std::uint64_t end_of(const ByteRange& r) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  return r.length > max - r.offset ? max : r.offset + r.length;
}

std::vector<ByteRange> listed(const Ranges& ranges) {
  if (!ranges.is_strided()) return ranges.list();
  const Strided& s = ranges.strided();
  std::vector<ByteRange> out;
  // asnd refuses more blocks than a request may have; this is only the library's record.
  const std::uint64_t count = std::min<std::uint64_t>(s.count, 1u << 20);
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i)
    out.push_back({s.offset + i * s.stride, s.block_length});
  return out;
}

}  // namespace

void HeldLocks::granted(std::string_view file, Mode mode, const Grant& grant) {
  auto& pieces = files_[std::string(file)];
  for (const ByteRange& r : grant.ranges) {
    pieces.push_back({r.offset, end_of(r), mode, grant.domain == "switch", grant.token});
  }
}

template <class F>
void HeldLocks::for_each_inside(std::string_view file, const Ranges& ranges, F&& f) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  for (const ByteRange& r : listed(ranges)) {
    const std::uint64_t first = r.offset, end = end_of(r);
    std::vector<Piece> next;
    for (const Piece& p : it->second) {
      if (end <= p.offset || p.end <= first) {
        next.push_back(p);
        continue;
      }
      if (p.offset < first) next.push_back({p.offset, first, p.mode, p.in_switch, p.token});
      Piece inside{std::max(p.offset, first), std::min(p.end, end), p.mode, p.in_switch, p.token};
      if (f(inside)) next.push_back(inside);
      if (end < p.end) next.push_back({end, p.end, p.mode, p.in_switch, p.token});
    }
    it->second = std::move(next);
  }
  if (it->second.empty()) files_.erase(it);
}

void HeldLocks::released(std::string_view file, const Ranges& ranges) {
  for_each_inside(file, ranges, [](Piece&) { return false; });
}

void HeldLocks::downgraded(std::string_view file, const Ranges& ranges) {
  for_each_inside(file, ranges, [](Piece& p) {
    p.mode = Mode::kShared;
    return true;
  });
}

std::vector<HeldLocks::Reclaim> HeldLocks::take_switch_locks() {
  std::vector<Reclaim> out;
  for (auto it = files_.begin(); it != files_.end();) {
    std::vector<Piece> exclusive, shared, kept;
    for (const Piece& p : it->second) {
      if (!p.in_switch) {
        kept.push_back(p);
      } else {
        (p.mode == Mode::kExclusive ? exclusive : shared).push_back(p);
      }
    }
    // Merge each mode's pieces (overlapping locks of the session) into disjoint ranges.
    auto merged = [](std::vector<Piece> pieces) {  // not empty
      std::sort(pieces.begin(), pieces.end(),
                [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
      std::vector<ByteRange> ranges;
      std::uint64_t first = pieces[0].offset, end = pieces[0].end;
      for (const Piece& p : pieces) {
        if (p.offset <= end) {
          end = std::max(end, p.end);
          continue;
        }
        ranges.push_back({first, end - first});
        first = p.offset;
        end = p.end;
      }
      ranges.push_back({first, end - first});
      return ranges;
    };
    if (!exclusive.empty()) out.push_back({it->first, Mode::kExclusive, merged(exclusive)});
    if (!shared.empty()) out.push_back({it->first, Mode::kShared, merged(shared)});
    if (kept.empty()) {
      it = files_.erase(it);
    } else {
      it->second = std::move(kept);
      ++it;
    }
  }
  return out;
}

std::vector<std::uint64_t> HeldLocks::tokens() const {
  std::set<std::uint64_t> out;
  for (const auto& [file, pieces] : files_) {
    for (const Piece& p : pieces) out.insert(p.token);
  }
  return {out.begin(), out.end()};
}

std::size_t HeldLocks::pieces() const {
  std::size_t n = 0;
  for (const auto& [file, pieces] : files_) n += pieces.size();
  return n;
}

}  // namespace asn::client

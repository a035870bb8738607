// Which ids cover which bytes of a file, for overlap queries in O(log n + k): the covered
// bytes are cut into disjoint segments [first, last] (inclusive, so the last byte of the
// 64-bit space needs no 65th bit), each with the set of ids covering all of it. Ids may
// cover overlapping ranges (shared locks, waiters); a query walks only the segments it
// overlaps. Two touching segments never hold the same set (they are merged), so there are
// at most 2n + 1 segments for n ranges.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

namespace asn::locks::detail {

// The last byte a range can cover: a range "to the end of the file" ends here.
inline constexpr uint64_t kLastByte = ~uint64_t{0};

// A small set of nonzero ids: the smallest inline, the rest in a vector (most segments of a
// lock table have one holder). Kept in increasing order, so that a query can stop at the
// first id it wants (the earliest waiter) and skip those below a bound; ids mostly come in
// increasing order (request ids count up), which appends.
class IdSet {
 public:
  IdSet() = default;
  explicit IdSet(uint64_t id) : one_(id) {}

  bool empty() const { return one_ == 0; }
  size_t size() const { return empty() ? 0 : 1 + more_.size(); }
  void insert(uint64_t id);
  void erase(uint64_t id);
  // Erases every id of `sorted` (increasing) in one pass; returns how many it erased.
  size_t erase_all(const std::vector<uint64_t>& sorted);
  bool operator==(const IdSet& other) const;

  // Calls fn(id) for each id, in increasing order, until it returns true; returns whether
  // one did.
  template <typename Fn>
  bool any(Fn&& fn) const {
    if (empty()) return false;
    if (fn(one_)) return true;
    for (uint64_t id : more_) {
      if (fn(id)) return true;
    }
    return false;
  }

  // any() over the ids greater than `floor` only.
  template <typename Fn>
  bool any_above(uint64_t floor, Fn&& fn) const {
    if (empty()) return false;
    if (one_ > floor && fn(one_)) return true;
    for (auto it = std::upper_bound(more_.begin(), more_.end(), floor); it != more_.end(); ++it) {
      if (fn(*it)) return true;
    }
    return false;
  }

 private:
  uint64_t one_ = 0;
  std::vector<uint64_t> more_;
};

class SegmentIndex {
 public:
  // Adds `id` over [first, last]; the id must not already cover any of those bytes.
  void add(uint64_t first, uint64_t last, uint64_t id);
  // Removes `id` from [first, last], which it covers.
  void remove(uint64_t first, uint64_t last, uint64_t id);

  // An id and the bytes it covers.
  struct Cover {
    uint64_t first = 0;
    uint64_t last = 0;
    uint64_t id = 0;
  };
  // remove() of each cover, in one pass over the segments they overlap: O(s + k log n) for
  // s segments holding k ids in all under the covers, where n removes one by one would
  // each rewrite the id set of a segment that many ids share.
  void remove_all(std::vector<Cover> covers);

  // Calls fn(seg_first, seg_last, ids) for each segment overlapping [first, last], in offset
  // order, until it returns true; returns whether one did. The segment is not clipped.
  template <typename Fn>
  bool any(uint64_t first, uint64_t last, Fn&& fn) const {
    auto it = map_.upper_bound(first);
    if (it != map_.begin() && std::prev(it)->second.last >= first) --it;
    for (; it != map_.end() && it->first <= last; ++it) {
      if (fn(it->first, it->second.last, it->second.ids)) return true;
    }
    return false;
  }

  bool empty() const { return map_.empty(); }
  size_t segments() const { return map_.size(); }

 private:
  struct Segment {
    uint64_t last = 0;
    IdSet ids;
  };
  using Map = std::map<uint64_t, Segment>;

  // Makes `at` the first byte of a segment if a segment covers it.
  void split(uint64_t at);
  // Merges the segment starting at `at` into the one ending at at - 1 if they hold the same
  // ids.
  void merge_at(uint64_t at);

  Map map_;
};

}  // namespace asn::locks::detail

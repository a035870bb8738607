#include "segment_index.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

namespace asn::locks::detail {
namespace {

constexpr uint64_t kLastByte = std::numeric_limits<uint64_t>::max();

}  // namespace

void IdSet::insert(uint64_t id) {
  if (one_ == 0) {
    one_ = id;
  } else {
    more_.push_back(id);
  }
}

void IdSet::erase(uint64_t id) {
  if (one_ == id) {
    if (more_.empty()) {
      one_ = 0;
    } else {
      one_ = more_.back();
      more_.pop_back();
    }
    return;
  }
  auto it = std::find(more_.begin(), more_.end(), id);
  if (it == more_.end()) return;
  *it = more_.back();
  more_.pop_back();
}

bool IdSet::operator==(const IdSet& other) const {
  if (size() != other.size()) return false;
  if (size() <= 1) return one_ == other.one_;
  std::vector<uint64_t> a = more_;
  std::vector<uint64_t> b = other.more_;
  a.push_back(one_);
  b.push_back(other.one_);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

void SegmentIndex::split(uint64_t at) {
  auto it = map_.upper_bound(at);
  if (it == map_.begin()) return;
  --it;
  if (it->first == at || it->second.last < at) return;
  Segment right{it->second.last, it->second.ids};
  it->second.last = at - 1;
  map_.emplace_hint(std::next(it), at, std::move(right));
}

void SegmentIndex::merge_at(uint64_t at) {
  if (at == 0) return;
  auto it = map_.find(at);
  if (it == map_.end() || it == map_.begin()) return;
  auto before = std::prev(it);
  if (before->second.last != at - 1 || !(before->second.ids == it->second.ids)) return;
  before->second.last = it->second.last;
  map_.erase(it);
}

void SegmentIndex::add(uint64_t first, uint64_t last, uint64_t id) {
  split(first);
  if (last != kLastByte) split(last + 1);
  uint64_t pos = first;
  auto it = map_.lower_bound(first);
  while (true) {
    if (it == map_.end() || it->first > last) {  // the rest is uncovered
      map_.emplace_hint(it, pos, Segment{last, IdSet(id)});
      break;
    }
    if (it->first > pos) map_.emplace_hint(it, pos, Segment{it->first - 1, IdSet(id)});
    it->second.ids.insert(id);
    if (it->second.last == last) break;  // segments end at or before `last` after the split
    pos = it->second.last + 1;
    ++it;
  }
  merge_at(first);
  if (last != kLastByte) merge_at(last + 1);
}

void SegmentIndex::remove(uint64_t first, uint64_t last, uint64_t id) {
  split(first);
  if (last != kLastByte) split(last + 1);
  for (auto it = map_.lower_bound(first); it != map_.end() && it->first <= last;) {
    it->second.ids.erase(id);
    it = it->second.ids.empty() ? map_.erase(it) : std::next(it);
  }
  merge_at(first);
  if (last != kLastByte) merge_at(last + 1);
}

}  // namespace asn::locks::detail

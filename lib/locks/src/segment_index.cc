#include "segment_index.hpp"

#include <algorithm>
#include <iterator>

namespace asn::locks::detail {

void IdSet::insert(uint64_t id) {
  if (one_ == 0) {
    one_ = id;
  } else if (id < one_) {
    more_.insert(more_.begin(), one_);
    one_ = id;
  } else if (more_.empty() || more_.back() < id) {
    more_.push_back(id);
  } else {
    more_.insert(std::lower_bound(more_.begin(), more_.end(), id), id);
  }
}

void IdSet::erase(uint64_t id) {
  if (one_ == id) {
    if (more_.empty()) {
      one_ = 0;
    } else {
      one_ = more_.front();
      more_.erase(more_.begin());
    }
    return;
  }
  auto it = std::lower_bound(more_.begin(), more_.end(), id);
  if (it != more_.end() && *it == id) more_.erase(it);
}

size_t IdSet::erase_all(const std::vector<uint64_t>& sorted) {
  auto gone = [&](uint64_t id) { return std::binary_search(sorted.begin(), sorted.end(), id); };
  if (empty()) return 0;
  const size_t before = size();
  std::erase_if(more_, gone);
  if (gone(one_)) {
    if (more_.empty()) {
      one_ = 0;
    } else {
      one_ = more_.front();
      more_.erase(more_.begin());
    }
  }
  return before - size();
}

bool IdSet::operator==(const IdSet& other) const {
  return one_ == other.one_ && more_ == other.more_;  // both in increasing order
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
  if (last != detail::kLastByte) split(last + 1);
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
  if (last != detail::kLastByte) merge_at(last + 1);
}

void SegmentIndex::remove(uint64_t first, uint64_t last, uint64_t id) {
  split(first);
  if (last != detail::kLastByte) split(last + 1);
  for (auto it = map_.lower_bound(first); it != map_.end() && it->first <= last;) {
    it->second.ids.erase(id);
    it = it->second.ids.empty() ? map_.erase(it) : std::next(it);
  }
  merge_at(first);
  if (last != detail::kLastByte) merge_at(last + 1);
}

void SegmentIndex::remove_all(std::vector<Cover> covers) {
  if (covers.empty()) return;
  std::vector<uint64_t> ids;
  std::vector<uint64_t> cuts;  // segment starts the removal may leave mergeable
  ids.reserve(covers.size());
  for (const Cover& c : covers) {
    ids.push_back(c.id);
    cuts.push_back(c.first);
    if (c.last != detail::kLastByte) cuts.push_back(c.last + 1);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (uint64_t at : cuts) split(at);
  // The covers' bytes, joined where they overlap or touch: each segment is visited once.
  std::sort(covers.begin(), covers.end(),
            [](const Cover& a, const Cover& b) { return a.first < b.first; });
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const Cover& c : covers) {
    if (!spans.empty() && (spans.back().second >= c.first || spans.back().second + 1 == c.first)) {
      spans.back().second = std::max(spans.back().second, c.last);
    } else {
      spans.emplace_back(c.first, c.last);
    }
  }
  for (const auto& [first, last] : spans) {
    for (auto it = map_.lower_bound(first); it != map_.end() && it->first <= last;) {
      it->second.ids.erase_all(ids);
      it = it->second.ids.empty() ? map_.erase(it) : std::next(it);
    }
  }
  for (uint64_t at : cuts) merge_at(at);
}

}  // namespace asn::locks::detail

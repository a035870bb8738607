#include "text.hpp"

#include <algorithm>

namespace asn::schedule::detail {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  // Up to three edits, and fewer than half the word: "slot_lenght" -> "slot_length".
  size_t limit = std::min<size_t>(3, std::max<size_t>(1, wrong.size() / 2));
  if (wrong.size() <= 64) {  // the distance is quadratic: no suggestions for long junk
    const std::string* best = nullptr;
    size_t best_distance = limit + 1;
    for (const auto& candidate : candidates) {
      size_t distance = edit_distance(wrong, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = &candidate;
      }
    }
    if (best != nullptr) return cat(" (did you mean '", *best, "'?)");
  }
  return cat(" (one of: ", join(candidates), ")");
}

std::string quote(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  if (text.size() <= kMax) {
    out += text;
  } else {
    out += text.substr(0, kMax - 3);
    out += "...";
  }
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';  // no control characters in messages
  }
  return out + "'";
}

}  // namespace asn::schedule::detail

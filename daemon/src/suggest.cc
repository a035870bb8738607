#include "suggest.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace asn {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  // Up to three edits, and fewer than half the word: "sratch" -> "scratch", not "id" -> "lo".
  size_t limit = std::min<size_t>(3, std::max<size_t>(1, wrong.size() / 2));
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(wrong, c);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  if (best != nullptr) return fmt::format(" (did you mean '{}'?)", *best);
  std::string all;
  for (const auto& c : candidates) all += (all.empty() ? "" : ", ") + c;
  return fmt::format(" (one of: {})", all);
}

}  // namespace asn

#include "asn/text/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace asn::text {

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

std::optional<std::string> closest(std::string_view wrong,
                                   const std::vector<std::string>& candidates) {
  // Up to three edits, and fewer than half the word: "sratch" -> "scratch", not "id" -> "lo".
  size_t limit = std::min<size_t>(3, std::max<size_t>(1, wrong.size() / 2));
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: skip what cannot be close.
    const size_t gap = wrong.size() > c.size() ? wrong.size() - c.size() : c.size() - wrong.size();
    if (gap > limit) continue;
    size_t d = edit_distance(wrong, c);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string>& candidates) {
  if (candidates.empty()) return "";
  if (auto best = closest(wrong, candidates)) return fmt::format(" (did you mean '{}'?)", *best);
  return fmt::format(" (one of: {})", join(candidates));
}

std::string escaped(std::string_view text, size_t max_bytes) {
  std::string out;
  const size_t shown = std::min(text.size(), max_bytes);
  for (size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  if (shown < text.size()) out += "...";
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string quoted(std::string_view text, size_t max_bytes) {
  std::string out = "'" + escaped(text, max_bytes) + "'";
  if (text.size() > max_bytes) out += fmt::format(" ({} bytes)", text.size());
  return out;
}

std::string printable(std::string_view message) {
  auto control = [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f;
  };
  if (std::none_of(message.begin(), message.end(), control)) return std::string(message);
  std::string out;
  out.reserve(message.size() + 16);
  for (const char c : message) {
    if (control(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace asn::text

#include "prescan.hpp"

#include <cstring>

#include "text.hpp"

namespace asn::schedule::detail {
namespace {

constexpr std::string_view kAdvice =
    "; describe large patterns with generators such as 'all_to_all: {ports: 64}'";

// YAML's token starts: where a flow collection, quote or comment may begin.
bool token_start(char previous) {
  return previous == ' ' || previous == '\t' || previous == '\n' || previous == '\r' ||
         previous == '[' || previous == '{' || previous == ',' || previous == ':' ||
         previous == '-' || previous == '?';
}

class Prescanner {
 public:
  Prescanner(std::string_view text, const std::string& file, const ParseLimits& limits)
      : text_(text), file_(file), limits_(limits) {}

  void run() {
    for (i_ = 0; i_ < text_.size(); ++i_) {
      const char c = text_[i_];
      if (c == '\n') {
        new_line();
        continue;
      }
      ++column_;
      if (column_ > limits_.max_line_bytes) {
        fail(
            file_, {line(), 1},
            cat("a line longer than ", limits_.max_line_bytes, " bytes (max_line_bytes)", kAdvice));
      }
      step(c);
      previous_ = c;
    }
  }

 private:
  enum class State { kPlain, kComment, kDoubleQuoted, kSingleQuoted };

  uint32_t line() const { return static_cast<uint32_t>(std::min<size_t>(line_, UINT32_MAX)); }

  void new_line() {
    if (state_ == State::kComment) state_ = State::kPlain;
    ++line_;
    column_ = 0;
    previous_ = '\n';
    if (line_ > limits_.max_lines) {
      fail(file_, {line(), 1},
           cat("the file has more than ", limits_.max_lines, " lines (max_lines)", kAdvice));
    }
    check_extents();
  }

  void step(char c) {
    switch (state_) {
      case State::kComment:
        return;
      case State::kDoubleQuoted:
        if (c == '\\') {
          ++i_;  // the escaped character (a newline there is rare enough to not count)
          ++column_;
        } else if (c == '"') {
          state_ = State::kPlain;
        }
        check_extents();
        return;
      case State::kSingleQuoted:
        if (c == '\'') {
          if (i_ + 1 < text_.size() && text_[i_ + 1] == '\'') {
            ++i_;  // '' is a quote inside the scalar
            ++column_;
          } else {
            state_ = State::kPlain;
          }
        }
        check_extents();
        return;
      case State::kPlain:
        break;
    }
    const bool start = token_start(previous_);
    if (c == '#' && (previous_ == ' ' || previous_ == '\t' || previous_ == '\n')) {
      state_ = State::kComment;
    } else if ((c == '"' || c == '\'') && start) {
      state_ = c == '"' ? State::kDoubleQuoted : State::kSingleQuoted;
      quote_start_ = i_;
      quote_mark_ = {line(), static_cast<uint32_t>(column_)};
    } else if ((c == '[' || c == '{') && (depth_ > 0 || start)) {
      if (depth_++ == 0) {
        flow_start_ = i_;
        flow_mark_ = {line(), static_cast<uint32_t>(column_)};
      }
    } else if ((c == ']' || c == '}') && depth_ > 0) {
      --depth_;
    }
    check_extents();
  }

  void check_extents() {
    if (depth_ > 0 && i_ - flow_start_ > limits_.max_flow_bytes) {
      fail(file_, flow_mark_,
           cat("a [...] or {...} longer than ", limits_.max_flow_bytes,
               " bytes (max_flow_bytes): write long lists one item a line", kAdvice));
    }
    bool quoted = state_ == State::kDoubleQuoted || state_ == State::kSingleQuoted;
    if (quoted && i_ - quote_start_ > limits_.max_scalar_bytes) {
      fail(file_, quote_mark_,
           cat("a quoted value longer than the limit of ", limits_.max_scalar_bytes,
               " bytes (max_scalar_bytes)"));
    }
  }

  std::string_view text_;
  const std::string& file_;
  const ParseLimits& limits_;
  size_t i_ = 0;
  size_t line_ = 1;
  size_t column_ = 0;
  char previous_ = '\n';
  State state_ = State::kPlain;
  size_t depth_ = 0;
  size_t flow_start_ = 0;
  Mark flow_mark_;
  size_t quote_start_ = 0;
  Mark quote_mark_;
};

}  // namespace

void prescan(std::string_view text, const std::string& file, const ParseLimits& limits) {
  if (text.size() > limits.max_file_bytes) {
    fail(file, {},
         cat("the file is larger than the limit of ", limits.max_file_bytes,
             " bytes (max_file_bytes)"));
  }
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    fail(file, {}, "the file contains NUL bytes: it is not a YAML text file");
  }
  Prescanner(text, file, limits).run();
}

}  // namespace asn::schedule::detail

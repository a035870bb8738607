#include "asn/schedule/error.hpp"

#include <algorithm>

#include "text.hpp"

namespace asn::schedule {
namespace {

using detail::cat;

// The first few problems, one a line: enough to act on without flooding a terminal.
constexpr size_t kProblemsInWhat = 5;

std::string describe(const std::vector<Problem>& problems, size_t total) {
  std::string out;
  size_t shown = std::min(problems.size(), kProblemsInWhat);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += '\n';
    out += problems[i].to_string();
  }
  total = std::max(total, problems.size());
  if (total > shown) out += cat("\n(and ", total - shown, " more)");
  return out;
}

}  // namespace

std::string Problem::to_string() const {
  std::string out = file.empty() ? std::string("<plan>") : file;
  if (mark.known()) out += cat(":", mark.line, ":", mark.column);
  out += ": ";
  if (severity == Severity::kWarning) out += "warning: ";
  std::vector<std::string> where;
  if (!field.empty()) where.push_back(field);
  if (!phase.empty()) where.push_back(cat("phase '", phase, "'"));
  if (!switch_name.empty()) where.push_back(cat("switch '", switch_name, "'"));
  if (slot) where.push_back(cat("slot ", *slot));
  if (port) where.push_back(cat("port ", *port));
  if (!where.empty()) out += detail::join(where) + ": ";
  return out + message;
}

PlanError::PlanError(Problem problem) : PlanError(std::vector<Problem>{std::move(problem)}) {}

PlanError::PlanError(std::vector<Problem> problems, size_t total)
    : std::runtime_error(text::printable(describe(problems, total))),
      problems_(std::move(problems)) {
  if (problems_.empty()) {
    Problem unknown;
    unknown.message = "invalid plan";
    problems_.push_back(std::move(unknown));
  }
}

}  // namespace asn::schedule

namespace asn::schedule::detail {

void fail(const std::string& file, Mark mark, std::string message) {
  Problem problem;
  problem.file = file;
  problem.mark = mark;
  problem.message = std::move(message);
  throw PlanError(std::move(problem));
}

}  // namespace asn::schedule::detail

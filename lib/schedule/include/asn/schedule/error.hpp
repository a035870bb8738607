// Problems with a plan: one type for the parser's errors and the validator's findings, so
// that asnctl and asnd print them alike and map them to one gRPC status in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "asn/schedule/plan.hpp"

namespace asn::schedule {

enum class ErrorKind : uint8_t {
  kInvalidArgument,    // the plan is wrong: syntax, a bad value, a port the board lacks, ...
  kResourceExhausted,  // the plan is fine but does not fit: more slots than the board has
};

enum class Severity : uint8_t { kError, kWarning };

struct Problem {
  Severity severity = Severity::kError;
  ErrorKind kind = ErrorKind::kInvalidArgument;
  std::string file;   // the plan file ("" if none)
  Mark mark;          // where in it (line 0: nowhere in particular)
  std::string field;  // the key, as a path: "phases[1].slot_length" (parser)
  std::string phase;  // the phase, switch, slot and port concerned, when there is one
  std::string switch_name;
  std::optional<uint32_t> slot;
  std::optional<uint32_t> port;
  std::string message;  // what is wrong and what would be accepted

  // "plan.yaml:12:9: phase 'halo', slot 2, port 5: <message>" (warnings say "warning: ").
  std::string to_string() const;
};

// A plan that cannot be used. what() is the first problem's to_string(), followed by up to
// a few more on their own lines.
class PlanError : public std::runtime_error {
 public:
  explicit PlanError(Problem problem);
  // Errors only; at least one. `total`: how many there were, when more than are listed
  // (a validation stops listing at max_problems); what() counts the rest.
  explicit PlanError(std::vector<Problem> problems, size_t total = 0);

  ErrorKind kind() const { return problems_.front().kind; }
  const Problem& problem() const { return problems_.front(); }
  const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

}  // namespace asn::schedule

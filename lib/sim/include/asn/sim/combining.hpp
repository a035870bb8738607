// Combining of fetch-and-add requests (001 L545-569): the check that the values a run
// returned are those of some serial order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace asn::sim {

// One fetch-and-add as its requester saw it: the increment it asked for and the old value its
// reply carried.
struct FetchAdd {
  uint64_t operand = 0;
  uint64_t value = 0;
};

// The serialization principle (001 L551): the replies must be the values of the requests
// executed one after the other in some order, from `initial` to `final_value`. That order
// exists iff, sorted by value (equal values by operand, so zero increments come first), each
// value is the previous one plus the previous operand, the first is `initial` and the last
// plus its operand is `final_value`. Returns "" when it holds, else the first violation.
std::string check_serial_order(uint64_t initial, uint64_t final_value,
                               std::vector<FetchAdd> returned);

}  // namespace asn::sim

// The error of a libasnclient asynchronous call (Result<T>::error(), a std::exception_ptr)
// as tests and benchmarks look at it. Header-only: needs asn/client/locks.hpp only.
#pragma once

#include <exception>
#include <string>

#include "asn/client/locks.hpp"

namespace asn::test {

// Its message.
inline std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Its status code (an asn::client::Error, SessionLost and Conflict included).
inline client::StatusCode code_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const client::Error& e) {
    return e.code();
  }
}

}  // namespace asn::test

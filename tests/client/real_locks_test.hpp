// The fixture of libasnclient's tests against the real Locks service in process
// (tests/support/lock_stack.hpp): asnd's software domain served on a Unix socket in a
// temporary directory, and LockClients of it with short timeouts and backoffs.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "asn/client/locks.hpp"
#include "lock_stack.hpp"
#include "support.hpp"

namespace asn::test {

class RealLocksTest : public ::testing::Test {
 protected:
  // batch: the LockClients' ClientOptions::batch (their blocking calls on the Batch stream).
  explicit RealLocksTest(bool batch = false) : batch_(batch) { start(); }

  // asnd (again, on the same directory: a restart); max_message_bytes: the largest message
  // it takes.
  void start(size_t max_message_bytes = kMaxRequestBytes) {
    stack_.reset();
    stack_ = std::make_unique<LockStack>(LockStack::Kind::kSoftware, dir_.path(), LocksConfig{},
                                         "emulated-64port", max_message_bytes);
  }

  client::LockClient client() const {
    using namespace std::chrono_literals;
    client::ClientOptions options;
    options.call_timeout = test::scaled(30s);  // a backstop: no call here waits on purpose
    options.initial_backoff = 20ms;
    options.max_backoff = 200ms;
    options.batch = batch_;
    return client::LockClient(dir_.file("locks.sock"), options);
  }

  // Held entries of `file`, as asnd's lock manager has them.
  std::size_t held(const std::string& file) {
    return stack_->manager().list(file, "", 1000).held.size();
  }

  TempDir dir_;
  std::unique_ptr<LockStack> stack_;

 private:
  bool batch_;
};

}  // namespace asn::test

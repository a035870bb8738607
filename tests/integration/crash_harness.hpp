// What the crash tests share (crash_test.cc: fabric changes; tdm_crash_test.cc: schedule
// loads): the real asnd on a board and state directory that outlive it, killed with SIGKILL
// and started again; the kill delays; the environment knobs (ASN_CRASH_ITERATIONS,
// ASN_CRASH_SEED).
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "asnd_harness.hpp"

namespace asn::test {

inline uint64_t env_number(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

// `limit` is scaled (tests/README.md).
inline void set_deadline(grpc::ClientContext& context, std::chrono::seconds limit) {
  context.set_deadline(deadline_in(limit));
}

// When to kill, for a change that takes `change_ms`: 5% at once, 10% after it has ended, the
// rest over it. A kill meant to land after the change that found the old state says the
// change takes longer now than when it was measured (a machine that got busy, as CI's do):
// the later ones wait half as long again, so that some still land after it.
class KillDelays {
 public:
  KillDelays(std::mt19937& random, double change_ms)
      : random_(random), change_ms_(change_ms), after_ms_(change_ms) {}
  double draw() {
    const double u = unit_(random_);
    after_ = u >= 0.05 && u < 0.15;
    if (u < 0.05) return 0.0;
    if (after_) return after_ms_ * (1.0 + unit_(random_));
    return change_ms_ * unit_(random_);
  }
  // What the kill of the last draw found: the new state, or still the old.
  void found(bool new_state) {
    if (after_ && !new_state) after_ms_ *= 1.5;
  }

 private:
  std::mt19937& random_;
  double change_ms_;
  double after_ms_;  // the change's length as the kills meant to land after it take it
  bool after_ = false;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

// asnd on one board and state directory, started with `config` every time.
class CrashFixture : public ::testing::Test {
 protected:
  CrashFixture(std::string name_prefix, std::string config)
      : asnd_(dir_, unique_name(name_prefix)), config_(std::move(config)) {}

  // Starts asnd on the board and state directory of every earlier start.
  ::testing::AssertionResult start() {
    if (asnd_.start({}, config_)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
           << asnd_.log();
  }

  // SIGKILL, then waitpid until it is gone; its exit code.
  int kill_and_reap() {
    asnd_.signal(SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + scaled(std::chrono::seconds(30));
    while (asnd_.running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return asnd_.exit_code();
  }

  // Issues the call `start(context, queue)` starts (it returns the async reader), kills asnd
  // `delay_ms` after it was issued, and drains the queue. Fails unless the kill ended asnd;
  // `acknowledged`: asnd answered the call OK before it died.
  template <typename Response, typename Start>
  ::testing::AssertionResult call_then_kill(Start&& start, double delay_ms, bool& acknowledged) {
    grpc::CompletionQueue queue;
    grpc::ClientContext context;
    set_deadline(context, std::chrono::seconds(20));
    Response response;
    grpc::Status status;
    const auto issued = std::chrono::steady_clock::now();
    auto call = start(context, queue);
    call->Finish(&response, &status, &queue);
    std::this_thread::sleep_until(issued + std::chrono::duration<double, std::milli>(delay_ms));
    const int exit_code = kill_and_reap();
    void* tag = nullptr;
    bool ok = false;
    const bool answered = queue.Next(&tag, &ok);
    queue.Shutdown();
    while (queue.Next(&tag, &ok)) {
    }
    acknowledged = status.ok();
    if (exit_code != 128 + SIGKILL) {
      return ::testing::AssertionFailure() << "asnd ended otherwise than by the kill:\n"
                                           << asnd_.log();
    }
    if (!answered) return ::testing::AssertionFailure() << "the call never completed";
    return ::testing::AssertionSuccess();
  }

  TempDir dir_;
  AsndProcess asnd_;
  std::string config_;
};

}  // namespace asn::test

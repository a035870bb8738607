// The inside of `asnctl load-schedule --fabric` (fabric_load.hpp): one run of the two phases,
// whichever way they reach the switches. fabric_load.cc runs the steps, chooses the frame
// and reports; a LoadPath carries each step to the switches: over gRPC to each asnd
// (fabric_load_grpc.cc), or through etcd to the fabric's agents (fabric_load_etcd.cc).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "asn/schedule/fabric_file.hpp"
#include "asn/v1/tdm.grpc.pb.h"
#include "fabric_load.hpp"

namespace asnctl {

using LoadClock = std::chrono::steady_clock;

// One switch of the load and what it answered. During the arm step of the gRPC path the
// fields marked (locked) are shared with the coordinator under its mutex.
struct Member {
  std::string name;
  std::string endpoint;
  std::chrono::milliseconds timeout{0};
  // The gRPC path's connection to its asnd (none through etcd).
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<asn::v1::Tdm::Stub> stub;

  bool staged = false;
  asn::v1::StagePlanResponse stage;
  LoadClock::time_point staged_at;  // when its answer arrived
  // How long before staged_at the switch read its clock, beyond a round trip: the time a
  // report spent in etcd (0 over gRPC). The clock's age counts it.
  LoadClock::duration in_transit{0};
  std::string checked;  // a dry run: the phase's summary line
  google::protobuf::RepeatedPtrField<asn::v1::PlanProblem> warnings;  // of a dry run

  uint64_t armed_frame = 0;  // the frame at whose start it swaps (0: at once)
  asn::v1::ArmAtFrameResponse arm;
  LoadClock::time_point armed_at;  // when asnd armed: its answer less its wait for the swap
  bool swapped = false;            // (locked)
  bool disarming = false;          // (locked) disarmed because another switch failed
  bool failed = false;             // (locked) this switch failed the step; `error` says why
  std::string error;
  std::string discard_error;  // "" : discarded (or nothing to discard)
  bool discarded = false;
};

// What a run reports beyond the members.
struct Run {
  const FabricLoad& load;
  asn::schedule::FabricFile fabric;  // the switches' endpoints and timeouts, the arm margin
  std::string plan;
  std::string phase;
  OutputFormat format;
  LoadClock::time_point start;
  std::vector<Member> members;
  std::string via;  // how the steps reached the switches, for the summary line
};

// How the steps reach the switches.
class LoadPath {
 public:
  virtual ~LoadPath() = default;
  // Each member ends staged (its clock in `stage`) or failed with `error`.
  virtual void stage(Run& run) = 0;
  // Arms each member for its armed_frame and waits for the swaps, `until` being how far
  // ahead the instant is. When one fails, the others not swapped yet are disarmed
  // (`disarming`; `discard_error` when that could not be confirmed).
  virtual void arm(Run& run, LoadClock::duration until) = 0;
  // Discards what the members staged (`discarded`, or `discard_error`).
  virtual void discard(Run& run) = 0;
  // After the last step: `ok` when every switch swapped.
  virtual void finish(Run& run, bool ok) = 0;
};

// Over gRPC to each switch's asnd, as the fabric file names it. check() is the dry run.
class GrpcPath final : public LoadPath {
 public:
  explicit GrpcPath(Run& run);  // connects (lazily) to every member
  void check(Run& run);
  void stage(Run& run) override;
  void arm(Run& run, LoadClock::duration until) override;
  void discard(Run& run) override;
  void finish(Run&, bool) override {}
};

// Through etcd: opens the fabric `load.etcd_fabric` there and fills run.fabric from it.
// Throws std::runtime_error (nothing written) when the fabric is not in etcd, misses a switch
// of the plan, a switch's asnd does not report, or another load is still running;
// asn::etcd::Error when etcd cannot be read.
std::unique_ptr<LoadPath> open_etcd_path(Run& run, const asn::schedule::Plan& plan);

// Runs fn(member) for each on a thread of its own; returns when all are done.
template <typename Fn>
void each_in_parallel(std::vector<Member*> members, Fn fn) {
  std::vector<std::thread> threads;
  threads.reserve(members.size());
  for (Member* m : members) threads.emplace_back([m, &fn] { fn(*m); });
  for (auto& t : threads) t.join();
}

std::string seconds(LoadClock::duration d);
std::string join(const std::vector<std::string>& names);

}  // namespace asnctl

// A schedule switched on every switch of the fabric together, as one switch takes part
// through etcd (issue 25 item 5; the protocol is in proto/asn/fabric/v1/activation.proto).
// asnctl writes the activation; this switch, when the plan names it,
//
// - on step "stage": stages its part through the TdmManager (the same stage as the gRPC
//   StagePlan: compiled, validated, written to the inactive banks and read back, not armed)
//   and reports "staged" with its sequencer's clock, or "stage-failed" and why;
// - on step "arm": arms the staged program for the frame asnctl chose and waits for the swap
//   on a thread of its own (so that an abort still reaches it), then reports "swapped",
//   "disarmed" (aborted first) or "arm-failed";
// - on step "abort": discards what it staged for the activation, disarming it if armed.
//
// A new activation replaces one this switch has not swapped yet (its staged program is
// discarded). An activation seen after its deadline is left alone: an asnd that starts long
// after a load does nothing for it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "asn/fabric/v1/activation.pb.h"
#include "config.hpp"
#include "etcd_client.hpp"
#include "managers/tdm_manager.hpp"

namespace asn {

class ActivationAgent {
 public:
  ActivationAgent(const FabricConfig& config, etcd::Client& client, TdmManager& tdm);
  ~ActivationAgent();  // waits for an arm in flight (bounded: its frame, then 2 s)

  const std::string& key() const { return key_; }
  // From any thread, before the etcd client's calls are cancelled: a report that cannot be
  // written is given up at once.
  void stop();
  // A value of the activation key (the KeyFollower's, on its thread): "" when absent.
  void on_value(const std::string& value, int64_t revision);

 private:
  enum class Part { kNone, kStaged, kArming, kFinished };

  void begin(const fabric::v1::Activation& activation);
  PlanSource source_of(const fabric::v1::Activation& activation) const;
  // The report of a switch that sees step "arm" without having staged (asnd restarted).
  fabric::v1::ActivationReport restarted_in(const fabric::v1::Activation& activation);
  void stage(const fabric::v1::Activation& activation);
  void arm(const fabric::v1::Activation& activation);
  void abort();
  // Puts this switch's report for the activation; tried until it is written or the
  // activation's deadline has passed (asnctl then stops waiting for it anyway).
  void report(fabric::v1::ActivationReport report, int64_t deadline_unix_ms);
  void join_arm();

  FabricConfig config_;
  etcd::Client& client_;
  TdmManager& tdm_;
  std::string key_;
  std::string report_key_;

  std::mutex mutex_;  // the fields below, between the follower's thread and the arm's
  std::string id_;    // the activation this switch takes part in ("": none)
  int64_t deadline_unix_ms_ = 0;
  Part part_ = Part::kNone;
  uint64_t program_id_ = 0;  // what it staged for id_
  bool aborted_ = false;     // id_ was aborted or replaced: an arm that ends now was disarmed
  bool stopping_ = false;
  std::thread arm_thread_;
};

}  // namespace asn

// `asnctl load-schedule --fabric FABRIC PLAN`: one phase of a fabric plan on every switch at
// the same frame (issue 8 part 7, issue 25 item 5). Each switch stages its part in its
// inactive bank, and only when every switch has staged and verified its part are they all
// armed for the same future frame. If a switch fails to stage, none is armed and the staged
// banks are discarded; if one fails to arm, the others are disarmed before their swap.
//
// Two ways to the switches, one flow and one choice of the frame (fabric_load_run.hpp):
// over gRPC to each asnd the fabric file names (StagePlan, ArmAtFrame, DiscardStaged), or,
// for a fabric on etcd, through etcd: asnctl writes the activation, each switch's asnd stages
// and arms its part and reports (proto/asn/fabric/v1/activation.proto).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "asn/schedule/fabric_file.hpp"
#include "asn/schedule/frame_choice.hpp"
#include "asn/v1/tdm.pb.h"
#include "fabric_store.hpp"
#include "output.hpp"

namespace asnctl {

struct FabricLoad {
  // Over gRPC: the fabric file (endpoints, timeouts, the arm margin).
  asn::schedule::FabricFile fabric;
  // Through etcd: its context and the fabric's name there (whose stored fabric replaces
  // `fabric`), and the timeout of each etcd call.
  std::optional<FabricContext> etcd;
  std::string etcd_fabric;
  double etcd_timeout_s = 10;
  std::string plan_file;  // the path as given, for messages
  std::string plan_text;
  std::string phase;  // "" : the plan's first phase
  asn::v1::CompileAlgorithm algorithm = asn::v1::OPTIMAL;
  // Compile and validate each switch's part on its asnd (CompileSchedule, at the endpoint
  // the fabric names, through etcd too); write nothing.
  bool dry_run = false;
};

// Runs the load and prints the per-switch table (or JSON); returns the exit code. Throws
// asn::schedule::PlanError when the plan cannot be read, std::runtime_error when it is no
// fabric plan or the fabric misses one of its switches (nothing contacted then), or through
// etcd when a switch of the plan does not report or another load is running (nothing
// written); asn::etcd::Error when etcd cannot be reached.
int run_fabric_load(const FabricLoad& load, OutputFormat format);

using asn::schedule::choose_frame;
using asn::schedule::FrameChoice;
using asn::schedule::SwitchClock;

}  // namespace asnctl

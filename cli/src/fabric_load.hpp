// `asnctl load-schedule --fabric FABRIC.yaml PLAN`: one phase of a fabric plan on every
// switch at the same frame (issue 8 part 7). asnctl talks to each switch's asnd (the fabric
// file names its endpoint), stages each part in its inactive bank (StagePlan), and only when
// every switch has staged and verified its part arms them all for the same future frame
// (ArmAtFrame). If a switch fails to stage, none is armed and the staged banks are discarded
// (DiscardStaged); if one fails to arm, the others are disarmed before their swap.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "asn/schedule/fabric_file.hpp"
#include "asn/schedule/frame_choice.hpp"
#include "asn/v1/tdm.pb.h"
#include "output.hpp"

namespace asnctl {

struct FabricLoad {
  asn::schedule::FabricFile fabric;
  std::string plan_file;  // the path as given, for messages
  std::string plan_text;
  std::string phase;  // "" : the plan's first phase
  asn::v1::CompileAlgorithm algorithm = asn::v1::OPTIMAL;
  // Compile and validate each switch's part on its asnd (CompileSchedule); write nothing.
  bool dry_run = false;
};

// Runs the load and prints the per-switch table (or JSON); returns the exit code. Throws
// asn::schedule::PlanError when the plan cannot be read, std::runtime_error when it is no
// fabric plan or the fabric file misses one of its switches (nothing contacted then).
int run_fabric_load(const FabricLoad& load, OutputFormat format);

using asn::schedule::choose_frame;
using asn::schedule::FrameChoice;
using asn::schedule::SwitchClock;

}  // namespace asnctl

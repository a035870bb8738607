// The gRPC path of `load-schedule --fabric` (fabric_load_run.hpp): asnctl calls each switch's
// asnd itself (StagePlan, ArmAtFrame, DiscardStaged), one channel and one thread per switch,
// so that a fabric of many switches takes as long as its slowest switch, not their sum.
#include <condition_variable>
#include <mutex>

#include "errors.hpp"
#include "fabric_load_run.hpp"

namespace asnctl {

namespace {

using asn::v1::Tdm;

std::vector<Member*> all(std::vector<Member>& members) {
  std::vector<Member*> out;
  for (auto& m : members) out.push_back(&m);
  return out;
}

void prepare(grpc::ClientContext& context, LoadClock::duration timeout) {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout));
  context.set_wait_for_ready(false);
}

// Why a call to a switch failed, for its row and the error line.
std::string why(const Member& m, const grpc::Status& status, LoadClock::duration timeout) {
  const auto code = status.error_code();
  const bool connected = m.channel->GetState(false) == GRPC_CHANNEL_READY;
  if (!connected && code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "cannot reach asnd at " + m.endpoint + ": no connection within " + seconds(timeout);
  }
  if (!connected && code == grpc::StatusCode::UNAVAILABLE) {
    return "cannot reach asnd at " + m.endpoint + ": " + status.error_message();
  }
  if (code == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return "asnd did not answer within " + seconds(timeout) +
           " (the switch's timeout in the fabric file)";
  }
  return std::string(code_name(code)) + ": " + status.error_message();
}

void fill_source(asn::v1::PlanSource& source, const FabricLoad& load, const std::string& name) {
  source.set_text(load.plan_text);
  source.set_file(load.plan_file);
  source.set_switch_name(name);
  source.set_algorithm(load.algorithm);
}

void stage_one(Member& m, const FabricLoad& load, const std::string& phase) {
  asn::v1::StagePlanRequest request;
  fill_source(*request.mutable_plan(), load, m.name);
  request.set_phase(phase);
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->StagePlan(&context, request, &m.stage);
  m.staged_at = LoadClock::now();
  m.staged = status.ok();
  if (!status.ok()) {
    m.failed = true;
    m.error = why(m, status, m.timeout);
  }
}

void check_one(Member& m, const FabricLoad& load, const std::string& phase) {
  asn::v1::CompileScheduleRequest request;
  fill_source(*request.mutable_plan(), load, m.name);
  asn::v1::CompileScheduleResponse response;
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->CompileSchedule(&context, request, &response);
  if (!status.ok()) {
    m.failed = true;
    m.error = why(m, status, m.timeout);
    return;
  }
  m.warnings = response.warnings();
  for (const auto& p : response.phases()) {
    if (p.phase() == phase) m.checked = p.line();
  }
}

// Forgets the program `m` staged. Only ever one thread per member.
void discard_one(Member& m) {
  asn::v1::DiscardStagedRequest request;
  request.set_program_id(m.stage.program_id());
  asn::v1::DiscardStagedResponse response;
  grpc::ClientContext context;
  prepare(context, m.timeout);
  const grpc::Status status = m.stub->DiscardStaged(&context, request, &response);
  m.discarded = status.ok();
  if (!status.ok()) m.discard_error = why(m, status, m.timeout);
}

struct ArmState {
  std::mutex mutex;
  std::condition_variable changed;
  size_t done = 0;
  bool failed = false;
};

void arm_one(Member& m, LoadClock::duration until, ArmState& state) {
  asn::v1::ArmAtFrameRequest request;
  request.set_program_id(m.stage.program_id());
  request.set_frame(m.armed_frame);
  // asnd waits until 2 s past the frame (timeout_ms 0); the call may take that and the
  // switch's own timeout.
  const LoadClock::duration deadline = until + std::chrono::seconds(2) + m.timeout;
  grpc::ClientContext context;
  prepare(context, deadline);
  const grpc::Status status = m.stub->ArmAtFrame(&context, request, &m.arm);
  const LoadClock::time_point answered = LoadClock::now();
  std::lock_guard lock(state.mutex);
  ++state.done;
  if (status.ok()) {
    m.swapped = true;
    m.armed_at = answered - std::chrono::microseconds(m.arm.wait_us());
  } else if (!m.disarming) {
    m.failed = true;
    m.error = why(m, status, deadline);
    state.failed = true;
  }
  state.changed.notify_all();
}

}  // namespace

GrpcPath::GrpcPath(Run& run) {
  run.via = "over gRPC";
  for (Member& m : run.members) {
    m.channel = grpc::CreateChannel(m.endpoint, grpc::InsecureChannelCredentials());
    m.stub = Tdm::NewStub(m.channel);
  }
}

void GrpcPath::check(Run& run) {
  each_in_parallel(all(run.members), [&](Member& m) { check_one(m, run.load, run.phase); });
}

void GrpcPath::stage(Run& run) {
  each_in_parallel(all(run.members), [&](Member& m) { stage_one(m, run.load, run.phase); });
}

void GrpcPath::discard(Run& run) {
  std::vector<Member*> staged;
  for (auto& m : run.members) {
    if (m.staged) staged.push_back(&m);
  }
  each_in_parallel(staged, discard_one);
}

// ArmAtFrame on every switch at once. When one fails, the others not yet swapped are
// disarmed (DiscardStaged) while their calls still wait, and so is the one that failed.
void GrpcPath::arm(Run& run, LoadClock::duration until) {
  ArmState state;
  std::vector<std::thread> arms;
  for (auto& m : run.members) {
    arms.emplace_back([&m, until, &state] { arm_one(m, until, state); });
  }
  std::vector<Member*> to_discard;
  {
    std::unique_lock lock(state.mutex);
    state.changed.wait(lock, [&] { return state.done == run.members.size() || state.failed; });
    for (auto& m : run.members) {
      if (!state.failed || m.swapped) continue;
      if (!m.failed) m.disarming = true;
      to_discard.push_back(&m);
    }
  }
  each_in_parallel(to_discard, discard_one);
  for (auto& t : arms) t.join();
}

}  // namespace asnctl

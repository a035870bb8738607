// asnctl load-schedule FILE: compile, validate and load one phase of a TDM plan on this
// switch (LoadSchedule; the swap happens at a frame boundary), or with --fabric on every
// switch of a fabric plan at the same frame (fabric_load.hpp). docs/schedule-format.md
// describes the file.
#include <cstdio>
#include <optional>
#include <string>

#include "asn/schedule/error.hpp"
#include "asn/schedule/fabric_file.hpp"
#include "asn/v1/tdm.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "fabric_load.hpp"
#include "progress.hpp"
#include "schedule_common.hpp"

namespace asnctl {

namespace {

class LoadSchedule final : public Command {
 public:
  explicit LoadSchedule(CLI::App* sub) {
    sub->add_option("FILE", file_, "The plan file (YAML, docs/schedule-format.md)")->required();
    sub->add_option("--phase", phase_, "The phase to load (default: the plan's first)")
        ->type_name("PHASE");
    add_algorithm_option(sub, algorithm_);
    switch_ = sub->add_option("--switch", switch_name_,
                              "This switch's name in a fabric plan (one switch of it)")
                  ->type_name("NAME");
    fabric_ = sub->add_option("--fabric", fabric_file_,
                              "Load a fabric plan on every switch the fabric file lists, all at "
                              "the same frame")
                  ->type_name("FABRIC.yaml");
    fabric_->excludes(switch_);
    sub->add_flag("--dry-run", dry_run_, "Compile and check against the board; write nothing");
  }
  void check() override {
    text_ = read_plan_file(file_);
    if (fabric_->count() == 0) return;
    try {
      fabric_load_.emplace();
      fabric_load_->fabric =
          asn::schedule::parse_fabric_file(read_plan_file(fabric_file_), fabric_file_);
    } catch (const asn::schedule::PlanError& e) {
      throw UsageError(std::string("--fabric: ") + e.what());
    }
    fabric_load_->plan_file = file_;
    fabric_load_->plan_text = text_;
    fabric_load_->phase = phase_;
    fabric_load_->algorithm = to_algorithm(algorithm_);
    fabric_load_->dry_run = dry_run_;
  }
  int run(Session& s) override {
    if (fabric_load_) return run_fabric_load(*fabric_load_, s.format);
    asn::v1::LoadScheduleRequest request;
    auto* source = request.mutable_plan();
    source->set_text(text_);
    source->set_file(file_);
    source->set_switch_name(switch_name_);
    source->set_algorithm(to_algorithm(algorithm_));
    request.set_phase(phase_);
    request.set_validate_only(dry_run_);

    auto stub = asn::v1::Tdm::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::LoadScheduleResponse response;
    grpc::Status status;
    {
      Progress progress((dry_run_ ? "checking " : "loading ") + file_);
      status = stub->LoadSchedule(&context, request, &response);
    }
    s.connection.check(status);
    return print_load(response, dry_run_, s.format == OutputFormat::kJson);
  }

 private:
  std::string file_;
  std::string phase_;
  std::string algorithm_;
  std::string switch_name_;
  std::string fabric_file_;
  CLI::Option* switch_ = nullptr;
  CLI::Option* fabric_ = nullptr;
  bool dry_run_ = false;
  std::string text_;
  std::optional<FabricLoad> fabric_load_;
};

const Registrar kLoadSchedule(27, [](CLI::App& app, CommandSet& commands) {
  auto* sub = app.add_subcommand(
      "load-schedule",
      "Load a phase of a TDM plan: compile, check, write the inactive banks, swap at a frame");
  commands.add<LoadSchedule>(sub, sub);
});

}  // namespace

}  // namespace asnctl

// asnctl load-schedule FILE: compile, validate and load one phase of a TDM plan on this
// switch (LoadSchedule; the swap happens at a frame boundary), or with --fabric on every
// switch of a fabric plan at the same frame (fabric_load.hpp): through etcd when one is given
// (--etcd or $ASN_FABRIC), else over gRPC to the asnd the fabric file names.
// docs/schedule-format.md describes the file.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
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
    sub->add_option("FILE", file_, "The plan file (YAML, docs/schedule-format.md)")
        ->type_name("PATH")
        ->required();
    sub->add_option("--phase", phase_, "The phase to load (default: the plan's first)")
        ->type_name("PHASE");
    add_algorithm_option(sub, algorithm_);
    switch_ = sub->add_option("--switch", switch_name_,
                              "This switch's name in a fabric plan (one switch of it)")
                  ->type_name("NAME");
    fabric_ = sub->add_option("--fabric", fabric_file_,
                              "Load a fabric plan on every switch of the fabric, all at the same "
                              "frame: through etcd when one is given (--etcd, $ASN_FABRIC; "
                              "FABRIC is then the fabric file or the fabric's name), else over "
                              "gRPC to each asnd the fabric file names")
                  ->type_name("FABRIC");
    fabric_->excludes(switch_);
    etcd_flags_.add_to(sub);
    direct_ = sub->add_flag("--direct", direct_load_,
                            "With --fabric: call each asnd the fabric file names, even when an "
                            "etcd is given");
    direct_->needs(fabric_);
    sub->add_flag("--dry-run", dry_run_, "Compile and check against the board; write nothing");
  }
  void check() override {
    text_ = read_plan_file(file_);
    if (fabric_->count() == 0) {
      if (!etcd_flags_.etcd.empty() || !etcd_flags_.prefix.empty()) {
        throw UsageError("--etcd and --prefix go with --fabric (a load on every switch)");
      }
      return;
    }
    fabric_load_.emplace();
    const char* env = std::getenv("ASN_FABRIC");
    const bool through_etcd =
        !direct_load_ && (!etcd_flags_.etcd.empty() || (env != nullptr && *env != '\0'));
    struct stat st {};
    const bool is_file = ::stat(fabric_file_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    try {
      if (is_file || !through_etcd) {
        fabric_load_->fabric =
            asn::schedule::parse_fabric_file(read_plan_file(fabric_file_), fabric_file_);
      }
    } catch (const asn::schedule::PlanError& e) {
      throw UsageError(std::string("--fabric: ") + e.what());
    }
    if (through_etcd) {
      fabric_load_->etcd = resolve_context(etcd_flags_);
      fabric_load_->etcd_fabric = is_file ? fabric_load_->fabric.name : fabric_file_;
    }
    fabric_load_->plan_file = file_;
    fabric_load_->plan_text = text_;
    fabric_load_->phase = phase_;
    fabric_load_->algorithm = to_algorithm(algorithm_);
    fabric_load_->dry_run = dry_run_;
  }
  int run(Session& s) override {
    if (fabric_load_) {
      fabric_load_->etcd_timeout_s = s.connection.timeout_seconds();
      try {
        return run_fabric_load(*fabric_load_, s.format);
      } catch (const asn::etcd::Error& e) {
        return report_etcd_error(e);
      }
    }
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
  CLI::Option* direct_ = nullptr;
  EtcdFlags etcd_flags_;
  bool direct_load_ = false;
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

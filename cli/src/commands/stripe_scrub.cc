// asnctl stripe check|repair: a scrub of a stripe group's file (issue 27 item 4), Linux md's
// `check` and `repair` through sync_action. Every stripe is read from the members and its
// parity verified against its data; check reports the stripes that do not match (md's
// mismatch_cnt, counted in stripes), repair rewrites them. A progress bar on a terminal.
#include <cstdio>
#include <memory>
#include <string>

#include "asn/v1/stripe.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "progress.hpp"
#include "stripe_io.hpp"

namespace asnctl {

namespace {

const char* fault_text(asn::v1::ScrubFault fault) {
  switch (fault) {
    case asn::v1::SCRUB_FAULT_P:
      return "P does not match the data";
    case asn::v1::SCRUB_FAULT_Q:
      return "Q does not match the data";
    case asn::v1::SCRUB_FAULT_DATA:
      return "data unit wrong (located from P and Q)";
    case asn::v1::SCRUB_FAULT_UNLOCATED:
      return "P and Q do not match, no single unit to blame";
    default:
      return "?";
  }
}

bool has_port(asn::v1::ScrubFault fault) {
  return fault == asn::v1::SCRUB_FAULT_P || fault == asn::v1::SCRUB_FAULT_Q ||
         fault == asn::v1::SCRUB_FAULT_DATA;
}

void print_report(const asn::v1::ScrubReport& r, bool repair) {
  if (r.stripes_size() > 0) {
    Table table({"STRIPE", "OFFSET", "PORT", "FAULT", repair ? "REPAIRED" : "ACTION"});
    for (const auto& m : r.stripes()) {
      const std::string action = repair ? (m.repaired() ? "yes" : "no (dry run)")
                                        : "asnctl stripe repair";
      table.add_row({std::to_string(m.stripe()), std::to_string(m.offset()),
                     has_port(m.fault()) ? std::to_string(m.port()) : "-", fault_text(m.fault()),
                     action});
    }
    table.print(stdout);
    if (r.mismatches() > static_cast<uint64_t>(r.stripes_size())) {
      std::printf("(the first %d of %llu listed)\n", r.stripes_size(),
                  static_cast<unsigned long long>(r.mismatches()));
    }
    std::printf("\n");
  }
  KeyValues summary;
  summary.add("stripes checked", std::to_string(r.stripes_checked()));
  summary.add("mismatches", std::to_string(r.mismatches()));
  if (repair) {
    summary.add("repaired",
                r.dry_run() ? "0 (dry run: nothing written)" : std::to_string(r.repaired()));
  }
  summary.add("member bytes read", std::to_string(r.bytes_read()));
  summary.print(stdout, 0);
}

class StripeScrub final : public Command {
 public:
  StripeScrub(CLI::App* sub, bool repair) : repair_(repair) {
    sub->add_option("GROUP", group_, "The group")->required();
    if (repair_) {
      sub->add_flag("--dry-run", dry_run_, "Report what would be repaired; write nothing");
    }
  }
  int run(Session& s) override {
    asn::v1::ScrubRequest request;
    request.set_group(group_);
    request.set_repair(repair_);
    request.set_validate_only(dry_run_);
    grpc::ClientContext context;
    prepare_stream(s, context);
    Progress progress(strprintf("%s group %u", repair_ ? "repairing" : "checking", group_));
    progress.count_in("stripes");
    auto reader = std::make_unique<asn::v1::Stripe::Stub>(s.connection.channel())
                      ->Scrub(&context, request);
    const auto last = follow_progress<asn::v1::ScrubProgress>(s, *reader, progress);
    const auto& r = last.report();
    if (s.format == OutputFormat::kJson) {
      print_json(last);
    } else {
      print_report(r, repair_);
    }
    // Like fsck: a check that found mismatches, or a repair that left some, fails (exit 1).
    return r.mismatches() > r.repaired() ? kExitFailed : kExitOk;
  }

 private:
  uint32_t group_ = 0;
  bool repair_ = false;
  bool dry_run_ = false;
};

// After `stripe` (order 45), whose subcommand this adds to.
const Registrar kStripeScrub(46, [](CLI::App& app, CommandSet& commands) {
  auto* stripe = app.get_subcommand("stripe");
  auto* check = stripe->add_subcommand(
      "check", "Verify every stripe's parity against its data (md's check); exit 1 on mismatches");
  commands.add<StripeScrub>(check, check, false);
  auto* repair = stripe->add_subcommand(
      "repair", "Rewrite what does not match: parity, or a RAID 6 data unit P and Q locate");
  commands.add<StripeScrub>(repair, repair, true);
});

}  // namespace

}  // namespace asnctl

// asnctl stripe ...: stripe groups (issue 10) and their files. create, update, delete, list,
// show and stats manage the groups asnd keeps as desired state; fail-member and rebuild-member
// a member's storage server; write and read move a file through asnd into the emulated
// board's parity path (on a real board the clients send files to the switch's ports
// themselves). Every command names its group first, by position; write and read also take
// `--group G`, their form before issue 28, so that scripts written then keep working.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asn/v1/stripe.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"
#include "progress.hpp"
#include "stripe_io.hpp"

namespace asnctl {

namespace {

using asn::v1::Stripe;

std::string ports_text(const google::protobuf::RepeatedField<uint32_t>& ports) {
  std::string out;
  for (uint32_t p : ports) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "-" : out;
}

// 65536 -> "64K", 1048576 -> "1M": the form --unit takes.
std::string unit_text(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::string size_text(int64_t bytes) { return bytes < 0 ? "-" : std::to_string(bytes); }

std::string durability_text(asn::v1::Durability d) {
  return d == asn::v1::DURABILITY_FSYNC ? "fsync" : "none";
}

void print_groups(const std::vector<const asn::v1::StripeGroup*>& groups) {
  Table table({"GROUP", "RAID", "UNIT", "DURABILITY", "DATA", "PARITY", "MEMBERS", "FAILED",
               "FILE BYTES", "BOARD"});
  for (const auto* g : groups) {
    table.add_row({std::to_string(g->spec().group()), std::to_string(g->spec().raid()),
                   unit_text(g->spec().unit_bytes()), durability_text(g->spec().durability()),
                   ports_text(g->spec().data_ports()), ports_text(g->spec().parity_ports()),
                   ports_text(g->members()), ports_text(g->failed_ports()),
                   size_text(g->file_size()), g->board()});
  }
  table.print(stdout);
}

std::unique_ptr<Stripe::Stub> stub(Session& s) { return Stripe::NewStub(s.connection.channel()); }

// create and update: the options of a group.
class GroupCommand : public Command {
 public:
  GroupCommand(CLI::App* sub, bool update) : update_(update) {
    sub->add_option("GROUP", group_, "The group: an entry of the STRIPE group table")->required();
    auto* raid = sub->add_option("--raid", raid_, "RAID level: 4, 5 or 6")
                     ->type_name("LEVEL")
                     ->check(CLI::IsMember({4u, 5u, 6u}).description(""));
    auto* data = sub->add_option("--data", data_, "Data ports: 0,1,2 or 0-2 (any order)")
                     ->type_name("PORTS");
    auto* parity = sub->add_option("--parity", parity_, "Parity ports: 3, or 3,4 for RAID 6")
                       ->type_name("PORTS");
    auto* unit = sub->add_option("--unit", unit_, "Stripe unit: 4K .. 1M, a power of two")
                     ->type_name("BYTES");
    sub->add_option("--durability", durability_,
                    "When a write is acknowledged: none (on the members; the default), fsync "
                    "(on their stable storage)")
        ->type_name("none|fsync");
    if (!update) {
      raid->required();
      data->required();
      parity->required();
      unit->required();
    } else {
      sub->add_flag("--discard-file", discard_,
                    "The group's file is not empty: drop it with the layout change");
    }
    sub->add_flag("--dry-run", dry_run_, "Check and show the result; change nothing");
  }
  void check() override {
    if (!data_.empty()) data_ports_ = parse_port_list(data_);
    if (!parity_.empty()) parity_ports_ = parse_port_list(parity_);
    if (!unit_.empty()) {
      const uint64_t bytes = parse_bytes("--unit", unit_);
      if (bytes > UINT32_MAX) throw UsageError("--unit: '" + unit_ + "' is too large");
      unit_bytes_ = static_cast<uint32_t>(bytes);
    }
    if (!durability_.empty() && durability_ != "none" && durability_ != "fsync") {
      throw UsageError("--durability: '" + durability_ + "' is not one of none, fsync");
    }
    if (update_ && raid_ == 0 && data_.empty() && parity_.empty() && unit_.empty() &&
        durability_.empty()) {
      throw UsageError("nothing to change: give --raid, --data, --parity, --unit or --durability");
    }
  }
  int run(Session& s) override {
    auto stripe = stub(s);
    asn::v1::GroupSpec spec;
    if (update_) spec = current(s, *stripe);  // options not given keep their value
    spec.set_group(group_);
    if (raid_ != 0) spec.set_raid(static_cast<asn::v1::RaidLevel>(raid_));
    if (!data_.empty()) spec.mutable_data_ports()->Assign(data_ports_.begin(), data_ports_.end());
    if (!parity_.empty()) {
      spec.mutable_parity_ports()->Assign(parity_ports_.begin(), parity_ports_.end());
    }
    if (!unit_.empty()) spec.set_unit_bytes(unit_bytes_);
    if (!durability_.empty()) {
      spec.set_durability(durability_ == "fsync" ? asn::v1::DURABILITY_FSYNC
                                                 : asn::v1::DURABILITY_NONE);
    }
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::GroupResponse response;
    if (update_) {
      asn::v1::UpdateGroupRequest request;
      *request.mutable_spec() = spec;
      request.set_validate_only(dry_run_);
      request.set_discard_file(discard_);
      s.connection.check(stripe->UpdateGroup(&context, request, &response));
    } else {
      asn::v1::CreateGroupRequest request;
      *request.mutable_spec() = spec;
      request.set_validate_only(dry_run_);
      s.connection.check(stripe->CreateGroup(&context, request, &response));
    }
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_groups({&response.group()});
    print_desired_state_outcome(dry_run_, response.changed(), response.revision());
    return kExitOk;
  }

 private:
  asn::v1::GroupSpec current(Session& s, Stripe::Stub& stripe) {
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ListGroupsResponse list;
    s.connection.check(stripe.ListGroups(&context, {}, &list));
    for (const auto& g : list.groups()) {
      if (g.spec().group() == group_) return g.spec();
    }
    // asnd says so, in its words.
    asn::v1::GroupSpec none;
    none.set_raid(asn::v1::RAID_5);
    return none;
  }

  bool update_;
  uint32_t group_ = 0;
  unsigned raid_ = 0;
  std::string data_, parity_, unit_, durability_;
  std::vector<uint32_t> data_ports_, parity_ports_;
  uint32_t unit_bytes_ = 0;
  bool discard_ = false;
  bool dry_run_ = false;
};

class StripeDelete final : public Command {
 public:
  explicit StripeDelete(CLI::App* sub) {
    sub->add_option("GROUP", group_, "The group")->required();
    sub->add_flag("--dry-run", dry_run_, "Check and show the group; change nothing");
  }
  int run(Session& s) override {
    asn::v1::DeleteGroupRequest request;
    request.set_group(group_);
    request.set_validate_only(dry_run_);
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::DeleteGroupResponse response;
    s.connection.check(stub(s)->DeleteGroup(&context, request, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_groups({&response.group()});
    std::printf(dry_run_ ? "dry run: the group would be deleted and its file dropped\n"
                         : "deleted, and its file dropped (desired state revision %llu)\n",
                static_cast<unsigned long long>(response.revision()));
    return kExitOk;
  }

 private:
  uint32_t group_ = 0;
  bool dry_run_ = false;
};

class StripeList final : public Command {
 public:
  int run(Session& s) override {
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ListGroupsResponse response;
    s.connection.check(stub(s)->ListGroups(&context, {}, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    std::vector<const asn::v1::StripeGroup*> groups;
    for (const auto& g : response.groups()) groups.push_back(&g);
    if (groups.empty()) {
      std::printf("no stripe groups ('asnctl stripe create' makes one)\n");
    } else {
      print_groups(groups);
    }
    std::printf("%d of %u groups in use; %s\n", response.groups_size(), response.capacity(),
                response.data_path()
                    ? "files pass through asnd (the emulated board)"
                    : "file data arrives on the switch's ports (asnctl stripe write/read "
                      "need the emulated board)");
    return kExitOk;
  }
};

// The group a command names: "1", or "0x1"; what else is in its place is a usage error.
uint32_t parse_group(const std::string& text) {
  const auto group = parse_number(text, UINT32_MAX);
  if (!group) {
    throw UsageError("GROUP: '" + text + "' is not a group number (asnctl stripe list shows them)");
  }
  return static_cast<uint32_t>(*group);
}

// `stripe show` and `stripe stats`: what the group is (its layout, members and their state),
// and with `counters` what its members and the switch have moved.
void print_group_stats(const asn::v1::GetGroupStatsResponse& r, bool counters) {
  const auto& g = r.group();
  KeyValues summary;
  summary.add("group", std::to_string(g.spec().group()));
  summary.add("layout",
              strprintf("RAID %d, %d data + %d parity, unit %s, stripe %s",
                        static_cast<int>(g.spec().raid()), g.spec().data_ports_size(),
                        g.spec().parity_ports_size(), unit_text(g.spec().unit_bytes()).c_str(),
                        unit_text(g.stripe_bytes()).c_str()));
  summary.add("durability", g.spec().durability() == asn::v1::DURABILITY_FSYNC
                                ? "fsync (acknowledged once on the members' stable storage)"
                                : "none (acknowledged once on the members)");
  summary.add("file", g.file_size() < 0 ? "- (held by the storage servers)"
                                        : std::to_string(g.file_size()) + " bytes");
  summary.add("failed", ports_text(g.failed_ports()));
  summary.add("board", g.board());
  summary.print(stdout, 0);
  std::printf("\n");
  Table members(counters ? std::vector<std::string>{"PORT", "ROLE", "STATE", "UNITS", "BYTES"}
                         : std::vector<std::string>{"PORT", "ROLE", "STATE"});
  for (const auto& m : r.members()) {
    std::vector<std::string> row = {std::to_string(m.port()), m.role(),
                                    m.failed() ? "failed" : "ok"};
    if (counters) {
      row.push_back(std::to_string(m.units()));
      row.push_back(std::to_string(m.bytes()));
    }
    members.add_row(std::move(row));
  }
  members.print(stdout);
  // A degraded group says why each member failed and what to do (issue 27 item 5).
  if (g.failed_ports_size() > 0) {
    std::printf("\nwarnings:\n");
    for (uint32_t port : g.failed_ports()) {
      const auto why = g.failed_why().find(port);
      std::printf(
          "  - port %u failed (%s): replace its storage, then asnctl stripe "
          "rebuild-member %u %u\n",
          port, why == g.failed_why().end() ? "fail-member" : why->second.c_str(), g.spec().group(),
          port);
    }
  }
  if (!counters) return;
  std::printf("\nswitch-wide (every group; member ports shared by groups count for each):\n");
  KeyValues switch_wide;
  switch_wide.add("data units", std::to_string(r.data_units()));
  switch_wide.add("parity units", std::to_string(r.parity_units()));
  switch_wide.add("bytes striped", std::to_string(r.bytes_striped()));
  switch_wide.add("bytes read", std::to_string(r.bytes_read()));
  switch_wide.add("units rebuilt", std::to_string(r.units_rebuilt()));
  switch_wide.add("errors", std::to_string(r.errors()));
  switch_wide.print(stdout);
}

// show: the group (-o json: its StripeGroup); stats: the group and the counters.
class StripeStats final : public Command {
 public:
  StripeStats(CLI::App* sub, bool counters) : counters_(counters) {
    sub->add_option("GROUP", group_, "The group")->required();
  }
  int run(Session& s) override {
    asn::v1::GetGroupStatsRequest request;
    request.set_group(group_);
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::GetGroupStatsResponse r;
    s.connection.check(stub(s)->GetGroupStats(&context, request, &r));
    if (s.format == OutputFormat::kJson) {
      if (counters_) {
        print_json(r);
      } else {
        print_json(r.group());
      }
      return kExitOk;
    }
    print_group_stats(r, counters_);
    return kExitOk;
  }

 private:
  bool counters_;
  uint32_t group_ = 0;
};

class StripeFailMember final : public Command {
 public:
  explicit StripeFailMember(CLI::App* sub) {
    sub->add_option("GROUP", group_, "The group")->required();
    sub->add_option("PORT", port_, "The member port whose storage server failed")->required();
  }
  int run(Session& s) override {
    asn::v1::MemberRequest request;
    request.set_group(group_);
    request.set_port(port_);
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::GroupResponse response;
    s.connection.check(stub(s)->FailMember(&context, request, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_groups({&response.group()});
    std::printf(
        "port %u failed: reads rebuild its units from the other members; "
        "'asnctl stripe rebuild-member %u %u' restores it\n",
        port_, group_, port_);
    return kExitOk;
  }

 private:
  uint32_t group_ = 0;
  uint32_t port_ = 0;
};

class StripeRebuildMember final : public Command {
 public:
  explicit StripeRebuildMember(CLI::App* sub) {
    sub->add_option("GROUP", group_, "The group")->required();
    sub->add_option("PORT", port_, "The failed member port, its storage server replaced")
        ->required();
  }
  int run(Session& s) override {
    asn::v1::MemberRequest request;
    request.set_group(group_);
    request.set_port(port_);
    grpc::ClientContext context;
    prepare_stream(s, context);
    Progress progress(strprintf("rebuilding port %u of group %u", port_, group_));
    progress.count_in("stripes");
    auto reader = stub(s)->RebuildMember(&context, request);
    const auto last = follow_progress<asn::v1::RebuildProgress>(s, *reader, progress);
    if (s.format == OutputFormat::kJson) {
      print_json(last);
      return kExitOk;
    }
    print_groups({&last.group()});
    std::printf("port %u of group %u rebuilt\n", port_, group_);
    return kExitOk;
  }

 private:
  uint32_t group_ = 0;
  uint32_t port_ = 0;
};

// The group of write and read: first, as every stripe command names it, or `--group G`, their
// form before issue 28, so that scripts written then keep working. With --group, GROUP's place
// holds the positional that follows the group (write's FILE).
class GroupFirst {
 public:
  void add_to(CLI::App* sub) {
    sub->add_option("GROUP", first_, "The group (with --group: what follows it)");
    option_ = sub->add_option("--group", text_, "The group, as before issue 28: instead of GROUP")
                  ->type_name("GROUP");
  }
  // The group; `next`, the positional after GROUP (or nullptr: none), is set from GROUP's place
  // when --group gave the group. `usage` is the command's form, for the errors.
  uint32_t take(std::string* next, const std::string& usage) const {
    const bool option = option_->count() > 0;
    if (option && !(next ? *next : first_).empty()) {
      throw UsageError("the group is given twice: GROUP and --group; " + usage);
    }
    if (!option && first_.empty()) throw UsageError("GROUP is required: " + usage);
    if (next && option) *next = first_;
    if (next && next->empty()) throw UsageError("FILE is required: " + usage);
    return parse_group(option ? text_ : first_);
  }

 private:
  std::string first_;
  CLI::Option* option_ = nullptr;
  std::string text_;
};

class StripeWrite final : public Command {
 public:
  explicit StripeWrite(CLI::App* sub) {
    group_.add_to(sub);
    sub->add_option("FILE", file_, "The file to write ('-': stdin)")->type_name("PATH");
    sub->add_option("--offset", offset_text_, "Where in the group's file (default 0; 64K, 1M)")
        ->type_name("BYTES");
  }
  void check() override {
    group_number_ = group_.take(&file_, "asnctl stripe write GROUP FILE");
    if (!offset_text_.empty()) offset_ = parse_bytes("--offset", offset_text_);
    if (file_ != "-" && access(file_.c_str(), R_OK) != 0) {
      throw UsageError("FILE: cannot read " + file_ + ": " + std::strerror(errno));
    }
  }
  int run(Session& s) override { return stripe_write(s, file_, group_number_, offset_); }

 private:
  GroupFirst group_;
  uint32_t group_number_ = 0;
  std::string file_;
  std::string offset_text_;
  uint64_t offset_ = 0;
};

class StripeRead final : public Command {
 public:
  explicit StripeRead(CLI::App* sub) {
    group_.add_to(sub);
    sub->add_option("--out", out_, "Where to write the bytes ('-': stdout)")
        ->type_name("FILE")
        ->required();
    sub->add_option("--offset", offset_text_, "From where in the group's file (default 0)")
        ->type_name("BYTES");
    sub->add_option("--length", length_text_, "How many bytes (default: to the end)")
        ->type_name("BYTES");
  }
  void check() override {
    group_number_ = group_.take(nullptr, "asnctl stripe read GROUP --out FILE");
    if (!offset_text_.empty()) offset_ = parse_bytes("--offset", offset_text_);
    if (!length_text_.empty()) {
      length_ = parse_bytes("--length", length_text_);
      if (length_ == 0) throw UsageError("--length: 0 bytes; leave it out to read to the end");
    }
  }
  int run(Session& s) override { return stripe_read(s, out_, group_number_, offset_, length_); }

 private:
  GroupFirst group_;
  uint32_t group_number_ = 0;
  std::string out_;
  std::string offset_text_, length_text_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
};

const Registrar kStripe(45, [](CLI::App& app, CommandSet& commands) {
  auto* stripe =
      app.add_subcommand("stripe", "Stripe groups: files striped with parity by the switch");
  stripe->require_subcommand(1);
  auto* create = stripe->add_subcommand("create", "Create a stripe group");
  commands.add<GroupCommand>(create, create, false);
  auto* update =
      stripe->add_subcommand("update", "Change a stripe group (while its file is empty)");
  commands.add<GroupCommand>(update, update, true);
  auto* del = stripe->add_subcommand("delete", "Delete a stripe group and drop its file");
  commands.add<StripeDelete>(del, del);
  auto* list = stripe->add_subcommand("list", "The stripe groups");
  commands.add<StripeList>(list);
  auto* show = stripe->add_subcommand("show", "A group: its layout, members and their state");
  commands.add<StripeStats>(show, show, false);
  auto* stats =
      stripe->add_subcommand("stats", "A group's layout and members, with their counters");
  commands.add<StripeStats>(stats, stats, true);
  auto* write = stripe->add_subcommand("write", "Write a file into a group (emulated board)");
  commands.add<StripeWrite>(write, write);
  auto* read = stripe->add_subcommand("read", "Read a group's file back (emulated board)");
  commands.add<StripeRead>(read, read);
  auto* fail = stripe->add_subcommand("fail-member", "Mark a member's storage server failed");
  commands.add<StripeFailMember>(fail, fail);
  auto* rebuild =
      stripe->add_subcommand("rebuild-member", "Rebuild a failed member onto its new server");
  commands.add<StripeRebuildMember>(rebuild, rebuild);
});

}  // namespace

}  // namespace asnctl

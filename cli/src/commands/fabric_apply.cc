// asnctl fabric apply FILE [--dry-run] and asnctl fabric diff FILE: the fabric file, checked
// as a whole (lib/fabric_spec), against what etcd holds, and written in one Txn guarded by
// the revision read, so that of two concurrent applies one wins and the other changes
// nothing (issue 25).
#include <cstdio>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "asn/schedule/error.hpp"
#include "command.hpp"
#include "errors.hpp"
#include "fabric_store.hpp"

namespace asnctl {

namespace {

using asn::fabric::v1::ApplyResult;

// What etcd holds cannot be built on (nothing is written).
class DamagedStore : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the file would change, read at one revision.
struct Plan {
  asn::fabric::FabricSpec spec;
  StoredFabric stored;
  std::map<std::string, std::string> wanted;
  asn::fabric::FabricDiff diff;
};

Plan plan_apply(asn::etcd::Client& client, const std::string& prefix, const std::string& file) {
  Plan plan;
  plan.spec = asn::fabric::load_fabric_spec(file);
  plan.stored = read_fabric(client, prefix, plan.spec.name());
  // Epochs continue etcd's: a fabric that had a lock map keeps one (an empty map grants
  // nothing anywhere), so that no epoch is ever numbered twice.
  if (!plan.stored.locks_damage.empty() && !plan.stored.locks) {
    throw DamagedStore(
        "the lock map in etcd (" + asn::fabric::lock_map_key(prefix, plan.spec.name()) +
        ") is not one, so its epochs cannot be continued: " + plan.stored.locks_damage +
        ". Write a map with an epoch above every one it had, or remove the key with "
        "etcdctl once no switch grants locks");
  }
  if (plan.spec.has_locks() || plan.stored.locks) {
    plan.spec.mutable_locks()->set_fabric(plan.spec.name());
    asn::fabric::number_lock_map(*plan.spec.mutable_locks(),
                                 plan.stored.locks ? &*plan.stored.locks : nullptr);
  }
  plan.wanted = asn::fabric::etcd_documents(plan.spec, prefix);
  plan.diff = asn::fabric::diff(plan.stored.documents, plan.wanted);
  return plan;
}

ApplyResult result_of(const Plan& plan, int64_t revision, bool written) {
  ApplyResult r;
  r.set_fabric(plan.spec.name());
  r.set_revision(revision);
  r.set_written(written);
  for (const auto& key : plan.diff.added) r.add_added(key);
  for (const auto& change : plan.diff.changed) r.add_changed(change.key);
  for (const auto& key : plan.diff.removed) r.add_removed(key);
  r.set_unchanged(plan.diff.unchanged);
  return r;
}

// The options and the checks both commands share.
class FabricFileCommand : public Command {
 public:
  explicit FabricFileCommand(CLI::App* sub) {
    sub->add_option("FILE", file_, "The fabric file (docs/fabric-file.md)")
        ->type_name("PATH")
        ->required();
    flags_.add_to(sub);
  }
  void check() override { context_ = resolve_context(flags_); }

  int run(Session& s) override {
    try {
      const auto etcd = open_etcd(context_, s.connection.timeout_seconds());
      asn::etcd::Client& client = *etcd;
      return run(s, client, plan_apply(client, context_.prefix, file_));
    } catch (const asn::etcd::Error& e) {
      return report_etcd_error(e);
    } catch (const asn::schedule::PlanError& e) {
      // Every problem of the file, each with its line, switch and field; nothing written.
      for (const auto& problem : e.problems()) {
        std::fprintf(stderr, "asnctl: %s\n", asn::schedule::PlanError(problem).what());
      }
      std::fprintf(stderr, "asnctl: %s: nothing was written to etcd\n", file_.c_str());
      return kExitFailed;
    } catch (const DamagedStore& e) {
      std::fprintf(stderr, "asnctl: %s; nothing was written\n", e.what());
      return kExitFailed;
    }
  }

 protected:
  virtual int run(Session& s, asn::etcd::Client& client, const Plan& plan) = 0;

  std::string file_;
  EtcdFlags flags_;
  FabricContext context_;
};

class FabricDiffCommand final : public FabricFileCommand {
 public:
  using FabricFileCommand::FabricFileCommand;

 protected:
  // Exit 0: etcd holds the file already; 1: applying it would change something (as diff(1)).
  int run(Session& s, asn::etcd::Client&, const Plan& plan) override {
    if (s.format == OutputFormat::kJson) {
      print_json(result_of(plan, plan.stored.revision, false));
    } else {
      std::printf("fabric %s: the file against etcd revision %lld\n", plan.spec.name().c_str(),
                  static_cast<long long>(plan.stored.revision));
      std::fputs(asn::fabric::render_diff(plan.diff).c_str(), stdout);
    }
    return plan.diff.empty() ? kExitOk : kExitFailed;
  }
};

class FabricApplyCommand final : public FabricFileCommand {
 public:
  explicit FabricApplyCommand(CLI::App* sub) : FabricFileCommand(sub) {
    sub->add_flag("--dry-run", dry_run_,
                  "Check the file and show what would change; write nothing");
  }

 protected:
  int run(Session& s, asn::etcd::Client& client, const Plan& plan) override {
    const bool json = s.format == OutputFormat::kJson;
    if (!json) std::fputs(asn::fabric::render_diff(plan.diff).c_str(), stdout);
    if (dry_run_ || plan.diff.empty()) {
      if (json) {
        print_json(result_of(plan, plan.stored.revision, false));
      } else {
        std::printf("%s; fabric %s stays at etcd revision %lld\n",
                    dry_run_ ? "dry run: nothing written" : "nothing to write",
                    plan.spec.name().c_str(), static_cast<long long>(plan.stored.revision));
      }
      return kExitOk;
    }
    std::vector<asn::etcd::Op> ops;
    for (const auto& key : plan.diff.added) ops.push_back(asn::etcd::Put{key, plan.wanted.at(key)});
    for (const auto& change : plan.diff.changed) {
      ops.push_back(asn::etcd::Put{change.key, plan.wanted.at(change.key)});
    }
    for (const auto& key : plan.diff.removed) ops.push_back(asn::etcd::Delete{key});
    // The fabric document changes with any switch, so guarding it guards them all; the lock
    // map is apart (its epochs were numbered from what this apply read).
    const std::string guard = asn::fabric::fabric_key(context_.prefix, plan.spec.name());
    const std::string locks = asn::fabric::lock_map_key(context_.prefix, plan.spec.name());
    const asn::etcd::TxnResult txn = client.txn(
        {{guard, plan.stored.fabric_revision}, {locks, plan.stored.locks_revision}}, ops);
    if (!txn.succeeded) {
      std::fprintf(stderr,
                   "asnctl: fabric %s changed in etcd after this apply read it at revision %lld "
                   "(now revision %lld): another apply came first, and nothing of this one was "
                   "written. Run 'asnctl fabric diff %s' and apply again\n",
                   plan.spec.name().c_str(), static_cast<long long>(plan.stored.revision),
                   static_cast<long long>(txn.revision), file_.c_str());
      return kExitFailed;
    }
    if (json) {
      print_json(result_of(plan, txn.revision, true));
    } else {
      std::printf(
          "fabric %s: wrote %zu document%s at etcd revision %lld; follow it with "
          "'asnctl fabric status %s --wait %lld'\n",
          plan.spec.name().c_str(), ops.size(), ops.size() == 1 ? "" : "s",
          static_cast<long long>(txn.revision), plan.spec.name().c_str(),
          static_cast<long long>(txn.revision));
    }
    return kExitOk;
  }

 private:
  bool dry_run_ = false;
};

// After fabric.cc (order 25), which declares the `fabric` group.
const Registrar kFabricApply(27, [](CLI::App& app, CommandSet& commands) {
  CLI::App* fabric = app.get_subcommand("fabric");
  auto* apply = fabric->add_subcommand(
      "apply", "Write a fabric file to etcd: checked as a whole, one Txn, every switch follows");
  commands.add<FabricApplyCommand>(apply, apply);
  auto* diff = fabric->add_subcommand(
      "diff", "What applying a fabric file would change in etcd (exit 1 when anything)");
  commands.add<FabricDiffCommand>(diff, diff);
});

}  // namespace

}  // namespace asnctl

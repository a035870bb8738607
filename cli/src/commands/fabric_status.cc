// asnctl fabric status: every switch of a fabric on etcd, its desired revision against the
// one its asnd reports in force, as `kubectl get nodes` shows nodes (issue 25).
#include <chrono>
#include <ctime>
#include <thread>

#include "command.hpp"
#include "errors.hpp"
#include "fabric_store.hpp"
#include "progress.hpp"

namespace asnctl {

namespace {

using asn::fabric::v1::FabricStatusView;
using asn::fabric::v1::SwitchStatusView;

std::string local_time(int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%F %T UTC", &tm);
  return text;
}

// The slots `map` gives switch `name`.
uint32_t slots_of(const asn::fabric::v1::LockMap& map, const std::string& name) {
  uint32_t slots = 0;
  for (const auto& a : map.assignments()) {
    if (a.owner() == name) slots += a.last_slot() - a.first_slot() + 1;
  }
  return slots;
}

SwitchStatusView view_of(const SwitchEntry& e, const StoredFabric& fabric) {
  SwitchStatusView v;
  v.set_name(e.name);
  v.set_desired_revision(e.desired_revision);
  if (e.spec) {
    v.set_router(e.spec->router());
    v.set_endpoint(e.spec->endpoint());
  }
  const auto& report = e.status ? e.status : e.last_status;
  if (report) {
    v.set_applied_revision(report->applied_revision());
    v.set_health(report->health());
    v.set_board_generation(report->board_generation());
    v.set_last_report_unix_ms(report->updated_unix_ms());
    v.set_lock_map_revision(report->lock_map_revision());
  }
  if (fabric.locks) v.set_lock_slots(slots_of(*fabric.locks, e.name));
  v.set_reachable(e.status.has_value());
  if (!e.status) {
    v.set_condition("unreachable");
    v.set_error(e.last_status ? "no status within its lease; last report " +
                                    local_time(e.last_status->updated_unix_ms()) + ": " +
                                    e.last_status->condition() + " at revision " +
                                    std::to_string(e.last_status->applied_revision())
                              : "its asnd has never reported");
  } else if (!e.spec) {
    v.set_condition("not-in-fabric");
    v.set_error("the fabric has no such switch, and its asnd still reports");
  } else if (e.status->condition() == "in-force" && !e.status->lock_map_error().empty()) {
    v.set_condition("failed");  // its part is in force, but it grants no lock
    v.set_error(e.status->lock_map_error());
  } else if (e.status->condition() == "in-force" &&
             (e.status->applied_revision() < e.desired_revision ||
              e.status->lock_map_revision() < fabric.locks_revision)) {
    v.set_condition("applying");  // it has not seen the new part (or lock map) yet
  } else {
    v.set_condition(e.status->condition());
    v.set_error(e.status->error());
  }
  return v;
}

FabricStatusView status_of(const StoredFabric& fabric) {
  FabricStatusView view;
  view.set_fabric(fabric.name);
  view.set_revision(fabric.revision);
  bool all = !fabric.switches.empty();
  for (const auto& [name, entry] : fabric.switches) {
    if (!entry.spec && !entry.status) continue;  // a last-status of a switch long gone
    SwitchStatusView v = view_of(entry, fabric);
    all = all && v.condition() == "in-force";
    *view.add_switches() = std::move(v);
  }
  view.set_all_in_force(all);
  return view;
}

std::string condition_text(const SwitchStatusView& v) {
  std::string text = v.condition();
  for (char& c : text) c = c == '-' ? ' ' : c;
  if (!v.error().empty()) text += ": " + v.error();
  return text;
}

void print_table(const FabricStatusView& view) {
  Table table(
      {"SWITCH", "ROUTER", "DESIRED", "APPLIED", "LOCK SLOTS", "HEALTH", "GEN", "CONDITION"});
  unsigned in_force = 0;
  for (const SwitchStatusView& v : view.switches()) {
    in_force += v.condition() == "in-force";
    table.add_row({v.name(), v.desired_revision() ? std::to_string(v.router()) : "-",
                   v.desired_revision() ? std::to_string(v.desired_revision()) : "-",
                   v.applied_revision() ? std::to_string(v.applied_revision()) : "-",
                   v.lock_map_revision() ? std::to_string(v.lock_slots()) : "-",
                   v.health().empty() ? "-" : v.health(),
                   v.board_generation() ? std::to_string(v.board_generation()) : "-",
                   condition_text(v)});
  }
  std::printf("fabric %s at etcd revision %lld: %u of %d switches in force\n",
              view.fabric().c_str(), static_cast<long long>(view.revision()), in_force,
              view.switches_size());
  table.print(stdout);
}

class FabricStatus final : public Command {
 public:
  explicit FabricStatus(CLI::App* sub) {
    sub->add_option("NAME", name_, "The fabric (default: the only one in etcd)");
    flags_.add_to(sub);
    sub->add_option("--wait", wait_revision_,
                    "Wait until every switch has applied the fabric as of this etcd revision "
                    "(the one 'asnctl fabric apply' printed)");
    sub->add_option("--wait-timeout", wait_seconds_, "How long --wait waits (default 60 s)");
  }

  void check() override { context_ = resolve_context(flags_); }

  int run(Session& s) override {
    try {
      const auto etcd = open_etcd(context_, s.connection.timeout_seconds());
      asn::etcd::Client& client = *etcd;
      const std::string name = name_.empty() ? only_fabric(client, context_.prefix) : name_;
      FabricStatusView view = read_view(client, context_.prefix, name);
      if (wait_revision_ > 0) {
        Progress progress("waiting for fabric " + name + " to be in force");
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::milliseconds(static_cast<int64_t>(wait_seconds_ * 1000));
        while (!(view.revision() >= wait_revision_ && view.all_in_force()) &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          view = read_view(client, context_.prefix, name);
        }
      }
      if (s.format == OutputFormat::kJson) {
        print_json(view);
      } else {
        print_table(view);
      }
      return view.all_in_force() ? kExitOk : kExitFailed;
    } catch (const asn::etcd::Error& e) {
      return report_etcd_error(e);
    }
  }

 private:
  static FabricStatusView read_view(asn::etcd::Client& client, const std::string& prefix,
                                    const std::string& name) {
    const StoredFabric fabric = read_fabric(client, prefix, name);
    if (!fabric.spec && fabric.switches.empty()) {
      throw asn::etcd::Error(5, false,
                             "etcd has no fabric '" + name + "' under " + prefix +
                                 ": apply its fabric file first (asnctl fabric apply FILE)");
    }
    return status_of(fabric);
  }

  static std::string only_fabric(asn::etcd::Client& client, const std::string& prefix) {
    const std::vector<std::string> names = fabric_names(client, prefix);
    if (names.size() == 1) return names[0];
    if (names.empty()) {
      throw asn::etcd::Error(5, false,
                             "etcd holds no fabric under " + prefix +
                                 ": apply a fabric file first (asnctl fabric apply FILE)");
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw UsageError("etcd holds several fabrics (" + list + "): name one");
  }

  EtcdFlags flags_;
  FabricContext context_;
  std::string name_;
  int64_t wait_revision_ = 0;
  double wait_seconds_ = 60;
};

// After fabric.cc (order 25), which declares the `fabric` group.
const Registrar kFabricStatus(26, [](CLI::App& app, CommandSet& commands) {
  CLI::App* fabric = app.get_subcommand("fabric");
  auto* status = fabric->add_subcommand(
      "status", "Every switch of a fabric on etcd: desired and applied revision, condition");
  commands.add<FabricStatus>(status, status);
});

}  // namespace

}  // namespace asnctl

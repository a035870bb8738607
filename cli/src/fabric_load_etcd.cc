// The etcd path of `load-schedule --fabric` (fabric_load_run.hpp): etcd is the only channel
// between asnctl and the switches (proto/asn/fabric/v1/activation.proto has the protocol;
// daemon/src/fabric/activation_agent.cc the switch's side). asnctl writes the activation at
// each step, guarded by the revision it wrote it at, and follows the switches' reports with
// one Watch. Writes per load: asnctl's 3 (stage, arm, done) and each switch's 2: O(switches).
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>

#include "asn/fabric/v1/activation.pb.h"
#include "asn/fabric_spec/fabric_spec.hpp"
#include "errors.hpp"
#include "etcd_watch.hpp"
#include "fabric_load_run.hpp"

namespace asnctl {

namespace {

using asn::fabric::v1::Activation;
using asn::fabric::v1::ActivationReport;

std::string new_id() {
  std::random_device random;
  const uint64_t id = (static_cast<uint64_t>(random()) << 32) | random();
  return strprintf("%016llx", static_cast<unsigned long long>(id));
}

// user@host, for the switches' logs.
std::string who() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  (void)::gethostname(host, sizeof host - 1);
  return std::string(user != nullptr ? user : "?") + "@" + host;
}

template <typename Message>
bool parse(const std::string& json, Message& out) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer asnd may report more
  return google::protobuf::util::JsonStringToMessage(json, &out, options).ok();
}

// The switches' reports for one activation, as the Watch brings them.
class Reports {
 public:
  struct Seen {
    ActivationReport report;
    LoadClock::time_point at;  // when asnctl saw it
    int64_t at_unix_ms = 0;
  };

  Reports(asn::etcd::Client& client, std::string prefix, std::string id)
      : client_(client),
        prefix_(std::move(prefix)),
        id_(std::move(id)),
        watcher_(client, prefix_) {}
  ~Reports() { stop(); }

  void start(int64_t from_revision) {
    thread_ = std::thread([this, from_revision] { follow(from_revision); });
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    watcher_.cancel();
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Waits until done(reports by switch name) holds, or `deadline`.
  template <typename Done>
  void wait(LoadClock::time_point deadline, Done done) {
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, deadline, [&] { return done(seen_); });
  }
  std::optional<Seen> of(const std::string& name) {
    std::lock_guard lock(mutex_);
    const auto it = seen_.find(name);
    if (it == seen_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void take(const asn::etcd::KeyValue& kv) {
    if (!kv.key.ends_with("/activation")) return;
    ActivationReport report;
    if (!parse(kv.value, report) || report.id() != id_) return;
    std::lock_guard lock(mutex_);
    seen_[report.switch_name()] = {report, LoadClock::now(), asn::fabric::now_unix_ms()};
    changed_.notify_all();
  }

  // Watches from `next` until stop(); after a broken stream from where it broke, after a
  // compaction from a fresh read.
  void follow(int64_t next) {
    for (;;) {
      const asn::etcd::WatchEnd end = watcher_.run(next, [&](const auto& events, int64_t) {
        for (const asn::etcd::WatchEvent& e : events) {
          if (!e.deleted) take(e.kv);
          next = e.kv.mod_revision + 1;
        }
      });
      if (end.cancelled) return;
      if (end.compacted_to > 0) {
        try {
          const asn::etcd::Range range = client_.get_prefix(prefix_);
          for (const auto& kv : range.kvs) take(kv);
          next = range.revision + 1;
        } catch (const asn::etcd::Error&) {
        }
      }
      std::unique_lock lock(mutex_);
      if (changed_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; })) {
        return;
      }
    }
  }

  asn::etcd::Client& client_;
  std::string prefix_;
  std::string id_;
  asn::etcd::Watcher watcher_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Seen> seen_;  // the latest report of each switch (mutex_)
  bool stopping_ = false;             // mutex_
  std::thread thread_;
};

bool is_step(const std::optional<Reports::Seen>& seen, std::initializer_list<const char*> steps) {
  if (!seen) return false;
  for (const char* s : steps) {
    if (seen->report.step() == s) return true;
  }
  return false;
}

class EtcdPath final : public LoadPath {
 public:
  EtcdPath(std::unique_ptr<asn::etcd::Client> client, const FabricContext& context,
           std::string fabric)
      : client_(std::move(client)),
        fabric_(std::move(fabric)),
        key_(asn::fabric::activation_key(context.prefix, fabric_)),
        reports_prefix_(context.prefix + "/fabrics/" + fabric_ + "/switches/") {}
  ~EtcdPath() override {
    if (reports_) reports_->stop();
  }

  void stage(Run& run) override;
  void arm(Run& run, LoadClock::duration until) override;
  void discard(Run& run) override;
  void finish(Run& run, bool ok) override;

 private:
  // Puts the activation at `step`, guarded by the revision it was written at last; false when
  // another load wrote it meanwhile.
  bool write(const std::string& step);
  // Waits until every member in `who` has a report with one of `steps`, or `deadline`.
  void wait_for(const std::vector<Member*>& who, std::initializer_list<const char*> steps,
                LoadClock::time_point deadline);
  LoadClock::duration longest_timeout(const Run& run) const;

  std::unique_ptr<asn::etcd::Client> client_;
  std::string fabric_;
  std::string key_;
  std::string reports_prefix_;
  Activation activation_;
  int64_t mod_revision_ = 0;  // of the activation as this load wrote it last
  LoadClock::time_point written_at_;
  std::unique_ptr<Reports> reports_;
};

LoadClock::duration EtcdPath::longest_timeout(const Run& run) const {
  std::chrono::milliseconds longest{0};
  for (const auto& m : run.members) longest = std::max(longest, m.timeout);
  return longest;
}

bool EtcdPath::write(const std::string& step) {
  activation_.set_step(step);
  const asn::etcd::TxnResult result =
      client_->txn({asn::etcd::ModRevisionIs{key_, mod_revision_}},
                   {asn::etcd::Put{key_, asn::fabric::to_json(activation_)}});
  if (!result.succeeded) return false;
  mod_revision_ = result.revision;
  written_at_ = LoadClock::now();
  return true;
}

void EtcdPath::wait_for(const std::vector<Member*>& who, std::initializer_list<const char*> steps,
                        LoadClock::time_point deadline) {
  reports_->wait(deadline, [&](const std::map<std::string, Reports::Seen>& seen) {
    for (const Member* m : who) {
      const auto it = seen.find(m->name);
      if (it == seen.end() || !is_step(it->second, steps)) return false;
    }
    return true;
  });
}

std::vector<Member*> pick(std::vector<Member>& members, bool (*keep)(const Member&)) {
  std::vector<Member*> out;
  for (auto& m : members) {
    if (keep(m)) out.push_back(&m);
  }
  return out;
}

void EtcdPath::stage(Run& run) {
  // One load at a time: the key holds the last; one not finished and not past its deadline
  // is running (or its asnctl died, and it ends at its deadline).
  const asn::etcd::Range current = client_->get(key_);
  if (!current.kvs.empty()) {
    Activation other;
    const bool read = parse(current.kvs[0].value, other);
    if (read && (other.step() == "stage" || other.step() == "arm") &&
        asn::fabric::now_unix_ms() < other.deadline_unix_ms()) {
      throw std::runtime_error(strprintf(
          "another fabric load is running on fabric '%s' (activation %s by %s, plan file %s, "
          "step %s) until %.1f s from now at the latest; nothing was written",
          fabric_.c_str(), other.id().c_str(), other.by().c_str(), other.plan_file().c_str(),
          other.step().c_str(),
          static_cast<double>(other.deadline_unix_ms() - asn::fabric::now_unix_ms()) / 1000));
    }
    mod_revision_ = current.kvs[0].mod_revision;
  }
  const LoadClock::duration timeout = longest_timeout(run);
  activation_.set_id(new_id());
  activation_.set_fabric(fabric_);
  activation_.set_plan_text(run.load.plan_text);
  activation_.set_plan_file(run.load.plan_file);
  activation_.set_phase(run.phase);
  activation_.set_algorithm(run.load.algorithm == asn::v1::GREEDY ? "greedy" : "optimal");
  for (const auto& m : run.members) activation_.add_switches(m.name);
  activation_.set_by(who());
  // Long enough for both steps: staging, the frame (at most ~10 s ahead), the swap's wait.
  const auto budget = 2 * timeout + run.fabric.arm_margin + std::chrono::seconds(20);
  activation_.set_deadline_unix_ms(
      asn::fabric::now_unix_ms() +
      std::chrono::duration_cast<std::chrono::milliseconds>(budget).count());
  reports_ = std::make_unique<Reports>(*client_, reports_prefix_, activation_.id());
  if (!write("stage")) {
    throw std::runtime_error("another fabric load wrote " + key_ +
                             " at the same moment; nothing was written by this one");
  }
  reports_->start(mod_revision_ + 1);

  wait_for(pick(run.members, [](const Member&) { return true; }), {"staged", "stage-failed"},
           written_at_ + timeout);
  for (Member& m : run.members) {
    const auto seen = reports_->of(m.name);
    if (!is_step(seen, {"staged", "stage-failed"})) {
      m.failed = true;
      m.error = "asnd did not report its part staged within " + seconds(timeout) +
                " (the longest switch timeout in the fabric; asnctl fabric status " + fabric_ + ")";
      continue;
    }
    const ActivationReport& r = seen->report;
    if (r.step() == "stage-failed") {
      m.failed = true;
      m.error = r.error();
      continue;
    }
    m.staged = true;
    m.staged_at = seen->at;
    // The switch read its clock when it wrote the report; by the wall clocks that was this
    // long before asnctl saw it, and it cannot have been before the activation was written.
    const auto transit =
        std::chrono::milliseconds(std::max<int64_t>(0, seen->at_unix_ms - r.reported_unix_ms()));
    m.in_transit = std::min<LoadClock::duration>(transit, seen->at - written_at_);
    auto& s = m.stage;
    s.set_plan(run.plan);
    s.set_phase(run.phase);
    s.set_program_id(r.program_id());
    for (const auto& w : r.warnings()) {
      auto* problem = s.add_warnings();
      problem->set_warning(true);
      problem->set_text(w);
    }
    s.set_running(r.running());
    s.set_frame(r.frame());
    s.set_time(r.time());
    s.set_frame_start(r.frame_start());
    s.set_frame_cycles(r.frame_cycles());
    s.set_clock_hz(r.clock_hz());
  }
}

void EtcdPath::discard(Run& run) {
  std::string why;
  for (const auto& m : run.members) {
    if (m.failed) why += (why.empty() ? "" : ", ") + m.name;
  }
  activation_.set_reason(why.empty() ? "no common frame" : "could not stage: " + why);
  std::vector<Member*> staged = pick(run.members, [](const Member& m) { return m.staged; });
  if (!write("abort")) {
    for (Member* m : staged) {
      m->discard_error =
          "another load replaced the activation first: its staged program stays "
          "until that load's";
    }
    return;
  }
  wait_for(staged, {"discarded"}, written_at_ + longest_timeout(run));
  for (Member* m : staged) {
    if (is_step(reports_->of(m->name), {"discarded"})) {
      m->discarded = true;
    } else {
      m->discard_error = "no answer within " + seconds(m->timeout);
    }
  }
}

void EtcdPath::arm(Run& run, LoadClock::duration until) {
  for (const auto& m : run.members) (*activation_.mutable_frames())[m.name] = m.armed_frame;
  if (!write("arm")) {
    for (auto& m : run.members) {
      m.failed = true;
      m.error = "another load replaced the activation before the arm: nothing was armed";
    }
    return;
  }
  const LoadClock::duration timeout = longest_timeout(run);
  // As ArmAtFrame: the switch waits until 2 s past the frame, and may take its timeout more.
  const LoadClock::time_point deadline = written_at_ + until + std::chrono::seconds(2) + timeout;
  // Until every switch swapped, or one failed.
  reports_->wait(deadline, [&](const std::map<std::string, Reports::Seen>& seen) {
    size_t swapped = 0;
    for (const auto& [name, s] : seen) {
      if (s.report.step() == "arm-failed" || s.report.step() == "disarmed") return true;
      if (s.report.step() == "swapped") ++swapped;
    }
    return swapped == run.members.size();
  });
  const bool timed_out = LoadClock::now() >= deadline;
  const auto take_swap = [](Member& m, const Reports::Seen& seen) {
    m.swapped = true;
    m.arm.set_swap_frame(seen.report.swap_frame());
    m.arm.set_swap_time(seen.report.swap_time());
    m.arm.set_wait_us(seen.report.wait_us());
    m.armed_at = seen.at - std::chrono::microseconds(seen.report.wait_us());
  };
  std::string failed;
  for (Member& m : run.members) {
    const auto seen = reports_->of(m.name);
    if (is_step(seen, {"swapped"})) {
      take_swap(m, *seen);
      continue;
    }
    if (is_step(seen, {"arm-failed"})) {
      m.error = seen->report.error();
    } else if (is_step(seen, {"disarmed"})) {
      m.error = "disarmed on the switch before its swap (a DiscardStaged there, or a reset)";
    } else if (timed_out) {
      m.error = "asnd did not report its swap within " + seconds(deadline - written_at_);
    } else {
      continue;  // still waiting for its frame
    }
    m.failed = true;
    failed += (failed.empty() ? "" : ", ") + m.name;
  }
  if (failed.empty()) return;
  // One failed: the others disarm before their swap, or report that they swapped already.
  std::vector<Member*> others;
  for (Member& m : run.members) {
    if (m.failed || m.swapped) continue;
    m.disarming = true;
    others.push_back(&m);
  }
  activation_.set_reason("could not arm: " + failed);
  if (!write("abort")) {
    for (Member* m : others) m->discard_error = "another load replaced the activation first";
    return;
  }
  wait_for(others, {"swapped", "disarmed", "arm-failed"},
           std::max(deadline, written_at_ + timeout));
  for (Member* m : others) {
    const auto seen = reports_->of(m->name);
    if (is_step(seen, {"swapped"})) {
      take_swap(*m, *seen);
    } else if (!is_step(seen, {"disarmed", "arm-failed"})) {
      m->discard_error = "no answer within " + seconds(LoadClock::now() - written_at_);
    }
  }
}

void EtcdPath::finish(Run&, bool ok) {
  if (ok) {
    try {
      (void)write("done");
    } catch (const asn::etcd::Error&) {
      // Every switch swapped; the activation ends at its deadline instead.
    }
  }
  if (reports_) reports_->stop();
}

}  // namespace

std::unique_ptr<LoadPath> open_etcd_path(Run& run, const asn::schedule::Plan& plan) {
  const FabricLoad& load = run.load;
  auto client = open_etcd(*load.etcd, load.etcd_timeout_s);
  const StoredFabric stored = read_fabric(*client, load.etcd->prefix, load.etcd_fabric);
  if (!stored.spec) {
    throw std::runtime_error("fabric '" + load.etcd_fabric + "' is not in etcd at " +
                             client->endpoints_text() + " (prefix " + load.etcd->prefix +
                             "): apply it first (asnctl fabric apply FILE), or load over gRPC "
                             "with --direct and a fabric file");
  }
  // The activation carries the plan; etcd refuses a request past 1.5 MiB by default.
  constexpr size_t kMaxPlanBytes = 1 << 20;
  if (load.plan_text.size() > kMaxPlanBytes) {
    throw std::runtime_error(strprintf(
        "%s is %zu bytes; a load through etcd carries the plan in one etcd request, at most "
        "%zu bytes: load it with --direct and a fabric file",
        load.plan_file.c_str(), load.plan_text.size(), kMaxPlanBytes));
  }
  asn::schedule::FabricFile fabric;
  fabric.name = stored.spec->name();
  fabric.file = "fabric '" + fabric.name + "' in etcd";
  for (const auto& sw : stored.spec->switches()) {
    asn::schedule::FabricFile::Switch s;
    s.name = sw.name();
    s.endpoint = sw.endpoint();
    if (sw.timeout_ms() != 0) s.timeout = std::chrono::milliseconds(sw.timeout_ms());
    fabric.switches.push_back(std::move(s));
  }
  if (stored.spec->arm_margin_ns() != 0) {
    fabric.arm_margin = std::chrono::nanoseconds(stored.spec->arm_margin_ns());
  }
  const auto missing = asn::schedule::missing_switches(fabric, plan);
  if (!missing.empty()) {
    throw std::runtime_error("plan '" + plan.name + "' names switch" +
                             (missing.size() == 1 ? " " : "es ") + join(missing) +
                             " that fabric '" + fabric.name +
                             "' in etcd does not have; nothing was written");
  }
  std::vector<std::string> silent;
  for (const auto& name : plan.switches) {
    const auto it = stored.switches.find(name);
    if (it == stored.switches.end() || !it->second.status) silent.push_back(name);
  }
  if (!silent.empty()) {
    throw std::runtime_error("switch" + std::string(silent.size() == 1 ? " " : "es ") +
                             join(silent) + " of plan '" + plan.name + "' ha" +
                             (silent.size() == 1 ? "s" : "ve") + " no asnd reporting in fabric '" +
                             fabric.name + "' (its status lease is gone: asnctl fabric status " +
                             fabric.name + "); nothing was written");
  }
  run.fabric = std::move(fabric);
  run.via = "through etcd";
  return std::make_unique<EtcdPath>(std::move(client), *load.etcd, load.etcd_fabric);
}

}  // namespace asnctl

#include "fabric/fabric_agent.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "asn/fabric/v1/fabric.pb.h"
#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/version.hpp"
#include "error.hpp"

namespace asn {

namespace {

constexpr std::string_view kKind = "fabric-member";
constexpr uint32_t kAgentSchema = 1;
// Between tries while etcd cannot be reached: the followers' own.
constexpr std::chrono::milliseconds kRetry = KeyFollower::kRetry;

std::string to_json(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

std::string read_password(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("fabric.etcd.password_file: cannot read {}", path));
  }
  std::string password;
  std::getline(in, password);
  return password;
}

etcd::Options etcd_options(const FabricEtcdConfig& config) {
  etcd::Options o;
  o.endpoints = config.endpoints;
  o.ca_file = config.ca_file;
  o.cert_file = config.cert_file;
  o.key_file = config.key_file;
  o.user = config.user;
  o.password = read_password(config.password_file);
  o.timeout = std::chrono::milliseconds(config.timeout_ms);
  return o;
}

// The FabricManager's document for a switch's part: `threshold` (every port) first, then the
// per-port ones over it, as `asnctl routing set` would leave them.
state::v1::FabricState to_fabric_state(const fabric::v1::SwitchSpec& spec, uint32_t ports) {
  state::v1::FabricState doc;
  doc.set_placed(true);
  doc.set_terminals(spec.terminals());
  doc.set_k(spec.k());
  doc.set_router(spec.router());
  doc.set_double_rate(spec.double_rate());
  doc.set_mode(spec.routing().mode());
  doc.set_enable(spec.routing().enable());
  if (spec.routing().has_threshold()) {
    for (uint32_t port = 0; port < ports; ++port) {
      (*doc.mutable_thresholds())[port] = spec.routing().threshold();
    }
  }
  for (const auto& [port, packets] : spec.routing().thresholds()) {
    (*doc.mutable_thresholds())[port] = packets;
  }
  return doc;
}

}  // namespace

FabricAgent::FabricAgent(const FabricConfig& config, std::string endpoint, FabricManager& fabric,
                         Device& device, const StateStore& store, LockManager& locks,
                         std::chrono::milliseconds takeover_grace, TdmManager& tdm)
    : config_(config),
      fabric_(fabric),
      device_(device),
      desired_key_(fabric::switch_key(config.etcd.prefix, config.name, config.switch_name)),
      status_key_(fabric::status_key(config.etcd.prefix, config.name, config.switch_name)),
      last_status_key_(
          fabric::last_status_key(config.etcd.prefix, config.name, config.switch_name)),
      client_(std::make_unique<etcd::Client>(etcd_options(config.etcd))),
      store_(store) {
  const auto reach = [this](bool reachable, const std::string& error) {
    set_store_reachable(reachable, error);
  };
  desired_ = std::make_unique<KeyFollower>(
      *client_, desired_key_,
      [this](const std::string& value, int64_t revision) {
        // A first read of what the board already holds changes nothing.
        if (value.empty() || revision != snapshot().applied_revision()) apply(value, revision);
      },
      reach);
  locks.await_lock_map(config_.name, config_.switch_name);
  lock_map_ = std::make_unique<LockMapAgent>(
      config_, *client_, locks, takeover_grace,
      [this](int64_t revision, uint32_t slots, const std::string& error) {
        update([&](fabric::v1::SwitchStatus& s) {
          s.set_lock_map_revision(revision);
          s.set_lock_slots(slots);
          s.set_lock_map_error(error);
        });
      });
  lock_map_follower_ = std::make_unique<KeyFollower>(
      *client_, lock_map_->key(),
      [this](const std::string& value, int64_t revision) { lock_map_->on_value(value, revision); },
      reach);
  activation_ = std::make_unique<ActivationAgent>(config_, *client_, tdm);
  activation_follower_ = std::make_unique<KeyFollower>(
      *client_, activation_->key(),
      [this](const std::string& value, int64_t revision) {
        activation_->on_value(value, revision);
      },
      reach);
  status_.set_fabric(config.name);
  status_.set_switch_name(config.switch_name);
  status_.set_condition("starting");
  status_.set_asnd_version(std::string(kVersion));
  status_.set_endpoint(std::move(endpoint));
  unreachable_since_ = std::chrono::system_clock::now();
}

FabricAgent::~FabricAgent() { stop(); }

void FabricAgent::start() {
  spdlog::info("fabric: switch {} of fabric {}, desired state from etcd at {} ({})",
               config_.switch_name, config_.name, client_->endpoints_text(), desired_key_);
  watch_thread_ = follow(*desired_);
  lock_map_thread_ = follow(*lock_map_follower_);
  activation_thread_ = follow(*activation_follower_);
  status_thread_ = std::thread([this] { status_loop(); });
}

void FabricAgent::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  desired_->cancel();
  lock_map_follower_->cancel();
  activation_follower_->cancel();
  activation_->stop();
  client_->cancel_all();  // a silent member must not hold the shutdown for its timeouts
  if (watch_thread_.joinable()) watch_thread_.join();
  if (lock_map_thread_.joinable()) lock_map_thread_.join();
  if (activation_thread_.joinable()) activation_thread_.join();
  if (status_thread_.joinable()) status_thread_.join();
  revoke_status();
}

void FabricAgent::revoke_status() {
  int64_t lease;
  {
    std::lock_guard lock(mutex_);
    lease = std::exchange(lease_, 0);
  }
  if (lease == 0) return;
  // The status goes with asnd, not a lease later; within half a second per member, since
  // asnd's stop is bounded (SIGTERM: gone within 5 s).
  etcd::Options options = etcd_options(config_.etcd);
  options.timeout = std::min(options.timeout, std::chrono::milliseconds(500));
  try {
    etcd::Client(options).revoke_lease(lease);
  } catch (const std::exception& e) {
    spdlog::warn("fabric: the status lease could not be revoked ({}); it expires in {} s", e.what(),
                 config_.status_ttl_s);
  }
}

bool FabricAgent::wait_stop(std::chrono::milliseconds how_long) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, how_long, [this] { return stopping_; });
  return stopping_;
}

std::string FabricAgent::reconcile(ReconcileCause cause) {
  if (cause == ReconcileCause::kStart) {
    fabric::v1::SwitchStatus saved;
    std::optional<StoredHeader> header;
    try {
      header = store_.load(kKind, kAgentSchema, saved);
    } catch (const Error& e) {
      spdlog::warn("fabric: {}", e.what());
    }
    if (header && saved.fabric() == config_.name && saved.switch_name() == config_.switch_name &&
        saved.applied_revision() > 0) {
      update([&](fabric::v1::SwitchStatus& s) {
        s.set_applied_revision(saved.applied_revision());
        s.set_desired_revision(saved.applied_revision());
        s.set_condition("in-force");
      });
      fabric_.set_owner(owner_text(saved.applied_revision()));
    }
  }
  update([&](fabric::v1::SwitchStatus& s) {
    s.set_board_generation(static_cast<uint32_t>(device_.read(regs::id::kGenerationValue)));
  });
  return summary().status;
}

ManagerSummary FabricAgent::summary() const {
  const fabric::v1::SwitchStatus s = snapshot();
  ManagerSummary out;
  out.manager = "fabric-member";
  out.revision = static_cast<uint64_t>(s.applied_revision());
  std::lock_guard lock(mutex_);
  std::string store =
      store_reachable_
          ? "etcd reachable"
          : fmt::format(
                "etcd unreachable since {:%F %T} UTC ({}); running on "
                "what was applied last",
                std::chrono::floor<std::chrono::seconds>(unreachable_since_), store_error_);
  out.status = fmt::format("{} {}/{}: {}", s.condition(), config_.name, config_.switch_name, store);
  out.last_restore = s.error();
  out.problem = !store_reachable_ || s.condition() != "in-force";
  return out;
}

std::string FabricAgent::owner_text(int64_t revision) const {
  return fmt::format("fabric '{}' (switch {}, etcd revision {})", config_.name, config_.switch_name,
                     revision);
}

void FabricAgent::update(const std::function<void(fabric::v1::SwitchStatus&)>& change) {
  {
    std::lock_guard lock(mutex_);
    fabric::v1::SwitchStatus before = status_;
    change(status_);
    if (before.SerializeAsString() == status_.SerializeAsString()) return;
    status_dirty_ = true;
  }
  wake_.notify_all();
}

fabric::v1::SwitchStatus FabricAgent::snapshot() const {
  std::lock_guard lock(mutex_);
  return status_;
}

void FabricAgent::save_applied(const fabric::v1::SwitchStatus& status) {
  try {
    store_.save(kKind,
                StoredHeader{kAgentSchema, static_cast<uint64_t>(status.applied_revision()), false},
                status);
  } catch (const Error& e) {
    spdlog::error("fabric: cannot keep the applied revision: {}", e.what());
  }
}

void FabricAgent::set_store_reachable(bool reachable, const std::string& error) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;  // the calls stopping cancelled say nothing about etcd
  if (reachable && !store_reachable_) {
    spdlog::info("fabric: etcd reachable");
  } else if (!reachable && store_reachable_) {
    spdlog::warn("fabric: etcd unreachable, running on what was applied last: {}", error);
    unreachable_since_ = std::chrono::system_clock::now();
  }
  if (!reachable) store_error_ = error;
  store_reachable_ = reachable;
}

void FabricAgent::apply(const std::string& value, int64_t revision) {
  if (value.empty()) {
    const std::string why = fmt::format(
        "fabric '{}' in etcd (prefix {}) has no switch '{}': add it to the fabric file and run "
        "'asnctl fabric apply', or correct fabric.switch in asnd.yaml",
        config_.name, config_.etcd.prefix, config_.switch_name);
    spdlog::error("fabric: {}", why);
    fabric_.set_owner(std::nullopt);  // no part of the fabric: the switch is the operator's again
    update([&](fabric::v1::SwitchStatus& s) {
      s.set_desired_revision(revision);
      s.set_condition("not-in-fabric");
      s.set_error(why);
    });
    return;
  }
  fabric::v1::SwitchSpec spec;
  std::string why;
  try {
    spec = fabric::parse_switch_document(value);
    if (spec.fabric() != config_.name || spec.name() != config_.switch_name) {
      why = fmt::format("the desired document at {} names switch '{}' of fabric '{}'", desired_key_,
                        spec.name(), spec.fabric());
    }
  } catch (const std::invalid_argument& e) {
    why = fmt::format("the desired document at etcd revision {} ({}) is refused: {}", revision,
                      desired_key_, e.what());
  }
  update([&](fabric::v1::SwitchStatus& s) {
    s.set_desired_revision(revision);
    s.set_condition(why.empty() ? "applying" : "failed");
    s.set_error(why);
  });
  if (!why.empty()) {
    spdlog::error("fabric: revision {}: {}", revision, why);
    return;
  }
  try {
    const TopologyOutcome outcome = fabric_.apply_document(
        to_fabric_state(spec, device_.layout()->caps.get(regmap::Cap::kPorts)), false);
    fabric_.set_owner(owner_text(revision));
    spdlog::info("fabric: revision {} in force ({}; {} us)", revision,
                 outcome.changed ? "the board was reprogrammed" : "the board already held it",
                 outcome.times.total_us);
    fabric::v1::SwitchStatus applied;
    update([&](fabric::v1::SwitchStatus& s) {
      s.set_applied_revision(revision);
      s.set_condition("in-force");
      s.clear_error();
      applied = s;
    });
    save_applied(applied);
  } catch (const Error& e) {
    spdlog::error("fabric: revision {} refused: {}", revision, e.what());
    update([&](fabric::v1::SwitchStatus& s) {
      s.set_condition("failed");
      s.set_error(e.what());
    });
  }
}

std::thread FabricAgent::follow(KeyFollower& follower) {
  return std::thread([this, &follower] {
    follower.run([this](std::chrono::milliseconds how_long) { return wait_stop(how_long); });
  });
}

void FabricAgent::status_loop() {
  const auto ttl = std::chrono::seconds(config_.status_ttl_s);
  int64_t lease = 0;
  while (!wait_stop(std::chrono::milliseconds::zero())) {
    std::string health = "ok";
    uint32_t generation = 0;
    try {
      generation = static_cast<uint32_t>(device_.read(regs::id::kGenerationValue));
      if (device_.read(regs::id::kMagicValue) != regs::kMagic) health = "the board's magic changed";
    } catch (const Error& e) {
      health = std::string("the board does not answer: ") + e.what();
    }
    update([&](fabric::v1::SwitchStatus& s) {
      s.set_health(health);
      if (generation != 0) s.set_board_generation(generation);
    });
    bool failed = false;
    try {
      if (lease != 0 && client_->keep_alive(lease) == 0) {
        spdlog::warn("fabric: the status lease had expired; reporting again");
        lease = 0;
      }
      if (lease == 0) {
        lease = client_->grant_lease(ttl);
        std::lock_guard lock(mutex_);
        status_dirty_ = true;
      }
      fabric::v1::SwitchStatus status;
      bool dirty;
      {
        std::lock_guard lock(mutex_);
        dirty = status_dirty_;
        status_dirty_ = false;
        status_.set_updated_unix_ms(fabric::now_unix_ms());
        status = status_;
      }
      if (dirty) {
        try {
          // The leased key says the switch is alive; the copy without a lease says what it
          // reported last once it is not (`asnctl fabric status`: "unreachable, last ...").
          const std::string json = to_json(status);
          client_->txn({},
                       {etcd::Put{status_key_, json, lease}, etcd::Put{last_status_key_, json}});
        } catch (const etcd::Error&) {
          std::lock_guard lock(mutex_);
          status_dirty_ = true;
          throw;
        }
      }
      // The lock map confirmed for another lease from now (and a dead owner's slots moved).
      lock_map_->check();
      set_store_reachable(true, "");
    } catch (const etcd::Error& e) {
      set_store_reachable(false, e.what());
      failed = true;
    }
    // Renew at a third of the lease; a change of status is written at once, unless etcd
    // just failed (then again after kRetry).
    std::unique_lock lock(mutex_);
    if (failed) {
      wake_.wait_for(lock, kRetry, [this] { return stopping_; });
    } else {
      wake_.wait_for(lock, ttl / 3, [this] { return stopping_ || status_dirty_; });
    }
  }
  std::lock_guard lock(mutex_);
  lease_ = lease;  // revoked by stop()
}

}  // namespace asn

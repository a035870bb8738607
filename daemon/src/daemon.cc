#include "daemon.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>

#include "asn/version.hpp"
#include "bus/bus_factory.hpp"
#include "config_reload.hpp"
#include "device/device.hpp"
#include "error.hpp"
#include "fabric/fabric_agent.hpp"
#include "listeners.hpp"
#include "locks/lock_manager.hpp"
#include "locks/switch_domain.hpp"
#include "logging.hpp"
#include "managers/board_manager.hpp"
#include "managers/fabric_manager.hpp"
#include "managers/port_manager.hpp"
#include "managers/stripe_manager.hpp"
#include "managers/tdm_manager.hpp"
#include "metrics/collect.hpp"
#include "metrics/metrics_server.hpp"
#include "services/device_service.hpp"
#include "services/fabric_service.hpp"
#include "services/lock_service.hpp"
#include "services/port_service.hpp"
#include "services/stripe_service.hpp"
#include "services/tdm_service.hpp"
#include "state/reconciler.hpp"
#include "state/store.hpp"
#include "systemd.hpp"

namespace asn {

namespace {

namespace fs = std::filesystem;

// How often the reconciler reads the generation when no event came: a backstop for a reset
// whose event was lost.
constexpr auto kGenerationPoll = std::chrono::seconds(1);

// The switch lock domain when the board's LOCK block has the lock engine (version 2 or
// later), else null: every file is then kept in the software domain.
std::unique_ptr<LockDomain> make_switch_domain(Device& device) {
  const auto layout = device.layout();
  const DeviceBlock* block = layout->find(regs::lock::kType);
  const uint16_t engine = regs::lock::kRequest.window.since;
  if (block == nullptr || block->version < engine) {
    spdlog::info(
        "locks: the board's LOCK block is {} and has no lock engine (version {} has one): "
        "every lock file is kept in the software domain",
        block == nullptr ? std::string("absent") : fmt::format("version {}", block->version),
        engine);
    return nullptr;
  }
  auto domain = std::make_unique<SwitchDomain>(device);
  spdlog::info(
      "locks: LOCK block version {}: the switch's lock engine ({} entries, status "
      "{}) is the switch lock domain",
      block->version, layout->caps.get(regmap::Cap::kLockEntries),
      device.read(regs::lock::kStatusRestored) != 0 ? "restored from board DRAM" : "empty");
  return domain;
}

void prepare_state_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot create the state directory {}: {}", dir, ec.message()));
  }
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec, ec);
}

// Everything asnd is made of, in the order it is built (and the reverse of teardown).
class Daemon {
 public:
  explicit Daemon(const Config& config)
      : listen_(config.listen),
        started_(std::chrono::steady_clock::now()),
        bus_(make_bus(config)),
        device_(*bus_),
        store_(config.state_dir),
        reconciler_(device_),
        board_(device_, reconciler_),
        ports_(device_, store_),
        fabric_(device_, store_),
        tdm_(device_, store_),
        stripe_(device_, store_),
        locks_(make_switch_domain(device_), (fs::path(config.state_dir) / "locks").string(),
               config.locks) {
    reconciler_.add(ports_);
    reconciler_.add(fabric_);
    reconciler_.add(tdm_);
    reconciler_.add(stripe_);
    reconciler_.add(locks_);
    if (config.fabric.enabled()) {
      // A slot this switch takes over waits out every grant its earlier owner could have
      // made: that one's last confirmed read of the map plus a status lease, plus the longest
      // session lease (lock_manager_fabric.cc), and a second for clocks and scheduling.
      const auto takeover_grace = std::chrono::seconds(config.fabric.status_ttl_s) +
                                  std::chrono::seconds(config.locks.max_ttl_s) +
                                  std::chrono::seconds(1);
      fabric_agent_ = std::make_unique<FabricAgent>(config.fabric, config.listen.tcp, fabric_,
                                                    device_, store_, locks_, takeover_grace, tdm_);
      reconciler_.add(*fabric_agent_);  // after fabric_: it reports what that one restored
    }
    const auto layout = device_.layout();
    spdlog::info("{}: {} ports, register map {}.{}, generation {}", bus_->describe(),
                 layout->caps.get(regmap::Cap::kPorts), layout->major, layout->minor,
                 device_.read(regs::id::kGenerationValue));
    reconciler_.start();
    bus_->set_event_handler([this](const BusEvent& event) {
      spdlog::debug("board event: {}", to_string(event.kind));
      if (event.kind == BusEvent::Kind::kGenerationChanged) {
        reconciler_.notify_generation(event.generation);
      } else if (event.kind == BusEvent::Kind::kReconnected) {
        spdlog::warn("{}", event.detail);
        reconciler_.notify_reconnected();
      } else if (event.kind == BusEvent::Kind::kBoardFailed) {
        spdlog::critical("{}: the board failed: {}", bus_->describe(), event.detail);
        std::lock_guard lock(failure_mutex_);
        failure_ = event.detail;
      }
    });
    reconciler_.watch(std::chrono::duration_cast<std::chrono::milliseconds>(kGenerationPoll));
    if (fabric_agent_) fabric_agent_->start();
  }

  ~Daemon() {
    if (fabric_agent_) fabric_agent_->stop();
    bus_->set_event_handler({});
  }

  // The services of one listener, bound to its policy.
  void add_services(grpc::ServerBuilder& builder, const ListenerPolicy& policy,
                    std::vector<std::unique_ptr<grpc::Service>>& out) {
    // Each listener caps and times out its own streaming replies.
    auto streams = std::make_shared<StreamLimiter>(
        policy.name,
        StreamLimits{listen_.max_streams, std::chrono::seconds(listen_.stream_write_timeout_s)});
    out.push_back(std::make_unique<DeviceService>(device_, board_, reconciler_, Authorizer(policy),
                                                  started_, std::move(streams)));
    out.push_back(std::make_unique<PortService>(device_, ports_, Authorizer(policy)));
    out.push_back(std::make_unique<FabricService>(fabric_, Authorizer(policy)));
    out.push_back(std::make_unique<TdmService>(tdm_, Authorizer(policy)));
    out.push_back(std::make_unique<LockService>(locks_, Authorizer(policy)));
    out.push_back(std::make_unique<StripeService>(stripe_, Authorizer(policy)));
    for (auto& service : out) builder.RegisterService(service.get());
  }

  // Waiting Lock calls end before the listeners stop, so that the shutdown waits for none.
  void stop_locks() { locks_.stop(); }
  // SIGHUP: the lock service's leases and quotas (config_reload.hpp).
  void set_lock_limits(const LocksConfig& locks) { locks_.set_limits(locks); }
  // The fabric agent's status leaves etcd with asnd, within the stop's time.
  void stop_fabric_agent() {
    if (fabric_agent_) fabric_agent_->stop();
  }
  // What a scrape of listen.metrics reads (metrics/collect.hpp).
  metrics::Sources metric_sources(const Listeners& listeners) {
    return {device_, reconciler_, tdm_, stripe_, locks_, &listeners, &listeners.grpc_calls()};
  }
  const RegisterBus& bus() const { return *bus_; }
  Device& device() { return device_; }
  // Why the board can no longer be used, or "".
  std::string failure() const {
    std::lock_guard lock(failure_mutex_);
    return failure_;
  }

 private:
  ListenConfig listen_;
  std::chrono::steady_clock::time_point started_;
  std::unique_ptr<RegisterBus> bus_;
  Device device_;
  StateStore store_;
  Reconciler reconciler_;
  BoardManager board_;
  PortManager ports_;
  FabricManager fabric_;
  TdmManager tdm_;
  StripeManager stripe_;
  LockManager locks_;
  std::unique_ptr<FabricAgent> fabric_agent_;  // with a fabric: section only
  mutable std::mutex failure_mutex_;
  std::string failure_;
};

// SIGHUP: the keys that can change while asnd runs take effect; every other key that changed
// is named and keeps its running value. A bad file, of any kind, keeps the running
// configuration whole.
void reload(Daemon& daemon, Config& running, const std::string& config_path, bool config_required,
            const ConfigOverrides& overrides) {
  try {
    Config fresh = load_config(config_path, config_required);
    apply_overrides(fresh, overrides);
    const ConfigReload reload = compare_for_reload(running, fresh, overrides);
    apply_reload(running, fresh, reload);
    set_log_level(running.log_level);
    daemon.set_lock_limits(running.locks);
    for (const ConfigChange& change : reload.applied) {
      spdlog::info("SIGHUP: {}", describe(change));
    }
    for (const ConfigChange& change : reload.need_restart) {
      spdlog::warn("SIGHUP: {}: takes effect at the next restart (systemctl restart asnd)",
                   describe(change));
    }
    for (const ConfigChange& change : reload.overridden) {
      spdlog::warn("SIGHUP: {}: not applied, {} on the command line sets it", describe(change),
                   change.flag);
    }
    if (reload.applied.empty() && reload.need_restart.empty() && reload.overridden.empty()) {
      spdlog::info("SIGHUP: {}: nothing changed", config_path);
    }
  } catch (const std::exception& e) {
    spdlog::error("SIGHUP: keeping the running configuration: {}", e.what());
  }
}

}  // namespace

sigset_t block_daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int run_daemon(const Config& config, const std::string& config_path, bool config_required,
               const ConfigOverrides& overrides, const sigset_t& signals) {
  spdlog::info("asnd {} starting (config {}, backend {})", kVersion, config_path,
               config.backend.kind);
  for (const auto& note : config.deprecations) spdlog::warn("{}", note);
  prepare_state_dir(config.state_dir);

  // The start may replay a long lock journal and withdraw the waits of the asnd before:
  // systemd is told to wait while it goes on (EXTEND_TIMEOUT_USEC), not to kill it.
  auto extender = std::make_unique<SystemdTimeoutExtender>();
  Daemon daemon(config);
  extender.reset();
  Listeners listeners(config.listen,
                      [&daemon](grpc::ServerBuilder& builder, const ListenerPolicy& policy,
                                std::vector<std::unique_ptr<grpc::Service>>& out) {
                        daemon.add_services(builder, policy, out);
                      });
  // The metrics endpoint opens with the listeners: an address that is taken stops the start
  // as a taken listen.tcp does, rather than leaving asnd running without what was configured.
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!config.listen.metrics.empty()) {
    metrics_server = std::make_unique<metrics::MetricsServer>(
        config.listen.metrics,
        [sources = daemon.metric_sources(listeners)] { return metrics::collect(sources); });
    spdlog::info("metrics on http://{}/metrics", config.listen.metrics);
  }
  listeners.set_serving(true);

  // The watchdog is fed only while the board answers and a real call through the socket
  // does (a listener that stopped accepting, or a server out of threads, stops the pings
  // and systemd restarts asnd).
  SystemdNotifier notifier([&daemon, &listeners]() -> std::string {
    if (std::string failure = daemon.failure(); !failure.empty()) {
      return "the board failed: " + failure;
    }
    try {
      if (daemon.device().read(regs::id::kMagicValue) != regs::kMagic) {
        return "the board's magic changed";
      }
    } catch (const Error& e) {
      return std::string("the board does not answer: ") + e.what();
    }
    if (!listeners.answers(std::chrono::seconds(2))) {
      return "a health check through " + listeners.description() + " was not answered";
    }
    return "";
  });
  notifier.ready(fmt::format("serving {} on {}", daemon.bus().describe(), listeners.description()));
  spdlog::info("serving on {}", listeners.description());

  Config running = config;  // what SIGHUP compares a fresh read with
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      reload(daemon, running, config_path, config_required, overrides);
      continue;
    }
    spdlog::info("{}: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    break;
  }
  const auto stop_started = std::chrono::steady_clock::now();
  notifier.stopping();
  metrics_server.reset();
  daemon.stop_fabric_agent();
  listeners.set_serving(false);
  daemon.stop_locks();  // withdraws every waiting Lock at once
  // Calls in flight (a Batch stream stays open until its client closes it) get what is left
  // of 4.5 s from SIGTERM, and 1 s at least, then are cancelled: asnd is gone within the 5 s
  // the operator guide promises.
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - stop_started);
  listeners.shutdown(
      std::max(std::chrono::milliseconds(1000), std::chrono::milliseconds(4500) - spent));
  spdlog::info("stopped");
  return 0;
}

}  // namespace asn

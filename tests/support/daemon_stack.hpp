// asnd in process, for service tests and benchmarks: the emulated bus on a private board
// (a PatchedBus in front, to count writes or fail them), the Device, the desired-state store,
// the reconciler and the managers a test adds, and each gRPC service on its own Unix socket
// with the role a test gives it. Destroying the stack is asnd stopping; a new stack on the
// same board name and directory is asnd starting again. Header-only: the tests that use it
// link asnd_core.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "patched_bus.hpp"
#include "services/auth.hpp"
#include "services/support.hpp"
#include "state/reconciler.hpp"
#include "state/store.hpp"

namespace asn::test {

struct DaemonStackOptions {
  std::string profile = "netfpga-1g";
  std::string board_name;
  std::string dir;         // the board memory, the state files and the sockets
  bool run_clock = false;  // true: the board's clock runs in real time (TDM swaps happen)
  // Where the emulated storage servers keep the stripe groups' units; empty: <dir>/storage.
  std::string storage_dir;
};

class DaemonStack {
 public:
  explicit DaemonStack(const DaemonStackOptions& options) : options_(options) {
    EmulatedBusOptions bus;
    bus.board_name = options.board_name;
    bus.profile = options.profile;
    bus.shm_dir = options.dir;
    bus.run_clock = options.run_clock;
    bus.storage_dir = options.storage_dir.empty() ? options.dir + "/storage" : options.storage_dir;
    real_ = std::make_unique<EmulatedBus>(bus);
    bus_ = std::make_unique<PatchedBus>(*real_);
    device_ = std::make_unique<Device>(*bus_);
    store_ = std::make_unique<StateStore>(options.dir);
    reconciler_ = std::make_unique<Reconciler>(*device_);
  }

  ~DaemonStack() {
    for (auto& server : servers_) server->Shutdown();
    servers_.clear();
    services_.clear();
    reconciler_.reset();
    managers_.clear();  // in reverse order of adding
    store_.reset();
    device_.reset();
    bus_.reset();
    real_.reset();
  }

  DaemonStack(const DaemonStack&) = delete;
  DaemonStack& operator=(const DaemonStack&) = delete;

  // A manager on this stack's Device and store (plus `args`), reconciled like asnd's.
  template <typename Manager, typename... Args>
  Manager& add_manager(Args&&... args) {
    auto manager = std::make_shared<Manager>(*device_, *store_, std::forward<Args>(args)...);
    reconciler_->add(*manager);
    managers_.insert(managers_.begin(), manager);
    return *manager;
  }

  // The start of asnd: every manager loads its desired state and reconciles the board.
  void start() { reconciler_->start(); }

  // Serves `Service(parts..., authorizer)` (a manager, or the Device and a manager) on
  // <dir>/<socket> with `role`; returns the channel.
  template <typename Service, typename... Parts>
  std::shared_ptr<grpc::Channel> serve(const std::string& socket, Role role, Parts&... parts) {
    const std::string path = options_.dir + "/" + socket;
    auto service =
        std::make_shared<Service>(parts..., Authorizer({socket, role, "use the admin socket", {}}));
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
    builder.SetMaxReceiveMessageSize(static_cast<int>(kMaxRequestBytes));
    builder.RegisterService(service.get());
    servers_.push_back(builder.BuildAndStart());
    services_.push_back(service);
    return grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  }

  EmulatedBus& real_bus() { return *real_; }
  PatchedBus& bus() { return *bus_; }
  Device& device() { return *device_; }
  model::EmulatedBoard& board() { return real_->board(); }
  Reconciler& reconciler() { return *reconciler_; }

 private:
  DaemonStackOptions options_;
  std::unique_ptr<EmulatedBus> real_;
  std::unique_ptr<PatchedBus> bus_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Reconciler> reconciler_;
  std::vector<std::shared_ptr<void>> managers_;
  std::vector<std::shared_ptr<void>> services_;
  std::vector<std::unique_ptr<grpc::Server>> servers_;
};

}  // namespace asn::test

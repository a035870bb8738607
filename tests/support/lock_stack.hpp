// The lock service in process, for service tests and benchmarks: a LockManager with the lock
// domains asnd would give it, served on a Unix socket with the lock client role (what TCP
// clients get), its callers all "uid 0" as asnd's Unix socket would name them (so a session
// is used without its secret). serve() adds listeners of other policies on the same manager:
// another uid, plain TCP (no principal: the secret is required), the admin role. Destroying the
// stack is asnd stopping; a new stack on the same directory is asnd starting again: the software
// domain's journal and the board memory outlive it. Header-only: the tests that use it link
// asnd_core.
//
// kSwitch adds the switch domain on an emulated board (emulated-64port: a lock engine of
// 16,384 entries, room for the 10,000 waiters of one file that a test queues; netfpga-1g's
// 4096 would refuse the 4096th as table full, the file being placed in the switch) whose
// memory file is in the stack's directory, under a name derived from that directory: a new
// stack on the same directory opens the same board, as asnd would.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "locks/lock_manager.hpp"
#include "locks/switch_domain.hpp"
#include "services/lock_service.hpp"
#include "services/support.hpp"

namespace asn::test {

class LockStack {
 public:
  enum class Kind {
    kSoftware,  // no lock engine on the board: every file in the software domain
    kSwitch,    // the board's lock engine (SwitchDomain), and the software domain
  };
  static std::vector<Kind> kinds() { return {Kind::kSoftware, Kind::kSwitch}; }
  static std::string_view name(Kind kind) {
    switch (kind) {
      case Kind::kSoftware:
        return "Software";
      case Kind::kSwitch:
        return "Switch";
    }
    return "?";
  }

  // profile: the emulated board's (kSwitch), whose lock_entries is the switch table's size.
  // max_message_bytes: the largest message the server takes (asnd's kMaxRequestBytes).
  LockStack(Kind kind, const std::string& dir, const LocksConfig& config,
            const std::string& profile = "emulated-64port",
            size_t max_message_bytes = kMaxRequestBytes) {
    std::unique_ptr<LockDomain> switch_domain;
    if (kind == Kind::kSwitch) {
      bus_ = std::make_unique<EmulatedBus>(bus_options(dir, profile));
      device_ = std::make_unique<Device>(*bus_);
      switch_domain = std::make_unique<SwitchDomain>(*device_);
    }
    manager_ = std::make_unique<LockManager>(std::move(switch_domain), dir + "/locks", config);
    ListenerPolicy policy{"test socket", Role::kLockClient, "use the admin socket",
                          [](const std::string&) { return std::string("uid 0 (test)"); },
                          [](const std::string&) { return std::string("uid 0"); }};
    dir_ = dir;
    max_message_bytes_ = max_message_bytes;
    channel_ = serve("locks.sock", std::move(policy));
  }

  // Serves the same manager on another socket in `dir`, as another listener of asnd would
  // (its own LockService and Authorizer); returns a channel to it.
  std::shared_ptr<grpc::Channel> serve(const std::string& socket, ListenerPolicy policy) {
    auto& listener = listeners_.emplace_back();
    listener.service = std::make_unique<LockService>(*manager_, Authorizer(std::move(policy)));
    const std::string path = dir_ + "/" + socket;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
    builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes_));
    builder.RegisterService(listener.service.get());
    listener.server = builder.BuildAndStart();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    return grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
  }

  // The emulated board of a kSwitch stack on `dir` (to open it while no stack is running).
  static EmulatedBusOptions bus_options(const std::string& dir, const std::string& profile) {
    EmulatedBusOptions options;
    char name[32];
    std::snprintf(name, sizeof name, "locks-%016zx", std::hash<std::string>{}(dir));
    options.board_name = name;
    options.profile = profile;
    options.shm_dir = dir;
    options.run_clock = false;
    return options;
  }

  ~LockStack() {
    // As asnd stops: waiting Lock calls end first (LockManager::stop()), and calls still in
    // flight are cancelled after a grace period rather than waited for.
    manager_->stop();
    for (auto& l : listeners_) {
      l.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    }
    listeners_.clear();
    manager_.reset();
    device_.reset();
    bus_.reset();
  }

  LockStack(const LockStack&) = delete;
  LockStack& operator=(const LockStack&) = delete;

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  LockManager& manager() { return *manager_; }
  Device* device() { return device_.get(); }  // kSwitch only

 private:
  std::unique_ptr<EmulatedBus> bus_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<LockManager> manager_;
  struct Listener {
    std::unique_ptr<LockService> service;
    std::unique_ptr<grpc::Server> server;  // destroyed first: it serves `service`
  };
  std::vector<Listener> listeners_;
  std::string dir_;
  size_t max_message_bytes_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace asn::test

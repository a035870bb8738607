// The lock service in process, for service tests and benchmarks: a LockManager with the lock
// domains asnd would give it, served on a Unix socket with the lock client role (what TCP
// clients get). Destroying the stack is asnd stopping; a new stack on the same directory is
// asnd starting again: the software domain's journal and the board memory outlive it.
// Header-only: the tests that use it link asnd_core.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "locks/lock_manager.hpp"
#include "services/lock_service.hpp"
#include "services/support.hpp"

namespace asn::test {

class LockStack {
 public:
  enum class Kind {
    kSoftware,  // no lock engine on the board: every file in the software domain
  };
  static std::vector<Kind> kinds() { return {Kind::kSoftware}; }
  static std::string_view name(Kind kind) {
    switch (kind) {
      case Kind::kSoftware:
        return "Software";
    }
    return "?";
  }

  LockStack(Kind kind, const std::string& dir, const LocksConfig& config) {
    (void)kind;
    manager_ = std::make_unique<LockManager>(nullptr, dir + "/locks", config);
    ListenerPolicy policy{"test socket", Role::kLockClient, "use the admin socket",
                          [](const std::string&) { return std::string("uid 0 (test)"); }};
    service_ = std::make_unique<LockService>(*manager_, Authorizer(policy));
    const std::string path = dir + "/locks.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
    builder.SetMaxReceiveMessageSize(static_cast<int>(kMaxRequestBytes));
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    args.SetMaxSendMessageSize(64 << 20);
    channel_ = grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
  }

  ~LockStack() {
    server_->Shutdown();
    server_.reset();
    service_.reset();
    manager_.reset();
  }

  LockStack(const LockStack&) = delete;
  LockStack& operator=(const LockStack&) = delete;

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  LockManager& manager() { return *manager_; }

 private:
  std::unique_ptr<LockManager> manager_;
  std::unique_ptr<LockService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace asn::test

// gRPC Device service: validates requests, authorizes admin operations, delegates to the
// Device layer and maps errors (grpc_status.hpp). It holds no board state of its own.
#pragma once

#include <chrono>
#include <string>

#include "asn/v1/device.grpc.pb.h"
#include "device.hpp"

namespace asn {

struct DaemonIdentity {
  std::string backend;
  std::string board_name;
  std::string profile;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// Who may make admin operations (writes, board reset): callers on the Unix socket, whose
// file mode and group are the access control, and TCP callers only when tcp_admin is set.
struct AdminPolicy {
  bool tcp_admin = false;
  bool allows(const std::string& peer) const;
};

class DeviceService final : public v1::Device::Service {
 public:
  DeviceService(Device& device, DaemonIdentity identity, AdminPolicy policy);

  grpc::Status GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest* request,
                       v1::DeviceInfo* response) override;
  grpc::Status ReadRegisters(grpc::ServerContext* context, const v1::ReadRegistersRequest* request,
                             v1::ReadRegistersResponse* response) override;
  grpc::Status WriteRegisters(grpc::ServerContext* context,
                              const v1::WriteRegistersRequest* request,
                              v1::WriteRegistersResponse* response) override;
  grpc::Status DumpRegisters(grpc::ServerContext* context, const v1::DumpRegistersRequest* request,
                             grpc::ServerWriter<v1::RegisterValue>* writer) override;
  grpc::Status ResetBoard(grpc::ServerContext* context, const v1::ResetBoardRequest* request,
                          v1::ResetBoardResponse* response) override;

 private:
  void require_admin(grpc::ServerContext* context, std::string_view operation) const;
  Target resolve(const v1::RegisterRef& ref) const;

  Device& device_;
  DaemonIdentity identity_;
  AdminPolicy policy_;
};

}  // namespace asn

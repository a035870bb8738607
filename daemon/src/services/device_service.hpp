// gRPC Device service: validates requests, authorizes them by the listener's role, delegates
// to the Device layer (and board resets to the BoardManager), and maps errors
// (grpc_status.hpp). It holds no board state of its own.
#pragma once

#include <chrono>

#include "asn/v1/device.grpc.pb.h"
#include "device/device.hpp"
#include "managers/board_manager.hpp"
#include "services/auth.hpp"
#include "services/stream_limiter.hpp"
#include "state/reconciler.hpp"

namespace asn {

// DumpRegisters uses the callback API: a dump is produced a chunk at a time, a slow client
// holds no thread, and the listener's StreamLimiter caps and times out the streams.
class DeviceService final
    : public v1::Device::WithCallbackMethod_DumpRegisters<v1::Device::Service> {
 public:
  DeviceService(Device& device, BoardManager& board, Reconciler& reconciler,
                Authorizer authorizer, std::chrono::steady_clock::time_point started,
                std::shared_ptr<StreamLimiter> streams);

  grpc::Status GetInfo(grpc::ServerContext* context, const v1::GetInfoRequest* request,
                       v1::DeviceInfo* response) override;
  grpc::Status ReadRegisters(grpc::ServerContext* context, const v1::ReadRegistersRequest* request,
                             v1::ReadRegistersResponse* response) override;
  grpc::Status WriteRegisters(grpc::ServerContext* context,
                              const v1::WriteRegistersRequest* request,
                              v1::WriteRegistersResponse* response) override;
  grpc::ServerWriteReactor<v1::RegisterValue>* DumpRegisters(
      grpc::CallbackServerContext* context, const v1::DumpRegistersRequest* request) override;
  grpc::Status ResetBoard(grpc::ServerContext* context, const v1::ResetBoardRequest* request,
                          v1::ResetBoardResponse* response) override;

 private:
  Target resolve(const v1::RegisterRef& ref) const;
  void write_board_reset(grpc::ServerContext* context, const v1::WriteRegistersRequest& request,
                         const Target& target, v1::WriteRegistersResponse* response);

  Device& device_;
  BoardManager& board_;
  Reconciler& reconciler_;
  Authorizer authorizer_;
  std::chrono::steady_clock::time_point started_;
  std::shared_ptr<StreamLimiter> streams_;
};

}  // namespace asn

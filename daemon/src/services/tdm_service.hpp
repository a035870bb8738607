// gRPC Tdm service: TDM schedules through the TdmManager (proto/asn/v1/tdm.proto). Reads need
// the read permission; compiling reads only; loading, activating, staging and arming need
// configure.
#pragma once

#include "asn/v1/tdm.grpc.pb.h"
#include "managers/tdm_manager.hpp"
#include "services/auth.hpp"

namespace asn {

class TdmService final : public v1::Tdm::Service {
 public:
  TdmService(TdmManager& tdm, Authorizer authorizer)
      : tdm_(tdm), authorizer_(std::move(authorizer)) {}

  grpc::Status CompileSchedule(grpc::ServerContext* context,
                               const v1::CompileScheduleRequest* request,
                               v1::CompileScheduleResponse* response) override;
  grpc::Status LoadSchedule(grpc::ServerContext* context, const v1::LoadScheduleRequest* request,
                            v1::LoadScheduleResponse* response) override;
  grpc::Status GetSchedule(grpc::ServerContext* context, const v1::GetScheduleRequest* request,
                           v1::GetScheduleResponse* response) override;
  grpc::Status ListPlans(grpc::ServerContext* context, const v1::ListPlansRequest* request,
                         v1::ListPlansResponse* response) override;
  grpc::Status ActivatePlan(grpc::ServerContext* context, const v1::ActivatePlanRequest* request,
                            v1::LoadScheduleResponse* response) override;
  grpc::Status StagePlan(grpc::ServerContext* context, const v1::StagePlanRequest* request,
                         v1::StagePlanResponse* response) override;
  grpc::Status ArmAtFrame(grpc::ServerContext* context, const v1::ArmAtFrameRequest* request,
                          v1::ArmAtFrameResponse* response) override;
  grpc::Status DiscardStaged(grpc::ServerContext* context, const v1::DiscardStagedRequest* request,
                             v1::DiscardStagedResponse* response) override;

 private:
  void compile_fabric(const v1::CompileScheduleRequest& request,
                      v1::CompileScheduleResponse* response);

  TdmManager& tdm_;
  Authorizer authorizer_;
};

}  // namespace asn

// gRPC Fabric service: the switch's place in the fabric, its routes, routing mode, ALDFB
// thresholds and queues, through the FabricManager (writes need the configure permission).
#pragma once

#include "asn/v1/fabric.grpc.pb.h"
#include "managers/fabric_manager.hpp"
#include "services/auth.hpp"

namespace asn {

class FabricService final : public v1::Fabric::Service {
 public:
  FabricService(FabricManager& fabric, Authorizer authorizer)
      : fabric_(fabric), authorizer_(std::move(authorizer)) {}

  grpc::Status SetTopology(grpc::ServerContext* context, const v1::SetTopologyRequest* request,
                           v1::SetTopologyResponse* response) override;
  grpc::Status GetTopology(grpc::ServerContext* context, const v1::GetTopologyRequest* request,
                           v1::Topology* response) override;
  grpc::Status GetRoutes(grpc::ServerContext* context, const v1::GetRoutesRequest* request,
                         v1::GetRoutesResponse* response) override;
  grpc::Status SetRouting(grpc::ServerContext* context, const v1::SetRoutingRequest* request,
                          v1::SetRoutingResponse* response) override;
  grpc::Status GetRouting(grpc::ServerContext* context, const v1::GetRoutingRequest* request,
                          v1::RoutingSettings* response) override;
  grpc::Status GetQueueStatus(grpc::ServerContext* context,
                              const v1::GetQueueStatusRequest* request,
                              v1::QueueStatus* response) override;

 private:
  FabricManager& fabric_;
  Authorizer authorizer_;
};

}  // namespace asn

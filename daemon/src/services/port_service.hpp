// gRPC Ports service: the ports as an operator sees them, and their admin state through the
// PortManager.
#pragma once

#include "asn/v1/ports.grpc.pb.h"
#include "device/device.hpp"
#include "managers/port_manager.hpp"
#include "services/auth.hpp"

namespace asn {

class PortService final : public v1::Ports::Service {
 public:
  PortService(Device& device, PortManager& ports, Authorizer authorizer)
      : device_(device), ports_(ports), authorizer_(std::move(authorizer)) {}

  grpc::Status ListPorts(grpc::ServerContext* context, const v1::ListPortsRequest* request,
                         v1::ListPortsResponse* response) override;
  grpc::Status SetPorts(grpc::ServerContext* context, const v1::SetPortsRequest* request,
                        v1::SetPortsResponse* response) override;

 private:
  void describe(std::span<const uint32_t> ports,
                google::protobuf::RepeatedPtrField<v1::PortStatus>* out);

  Device& device_;
  PortManager& ports_;
  Authorizer authorizer_;
};

}  // namespace asn

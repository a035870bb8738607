// A port the board does not have, named to any service: one answer, NOT_FOUND "port 6 does
// not exist: the board has ports 0 to 5" (issue 28, finding 11: `port set` answered
// INVALID_ARGUMENT where `queues` answered NOT_FOUND), and nothing changed.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "asn/v1/fabric.grpc.pb.h"
#include "asn/v1/ports.grpc.pb.h"
#include "asn/v1/stripe.grpc.pb.h"
#include "daemon_stack.hpp"
#include "managers/fabric_manager.hpp"
#include "managers/port_manager.hpp"
#include "managers/stripe_manager.hpp"
#include "services/fabric_service.hpp"
#include "services/port_service.hpp"
#include "services/stripe_service.hpp"
#include "support.hpp"

namespace asn {
namespace {

using ::testing::HasSubstr;

constexpr const char* kMissing = "port 6 does not exist: the board has ports 0 to 5";

class MissingPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::DaemonStackOptions options;  // netfpga-1g: ports 0 to 5
    options.board_name = test::unique_name("port");
    options.dir = dir_.path();
    stack_ = std::make_unique<test::DaemonStack>(options);
    PortManager& ports = stack_->add_manager<PortManager>();
    FabricManager& fabric = stack_->add_manager<FabricManager>();
    StripeManager& stripe = stack_->add_manager<StripeManager>();
    stack_->start();
    ports_ = v1::Ports::NewStub(
        stack_->serve<PortService>("ports.sock", Role::kAdmin, stack_->device(), ports));
    fabric_ =
        v1::Fabric::NewStub(stack_->serve<FabricService>("fabric.sock", Role::kAdmin, fabric));
    stripe_ =
        v1::Stripe::NewStub(stack_->serve<StripeService>("stripe.sock", Role::kAdmin, stripe));
  }

  static void expect_missing(const grpc::Status& status, const char* call) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << call;
    EXPECT_THAT(status.error_message(), HasSubstr(kMissing)) << call;
  }

  test::TempDir dir_;
  std::unique_ptr<test::DaemonStack> stack_;
  std::unique_ptr<v1::Ports::Stub> ports_;
  std::unique_ptr<v1::Fabric::Stub> fabric_;
  std::unique_ptr<v1::Stripe::Stub> stripe_;
};

TEST_F(MissingPortTest, EveryServiceAnswersNotFound) {
  {
    v1::ListPortsRequest request;
    request.add_ports(6);
    v1::ListPortsResponse response;
    grpc::ClientContext context;
    expect_missing(ports_->ListPorts(&context, request, &response), "ListPorts");
  }
  {
    v1::SetPortsRequest request;
    auto* setting = request.add_ports();
    setting->set_index(6);
    setting->set_admin_up(false);
    v1::SetPortsResponse response;
    grpc::ClientContext context;
    expect_missing(ports_->SetPorts(&context, request, &response), "SetPorts");
  }
  {
    v1::GetQueueStatusRequest request;
    request.add_ports(6);
    v1::QueueStatus response;
    grpc::ClientContext context;
    expect_missing(fabric_->GetQueueStatus(&context, request, &response), "GetQueueStatus");
  }
  {
    v1::SetRoutingRequest request;
    request.set_threshold(10);
    request.set_port(6);
    v1::SetRoutingResponse response;
    grpc::ClientContext context;
    expect_missing(fabric_->SetRouting(&context, request, &response), "SetRouting");
  }
  {
    v1::CreateGroupRequest request;
    auto* spec = request.mutable_spec();
    spec->set_group(1);
    spec->set_raid(v1::RAID_5);
    for (uint32_t p : {0u, 1u, 6u}) spec->add_data_ports(p);
    spec->add_parity_ports(2);
    spec->set_unit_bytes(65536);
    v1::GroupResponse response;
    grpc::ClientContext context;
    expect_missing(stripe_->CreateGroup(&context, request, &response), "CreateGroup");
  }
  // Nothing was changed: every port still up, no group.
  v1::ListPortsResponse all;
  grpc::ClientContext context;
  ASSERT_TRUE(ports_->ListPorts(&context, {}, &all).ok());
  ASSERT_EQ(all.ports_size(), 6);
  for (const auto& port : all.ports()) EXPECT_TRUE(port.admin_up()) << port.index();
  v1::ListGroupsResponse groups;
  grpc::ClientContext list_context;
  ASSERT_TRUE(stripe_->ListGroups(&list_context, {}, &groups).ok());
  EXPECT_EQ(groups.groups_size(), 0);
}

}  // namespace
}  // namespace asn

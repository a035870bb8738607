// gRPC Stripe service: stripe groups and their files through the StripeManager
// (proto/asn/v1/stripe.proto). Listing, stats and reads need the read permission; creating,
// changing, deleting groups, failing and rebuilding members and writing files configure
// (admin only); a scrub reads, a scrub that repairs configures. Write, Read, RebuildMember
// and Scrub need the emulated board's data path.
#pragma once

#include "asn/v1/stripe.grpc.pb.h"
#include "managers/stripe_manager.hpp"
#include "services/auth.hpp"

namespace asn {

// File data travels in messages of this size: large enough that a 1 GiB stream is a
// thousand messages, well under the 8 MiB asnd receives (services/support.hpp) and the
// 4 MiB a gRPC client receives by default.
inline constexpr size_t kStripeChunkBytes = size_t{1} << 20;

class StripeService final : public v1::Stripe::Service {
 public:
  StripeService(StripeManager& stripe, Authorizer authorizer)
      : stripe_(stripe), authorizer_(std::move(authorizer)) {}

  grpc::Status CreateGroup(grpc::ServerContext* context, const v1::CreateGroupRequest* request,
                           v1::GroupResponse* response) override;
  grpc::Status UpdateGroup(grpc::ServerContext* context, const v1::UpdateGroupRequest* request,
                           v1::GroupResponse* response) override;
  grpc::Status DeleteGroup(grpc::ServerContext* context, const v1::DeleteGroupRequest* request,
                           v1::DeleteGroupResponse* response) override;
  grpc::Status ListGroups(grpc::ServerContext* context, const v1::ListGroupsRequest* request,
                          v1::ListGroupsResponse* response) override;
  grpc::Status GetGroupStats(grpc::ServerContext* context, const v1::GetGroupStatsRequest* request,
                             v1::GetGroupStatsResponse* response) override;
  grpc::Status FailMember(grpc::ServerContext* context, const v1::MemberRequest* request,
                          v1::GroupResponse* response) override;
  grpc::Status RebuildMember(grpc::ServerContext* context, const v1::MemberRequest* request,
                             grpc::ServerWriter<v1::RebuildProgress>* writer) override;
  grpc::Status Write(grpc::ServerContext* context,
                     grpc::ServerReaderWriter<v1::WriteReply, v1::WriteRequest>* stream) override;
  grpc::Status Read(grpc::ServerContext* context, const v1::ReadRequest* request,
                    grpc::ServerWriter<v1::ReadChunk>* writer) override;
  grpc::Status Scrub(grpc::ServerContext* context, const v1::ScrubRequest* request,
                     grpc::ServerWriter<v1::ScrubProgress>* writer) override;

 private:
  StripeManager& stripe_;
  Authorizer authorizer_;
};

}  // namespace asn

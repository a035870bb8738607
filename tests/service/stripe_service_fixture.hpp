// The fixture of the Stripe service tests (stripe_service_test.cc, stripe_integrity_test.cc,
// stripe_scrub_test.cc): the service through a real gRPC server on a Unix socket, over the
// emulated board and its storage servers (<dir>/storage).
#pragma once

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "daemon_stack.hpp"
#include "managers/stripe_manager.hpp"
#include "services/stripe_service.hpp"
#include "status_assert.hpp"
#include "support.hpp"

namespace asn::test {

namespace s = regs::stripe;

class StripeServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { start(); }
  void TearDown() override { stack_.reset(); }

  void start() {
    test::DaemonStackOptions options;
    options.board_name = board_name_;
    options.dir = dir_.path();
    stack_ = std::make_unique<test::DaemonStack>(options);
    stripe_ = &stack_->add_manager<StripeManager>();
    stack_->start();
    admin_ =
        v1::Stripe::NewStub(stack_->serve<StripeService>("admin.sock", Role::kAdmin, *stripe_));
    reader_ =
        v1::Stripe::NewStub(stack_->serve<StripeService>("reader.sock", Role::kReader, *stripe_));
  }

  void restart() {
    stack_.reset();
    start();
  }

  static v1::GroupSpec spec(uint32_t group, v1::RaidLevel raid, std::vector<uint32_t> data,
                            std::vector<uint32_t> parity, uint32_t unit = 4096) {
    v1::GroupSpec out;
    out.set_group(group);
    out.set_raid(raid);
    for (uint32_t p : data) out.add_data_ports(p);
    for (uint32_t p : parity) out.add_parity_ports(p);
    out.set_unit_bytes(unit);
    return out;
  }

  grpc::Status create(const v1::GroupSpec& spec, v1::GroupResponse* response = nullptr,
                      bool validate_only = false) {
    v1::CreateGroupRequest request;
    *request.mutable_spec() = spec;
    request.set_validate_only(validate_only);
    v1::GroupResponse ignored;
    grpc::ClientContext context;
    return admin_->CreateGroup(&context, request, response ? response : &ignored);
  }

  grpc::Status update(const v1::GroupSpec& spec, bool discard = false, bool validate_only = false,
                      v1::GroupResponse* response = nullptr) {
    v1::UpdateGroupRequest request;
    *request.mutable_spec() = spec;
    request.set_discard_file(discard);
    request.set_validate_only(validate_only);
    v1::GroupResponse ignored;
    grpc::ClientContext context;
    return admin_->UpdateGroup(&context, request, response ? response : &ignored);
  }

  grpc::Status remove(uint32_t group) {
    v1::DeleteGroupRequest request;
    request.set_group(group);
    v1::DeleteGroupResponse response;
    grpc::ClientContext context;
    return admin_->DeleteGroup(&context, request, &response);
  }

  grpc::Status fail(uint32_t group, uint32_t port) {
    v1::MemberRequest request;
    request.set_group(group);
    request.set_port(port);
    v1::GroupResponse response;
    grpc::ClientContext context;
    return admin_->FailMember(&context, request, &response);
  }

  grpc::Status rebuild(uint32_t group, uint32_t port, int* messages = nullptr) {
    v1::MemberRequest request;
    request.set_group(group);
    request.set_port(port);
    grpc::ClientContext context;
    auto reader = admin_->RebuildMember(&context, request);
    v1::RebuildProgress progress;
    int count = 0;
    bool finished = false;
    while (reader->Read(&progress)) {
      ++count;
      finished = progress.finished();
    }
    grpc::Status status = reader->Finish();
    if (status.ok()) {
      EXPECT_TRUE(finished);
    }
    if (messages) *messages = count;
    return status;
  }

  v1::ListGroupsResponse list() {
    v1::ListGroupsResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(reader_->ListGroups(&context, {}, &response).ok());
    return response;
  }

  // The group table entry as the board holds it.
  std::vector<uint32_t> entry(uint32_t group) {
    return stack_->device().read_entries(s::kGroupTable, group, 1);
  }

  // Writes `data` at `offset` in messages of `chunk` bytes; returns the last reply.
  grpc::Status write(uint32_t group, uint64_t offset, const std::string& data,
                     v1::WriteReply* last = nullptr, size_t chunk = kStripeChunkBytes) {
    grpc::ClientContext context;
    auto stream = admin_->Write(&context);
    v1::WriteRequest request;
    request.set_group(group);
    request.set_offset(offset);
    size_t at = 0;
    do {
      request.set_data(data.substr(at, chunk));
      at += request.data().size();
      if (!stream->Write(request)) break;
      request.clear_group();
      request.clear_offset();
    } while (at < data.size());
    stream->WritesDone();
    v1::WriteReply reply;
    v1::WriteReply seen;
    while (stream->Read(&reply)) seen = reply;
    if (last) *last = seen;
    return stream->Finish();
  }

  grpc::Status read(uint32_t group, std::string* out, uint64_t offset = 0, uint64_t length = 0) {
    v1::ReadRequest request;
    request.set_group(group);
    request.set_offset(offset);
    request.set_length(length);
    grpc::ClientContext context;
    auto reader = reader_->Read(&context, request);
    v1::ReadChunk chunk;
    out->clear();
    while (reader->Read(&chunk)) *out += chunk.data();
    return reader->Finish();
  }

  bool data_path() { return stripe_->has_data_path(); }

  // The emulated storage server's store of a member (fpga/model storage_servers.hpp).
  std::string store_path(uint32_t port, uint32_t group) const {
    return dir_.path() + "/storage/port-" + std::to_string(port) + "/group-" +
           std::to_string(group) + ".data";
  }

  test::TempDir dir_;
  std::string board_name_ = test::unique_name("stripe");
  std::unique_ptr<test::DaemonStack> stack_;
  StripeManager* stripe_ = nullptr;
  std::unique_ptr<v1::Stripe::Stub> admin_;
  std::unique_ptr<v1::Stripe::Stub> reader_;
};

inline std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng());
  return out;
}

}  // namespace asn::test

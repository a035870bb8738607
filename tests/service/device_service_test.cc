// The Device gRPC service through a real gRPC server on a Unix socket (and TCP for the
// admin policy), over a gMock RegisterBus that delegates to the emulated board: the tests
// see what the service does to the bus, e.g. that a refused write never reaches it.
#include "device_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "asn/v1/device.grpc.pb.h"
#include "device.hpp"
#include "emulated_bus.hpp"
#include "error.hpp"
#include "support.hpp"

namespace asn {
namespace {

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::Invoke;
using ::testing::NiceMock;

class MockBus : public RegisterBus {
 public:
  MOCK_METHOD(std::string, describe, (), (const, override));
  MOCK_METHOD(uint32_t, read32, (uint32_t offset), (override));
  MOCK_METHOD(void, write32, (uint32_t offset, uint32_t value), (override));
  MOCK_METHOD(void, execute, (std::span<BusOp> ops), (override));

  void delegate_to(RegisterBus& real) {
    ON_CALL(*this, describe()).WillByDefault(Invoke([&real] { return real.describe(); }));
    ON_CALL(*this, read32(_)).WillByDefault(Invoke([&real](uint32_t o) { return real.read32(o); }));
    ON_CALL(*this, write32(_, _)).WillByDefault(Invoke([&real](uint32_t o, uint32_t v) {
      real.write32(o, v);
    }));
    ON_CALL(*this, execute(_)).WillByDefault(Invoke([&real](std::span<BusOp> ops) {
      real.execute(ops);
    }));
  }
};

bool has_write(std::span<BusOp> ops) {
  return std::any_of(ops.begin(), ops.end(),
                     [](const BusOp& op) { return op.kind == BusOp::Kind::kWrite; });
}

class DeviceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { start(false); }

  void start(bool tcp_admin) {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("svc");
    options.shm_dir = dir_.path();
    options.run_clock = false;
    real_ = std::make_unique<EmulatedBus>(options);
    bus_.delegate_to(*real_);
    device_ = std::make_unique<Device>(bus_);
    service_ = std::make_unique<DeviceService>(
        *device_, DaemonIdentity{"emulated", options.board_name, options.profile},
        AdminPolicy{tcp_admin});
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + dir_.file("s.sock"), grpc::InsecureServerCredentials());
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &tcp_port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_);
    unix_ = v1::Device::NewStub(
        grpc::CreateChannel("unix:" + dir_.file("s.sock"), grpc::InsecureChannelCredentials()));
    tcp_ = v1::Device::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(tcp_port_),
                                                   grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  grpc::Status write(v1::Device::Stub& stub, std::vector<std::pair<std::string, uint64_t>> items,
                     v1::WriteRegistersResponse* response = nullptr) {
    v1::WriteRegistersRequest request;
    for (auto& [name, value] : items) {
      auto* item = request.add_items();
      item->mutable_ref()->set_name(name);
      item->set_value(value);
    }
    v1::WriteRegistersResponse ignored;
    grpc::ClientContext context;
    return stub.WriteRegisters(&context, request, response ? response : &ignored);
  }

  v1::ReadRegistersResponse read(std::vector<std::string> names) {
    v1::ReadRegistersRequest request;
    for (auto& n : names) request.add_items()->set_name(n);
    v1::ReadRegistersResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(unix_->ReadRegisters(&context, request, &response).ok());
    return response;
  }

  test::TempDir dir_;
  std::unique_ptr<EmulatedBus> real_;
  NiceMock<MockBus> bus_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<DeviceService> service_;
  std::unique_ptr<grpc::Server> server_;
  int tcp_port_ = 0;
  std::unique_ptr<v1::Device::Stub> unix_;
  std::unique_ptr<v1::Device::Stub> tcp_;
};

TEST_F(DeviceServiceTest, GetInfoDescribesTheBoard) {
  v1::DeviceInfo info;
  grpc::ClientContext context;
  ASSERT_TRUE(unix_->GetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.board_kind(), "netfpga-1g");
  EXPECT_EQ(info.profile(), "netfpga-1g");
  EXPECT_EQ(info.regmap_version(), "1.0");
  EXPECT_EQ(info.capabilities().ports(), 6u);
  EXPECT_EQ(info.capabilities().vcs_per_port(), 2u);
  EXPECT_EQ(info.capabilities().clock_hz(), 125000000u);
  EXPECT_GE(info.generation(), 1u);
  ASSERT_EQ(info.ports_size(), 6);
  EXPECT_EQ(info.ports(0).media(), "ethernet");
  EXPECT_EQ(info.ports(4).media(), "aurora");
  EXPECT_EQ(info.ports(4).speed_mbps(), 2000u);
  EXPECT_TRUE(info.ports(0).link_up());
  ASSERT_EQ(info.blocks_size(), 11);  // id, 6 ports, route, tdm, stripe, lock
  EXPECT_EQ(info.blocks(1).name(), "port[0]");
  EXPECT_FALSE(info.asnd_version().empty());
}

TEST_F(DeviceServiceTest, ReadsByNameAndOffsetWithPerItemErrors) {
  v1::ReadRegistersRequest request;
  request.add_items()->set_name("id.magic");
  request.add_items()->set_offset(0x0c);
  request.add_items()->set_name("id.sratch");
  request.add_items()->set_name("port[1].speed_mbps");
  v1::ReadRegistersResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(unix_->ReadRegisters(&context, request, &response).ok());
  ASSERT_EQ(response.results_size(), 4);
  EXPECT_EQ(response.results(0).value().value(), 0x41534e31u);
  EXPECT_EQ(response.results(1).value().name(), "id.magic");
  EXPECT_EQ(response.results(2).error().code(), "NOT_FOUND");
  EXPECT_THAT(response.results(2).error().message(), ::testing::HasSubstr("'scratch'"));
  EXPECT_EQ(response.results(3).value().value(), 1000u);
  EXPECT_EQ(response.results(3).value().access(), "RO");
}

TEST_F(DeviceServiceTest, WritesAndReadsBack) {
  v1::WriteRegistersResponse response;
  ASSERT_TRUE(
      write(*unix_, {{"id.scratch", 0xcafe}, {"port[3].aldfb_threshold.packets", 20}}, &response)
          .ok());
  ASSERT_EQ(response.results_size(), 2);
  EXPECT_EQ(response.results(1).name(), "port[3].aldfb_threshold.packets");
  auto values = read({"id.scratch", "port[3].aldfb_threshold.packets"});
  EXPECT_EQ(values.results(0).value().value(), 0xcafeu);
  EXPECT_EQ(values.results(1).value().value(), 20u);
}

TEST_F(DeviceServiceTest, ReadOnlyWriteIsRefusedAndNeverReachesTheBus) {
  EXPECT_CALL(bus_, write32(_, _)).Times(0);
  EXPECT_CALL(bus_, execute(::testing::Truly(has_write))).Times(0);
  EXPECT_CALL(bus_, execute(::testing::Not(::testing::Truly(has_write)))).Times(AnyNumber());
  grpc::Status status = write(*unix_, {{"id.scratch", 1}, {"id.magic", 2}});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              ::testing::HasSubstr("item 2 (id.magic): id.magic is read-only (RO)"));
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("nothing was written"));
}

TEST_F(DeviceServiceTest, EveryBadItemIsNamedAndNothingIsWritten) {
  EXPECT_CALL(bus_, write32(_, _)).Times(0);
  EXPECT_CALL(bus_, execute(::testing::Truly(has_write))).Times(0);
  EXPECT_CALL(bus_, execute(::testing::Not(::testing::Truly(has_write)))).Times(AnyNumber());
  v1::WriteRegistersRequest request;
  auto* a = request.add_items();
  a->mutable_ref()->set_name("id.scratch");
  a->set_value(7);
  auto* b = request.add_items();
  b->mutable_ref()->set_name("port[0].control.enable");
  b->set_value(2);
  auto* c = request.add_items();
  c->mutable_ref()->set_offset(0x7fff0000);
  c->set_value(1);
  v1::WriteRegistersResponse response;
  grpc::ClientContext context;
  grpc::Status status = unix_->WriteRegisters(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              ::testing::HasSubstr("item 2 (port[0].control.enable): value 0x2 does not fit"));
  EXPECT_THAT(status.error_message(),
              ::testing::HasSubstr("item 3 (0x7fff0000): offset 0x7fff0000 is outside"));
  EXPECT_EQ(device_->read(regs::id::kScratch), 0u);
}

TEST_F(DeviceServiceTest, WritesAreAdminOnlyOverTcp) {
  grpc::Status status = write(*tcp_, {{"id.scratch", 1}});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("listen.tcp_admin"));
  v1::ResetBoardResponse reset;
  grpc::ClientContext context;
  EXPECT_EQ(tcp_->ResetBoard(&context, {}, &reset).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Reads are for everyone.
  v1::DeviceInfo info;
  grpc::ClientContext info_context;
  EXPECT_TRUE(tcp_->GetInfo(&info_context, {}, &info).ok());
}

TEST_F(DeviceServiceTest, TcpAdminAllowsWrites) {
  server_->Shutdown();
  server_.reset();
  device_.reset();
  service_.reset();
  real_.reset();
  start(true);
  EXPECT_TRUE(write(*tcp_, {{"id.scratch", 1}}).ok());
}

TEST_F(DeviceServiceTest, DumpStreamsEveryRegisterOfABlock) {
  v1::DumpRegistersRequest request;
  request.set_block("id");
  grpc::ClientContext context;
  auto reader = unix_->DumpRegisters(&context, request);
  v1::RegisterValue value;
  std::vector<std::string> names;
  while (reader->Read(&value)) names.push_back(value.name());
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_THAT(names, ::testing::Contains("id.magic"));
  EXPECT_THAT(names, ::testing::Contains("id.generation"));
  EXPECT_EQ(names.size(), device_->enumerate("id", false).size());
}

TEST_F(DeviceServiceTest, DumpOfAnUnknownBlockIsNotFound) {
  v1::DumpRegistersRequest request;
  request.set_block("rout");
  grpc::ClientContext context;
  auto reader = unix_->DumpRegisters(&context, request);
  v1::RegisterValue value;
  while (reader->Read(&value)) {
  }
  grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("did you mean 'route'?"));
}

TEST_F(DeviceServiceTest, ResetBoardClearsAndChangesGeneration) {
  ASSERT_TRUE(write(*unix_, {{"id.scratch", 0x77}}).ok());
  v1::ResetBoardResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(unix_->ResetBoard(&context, {}, &response).ok());
  EXPECT_EQ(response.generation_after(), response.generation_before() + 1);
  EXPECT_EQ(read({"id.scratch"}).results(0).value().value(), 0u);
}

TEST_F(DeviceServiceTest, ABusErrorIsAnInternalErrorNamingTheOffset) {
  uint32_t offset = device_->resolve("id.scratch").offset;
  ON_CALL(bus_, read32(offset)).WillByDefault(Invoke([offset](uint32_t) -> uint32_t {
    throw Error(ErrorCode::kHardware, fmt::format("bus error reading offset 0x{:x}", offset));
  }));
  auto response = read({"id.scratch"});
  EXPECT_EQ(response.results(0).error().code(), "INTERNAL");
  EXPECT_THAT(response.results(0).error().message(), ::testing::HasSubstr("0x2c"));
}

TEST_F(DeviceServiceTest, EmptyAndOversizedBatchesAreRefused) {
  v1::ReadRegistersRequest request;
  v1::ReadRegistersResponse response;
  grpc::ClientContext context;
  EXPECT_EQ(unix_->ReadRegisters(&context, request, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  for (int i = 0; i < 5000; ++i) request.add_items()->set_name("id.scratch");
  grpc::ClientContext context2;
  EXPECT_EQ(unix_->ReadRegisters(&context2, request, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace asn

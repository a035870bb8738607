// The Device gRPC service through real gRPC servers on a Unix socket (admin) and TCP (a
// listener of its own, with its own role), over a gMock RegisterBus that delegates to the
// emulated board: the tests see what the service does to the bus, e.g. that a refused write
// never reaches it.
#include "services/device_service.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <thread>

#include "asn/v1/device.grpc.pb.h"
#include "asn/v1/ports.grpc.pb.h"
#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "error.hpp"
#include "managers/board_manager.hpp"
#include "managers/port_manager.hpp"
#include "services/grpc_status.hpp"
#include "services/port_service.hpp"
#include "state/reconciler.hpp"
#include "state/store.hpp"
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
  MOCK_METHOD(BoardIdentity, identity, (), (const, override));
  MOCK_METHOD(uint32_t, read32, (uint32_t offset), (override));
  MOCK_METHOD(void, write32, (uint32_t offset, uint32_t value), (override));
  MOCK_METHOD(void, execute, (std::span<BusOp> ops), (override));
  MOCK_METHOD(void, set_event_handler, (std::function<void(const BusEvent&)> handler), (override));

  void delegate_to(RegisterBus& real) {
    ON_CALL(*this, describe()).WillByDefault(Invoke([&real] { return real.describe(); }));
    ON_CALL(*this, identity()).WillByDefault(Invoke([&real] { return real.identity(); }));
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

// The services as asnd composes them, over the mock bus: an admin listener on a Unix socket
// and a second server, with its own service instances, for a TCP listener.
class DeviceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { start(Role::kReader); }

  void start(Role tcp_role) {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("svc");
    options.shm_dir = dir_.path();
    options.run_clock = false;
    real_ = std::make_unique<EmulatedBus>(options);
    bus_.delegate_to(*real_);
    device_ = std::make_unique<Device>(bus_);
    store_ = std::make_unique<StateStore>(dir_.path());
    reconciler_ = std::make_unique<Reconciler>(*device_);
    board_ = std::make_unique<BoardManager>(*device_, *reconciler_);
    ports_ = std::make_unique<PortManager>(*device_, *store_);
    reconciler_->add(*ports_);
    reconciler_->start();
    unix_server_ = serve("unix:" + dir_.file("s.sock"), {"unix socket", Role::kAdmin, "", {}},
                         unix_service_, nullptr);
    tcp_server_ = serve("127.0.0.1:0", {"tcp", tcp_role, "set listen.tcp_admin: true", {}},
                        tcp_service_, &tcp_port_);
    unix_channel_ =
        grpc::CreateChannel("unix:" + dir_.file("s.sock"), grpc::InsecureChannelCredentials());
    unix_ = v1::Device::NewStub(unix_channel_);
    tcp_ = v1::Device::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(tcp_port_),
                                                   grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<grpc::Server> serve(const std::string& address, ListenerPolicy policy,
                                      std::unique_ptr<DeviceService>& service, int* port) {
    auto streams = std::make_shared<StreamLimiter>(policy.name, stream_limits_);
    if (policy.role == Role::kAdmin && !unix_streams_) unix_streams_ = streams;
    service = std::make_unique<DeviceService>(*device_, *board_, *reconciler_,
                                              Authorizer(std::move(policy)),
                                              std::chrono::steady_clock::now(), streams);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
    builder.RegisterService(service.get());
    auto server = builder.BuildAndStart();
    EXPECT_TRUE(server);
    return server;
  }

  void stop() {
    for (auto* server : {&unix_server_, &tcp_server_}) {
      if (*server) (*server)->Shutdown();
      server->reset();
    }
    unix_service_.reset();
    tcp_service_.reset();
    unix_streams_.reset();
    ports_.reset();
    board_.reset();
    reconciler_.reset();
    device_.reset();
    real_.reset();
  }

  void TearDown() override { stop(); }

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
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<BoardManager> board_;
  std::unique_ptr<PortManager> ports_;
  std::unique_ptr<DeviceService> unix_service_;
  std::unique_ptr<DeviceService> tcp_service_;
  std::unique_ptr<grpc::Server> unix_server_;
  std::unique_ptr<grpc::Server> tcp_server_;
  int tcp_port_ = 0;
  StreamLimits stream_limits_{4, std::chrono::milliseconds(1500)};
  std::shared_ptr<StreamLimiter> unix_streams_;
  std::shared_ptr<grpc::Channel> unix_channel_;
  std::unique_ptr<v1::Device::Stub> unix_;
  std::unique_ptr<v1::Device::Stub> tcp_;
};

const v1::Capability* capability(const v1::DeviceInfo& info, const std::string& name) {
  for (const auto& c : info.capabilities()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

TEST_F(DeviceServiceTest, GetInfoDescribesTheBoard) {
  v1::DeviceInfo info;
  grpc::ClientContext context;
  ASSERT_TRUE(unix_->GetInfo(&context, {}, &info).ok());
  EXPECT_EQ(info.board_kind(), "netfpga-1g");
  EXPECT_EQ(info.profile(), "netfpga-1g");
  EXPECT_EQ(info.regmap_version(),
            std::to_string(regs::kVersionMajor) + "." + std::to_string(regs::kVersionMinor));
  ASSERT_NE(capability(info, "ports"), nullptr);
  EXPECT_EQ(capability(info, "ports")->value(), 6u);
  EXPECT_EQ(capability(info, "vcs_per_port")->value(), 2u);
  EXPECT_EQ(capability(info, "clock_hz")->value(), 125000000u);
  // A capability only the register map's YAML declares, with its description from there.
  ASSERT_NE(capability(info, "dram_mib"), nullptr);
  EXPECT_EQ(capability(info, "dram_mib")->value(), 64u);
  EXPECT_THAT(capability(info, "dram_mib")->description(), ::testing::HasSubstr("DRAM"));
  EXPECT_EQ(info.capabilities_size(), static_cast<int>(regmap::register_map().capabilities.size()));
  EXPECT_EQ(info.backend(), "emulated");
  EXPECT_THAT(info.board_location(), ::testing::HasSubstr(dir_.path()));
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
              ::testing::HasSubstr("item 2 ('id.magic'): id.magic is read-only (RO)"));
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
              ::testing::HasSubstr("item 2 ('port[0].control.enable'): value 0x2 does not fit"));
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
  stop();
  start(Role::kAdmin);
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
  const uint32_t offset = device_->resolve("id.scratch").offset;
  ON_CALL(bus_, execute(_)).WillByDefault(Invoke([&, offset](std::span<BusOp> ops) {
    real_->execute(ops);
    for (const auto& op : ops) {
      if (op.offset == offset) {
        throw Error(ErrorCode::kHardware, fmt::format("bus error reading offset 0x{:x}", offset));
      }
    }
  }));
  v1::ReadRegistersRequest request;
  request.add_items()->set_name("id.scratch");
  v1::ReadRegistersResponse response;
  grpc::ClientContext context;
  grpc::Status status = unix_->ReadRegisters(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("0x2c"));
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

// A write of id.control.board_reset is a board reset, by the same path as ResetBoard: the
// desired state is back on the board before the call returns.
TEST_F(DeviceServiceTest, WritingTheResetBitResetsTheBoardAndRestoresTheState) {
  const PortAdminState down[] = {{3, false}};
  ports_->set(down, false);
  EXPECT_EQ(device_->read(regs::port::kControlEnable, 3), 0u);
  const uint32_t before = device_->read(regs::id::kGenerationValue);
  v1::WriteRegistersResponse response;
  ASSERT_TRUE(write(*unix_, {{"id.control.board_reset", 1}}, &response).ok());
  EXPECT_EQ(device_->read(regs::id::kGenerationValue), before + 1);
  EXPECT_EQ(reconciler_->reconciled_generation(), before + 1);
  EXPECT_EQ(device_->read(regs::port::kControlEnable, 3), 0u);  // restored, not the reset 1
  EXPECT_EQ(device_->read(regs::port::kControlEnable, 2), 1u);
  // Alone only: with other items it is refused, and nothing is written.
  grpc::Status mixed = write(*unix_, {{"id.scratch", 5}, {"id.control.board_reset", 1}});
  EXPECT_EQ(mixed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(mixed.error_message(), ::testing::HasSubstr("write it alone"));
  EXPECT_EQ(device_->read(regs::id::kGenerationValue), before + 1);
  EXPECT_EQ(device_->read(regs::id::kScratch), 0u);
  // Readers may not reset the board that way either.
  EXPECT_EQ(write(*tcp_, {{"id.control.board_reset", 1}}).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

// The bus found the board again after losing it (asn.ko reloaded, the board re-bound) with
// its generation unchanged: what was written meanwhile behind asnd's back is put back, by
// the reconciler's worker, at once rather than at the next poll.
TEST_F(DeviceServiceTest, ABoardFoundAgainIsCheckedAndWhatDiffersPutBack) {
  const PortAdminState down[] = {{3, false}};
  ports_->set(down, false);
  const uint32_t generation = device_->read(regs::id::kGenerationValue);
  reconciler_->watch(std::chrono::hours(1));         // no poll within the test: only the notice
  device_->write(regs::port::kControlEnable, 1, 3);  // while asnd could not see the board
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(device_->read(regs::port::kControlEnable, 3), 1u);  // nothing without the notice
  reconciler_->notify_reconnected();
  EXPECT_TRUE(test::wait_until([&] { return device_->read(regs::port::kControlEnable, 3) == 0; }));
  EXPECT_EQ(device_->read(regs::port::kControlEnable, 2), 1u);
  EXPECT_EQ(reconciler_->reconciled_generation(), generation);  // not taken for a reset
}

// Many bad items: the status message stays within what clients accept (8 KiB of metadata),
// names the first problems and counts the rest; client strings are escaped.
TEST_F(DeviceServiceTest, AStatusMessageStaysSmallAndSafe) {
  v1::WriteRegistersRequest request;
  for (int i = 0; i < 4000; ++i) {
    auto* item = request.add_items();
    item->mutable_ref()->set_name("id.no_such_register_" + std::to_string(i));
    item->set_value(1);
  }
  auto* nul = request.add_items();
  nul->mutable_ref()->set_name(std::string("id.scr\0atch", 11));
  v1::WriteRegistersResponse response;
  grpc::ClientContext context;
  grpc::Status status = unix_->WriteRegisters(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(status.error_message().size(), kMaxStatusMessageBytes);
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("id.no_such_register_0"));
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr("more; nothing was written"));

  // A NUL inside a name is shown escaped, not cut off; a huge name is refused up front.
  v1::ReadRegistersRequest read_request;
  read_request.add_items()->set_name(std::string("id.scr\0atch", 11));
  read_request.add_items()->set_name(std::string(8 << 10, 'x'));
  v1::ReadRegistersResponse read_response;
  grpc::ClientContext read_context;
  ASSERT_TRUE(unix_->ReadRegisters(&read_context, read_request, &read_response).ok());
  EXPECT_THAT(read_response.results(0).error().message(), ::testing::HasSubstr("scr\\x00atch"));
  EXPECT_THAT(read_response.results(1).error().message(),
              ::testing::HasSubstr("names are at most 256 bytes"));
  EXPECT_LT(read_response.results(1).error().message().size(), 300u);
}

// Clients that open dumps and never read them: at most the listener's cap run at once
// (the rest are refused, naming it), a waiting one holds no thread, and each is cancelled
// once it has not been read for the write timeout, freeing its slot.
TEST_F(DeviceServiceTest, StalledDumpsAreCappedAndCancelled) {
  // A client that never reads, and keeps its flow-control window small (as a hostile one
  // would): the server's writes stop after a few kilobytes.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8192);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stalling = v1::Device::NewStub(grpc::CreateCustomChannel(
      "unix:" + dir_.file("s.sock"), grpc::InsecureChannelCredentials(), args));
  v1::DumpRegistersRequest request;
  request.set_include_tables(true);  // some 40,000 words: far more than the window
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::RegisterValue>>> stalled;
  for (int i = 0; i < 4; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stalled.push_back(stalling->DumpRegisters(contexts.back().get(), request));
  }
  ASSERT_TRUE(test::wait_until([&] { return unix_streams_->active() == 4; }));

  grpc::ClientContext fifth_context;
  auto fifth = unix_->DumpRegisters(&fifth_context, request);
  v1::RegisterValue value;
  EXPECT_FALSE(fifth->Read(&value));
  grpc::Status refused = fifth->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("listen.max_streams"));

  // Not read for the write timeout (1.5 s here): cancelled, and their slots free.
  ASSERT_TRUE(test::wait_until([&] { return unix_streams_->cancelled_stalled() == 4; }));
  ASSERT_TRUE(test::wait_until([&] { return unix_streams_->active() == 0; }));
  for (auto& reader : stalled) {
    while (reader->Read(&value)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }

  // A client that reads gets the whole dump. Every register, without the 35,000 table words:
  // a client reading those under ThreadSanitizer on a busy 2-core machine can itself pause
  // for the write timeout, and be cancelled as a stalled one.
  grpc::ClientContext context;
  v1::DumpRegistersRequest registers;
  auto reader = unix_->DumpRegisters(&context, registers);
  size_t count = 0;
  while (reader->Read(&value)) ++count;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(count, device_->enumerate("", false).size());
}

TEST_F(DeviceServiceTest, GetInfoReportsTheDesiredState) {
  v1::DeviceInfo info;
  grpc::ClientContext context;
  ASSERT_TRUE(unix_->GetInfo(&context, {}, &info).ok());
  ASSERT_EQ(info.state_size(), 1);
  EXPECT_EQ(info.state(0).manager(), "ports");
  EXPECT_EQ(info.state(0).status(), "nothing configured");
  EXPECT_EQ(info.warnings_size(), 0);
}

}  // namespace
}  // namespace asn

// Cost of each layer a register access goes through: the emulated board itself (the
// reference every other figure is divided by), the EmulatedBus, the Device layer (typed and
// symbolic), and a full ReadRegisters/WriteRegisters round trip over asnd's Unix socket.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include "asn/v1/device.grpc.pb.h"
#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "managers/board_manager.hpp"
#include "services/device_service.hpp"
#include "state/reconciler.hpp"
#include "support.hpp"

namespace {

using namespace asn;

// The board memory goes in a temporary directory, removed at exit.
struct Fixture {
  test::TempDir temp;
  std::string dir = temp.path();
  std::unique_ptr<EmulatedBus> bus;
  std::unique_ptr<Device> device;

  Fixture() {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("bench");
    options.shm_dir = dir;
    options.run_clock = false;
    bus = std::make_unique<EmulatedBus>(options);
    device = std::make_unique<Device>(*bus);
  }
  ~Fixture() {
    device.reset();
    bus.reset();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_ModelRead32(benchmark::State& state) {
  auto& board = fixture().bus->board();
  uint32_t value = 0;
  for (auto _ : state) {
    board.read32(regs::id::kScratch.offset, value);
    benchmark::DoNotOptimize(value);
  }
}
BENCHMARK(BM_ModelRead32);

void BM_BusRead32(benchmark::State& state) {
  auto& bus = *fixture().bus;
  for (auto _ : state) benchmark::DoNotOptimize(bus.read32(regs::id::kScratch.offset));
}
BENCHMARK(BM_BusRead32);

void BM_DeviceReadField(benchmark::State& state) {
  auto& device = *fixture().device;
  for (auto _ : state) benchmark::DoNotOptimize(device.read(regs::port::kControlEnable, 3));
}
BENCHMARK(BM_DeviceReadField);

void BM_DeviceWriteField(benchmark::State& state) {
  auto& device = *fixture().device;
  uint32_t v = 0;
  for (auto _ : state) device.write(regs::port::kAldfbThresholdPackets, ++v & 0xff, 2);
}
BENCHMARK(BM_DeviceWriteField);

void BM_DeviceResolveName(benchmark::State& state) {
  auto& device = *fixture().device;
  for (auto _ : state) {
    benchmark::DoNotOptimize(device.resolve("route.dest_table[7].d1_port_b"));
  }
}
BENCHMARK(BM_DeviceResolveName);

// Every register of the board read one bus call at a time (as the Device layer did before
// it batched), and in one bus transaction: on a kernel backend each call is a system call.
void BM_DeviceDumpAllOneByOne(benchmark::State& state) {
  auto& device = *fixture().device;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (const auto& t : device.enumerate("", false)) sum += device.read(t);
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_DeviceDumpAllOneByOne);

void BM_DeviceDumpAllBatched(benchmark::State& state) {
  auto& device = *fixture().device;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (uint64_t v : device.read(device.enumerate("", false))) sum += v;
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_DeviceDumpAllBatched);

struct Server {
  std::unique_ptr<Reconciler> reconciler;
  std::unique_ptr<BoardManager> board;
  std::unique_ptr<DeviceService> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Device::Stub> stub;
  Server() {
    auto& f = fixture();
    reconciler = std::make_unique<Reconciler>(*f.device);
    board = std::make_unique<BoardManager>(*f.device, *reconciler);
    service = std::make_unique<DeviceService>(
        *f.device, *board, *reconciler, Authorizer({"bench socket", Role::kAdmin, "", {}}),
        std::chrono::steady_clock::now(), std::make_shared<StreamLimiter>("bench", StreamLimits{}));
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + f.dir + "/bench.sock", grpc::InsecureServerCredentials());
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    stub = v1::Device::NewStub(
        grpc::CreateChannel("unix:" + f.dir + "/bench.sock", grpc::InsecureChannelCredentials()));
  }
};

Server& server() {
  static Server s;
  return s;
}

void BM_GrpcReadRegisters(benchmark::State& state) {
  auto& s = server();
  v1::ReadRegistersRequest request;
  for (int i = 0; i < state.range(0); ++i) {
    request.add_items()->set_name("port[" + std::to_string(i % 6) + "].control.enable");
  }
  for (auto _ : state) {
    v1::ReadRegistersResponse response;
    grpc::ClientContext context;
    if (!s.stub->ReadRegisters(&context, request, &response).ok()) state.SkipWithError("rpc");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GrpcReadRegisters)->Arg(1)->Arg(64);

void BM_GrpcWriteRegisters(benchmark::State& state) {
  auto& s = server();
  v1::WriteRegistersRequest request;
  for (int i = 0; i < state.range(0); ++i) {
    auto* item = request.add_items();
    item->mutable_ref()->set_name("port[" + std::to_string(i % 6) + "].aldfb_threshold.packets");
    item->set_value(static_cast<uint64_t>(i + 1));
  }
  for (auto _ : state) {
    v1::WriteRegistersResponse response;
    grpc::ClientContext context;
    if (!s.stub->WriteRegisters(&context, request, &response).ok()) state.SkipWithError("rpc");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GrpcWriteRegisters)->Arg(1)->Arg(64);

}  // namespace

BENCHMARK_MAIN();

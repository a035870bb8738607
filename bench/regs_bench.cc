// Cost of each layer a register access goes through: the emulated board itself (the
// reference every other figure is divided by), the EmulatedBus, the Device layer (typed and
// symbolic), and a full ReadRegisters/WriteRegisters round trip over asnd's Unix socket.
//
// ASN_BENCH_BUS=kernel (or kernel:BDF) puts asnd's kernel backend (KernelBus over asn.ko)
// under every layer above the reference instead of the EmulatedBus: the QEMU kernel test's
// guest runs it both ways (driver/tests/qemu_test.sh with ASN_QEMU_BENCH), so the two
// backends compare on one machine, in one run, against the same reference.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "asn/v1/device.grpc.pb.h"
#include "bus/emulated_bus.hpp"
#include "bus/kernel_bus.hpp"
#include "device/device.hpp"
#include "error.hpp"
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
  std::unique_ptr<EmulatedBus> emulated;  // the reference's board, always
  std::unique_ptr<KernelBus> kernel;      // with ASN_BENCH_BUS=kernel[:BDF]
  RegisterBus* bus = nullptr;             // the bus under the Device layer
  std::unique_ptr<Device> device;

  Fixture() {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("bench");
    options.shm_dir = dir;
    options.run_clock = false;
    emulated = std::make_unique<EmulatedBus>(options);
    bus = emulated.get();
    const char* choice = std::getenv("ASN_BENCH_BUS");
    if (choice != nullptr && std::string_view(choice).starts_with("kernel")) {
      const std::string_view bdf = std::string_view(choice).substr(6);
      try {
        kernel = std::make_unique<KernelBus>(
            KernelBusOptions{std::string(bdf.starts_with(':') ? bdf.substr(1) : bdf)});
      } catch (const Error& e) {
        std::fprintf(stderr, "regs_bench: ASN_BENCH_BUS=%s: %s\n", choice, e.what());
        std::exit(2);
      }
      bus = kernel.get();
    }
    device = std::make_unique<Device>(*bus);
  }
  ~Fixture() {
    device.reset();
    kernel.reset();
    emulated.reset();
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_ModelRead32(benchmark::State& state) {
  auto& board = fixture().emulated->board();
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

void BM_BusWrite32(benchmark::State& state) {
  auto& bus = *fixture().bus;
  uint32_t v = 0;
  for (auto _ : state) bus.write32(regs::id::kScratch.offset, ++v);
}
BENCHMARK(BM_BusWrite32);

// One bus transaction of N reads or writes (the kernel backend: one netlink message).
void BM_BusReadBatch(benchmark::State& state) {
  auto& bus = *fixture().bus;
  std::vector<BusOp> ops(static_cast<size_t>(state.range(0)),
                         BusOp::read(regs::id::kScratch.offset));
  for (auto _ : state) {
    for (auto& op : ops) op = BusOp::read(regs::id::kScratch.offset);
    bus.execute(ops);
    benchmark::DoNotOptimize(ops.back().value);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BusReadBatch)->Arg(64);

void BM_BusWriteBatch(benchmark::State& state) {
  auto& bus = *fixture().bus;
  std::vector<BusOp> ops;
  for (int i = 0; i < state.range(0); ++i) {
    ops.push_back(BusOp::write(regs::id::kScratch.offset, static_cast<uint32_t>(i)));
  }
  for (auto _ : state) bus.execute(ops);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_BusWriteBatch)->Arg(64);

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
    // The channel connects on its first call; make that call here, not in the first
    // benchmark's timing (in a TCG guest the connection costs a second).
    v1::ReadRegistersRequest request;
    request.add_items()->set_name("id.scratch");
    v1::ReadRegistersResponse response;
    grpc::ClientContext context;
    stub->ReadRegisters(&context, request, &response);
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

#include "bus/bus_factory.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bus/emulated_bus.hpp"
#include "bus/kernel_bus.hpp"
#include "error.hpp"

namespace asn {

namespace {

std::unique_ptr<RegisterBus> make_emulated(const BackendConfig& backend,
                                           const std::string& storage_dir) {
  EmulatedBusOptions options;
  options.board_name = backend.emulated.board;
  options.profile = backend.emulated.profile;
  options.shm_dir = backend.emulated.shm_dir;
  options.storage_dir = storage_dir;
  options.power_on_reset = backend.reset_board;
  auto bus = std::make_unique<EmulatedBus>(options);
  const auto& report = bus->open_report();
  if (report.created) {
    spdlog::info("{}: new board memory ({})", bus->describe(), bus->identity().location);
  } else if (report.reinitialised) {
    spdlog::warn("{}: board memory reinitialised: {}", bus->describe(), report.reason);
  } else {
    spdlog::info("{}: board memory kept from before (warm start)", bus->describe());
  }
  spdlog::info("{}: storage servers of the parity data path in {}", bus->describe(), storage_dir);
  return bus;
}

std::unique_ptr<RegisterBus> make_kernel(const BackendConfig& backend) {
  // KernelBus owns the board at once (its node opened for writing): a process without the
  // right to drive it stops here, saying so, not at its first write.
  auto bus = std::make_unique<KernelBus>(KernelBusOptions{backend.kernel.device});
  spdlog::info("{}: opened through asn.ko", bus->describe());
  return bus;
}

}  // namespace

std::unique_ptr<RegisterBus> make_bus(const Config& config) {
  const BackendConfig& backend = config.backend;
  if (backend.kind == "emulated") return make_emulated(backend, emulated_storage_dir(config));
  if (backend.kind == "kernel") return make_kernel(backend);
  throw Error(ErrorCode::kInvalidArgument,
              fmt::format("backend.kind: unknown backend '{}'", backend.kind));
}

}  // namespace asn

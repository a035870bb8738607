#include "bus/bus_factory.hpp"

#include <fmt/format.h>
#include <linux/capability.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// Whether this process may write through asn.ko: its writes are GENL_ADMIN_PERM, which asks
// for CAP_NET_ADMIN in the initial user namespace (docs/driver.md, "Permissions").
bool has_net_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return true;  // unknown: let the driver say
  return (data[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32))) != 0;
}

std::unique_ptr<RegisterBus> make_kernel(const BackendConfig& backend) {
  auto bus = std::make_unique<KernelBus>(KernelBusOptions{backend.kernel.device});
  // Reads work without the capability, so without this check asnd would start and fail at
  // its first write to the board; say it at start instead.
  if (!has_net_admin()) {
    throw Error(ErrorCode::kPermissionDenied,
                fmt::format("{}: no permission: writing the board's registers through asn.ko "
                            "needs CAP_NET_ADMIN (run asnd as root, or give it the capability: "
                            "AmbientCapabilities=CAP_NET_ADMIN in its unit)",
                            bus->describe()));
  }
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

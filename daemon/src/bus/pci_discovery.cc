#include "bus/pci_discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "error.hpp"

extern "C" {
#include <pci/pci.h>
}

namespace asn {

namespace {

// libpci reports fatal errors through a callback that must not return. Throwing from it
// unwinds through libpci's C frames (Debian builds them with unwind tables on x86-64); the
// state libpci was building may leak, which is acceptable for a start-up failure. The
// common case, a missing dump file, is checked before libpci sees it. The GNU spelling of
// noreturn: clang makes it part of the function's type, as libpci's PCI_NONRET field needs.
[[gnu::noreturn]] void pci_error(char* msg, ...) {
  char buf[512];
  va_list args;
  va_start(args, msg);
  std::vsnprintf(buf, sizeof(buf), msg, args);
  va_end(args);
  throw Error(ErrorCode::kUnavailable, fmt::format("libpci: {}", buf));
}

void pci_quiet(char*, ...) {}

struct PciAccessDeleter {
  void operator()(pci_access* access) const { pci_cleanup(access); }
};

std::string driver_of(const std::string& sysfs_root, const std::string& bdf) {
  std::error_code ec;
  auto link = std::filesystem::read_symlink(
      std::filesystem::path(sysfs_root) / "bus/pci/devices" / bdf / "driver", ec);
  if (ec) return {};
  return link.filename().string();
}

}  // namespace

std::string asn_board_model(uint16_t vendor, uint16_t device, bool include_ivshmem) {
  if (vendor == 0xfeed && device == 0x0001) return "netfpga-1g";
  if (vendor == 0x10ee && device == 0x7028) return "netfpga-sume";
  if (vendor == 0x10ee && (device == 0x903f || device == 0x913f)) return "netfpga-plus";
  if (include_ivshmem && vendor == 0x1af4 && device == 0x1110) return "ivshmem (test)";
  return {};
}

std::vector<PciBoard> discover_pci_boards(const PciDiscoveryOptions& options) {
  std::unique_ptr<pci_access, PciAccessDeleter> access(pci_alloc());
  if (!access) throw Error(ErrorCode::kUnavailable, "libpci: cannot allocate its state");
  access->error = pci_error;
  access->warning = pci_quiet;
  access->debug = pci_quiet;
  std::string dump = options.dump_file;
  if (!dump.empty()) {
    if (!std::filesystem::exists(dump)) {
      throw Error(ErrorCode::kUnavailable, fmt::format("PCI dump file {} does not exist", dump));
    }
    access->method = PCI_ACCESS_DUMP;
    pci_set_param(access.get(), const_cast<char*>("dump.name"), dump.data());
  }
  pci_init(access.get());
  pci_scan_bus(access.get());

  std::vector<PciBoard> boards;
  for (pci_dev* dev = access->devices; dev != nullptr; dev = dev->next) {
    pci_fill_info(dev, PCI_FILL_IDENT);
    std::string model = asn_board_model(dev->vendor_id, dev->device_id, options.include_ivshmem);
    if (model.empty()) continue;
    PciBoard board;
    board.bdf =
        fmt::format("{:04x}:{:02x}:{:02x}.{:x}", dev->domain, dev->bus, dev->dev, dev->func);
    board.vendor = dev->vendor_id;
    board.device = dev->device_id;
    board.model = std::move(model);
    board.driver = driver_of(options.sysfs_root, board.bdf);
    boards.push_back(std::move(board));
  }
  // libpci lists devices in reverse scan order; report them in bus order.
  std::sort(boards.begin(), boards.end(),
            [](const PciBoard& a, const PciBoard& b) { return a.bdf < b.bdf; });
  return boards;
}

}  // namespace asn

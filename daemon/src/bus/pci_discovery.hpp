// Board discovery for the kernel backend: which asn boards are on the PCI bus (vendor and
// device ID), where (the BDF), and whether asn.ko is bound to them. Uses libpci, so the same
// code reads the machine's bus or a dump file (`lspci -x` output), which is how it is tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace asn {

struct PciBoard {
  std::string bdf;  // "0000:03:00.0"
  uint16_t vendor = 0;
  uint16_t device = 0;
  std::string model;   // "netfpga-sume", or "ivshmem (test)"
  std::string driver;  // the bound driver's name, empty when none
  bool bound_to_asn() const { return driver == "asn"; }
};

struct PciDiscoveryOptions {
  // Empty: the machine's bus (libpci's automatic method). Otherwise an `lspci -x` dump.
  std::string dump_file;
  // Where the bound driver is looked up: <sysfs_root>/bus/pci/devices/<bdf>/driver.
  std::string sysfs_root = "/sys";
  // Also report QEMU's ivshmem-plain (1af4:1110), which asn.ko binds with ivshmem=1.
  bool include_ivshmem = false;
};

// The asn model name for a vendor/device pair, or empty when it is not an asn board.
std::string asn_board_model(uint16_t vendor, uint16_t device, bool include_ivshmem);

// Every asn board libpci sees, in bus order. Throws asn::Error (kUnavailable) when libpci
// cannot read the bus or the dump file.
std::vector<PciBoard> discover_pci_boards(const PciDiscoveryOptions& options);

}  // namespace asn

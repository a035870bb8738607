// Register names and block filters as clients send them, resolved against a real board's
// layout: a Target or an asn::Error, never a crash or another exception.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "device/resolver.hpp"
#include "error.hpp"
#include "support.hpp"

namespace {

const asn::DeviceLayout& layout() {
  static asn::test::TempDir dir;
  static std::unique_ptr<asn::EmulatedBus> bus = [] {
    asn::EmulatedBusOptions options;
    options.board_name = "fuzz";
    options.profile = "emulated-64port";
    options.shm_dir = dir.path();
    options.run_clock = false;
    return std::make_unique<asn::EmulatedBus>(options);
  }();
  static asn::Device device(*bus);
  static std::shared_ptr<const asn::DeviceLayout> snapshot = device.layout();
  return *snapshot;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name(reinterpret_cast<const char*>(data), size);
  try {
    asn::resolve_name(layout(), name);
  } catch (const asn::Error&) {
  }
  try {
    asn::TargetCursor cursor(std::shared_ptr<const asn::DeviceLayout>(&layout(), [](auto*) {}),
                             name, false);
    cursor.next(8);
  } catch (const asn::Error&) {
  }
  if (size >= 4) {
    uint32_t offset = 0;
    std::memcpy(&offset, data, 4);
    try {
      asn::resolve_offset(layout(), offset);
    } catch (const asn::Error&) {
    }
  }
  return 0;
}

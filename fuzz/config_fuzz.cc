// asnd's configuration file: any bytes give a Config or an asn::Error, never a crash, a
// hang or another exception.
#include <cstdint>
#include <string>

#include "config.hpp"
#include "error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    asn::parse_config(text, "fuzz.yaml");
  } catch (const asn::Error&) {
  }
  return 0;
}

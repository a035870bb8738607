// TDM plan files: any bytes give a Plan or a PlanError, never a crash, a hang or another
// exception; a plan that parses also compiles and validates without crashing.
#include <cstdint>
#include <string_view>

#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    asn::schedule::Plan plan = asn::schedule::parse_plan(text, "fuzz.yaml");
    asn::schedule::compile_plan(plan, {});
    asn::schedule::BoardLimits limits;
    limits.ports = 64;
    limits.slots = 1024;
    limits.clock_hz = 250000000;
    asn::schedule::validate(plan, limits, {});
  } catch (const asn::schedule::PlanError&) {
  }
  return 0;
}

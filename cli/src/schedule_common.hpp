// What asnctl's TDM commands share (load-schedule, schedule show|compile|diff|list|activate;
// the Tdm service): reading a plan file, the --algorithm option, and how phases, warnings and
// a load are printed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "asn/v1/tdm.grpc.pb.h"

namespace asnctl {

// Adds --algorithm optimal|greedy to `sub`, stored in `algorithm` ("" when not given).
void add_algorithm_option(CLI::App* sub, std::string& algorithm);

// "" and "optimal": OPTIMAL; "greedy": GREEDY.
asn::v1::CompileAlgorithm to_algorithm(const std::string& name);

// The text of a plan (or fabric) file. Throws UsageError when it cannot be read or is larger
// than a plan may be (lib/schedule ParseLimits::max_file_bytes).
std::string read_plan_file(const std::string& path);

// Microseconds as "1.2 ms".
std::string ms(uint64_t micros);

// Nanoseconds for people: "48 ns", "1 us", "1.304 us", "2.5 ms", "3 s".
std::string format_ns(double ns);

// A length in cycles and in time: "250 cycles (1 us)"; just cycles without a clock.
std::string cycles_and_time(uint64_t cycles, uint64_t clock_hz);

// Each warning on stderr as "warning: plan.yaml:3:5: phase 'x': ...".
void print_warnings(const google::protobuf::RepeatedPtrField<asn::v1::PlanProblem>& warnings);

// One row per phase: phase (the `marked` one with a '*'), connections, slots, lower bound,
// utilisation, method, policy.
void print_phases(const google::protobuf::RepeatedPtrField<asn::v1::PhaseSummary>& phases,
                  const std::string& marked);

// The answer of LoadSchedule or ActivatePlan: warnings on stderr, then the phases and the
// line that says what happened (or, with -o json, the response).
int print_load(const asn::v1::LoadScheduleResponse& response, bool dry_run, bool json);

// A JSON object whose keys print in the order they were added (a protobuf Struct prints
// them in hash order), for -o json of reports that are no single response message.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value) {
    return add(key, std::string(value));
  }
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, const std::vector<JsonObject>& objects);
  // Indented by two spaces a level, as print_json() prints messages.
  std::string text(int indent = 0) const;

 private:
  struct Field {
    std::string key;
    std::string scalar;  // JSON text of a string, number or bool
    std::vector<JsonObject> objects;
    bool list = false;
  };
  std::vector<Field> fields_;
};

}  // namespace asnctl

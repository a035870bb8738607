// asnctl regs read|write|dump: register-level access for bring-up and diagnosis.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

void add_value_row(Table& table, const asn::v1::RegisterValue& v) {
  table.add_row(
      {v.name(), hex(v.offset(), 8), hex_and_decimal(v.value(), v.width_bits()), v.access()});
}

}  // namespace

int run_regs_read(Connection& connection, OutputFormat format,
                  const asn::v1::ReadRegistersRequest& request) {
  grpc::ClientContext context;
  connection.prepare(context);
  asn::v1::ReadRegistersResponse response;
  connection.check(connection.device().ReadRegisters(&context, request, &response));

  if (format == OutputFormat::kJson) {
    print_json(response);
  } else {
    Table table({"NAME", "OFFSET", "VALUE", "ACCESS"});
    for (const auto& result : response.results()) {
      if (result.has_value()) add_value_row(table, result.value());
    }
    if (!table.empty()) table.print(stdout);
  }
  std::fflush(stdout);

  int failed = 0;
  for (const auto& result : response.results()) {
    if (!result.has_error()) continue;
    ++failed;
    std::fprintf(stderr, "%s: %s: %s\n", describe_ref(result.ref()).c_str(),
                 result.error().code().c_str(), result.error().message().c_str());
  }
  return failed == 0 ? kExitOk : kExitFailed;
}

int run_regs_write(Connection& connection, OutputFormat format,
                   const asn::v1::WriteRegistersRequest& request) {
  grpc::ClientContext context;
  connection.prepare(context);
  asn::v1::WriteRegistersResponse response;
  connection.check(connection.device().WriteRegisters(&context, request, &response));

  if (format == OutputFormat::kJson) {
    print_json(response);
    return kExitOk;
  }
  Table table({"NAME", "OFFSET", "VALUE", "ACCESS"});
  for (const auto& v : response.results()) add_value_row(table, v);
  table.print(stdout);
  return kExitOk;
}

int run_regs_dump(Connection& connection, OutputFormat format,
                  const asn::v1::DumpRegistersRequest& request) {
  grpc::ClientContext context;
  connection.prepare(context);
  auto reader = connection.device().DumpRegisters(&context, request);
  std::vector<asn::v1::RegisterValue> values;
  asn::v1::RegisterValue value;
  while (reader->Read(&value)) values.push_back(value);
  grpc::Status status = reader->Finish();

  // What arrived before a failure is still shown; the failure follows on stderr.
  if (format == OutputFormat::kJson) {
    print_json_array(values);
  } else if (!values.empty() || status.ok()) {
    Table table({"OFFSET", "NAME", "VALUE", "ACCESS"});
    for (const auto& v : values) {
      table.add_row(
          {hex(v.offset(), 8), v.name(), hex_and_decimal(v.value(), v.width_bits()), v.access()});
    }
    table.print(stdout);
  }
  std::fflush(stdout);
  connection.check(status);
  return kExitOk;
}

}  // namespace asnctl

// asnctl regs read|write|dump: register-level access for bring-up and diagnosis.
#include <cstdio>
#include <string>
#include <vector>

#include "asn/v1/device.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

void add_value_row(Table& table, const asn::v1::RegisterValue& v) {
  table.add_row(
      {v.name(), hex(v.offset(), 8), hex_and_decimal(v.value(), v.width_bits()), v.access()});
}

class RegsRead final : public Command {
 public:
  explicit RegsRead(CLI::App* sub) {
    sub->add_option("ITEM", items_,
                    "A name (id.scratch, port[2].control.enable, route.dest_table[3].valid, "
                    "tdm.slot_table[0].out[5]) or a byte offset (0x.. hex or decimal)")
        ->required();
  }
  void check() override {
    for (const auto& item : items_) *request_.add_items() = parse_ref(item);
  }
  int run(Session& s) override {
    auto stub = asn::v1::Device::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ReadRegistersResponse response;
    s.connection.check(stub->ReadRegisters(&context, request_, &response));

    if (s.format == OutputFormat::kJson) {
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

 private:
  std::vector<std::string> items_;
  asn::v1::ReadRegistersRequest request_;
};

class RegsWrite final : public Command {
 public:
  explicit RegsWrite(CLI::App* sub) {
    sub->add_option("ASSIGNMENT", items_,
                    "NAME=VALUE or OFFSET=VALUE; VALUE is decimal or 0x hex (a field's value, "
                    "not shifted)")
        ->required();
  }
  void check() override {
    for (const auto& item : items_) *request_.add_items() = parse_write(item);
  }
  int run(Session& s) override {
    auto stub = asn::v1::Device::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::WriteRegistersResponse response;
    s.connection.check(stub->WriteRegisters(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    Table table({"NAME", "OFFSET", "VALUE", "ACCESS"});
    for (const auto& v : response.results()) add_value_row(table, v);
    table.print(stdout);
    return kExitOk;
  }

 private:
  std::vector<std::string> items_;
  asn::v1::WriteRegistersRequest request_;
};

class RegsDump final : public Command {
 public:
  explicit RegsDump(CLI::App* sub) {
    sub->add_option("--block", block_, "Only this block: id, port, port[2], route, ...")
        ->type_name("BLOCK");
    sub->add_flag("--tables", tables_, "Also every word of every table entry");
  }
  void check() override {
    request_.set_block(block_);
    request_.set_include_tables(tables_);
  }
  int run(Session& s) override {
    auto stub = asn::v1::Device::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    auto reader = stub->DumpRegisters(&context, request_);
    std::vector<asn::v1::RegisterValue> values;
    asn::v1::RegisterValue value;
    while (reader->Read(&value)) values.push_back(value);
    grpc::Status status = reader->Finish();

    // What arrived before a failure is still shown; the failure follows on stderr.
    if (s.format == OutputFormat::kJson) {
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
    s.connection.check(status);
    return kExitOk;
  }

 private:
  std::string block_;
  bool tables_ = false;
  asn::v1::DumpRegistersRequest request_;
};

const Registrar kRegs(30, [](CLI::App& app, CommandSet& commands) {
  auto* regs = app.add_subcommand("regs", "Read, write and dump registers");
  regs->require_subcommand(1);
  auto* read = regs->add_subcommand("read", "Read registers, fields or table words");
  commands.add<RegsRead>(read, read);
  auto* write = regs->add_subcommand(
      "write", "Write registers, fields or table words in one batch: all or nothing");
  commands.add<RegsWrite>(write, write);
  auto* dump = regs->add_subcommand("dump", "Every register, in address order");
  commands.add<RegsDump>(dump, dump);
});

}  // namespace

}  // namespace asnctl

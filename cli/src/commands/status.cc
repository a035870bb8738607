// asnctl status and asnctl info: what GetInfo says, for a glance and in full.
#include <google/protobuf/struct.pb.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "asn/v1/device.grpc.pb.h"
#include "asn/version.hpp"
#include "command.hpp"
#include "errors.hpp"

namespace asnctl {

namespace {

asn::v1::DeviceInfo get_info(Connection& connection) {
  auto stub = asn::v1::Device::NewStub(connection.channel());
  grpc::ClientContext context;
  connection.prepare(context);
  asn::v1::DeviceInfo info;
  connection.check(stub->GetInfo(&context, asn::v1::GetInfoRequest{}, &info));
  return info;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string yes_no(bool value) { return value ? "yes" : "no"; }

std::string speed(uint32_t mbps) {
  if (mbps >= 1000 && mbps % 1000 == 0) return std::to_string(mbps / 1000) + " Gb/s";
  return std::to_string(mbps) + " Mb/s";
}

// The ports line of `status`, and a warning for each enabled port without a link.
std::string ports_line(const asn::v1::DeviceInfo& info, std::vector<std::string>& warnings) {
  int up = 0;
  std::string down;
  for (const auto& port : info.ports()) {
    if (port.link_up()) {
      ++up;
      continue;
    }
    if (!down.empty()) down += ", ";
    down += std::to_string(port.index());
    if (!port.enabled()) {
      down += " (disabled)";
    } else {
      down += " (enabled, no link)";
      warnings.push_back("port " + std::to_string(port.index()) + " is enabled but has no link");
    }
  }
  std::string ports = std::to_string(up) + "/" + std::to_string(info.ports_size()) + " up";
  if (!down.empty()) ports += "; down: " + down;
  return ports;
}

class Status final : public Command {
 public:
  int run(Session& s) override {
    auto start = std::chrono::steady_clock::now();
    asn::v1::DeviceInfo info = get_info(s.connection);
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (s.format == OutputFormat::kJson) {
      print_json(info);
      return kExitOk;
    }

    std::vector<std::string> warnings(info.warnings().begin(), info.warnings().end());
    const std::string ports = ports_line(info, warnings);
    std::string bus_errors = std::to_string(info.bus_errors());
    if (info.bus_errors() != 0) {
      bus_errors +=
          "  [!] accesses that hit no register; the last: asnctl regs read id.bus_error_addr";
      warnings.push_back(plural(info.bus_errors(), "bus error", "bus errors") +
                         " (id.bus_error_count)");
    }
    std::string ro_writes = std::to_string(info.ro_writes());
    if (info.ro_writes() != 0) {
      ro_writes += "  [!] writes to read-only registers, which the board ignored";
      warnings.push_back(plural(info.ro_writes(), "write", "writes") +
                         " to read-only registers (id.ro_write_count)");
    }

    std::printf("asnd at %s: %s\n", s.connection.target().c_str(),
                warnings.empty()
                    ? "running, all well"
                    : ("running, " + plural(warnings.size(), "warning", "warnings")).c_str());
    KeyValues kv;
    kv.add("asnd", info.asnd_version() + ", up " + format_duration(info.uptime_seconds()));
    kv.add("backend", info.backend());
    kv.add("board", info.board_name());
    kv.add("kind", info.board_kind());
    kv.add("profile", info.profile().empty() ? "-" : info.profile());
    kv.add("register map", info.regmap_version());
    kv.add("generation", std::to_string(info.generation()));
    kv.add("ports", ports);
    for (const auto& state : info.state()) kv.add(state.manager() + " state", state.status());
    kv.add("bus errors", bus_errors);
    kv.add("ro writes", ro_writes);
    kv.add("health", "serving (GetInfo answered in " + std::to_string(elapsed.count()) + " ms)");
    kv.print(stdout);
    if (!warnings.empty()) {
      std::printf("\nwarnings:\n");
      for (const auto& w : warnings) std::printf("  - %s\n", w.c_str());
    }
    return kExitOk;
  }
};

class Info final : public Command {
 public:
  int run(Session& s) override {
    asn::v1::DeviceInfo info = get_info(s.connection);
    if (s.format == OutputFormat::kJson) {
      print_json(info);
      return kExitOk;
    }
    std::printf("Identity\n");
    KeyValues id;
    id.add("backend", info.backend());
    id.add("board name", info.board_name());
    id.add("board kind", info.board_kind());
    id.add("profile", info.profile().empty() ? "-" : info.profile());
    id.add("location", info.board_location());
    id.add("register map", info.regmap_version());
    id.add("generation", std::to_string(info.generation()));
    id.add("asnd version", info.asnd_version());
    id.add("asnd uptime", format_duration(info.uptime_seconds()));
    id.add("bus errors", std::to_string(info.bus_errors()));
    id.add("ro writes", std::to_string(info.ro_writes()));
    id.add("irq status", hex(info.irq_status(), 8));
    id.print(stdout);

    std::printf("\nCapabilities\n");
    Table caps({"CAPABILITY", "VALUE", "DESCRIPTION"});
    for (const auto& c : info.capabilities()) {
      std::string value = std::to_string(c.value());
      if (c.name() == "clock_hz") value += " (" + frequency(c.value()) + ")";
      caps.add_row({c.name(), value, c.description()});
    }
    caps.print(stdout, 2);

    std::printf("\nBlocks\n");
    Table blocks({"NAME", "TYPE", "VERSION", "BASE", "SIZE"});
    for (const auto& b : info.blocks()) {
      blocks.add_row({b.name(), hex(b.type(), 4), std::to_string(b.version()), hex(b.base(), 8),
                      hex(b.size())});
    }
    blocks.print(stdout, 2);

    std::printf("\nPorts\n");
    Table ports({"INDEX", "MEDIA", "SPEED", "ENABLED", "LINK"});
    for (const auto& p : info.ports()) {
      ports.add_row({std::to_string(p.index()), p.media(), speed(p.speed_mbps()),
                     yes_no(p.enabled()), p.link_up() ? "up" : "down"});
    }
    ports.print(stdout, 2);

    std::printf("\nDesired state\n");
    Table state({"MANAGER", "STATUS", "REVISION", "LAST RESTORE"});
    for (const auto& st : info.state()) {
      state.add_row({st.manager(), st.status(), std::to_string(st.revision()),
                     st.last_restore().empty() ? "-" : st.last_restore()});
    }
    state.print(stdout, 2);
    return kExitOk;
  }
};

// Both sides, as `kubectl version` shows client and server: a call one side knows and the
// other does not fails UNIMPLEMENTED, so a mismatch is named. Without asnd, asnctl's own
// version is printed before the error (exit 3).
class Version final : public Command {
 public:
  int run(Session& s) override {
    const std::string mine(asn::kVersion);
    if (s.format == OutputFormat::kTable) std::printf("asnctl  %s\n", mine.c_str());
    std::fflush(stdout);
    const std::string theirs = get_info(s.connection).asnd_version();
    if (s.format == OutputFormat::kJson) {
      google::protobuf::Struct out;
      (*out.mutable_fields())["asnctl"].set_string_value(mine);
      (*out.mutable_fields())["asnd"].set_string_value(theirs);
      (*out.mutable_fields())["match"].set_bool_value(mine == theirs);
      print_json(out);
      return kExitOk;
    }
    std::printf("asnd    %s (at %s)\n", theirs.c_str(), s.connection.target().c_str());
    if (mine != theirs) {
      std::printf(
          "warning: asnctl %s and asnd %s differ: a call one of them does not know fails "
          "(UNIMPLEMENTED); use the asnctl of asnd's package\n",
          mine.c_str(), theirs.c_str());
    }
    return kExitOk;
  }
};

const Registrar kStatus(10, [](CLI::App& app, CommandSet& commands) {
  commands.add<Status>(app.add_subcommand(
      "status", "Is all well? asnd, the board, its ports and error counters at a glance"));
  commands.add<Info>(app.add_subcommand(
      "info", "Everything asnd reports: identity, capabilities, blocks, ports, desired state"));
  commands.add<Version>(
      app.add_subcommand("version", "The versions of asnctl and of the asnd it talks to"));
});

}  // namespace

}  // namespace asnctl

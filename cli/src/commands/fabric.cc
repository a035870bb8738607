// asnctl fabric set|show, routes, routing show|set, queues: the switch's place in a 2DFB
// fabric, the tables it routes by, its routing mode and ALDFB thresholds, and its queues
// (the Fabric service; docs/asnctl.md).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "asn/v1/fabric.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

using asn::v1::Fabric;

const char* mode_name(asn::v1::RoutingMode mode) {
  switch (mode) {
    case asn::v1::STATIC:
      return "static";
    case asn::v1::MINIMAL:
      return "minimal";
    case asn::v1::UGAL:
      return "ugal";
    case asn::v1::ALDFB:
      return "aldfb";
    default:
      return "-";
  }
}

std::string join(const google::protobuf::RepeatedField<uint32_t>& values, const char* sep) {
  std::string out;
  for (uint32_t v : values) out += (out.empty() ? "" : sep) + std::to_string(v);
  return out;
}

std::string us(uint64_t micros) { return strprintf("%.3f ms", static_cast<double>(micros) / 1000); }

void print_topology(const asn::v1::Topology& t) {
  if (!t.configured()) {
    std::printf("the switch is in no fabric (asnctl fabric set --terminals N --k K --router R)\n");
    return;
  }
  std::printf("router %u of a 2DFB of %u terminals, %u per router\n", t.router(), t.terminals(),
              t.k());
  KeyValues kv;
  kv.add("digits", t.digits().empty() ? "-" : join(t.digits(), " ") + " (least significant first)");
  kv.add("channels", t.channels() == asn::v1::DOUBLE_RATE ? "double-rate" : "dilated (A, B)");
  kv.add("dimensions", std::to_string(t.dimensions()));
  kv.add("routers", std::to_string(t.routers()));
  kv.add("radix", std::to_string(t.radix()) + " ports");
  kv.add("diameter", std::to_string(t.diameter()) + " (worst case " +
                         std::to_string(t.worst_case_hops()) + " hops)");
  kv.add("static schedule",
         t.no_static_schedule().empty() ? "yes" : "none (" + t.no_static_schedule() + ")");
  kv.add("desired state", t.status() + ", revision " + std::to_string(t.revision()));
  kv.print(stdout);
}

class FabricSet final : public Command {
 public:
  explicit FabricSet(CLI::App* sub) {
    sub->add_option("--terminals,-N", terminals_, "Terminals N of the fabric")->required();
    sub->add_option("--k,-k", k_, "Terminals per router")->required();
    sub->add_option("--router,-r", router_, "This switch's router number, 0 .. N/k - 1")
        ->required();
    add_channels_option(sub, channels_);
    sub->add_flag("--dry-run", dry_run_, "Check against the board; write nothing");
  }
  void check() override {
    if (terminals_ > UINT32_MAX || k_ > UINT32_MAX || router_ > UINT32_MAX) {
      throw UsageError("--terminals, --k and --router are at most 4294967295");
    }
    request_.set_terminals(static_cast<uint32_t>(terminals_));
    request_.set_k(static_cast<uint32_t>(k_));
    request_.set_router(static_cast<uint32_t>(router_));
    request_.set_channels(channels_ == "double-rate" ? asn::v1::DOUBLE_RATE : asn::v1::DILATED);
    request_.set_validate_only(dry_run_);
  }
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::SetTopologyResponse response;
    s.connection.check(stub->SetTopology(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_topology(response.topology());
    const auto& t = response.times();
    if (dry_run_) {
      std::printf("dry run: the board can hold it; nothing was written\n");
    } else if (!response.changed()) {
      std::printf("the board already holds it; nothing was written\n");
    } else {
      std::printf("committed in %s (compute %s, verify %s, write and read back %s, commit %s)\n",
                  us(t.total_us()).c_str(), us(t.compute_us()).c_str(), us(t.verify_us()).c_str(),
                  us(t.write_us()).c_str(), us(t.commit_us()).c_str());
    }
    return kExitOk;
  }

 private:
  uint64_t terminals_ = 0, k_ = 0, router_ = 0;
  std::string channels_ = "dilated";
  bool dry_run_ = false;
  asn::v1::SetTopologyRequest request_;
};

class FabricShow final : public Command {
 public:
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::Topology topology;
    s.connection.check(stub->GetTopology(&context, {}, &topology));
    if (s.format == OutputFormat::kJson) {
      print_json(topology);
    } else {
      print_topology(topology);
    }
    return kExitOk;
  }
};

class Routes final : public Command {
 public:
  explicit Routes(CLI::App* sub) {
    sub->add_option("--dest,-d", dest_, "Only the route to this destination router");
  }
  void check() override {
    if (dest_) request_.set_dest(static_cast<uint32_t>(*dest_));
  }
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::GetRoutesResponse response;
    s.connection.check(stub->GetRoutes(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    std::printf("routing %s, %s (the board's active tables)\n\nPorts\n", mode_name(response.mode()),
                response.enable() ? "enabled" : "disabled");
    Table ports({"PORT", "ROLE", "DIMENSION", "DIGIT", "LANE"});
    for (const auto& p : response.ports()) {
      const bool channel = p.role() == "channel";
      ports.add_row({std::to_string(p.port()), p.role(),
                     channel ? std::to_string(p.dimension()) : "-", std::to_string(p.digit()),
                     channel ? std::string(1, char('A' + p.lane())) : "-"});
    }
    ports.print(stdout, 2);
    std::printf("\nDestinations\n");
    Table routes({"ROUTER", "DIGITS", "PORTS"});
    for (const auto& r : response.routes()) {
      std::string ports_text;
      if (r.local()) ports_text = "local";
      for (const auto& d : r.dims()) {
        ports_text += (ports_text.empty() ? "" : "; ") + std::string("d") +
                      std::to_string(d.dimension()) + ": " + join(d.ports(), ",");
      }
      routes.add_row({std::to_string(r.router()), join(r.digits(), " "),
                      ports_text.empty() ? "-" : ports_text});
    }
    routes.print(stdout, 2);
    return kExitOk;
  }

 private:
  std::optional<uint64_t> dest_;
  asn::v1::GetRoutesRequest request_;
};

void print_routing(const asn::v1::RoutingSettings& r) {
  std::printf("routing %s, %s; queue depth %u packets\n", mode_name(r.mode()),
              r.enable() ? "enabled" : "disabled", r.queue_depth());
  // Runs of ports with the same threshold on one row: a 255-port board set to one T_h is one
  // line, not 255 (-o json lists every port).
  Table table({"PORTS", "THRESHOLD"});
  const auto& t = r.thresholds();
  for (int first = 0, last = 0; first < t.size(); first = last + 1) {
    last = first;
    while (last + 1 < t.size() && t[last + 1].packets() == t[first].packets() &&
           t[last + 1].port() == t[last].port() + 1) {
      ++last;
    }
    const std::string ports =
        first == last ? std::to_string(t[first].port())
                      : std::to_string(t[first].port()) + "-" + std::to_string(t[last].port());
    table.add_row({ports, std::to_string(t[first].packets())});
  }
  table.print(stdout, 2);
}

class RoutingShow final : public Command {
 public:
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::RoutingSettings settings;
    s.connection.check(stub->GetRouting(&context, {}, &settings));
    if (s.format == OutputFormat::kJson) {
      print_json(settings);
    } else {
      print_routing(settings);
    }
    return kExitOk;
  }
};

class RoutingSet final : public Command {
 public:
  explicit RoutingSet(CLI::App* sub) {
    sub->add_option("--mode", mode_, "static, minimal, ugal or aldfb")
        ->check(CLI::IsMember({"static", "minimal", "ugal", "aldfb"}).description(""));
    sub->add_option("--threshold", threshold_, "ALDFB queue threshold T_h, in packets");
    sub->add_option("--port", port_, "The threshold for this port only (default: every port)");
    auto* on = sub->add_flag("--enable", enable_, "Route by the tables");
    auto* off = sub->add_flag("--disable", disable_, "Stop routing");
    on->excludes(off);
    sub->add_flag("--dry-run", dry_run_, "Check; change nothing");
  }
  void check() override {
    if (mode_.empty() && !threshold_ && !enable_ && !disable_) {
      throw UsageError("nothing to set: give --mode, --threshold, --enable or --disable");
    }
    if (port_ && !threshold_) throw UsageError("--port goes with --threshold");
    static const std::pair<const char*, asn::v1::RoutingMode> kModes[] = {
        {"static", asn::v1::STATIC},
        {"minimal", asn::v1::MINIMAL},
        {"ugal", asn::v1::UGAL},
        {"aldfb", asn::v1::ALDFB}};
    for (const auto& [name, mode] : kModes) {
      if (mode_ == name) request_.set_mode(mode);
    }
    // A new mode is meant to route: enable it unless told otherwise.
    if (enable_ || (!mode_.empty() && !disable_)) request_.set_enable(true);
    if (disable_) request_.set_enable(false);
    if (threshold_) request_.set_threshold(static_cast<uint32_t>(*threshold_));
    if (port_) request_.set_port(static_cast<uint32_t>(*port_));
    request_.set_validate_only(dry_run_);
  }
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::SetRoutingResponse response;
    s.connection.check(stub->SetRouting(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_routing(response.settings());
    print_desired_state_outcome(dry_run_, true, response.revision());
    return kExitOk;
  }

 private:
  std::string mode_;
  std::optional<uint64_t> threshold_;
  std::optional<uint64_t> port_;
  bool enable_ = false, disable_ = false, dry_run_ = false;
  asn::v1::SetRoutingRequest request_;
};

class Queues final : public Command {
 public:
  explicit Queues(CLI::App* sub) {
    sub->add_option("PORTS", ports_, "Ports: 3, 0-5, 1,4,7 (default: all)");
  }
  void check() override {
    for (const auto& spec : ports_) {
      for (uint32_t p : parse_port_list(spec)) request_.add_ports(p);
    }
  }
  int run(Session& s) override {
    auto stub = Fabric::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::QueueStatus status;
    s.connection.check(stub->GetQueueStatus(&context, request_, &status));
    if (s.format == OutputFormat::kJson) {
      print_json(status);
      return kExitOk;
    }
    std::vector<std::string> header = {"PORT"};
    const int vcs = status.ports().empty() ? 0 : status.ports(0).vc_packets_size();
    for (int vc = 0; vc < vcs; ++vc) header.push_back("VC" + std::to_string(vc));
    header.push_back("THRESHOLD");
    Table table(header);
    for (const auto& q : status.ports()) {
      std::vector<std::string> row = {std::to_string(q.port())};
      for (uint32_t n : q.vc_packets()) row.push_back(std::to_string(n));
      row.push_back(std::to_string(q.threshold()));
      table.add_row(row);
    }
    std::printf("packets queued per virtual channel (depth %u)\n", status.queue_depth());
    table.print(stdout);
    return kExitOk;
  }

 private:
  std::vector<std::string> ports_;
  asn::v1::GetQueueStatusRequest request_;
};

const Registrar kFabric(25, [](CLI::App& app, CommandSet& commands) {
  auto* fabric = app.add_subcommand("fabric", "The switch's place in a 2DFB fabric");
  fabric->require_subcommand(1);
  auto* set = fabric->add_subcommand(
      "set", "Place the switch: compute its routing tables, check, write and commit them");
  commands.add<FabricSet>(set, set);
  commands.add<FabricShow>(fabric->add_subcommand("show", "Where the switch is in its fabric"));

  auto* routes =
      app.add_subcommand("routes", "The tables the board routes by: ports, destinations");
  commands.add<Routes>(routes, routes);

  auto* routing = app.add_subcommand("routing", "Routing mode and ALDFB queue thresholds");
  routing->require_subcommand(1);
  commands.add<RoutingShow>(routing->add_subcommand("show", "Mode, enable and thresholds"));
  auto* routing_set = routing->add_subcommand("set", "Set the mode, enable, or thresholds");
  commands.add<RoutingSet>(routing_set, routing_set);

  auto* queues = app.add_subcommand("queues", "Packets queued per port and virtual channel");
  commands.add<Queues>(queues, queues);
});

}  // namespace

}  // namespace asnctl

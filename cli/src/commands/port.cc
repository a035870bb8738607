// asnctl port show|set: the ports as `ip -s link` shows links, and their admin state, which
// asnd keeps and restores after a restart or a board reset.
#include <cstdio>
#include <string>
#include <vector>

#include "asn/v1/ports.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

std::string short_speed(uint32_t mbps) {
  if (mbps >= 1000 && mbps % 1000 == 0) return std::to_string(mbps / 1000) + "G";
  return std::to_string(mbps) + "M";
}

void print_ports(const google::protobuf::RepeatedPtrField<asn::v1::PortStatus>& ports) {
  Table table({"PORT", "MEDIA", "SPEED", "ADMIN", "LINK", "RX PKTS", "RX BYTES", "TX PKTS",
               "TX BYTES", "DROPS", "QUEUED"});
  for (const auto& p : ports) {
    std::string queued;
    for (int vc = 0; vc < p.vc_occupancy_size(); ++vc) {
      queued += (vc ? "/" : "") + std::to_string(p.vc_occupancy(vc));
    }
    std::string admin = p.admin_up() ? "up" : "down";
    // The board disagrees with the desired state: a restore is due (or failed).
    if (p.admin_up() != p.enabled()) admin += p.enabled() ? " (board: up)" : " (board: down)";
    table.add_row({std::to_string(p.index()), p.media(), short_speed(p.speed_mbps()), admin,
                   p.link_up() ? "up" : "down", std::to_string(p.rx_packets()),
                   std::to_string(p.rx_bytes()), std::to_string(p.tx_packets()),
                   std::to_string(p.tx_bytes()), std::to_string(p.rx_drops() + p.tx_drops()),
                   queued});
  }
  table.print(stdout);
}

class PortShow final : public Command {
 public:
  explicit PortShow(CLI::App* sub) {
    sub->add_option("PORTS", ports_, "Ports to show: 3, 0-5, 1,4,7 (default: all)");
  }
  void check() override {
    for (const auto& spec : ports_) {
      for (uint32_t p : parse_port_list(spec)) request_.add_ports(p);
    }
  }
  int run(Session& s) override {
    auto stub = asn::v1::Ports::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ListPortsResponse response;
    s.connection.check(stub->ListPorts(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
    } else {
      print_ports(response.ports());
    }
    return kExitOk;
  }

 private:
  std::vector<std::string> ports_;
  asn::v1::ListPortsRequest request_;
};

class PortSet final : public Command {
 public:
  explicit PortSet(CLI::App* sub) {
    sub->add_option("PORTS", ports_, "Ports: 3, 0-5, 1,4,7")->required();
    sub->add_option("STATE", state_, "up or down")
        ->required()
        ->check(CLI::IsMember({"up", "down"}).description(""));
    sub->add_flag("--dry-run", dry_run_, "Check and show the result; change nothing");
  }
  void check() override {
    for (uint32_t p : parse_port_list(ports_)) {
      auto* setting = request_.add_ports();
      setting->set_index(p);
      setting->set_admin_up(state_ == "up");
    }
    request_.set_validate_only(dry_run_);
  }
  int run(Session& s) override {
    auto stub = asn::v1::Ports::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::SetPortsResponse response;
    s.connection.check(stub->SetPorts(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    print_ports(response.ports());
    print_desired_state_outcome(dry_run_, true, response.revision());
    return kExitOk;
  }

 private:
  std::string ports_;
  std::string state_;
  bool dry_run_ = false;
  asn::v1::SetPortsRequest request_;
};

const Registrar kPort(20, [](CLI::App& app, CommandSet& commands) {
  auto* port = app.add_subcommand("port", "Ports: link, counters, queues; set them up or down");
  port->require_subcommand(1);
  auto* show = port->add_subcommand("show", "Ports with link, admin state, counters and queues");
  show->alias("list");
  commands.add<PortShow>(show, show);
  auto* set = port->add_subcommand(
      "set", "Set ports up or down (kept by asnd across restarts and board resets)");
  commands.add<PortSet>(set, set);
});

}  // namespace

}  // namespace asnctl

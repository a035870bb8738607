#include "services/port_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "services/grpc_status.hpp"
#include "services/support.hpp"

namespace asn {

namespace {

std::vector<uint32_t> requested(const google::protobuf::RepeatedField<uint32_t>& ports,
                                const DeviceLayout& layout) {
  std::vector<uint32_t> out(ports.begin(), ports.end());
  if (out.empty()) {
    for (unsigned p = 0; p < layout.ports(); ++p) out.push_back(p);
  }
  for (uint32_t p : out) layout.require_port(p);
  return out;
}

}  // namespace

void PortService::describe(std::span<const uint32_t> ports,
                           google::protobuf::RepeatedPtrField<v1::PortStatus>* out) {
  namespace p = regs::port;
  const unsigned vcs = device_.layout()->caps.get(regmap::Cap::kVcsPerPort);
  // One bus transaction for all of it.
  Device::ReadBatch batch;
  std::vector<size_t> first;
  for (uint32_t port : ports) {
    first.push_back(batch.add(p::kPortInfoMedia, port));
    batch.add(p::kSpeedMbps, port);
    batch.add(p::kControlEnable, port);
    batch.add(p::kLinkUp, port);
    batch.add(p::kLinkChanges, port);
    for (const auto& counter :
         {p::kRxPackets, p::kRxBytes, p::kRxDrops, p::kTxPackets, p::kTxBytes, p::kTxDrops}) {
      batch.add64(counter, port);
    }
    for (unsigned vc = 0; vc < vcs; ++vc) batch.add(p::kVcOccupancy.at(vc), port);
  }
  device_.read(batch);
  for (size_t i = 0; i < ports.size(); ++i) {
    size_t at = first[i];
    auto* s = out->Add();
    s->set_index(ports[i]);
    s->set_media(port_media_name(static_cast<uint32_t>(batch[at++])));
    s->set_speed_mbps(static_cast<uint32_t>(batch[at++]));
    s->set_admin_up(ports_.admin_up(ports[i]));
    s->set_enabled(batch[at++] != 0);
    s->set_link_up(batch[at++] != 0);
    s->set_link_changes(static_cast<uint32_t>(batch[at++]));
    s->set_rx_packets(batch[at++]);
    s->set_rx_bytes(batch[at++]);
    s->set_rx_drops(batch[at++]);
    s->set_tx_packets(batch[at++]);
    s->set_tx_bytes(batch[at++]);
    s->set_tx_drops(batch[at++]);
    for (unsigned vc = 0; vc < vcs; ++vc) s->add_vc_occupancy(static_cast<uint32_t>(batch[at++]));
  }
}

grpc::Status PortService::ListPorts(grpc::ServerContext*, const v1::ListPortsRequest* request,
                                    v1::ListPortsResponse* response) {
  return guarded("ListPorts", [&] {
    authorizer_.require(Permission::kRead, "listing ports");
    if (request->ports_size() > kMaxBatchItems) check_batch(request->ports_size(), "ports");
    const auto ports = requested(request->ports(), *device_.layout());
    describe(ports, response->mutable_ports());
  });
}

grpc::Status PortService::SetPorts(grpc::ServerContext* context, const v1::SetPortsRequest* request,
                                   v1::SetPortsResponse* response) {
  return guarded("SetPorts", [&] {
    authorizer_.require(Permission::kConfigure, "setting ports up or down", *context);
    check_batch(request->ports_size(), "port settings");
    std::vector<PortAdminState> settings;
    std::vector<uint32_t> ports;
    for (const auto& s : request->ports()) {
      settings.push_back({s.index(), s.admin_up()});
      ports.push_back(s.index());
    }
    const uint64_t revision = ports_.set(settings, request->validate_only());
    response->set_revision(revision);
    if (!request->validate_only()) {
      for (const auto& s : settings) {
        spdlog::info("port {} set {} by {}", s.port, s.up ? "up" : "down",
                     authorizer_.principal(*context));
      }
    }
    describe(ports, response->mutable_ports());
    if (request->validate_only()) {
      // A preview: what the ports' admin state would be.
      for (size_t i = 0; i < settings.size(); ++i) {
        response->mutable_ports(static_cast<int>(i))->set_admin_up(settings[i].up);
      }
    }
  });
}

}  // namespace asn

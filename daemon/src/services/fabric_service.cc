#include "services/fabric_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "services/grpc_status.hpp"
#include "services/support.hpp"

namespace asn {

namespace {

using topology::RoutingMode;

v1::RoutingMode to_proto(RoutingMode mode) {
  return static_cast<v1::RoutingMode>(static_cast<int>(mode) + 1);
}

std::optional<RoutingMode> from_proto(v1::RoutingMode mode) {
  if (mode == v1::ROUTING_MODE_UNSPECIFIED) return std::nullopt;
  if (mode < v1::STATIC || mode > v1::ALDFB) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("mode: {} is not a routing mode (static, minimal, ugal, aldfb)",
                            static_cast<int>(mode)));
  }
  return static_cast<RoutingMode>(static_cast<int>(mode) - 1);
}

void fill(const TopologyView& view, v1::Topology* out) {
  out->set_configured(view.placed);
  out->set_revision(view.revision);
  out->set_status(view.status);
  if (!view.placed) return;
  out->set_terminals(view.request.terminals);
  out->set_k(view.request.k);
  out->set_router(view.request.router);
  out->set_channels(view.request.double_rate ? v1::DOUBLE_RATE : v1::DILATED);
  out->set_dimensions(view.dimensions);
  out->set_routers(view.routers);
  out->set_radix(view.radix);
  for (uint32_t d : view.digits) out->add_digits(d);
  out->set_diameter(view.diameter);
  out->set_worst_case_hops(view.worst_case_hops);
  out->set_no_static_schedule(view.no_static_schedule);
}

void fill(const RoutingView& view, v1::RoutingSettings* out) {
  out->set_mode(to_proto(view.mode.mode));
  out->set_enable(view.mode.enable);
  out->set_queue_depth(view.queue_depth);
  for (size_t p = 0; p < view.thresholds.size(); ++p) {
    auto* t = out->add_thresholds();
    t->set_port(static_cast<uint32_t>(p));
    t->set_packets(view.thresholds[p]);
  }
}

const char* role_name(topology::PortRole role) {
  switch (role) {
    case topology::PortRole::kUnused:
      return "unused";
    case topology::PortRole::kTerminal:
      return "terminal";
    case topology::PortRole::kChannel:
      return "channel";
  }
  return "?";
}

// A destination router's digits as the active config counts them: base k, the last digit
// base last_radix.
std::vector<uint32_t> digits_of(uint32_t router, const topology::RouteRegisters& reg) {
  std::vector<uint32_t> digits;
  for (unsigned d = 0; d < reg.r; ++d) {
    const uint32_t base = d + 1 == reg.r ? std::max<uint32_t>(reg.last_radix, 1) : reg.k;
    digits.push_back(base ? router % base : 0);
    router = base ? router / base : 0;
  }
  return digits;
}

}  // namespace

grpc::Status FabricService::SetTopology(grpc::ServerContext* context,
                                        const v1::SetTopologyRequest* request,
                                        v1::SetTopologyResponse* response) {
  return guarded("SetTopology", [&] {
    authorizer_.require(Permission::kConfigure, "placing the switch in a fabric", *context);
    const TopologyRequest topology{request->terminals(), request->k(), request->router(),
                                   request->channels() == v1::DOUBLE_RATE};
    const TopologyOutcome outcome = fabric_.set_topology(topology, request->validate_only());
    fill(outcome.view, response->mutable_topology());
    auto* t = response->mutable_times();
    t->set_compute_us(outcome.times.compute_us);
    t->set_verify_us(outcome.times.verify_us);
    t->set_write_us(outcome.times.write_us);
    t->set_commit_us(outcome.times.commit_us);
    t->set_total_us(outcome.times.total_us);
    response->set_changed(outcome.changed);
    if (outcome.changed) {
      spdlog::info("fabric: router {} of {} terminals, k {} ({}) set by {}", topology.router,
                   topology.terminals, topology.k, topology.double_rate ? "double-rate" : "dilated",
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status FabricService::GetTopology(grpc::ServerContext*, const v1::GetTopologyRequest*,
                                        v1::Topology* response) {
  return guarded("GetTopology", [&] {
    authorizer_.require(Permission::kRead, "reading the fabric");
    fill(fabric_.topology(), response);
  });
}

grpc::Status FabricService::GetRoutes(grpc::ServerContext*, const v1::GetRoutesRequest* request,
                                      v1::GetRoutesResponse* response) {
  return guarded("GetRoutes", [&] {
    authorizer_.require(Permission::kRead, "reading routes");
    const RoutesView routes = fabric_.routes(
        request->has_dest() ? std::optional<uint32_t>(request->dest()) : std::nullopt);
    response->set_mode(to_proto(routes.mode.mode));
    response->set_enable(routes.mode.enable);
    for (size_t p = 0; p < routes.ports.size(); ++p) {
      const auto& e = routes.ports[p];
      if (e.role == topology::PortRole::kUnused) continue;
      auto* out = response->add_ports();
      out->set_port(static_cast<uint32_t>(p));
      out->set_role(role_name(e.role));
      out->set_dimension(e.dimension);
      out->set_digit(e.digit);
      out->set_lane(e.lane);
    }
    for (const auto& [router, entry] : routes.routes) {
      auto* out = response->add_routes();
      out->set_router(router);
      for (uint32_t d : digits_of(router, routes.registers)) out->add_digits(d);
      out->set_local(entry.local);
      for (unsigned d = 0; d < topology::kMaxDimensions; ++d) {
        const unsigned lanes = topology::direct_lanes(entry.dims[d], routes.registers, d);
        if (lanes == 0) continue;
        auto* dim = out->add_dims();
        dim->set_dimension(d);
        for (unsigned lane = 0; lane < lanes; ++lane) {
          dim->add_ports(topology::lane_port(entry.dims[d], lane));
        }
      }
    }
  });
}

grpc::Status FabricService::SetRouting(grpc::ServerContext* context,
                                       const v1::SetRoutingRequest* request,
                                       v1::SetRoutingResponse* response) {
  return guarded("SetRouting", [&] {
    authorizer_.require(Permission::kConfigure, "setting the routing", *context);
    RoutingChange change;
    change.mode = from_proto(request->mode());
    if (request->has_enable()) change.enable = request->enable();
    if (request->has_threshold()) change.threshold = request->threshold();
    if (request->has_port()) change.port = request->port();
    const RoutingView view = fabric_.set_routing(change, request->validate_only());
    fill(view, response->mutable_settings());
    response->set_revision(view.revision);
    if (!request->validate_only()) {
      spdlog::info("routing set by {}", authorizer_.principal(*context));
    }
  });
}

grpc::Status FabricService::GetRouting(grpc::ServerContext*, const v1::GetRoutingRequest*,
                                       v1::RoutingSettings* response) {
  return guarded("GetRouting", [&] {
    authorizer_.require(Permission::kRead, "reading the routing");
    fill(fabric_.routing(), response);
  });
}

grpc::Status FabricService::GetQueueStatus(grpc::ServerContext*,
                                           const v1::GetQueueStatusRequest* request,
                                           v1::QueueStatus* response) {
  return guarded("GetQueueStatus", [&] {
    authorizer_.require(Permission::kRead, "reading queues");
    if (request->ports_size() > 0) check_batch(request->ports_size(), "ports");
    const QueuesView view =
        fabric_.queues(std::vector<uint32_t>(request->ports().begin(), request->ports().end()));
    for (const auto& port : view.ports) {
      auto* q = response->add_ports();
      q->set_port(port.port);
      q->set_threshold(port.threshold);
      for (uint32_t packets : port.vc_packets) q->add_vc_packets(packets);
    }
    response->set_queue_depth(view.queue_depth);
  });
}

}  // namespace asn

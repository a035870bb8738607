#include "board_router_view.hpp"

#include "asn/regmap/regs.hpp"
#include "asn/topology/route_words.hpp"

namespace asn::model::detail::engines {

namespace r = regs::route;
namespace p = regs::port;

topology::RouteRegisters BoardRouterView::registers() const {
  return topology::decode_config(route_->entry(r::kConfig, 0, Bank::kActive));
}

topology::RouteMode BoardRouterView::mode() const {
  return topology::decode_mode(route_->entry(r::kConfig, 0, Bank::kActive));
}

unsigned BoardRouterView::port_count() const { return route_->entries(r::kPortMap); }

topology::PortMapEntry BoardRouterView::port_map(unsigned port) const {
  return topology::decode_port_map(route_->entry(r::kPortMap, port, Bank::kActive)[0]);
}

uint32_t BoardRouterView::dest_entries() const { return route_->entries(r::kDestTable); }

topology::DestEntry BoardRouterView::dest_entry(uint32_t router) const {
  return topology::decode_dest(route_->entry(r::kDestTable, router, Bank::kActive));
}

unsigned BoardRouterView::schedule_entries() const { return route_->entries(r::kSchedule); }

topology::ScheduleEntry BoardRouterView::schedule_entry(unsigned index) const {
  return topology::decode_schedule(route_->entry(r::kSchedule, index, Bank::kActive)[0]);
}

uint32_t BoardRouterView::threshold(unsigned port) const {
  return (*ports_)[port].get(p::kAldfbThresholdPackets);
}

unsigned BoardRouterView::vcs_per_port() const { return profile_->cap(regmap::Cap::kVcsPerPort); }

uint32_t BoardRouterView::queue_depth() const { return profile_->cap(regmap::Cap::kQueueDepth); }

uint32_t BoardRouterView::occupancy(unsigned port, unsigned vc) const {
  return (*ports_)[port].get(p::kVcOccupancyPackets.at(vc));
}

}  // namespace asn::model::detail::engines

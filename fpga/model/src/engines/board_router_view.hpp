// Internal: the routing engine's view of one emulated board: the ROUTE block's active banks,
// the PORT blocks' thresholds and queue occupancies, and the board's capabilities. Only the
// registers it is given.
#pragma once

#include <vector>

#include "../block_model.hpp"
#include "asn/model/engines/routing_engine.hpp"

namespace asn::model::detail::engines {

class BoardRouterView final : public model::engines::RouterView {
 public:
  BoardRouterView(RegisterView& route, std::vector<RegisterView>& ports,
                  const regmap::BoardProfile& profile)
      : route_(&route), ports_(&ports), profile_(&profile) {}

  topology::RouteRegisters registers() const override;
  topology::RouteMode mode() const override;
  unsigned port_count() const override;
  topology::PortMapEntry port_map(unsigned port) const override;
  uint32_t dest_entries() const override;
  topology::DestEntry dest_entry(uint32_t router) const override;
  unsigned schedule_entries() const override;
  topology::ScheduleEntry schedule_entry(unsigned index) const override;
  uint32_t threshold(unsigned port) const override;
  unsigned vcs_per_port() const override;
  uint32_t queue_depth() const override;
  uint32_t occupancy(unsigned port, unsigned vc) const override;

 private:
  RegisterView* route_;
  std::vector<RegisterView>* ports_;
  const regmap::BoardProfile* profile_;
};

}  // namespace asn::model::detail::engines

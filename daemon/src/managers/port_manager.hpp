// The ports' administrative state (up or down), kept as desired state: an operator's
// `asnctl port set 3 down` survives an asnd restart and a board reset (port.control.enable
// resets to 1, so the reconciler takes the port down again).
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "asn/state/v1/state.pb.h"
#include "device/device.hpp"
#include "state/desired_state.hpp"
#include "state/reconciler.hpp"

namespace asn {

struct PortAdminState {
  uint32_t port;
  bool up;
};

class PortManager final : public Reconcilable {
 public:
  PortManager(Device& device, const StateStore& store);

  std::string_view kind() const override { return "ports"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  std::string drift() override;

  // Checks every setting first (a bad port changes nothing), then stores the new desired
  // state and programs the board. With validate_only, only checks. Returns the revision in
  // force afterwards.
  uint64_t set(std::span<const PortAdminState> settings, bool validate_only);
  // The desired admin state of a port (up unless an operator set it down).
  bool admin_up(uint32_t port) const;

 private:
  std::string apply(const state::v1::PortsState& doc);
  // The ports whose port.control.enable differs from the document, with the value it wants.
  std::vector<PortAdminState> differing(const state::v1::PortsState& doc);

  Device& device_;
  mutable std::mutex mutex_;
  DesiredState<state::v1::PortsState> state_;
};

}  // namespace asn

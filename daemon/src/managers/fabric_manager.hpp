// The switch's place in a 2DFB fabric and how it routes: the ROUTE block's tables (computed
// by lib/topology, written as lib/topology/route_words encodes them), the routing mode and
// the ALDFB thresholds, kept as desired state.
//
// Every change is verify-then-commit and crash-atomic: everything is checked against the
// board before anything is written; the document is stored marked pending (the intent);
// every table goes into the shadow banks and is read back; one commit swaps them all; then
// the mark is cleared. A crash anywhere leaves the old tables active, or the new ones, never
// a mix, and the next start finishes a pending change.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "asn/state/v1/state.pb.h"
#include "asn/topology/route_tables.hpp"
#include "device/device.hpp"
#include "state/desired_state.hpp"
#include "state/reconciler.hpp"

namespace asn {

struct TopologyRequest {
  uint32_t terminals = 0;
  uint32_t k = 0;
  uint32_t router = 0;
  bool double_rate = false;
};

// Microseconds per phase of a change.
struct PhaseTimes {
  uint64_t compute_us = 0;
  uint64_t verify_us = 0;
  uint64_t write_us = 0;
  uint64_t commit_us = 0;
  uint64_t total_us = 0;
};

// What the switch's place in the fabric is, as the desired state has it.
struct TopologyView {
  bool placed = false;
  TopologyRequest request;
  uint32_t dimensions = 0;
  uint32_t routers = 0;
  uint32_t radix = 0;
  std::vector<uint32_t> digits;
  uint32_t diameter = 0;
  uint32_t worst_case_hops = 0;
  std::string no_static_schedule;  // why there is none; empty when there is one
  uint64_t revision = 0;
  std::string status;
};

struct TopologyOutcome {
  TopologyView view;
  PhaseTimes times;
  bool changed = false;
};

struct RoutingChange {
  std::optional<topology::RoutingMode> mode;
  std::optional<bool> enable;
  std::optional<uint32_t> threshold;
  std::optional<uint32_t> port;  // the threshold for this port only
};

struct RoutingView {
  topology::RouteMode mode;
  std::vector<uint32_t> thresholds;  // every port's T_h as the board has it
  uint32_t queue_depth = 0;
  uint64_t revision = 0;
};

// The tables a board routes by, decoded from its active banks.
struct RoutesView {
  topology::RouteRegisters registers;
  topology::RouteMode mode;
  std::vector<topology::PortMapEntry> ports;
  // (router, entry) of every valid destination, or of the one asked for.
  std::vector<std::pair<uint32_t, topology::DestEntry>> routes;
};

// Packets waiting per virtual channel of each port, and its T_h.
struct QueuesView {
  struct Port {
    uint32_t port = 0;
    uint32_t threshold = 0;
    std::vector<uint32_t> vc_packets;
  };
  std::vector<Port> ports;
  uint32_t queue_depth = 0;
};

class FabricManager final : public Reconcilable {
 public:
  FabricManager(Device& device, const StateStore& store);

  std::string_view kind() const override { return "fabric"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  std::string drift() override;

  // Throws asn::Error: kInvalidArgument for an impossible fabric or router (naming the field
  // and the limit), kFailedPrecondition for one this board cannot hold (its ports, its
  // destination table) or a static mode the new fabric has no schedule for. Nothing is
  // written then.
  TopologyOutcome set_topology(const TopologyRequest& request, bool validate_only);
  TopologyView topology() const;
  RoutingView set_routing(const RoutingChange& change, bool validate_only);
  // The whole document at once, as a fabric's agent gives it (daemon/src/fabric): the same
  // checks and the same verify-then-commit change as the two above. Thresholds the document
  // leaves out keep the board's values.
  TopologyOutcome apply_document(const state::v1::FabricState& doc, bool validate_only);
  // While set, the fabric decides this switch's topology and routing: set_topology and
  // set_routing refuse a change (kFailedPrecondition naming `owner`, e.g. "fabric 'rack7'
  // (switch r3, etcd revision 42)"); a call that changes nothing still succeeds.
  void set_owner(std::optional<std::string> owner);
  RoutingView routing();
  RoutesView routes(std::optional<uint32_t> dest);
  // The ports asked for (all when empty); kNotFound for one the board lacks.
  QueuesView queues(const std::vector<uint32_t>& ports);

 private:
  struct Plan;
  // Computes what `doc` puts on the board, checks that the board holds it (its ports, its
  // destination table), and encodes it at the board's sizes; the times of the compute and
  // verify phases go to `times`. Throws as set_topology() documents.
  Plan prepare(const state::v1::FabricState& doc, PhaseTimes* times = nullptr) const;
  Plan plan(const state::v1::FabricState& doc) const;
  void check_board(const Plan& plan) const;
  void write_and_commit(const Plan& plan, PhaseTimes& times);
  bool board_holds(const Plan& plan);       // the active banks equal the plan (true: unplaced)
  std::vector<uint32_t> read_thresholds();  // every port's T_h as the board has it
  std::string apply_thresholds(const state::v1::FabricState& doc);
  // The ports whose T_h on the board is not the document's: (port, the document's value).
  std::vector<std::pair<uint32_t, uint32_t>> differing_thresholds(
      const state::v1::FabricState& doc);
  // Stores `next` as pending, programs it (the tables only when the board does not hold
  // them already: `tables_held`), clears the mark; undone when the board refuses.
  void change(const state::v1::FabricState& next, const Plan& plan, bool tables_held,
              PhaseTimes& times);
  TopologyView view_of(const state::v1::FabricState& doc) const;
  void check_thresholds(const state::v1::FabricState& doc) const;
  // Throws when an owner decides and `next` differs from the stored document.
  void refuse_if_owned(const state::v1::FabricState& next) const;

  Device& device_;
  mutable std::mutex mutex_;
  DesiredState<state::v1::FabricState> state_;
  std::optional<std::string> owner_;  // mutex_
};

}  // namespace asn

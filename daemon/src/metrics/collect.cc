#include "metrics/collect.hpp"

#include <fmt/format.h>

#include <map>

#include "device/device.hpp"
#include "listeners.hpp"
#include "locks/lock_manager.hpp"
#include "managers/stripe_manager.hpp"
#include "managers/tdm_manager.hpp"
#include "metrics/exposition.hpp"
#include "metrics/grpc_calls.hpp"
#include "state/reconciler.hpp"

namespace asn::metrics {

namespace {

using enum Type;

void board(Exposition& out, Device& device) {
  Device::ReadBatch batch;
  const size_t generation = batch.add(regs::id::kGenerationValue);
  const size_t bus_errors = batch.add(regs::id::kBusErrorCount);
  const size_t ro_writes = batch.add(regs::id::kRoWriteCount);
  device.read(batch);
  out.family("asn_board_generation", kGauge,
             "The board's generation: it grows by one at every board reset.");
  out.sample(static_cast<double>(batch[generation]));
  out.family("asn_board_bus_errors_total", kCounter,
             "Register accesses that hit no register (id.bus_error_count; a reset clears it).");
  out.sample(static_cast<double>(batch[bus_errors]));
  out.family("asn_board_read_only_writes_total", kCounter,
             "Writes to read-only registers (id.ro_write_count; a reset clears it).");
  out.sample(static_cast<double>(batch[ro_writes]));
}

// Every port's counters and its virtual channels' queue occupancy, in one bus transaction
// (the registers PortService::ListPorts reads).
void ports(Exposition& out, Device& device) {
  namespace p = regs::port;
  const auto layout = device.layout();
  const unsigned count = layout->caps.get(regmap::Cap::kPorts);
  const unsigned vcs = layout->caps.get(regmap::Cap::kVcsPerPort);
  const std::array counters = {p::kRxPackets, p::kRxBytes, p::kRxDrops,
                               p::kTxPackets, p::kTxBytes, p::kTxDrops};
  Device::ReadBatch batch;
  std::vector<size_t> first;
  for (unsigned port = 0; port < count; ++port) {
    first.push_back(batch.add(p::kControlEnable, port));
    batch.add(p::kLinkUp, port);
    batch.add(p::kLinkChanges, port);
    for (const auto& counter : counters) batch.add64(counter, port);
    for (unsigned vc = 0; vc < vcs; ++vc) batch.add(p::kVcOccupancy.at(vc), port);
  }
  device.read(batch);
  auto per_port = [&](const char* name, Type type, const char* help, size_t offset) {
    out.family(name, type, help);
    for (unsigned port = 0; port < count; ++port) {
      out.sample({{"port", std::to_string(port)}},
                 static_cast<double>(batch[first[port] + offset]));
    }
  };
  per_port("asn_port_enabled", kGauge, "1 when the port is enabled on the board.", 0);
  per_port("asn_port_link_up", kGauge, "1 when the port's link is up.", 1);
  per_port("asn_port_link_changes_total", kCounter, "Link state changes of the port.", 2);
  static constexpr std::array<std::pair<const char*, const char*>, 6> kCounterNames = {
      {{"asn_port_rx_packets_total", "Packets the port received."},
       {"asn_port_rx_bytes_total", "Bytes the port received."},
       {"asn_port_rx_drops_total", "Received packets the port dropped."},
       {"asn_port_tx_packets_total", "Packets the port sent."},
       {"asn_port_tx_bytes_total", "Bytes the port sent."},
       {"asn_port_tx_drops_total", "Packets to send that the port dropped."}}};
  static_assert(kCounterNames.size() == counters.size());
  for (size_t i = 0; i < counters.size(); ++i) {
    per_port(kCounterNames[i].first, kCounter, kCounterNames[i].second, 3 + i);
  }
  out.family("asn_port_vc_queue_occupancy", kGauge,
             "Packets queued in a virtual channel of the port.");
  for (unsigned port = 0; port < count; ++port) {
    for (unsigned vc = 0; vc < vcs; ++vc) {
      out.sample({{"port", std::to_string(port)}, {"vc", std::to_string(vc)}},
                 static_cast<double>(batch[first[port] + 3 + counters.size() + vc]));
    }
  }
}

void managers(Exposition& out, Reconciler& reconciler) {
  const auto summaries = reconciler.summaries();
  out.family("asn_manager_desired_revision", kGauge,
             "The revision of the manager's desired state (0: nothing stored).");
  for (const auto& s : summaries) {
    out.sample({{"manager", s.manager}}, static_cast<double>(s.revision));
  }
  out.family("asn_manager_in_force", kGauge,
             "1 when the manager's stored document is committed and the board should hold it.");
  for (const auto& s : summaries) out.sample({{"manager", s.manager}}, s.in_force ? 1 : 0);
  out.family("asn_manager_problem", kGauge,
             "1 when an operator should act: a refusal, a failed restore, or a board that "
             "differs from the document in force (`asnctl status` says what).");
  for (const auto& s : summaries) out.sample({{"manager", s.manager}}, s.problem ? 1 : 0);
  out.family("asn_reconciled_generation", kGauge,
             "The board generation the reconciler last restored the desired state for.");
  out.sample(static_cast<double>(reconciler.reconciled_generation()));
}

void tdm(Exposition& out, TdmManager& tdm) {
  const Sequencer seq = tdm.schedule(false).sequencer;
  out.family("asn_tdm_frames_total", kCounter, "TDM frames the sequencer has run.");
  out.sample(static_cast<double>(seq.frame));
  out.family("asn_tdm_swaps_total", kCounter, "Bank swaps of the TDM sequencer.");
  out.sample(static_cast<double>(seq.swap_count));
  out.family("asn_tdm_running", kGauge, "1 while the TDM sequencer runs.");
  out.sample(seq.running ? 1 : 0);
}

void locks(Exposition& out, LockManager& manager) {
  const LockStatsView view = manager.stats(0);
  auto per_domain = [&](const char* name, Type type, const char* help, auto field) {
    out.family(name, type, help);
    for (const auto& d : view.domains) {
      out.sample({{"domain", d.name}}, static_cast<double>(field(d.stats)));
    }
  };
  using S = locks::Stats;
  per_domain("asn_lock_sessions", kGauge, "Open lock sessions with a table in the domain.",
             [](const S& s) { return s.sessions; });
  per_domain("asn_lock_entries", kGauge, "Lock entries in use (held and waiting).",
             [](const S& s) { return s.entries_in_use; });
  per_domain("asn_lock_entries_capacity", kGauge, "Lock entries the domain's table holds.",
             [](const S& s) { return s.capacity; });
  per_domain("asn_lock_grants_total", kCounter, "Lock requests granted, at once or after waiting.",
             [](const S& s) { return s.grants; });
  per_domain("asn_lock_waits_total", kCounter, "Lock requests that waited.",
             [](const S& s) { return s.queued; });
  per_domain("asn_lock_conflicts_total", kCounter, "Try-mode requests refused on a conflict.",
             [](const S& s) { return s.conflicts; });
  per_domain("asn_lock_table_full_total", kCounter, "Requests refused for want of entries.",
             [](const S& s) { return s.table_full; });
  // Expiries and revocations are the lock manager's, across domains: a table's own `expired`
  // also counts sessions closed cleanly (close ends them through expire()).
  const SessionCounters& c = view.counters;
  const std::pair<const char*, uint64_t> sessions[] = {{"opened", c.opened},
                                                       {"closed", c.closed},
                                                       {"expired", c.expired},
                                                       {"revoked", c.revoked},
                                                       {"locks_lost", c.locks_lost}};
  out.family("asn_lock_session_ends_total", kCounter,
             "Sessions opened, and how sessions ended, since asnd started (all domains).");
  for (const auto& [how, n] : sessions) out.sample({{"event", how}}, static_cast<double>(n));
  out.family("asn_lock_waiting_calls", kGauge, "Lock calls waiting now.");
  out.sample(static_cast<double>(view.waiting_calls));
}

// The stripe block counts for all its groups at once (StripeManager::stats() reads the same
// block-wide registers for any group), its members per port; only the scrubs' findings are
// per group. The block's counters can only be read through a group: without one they are
// absent.
void stripes(Exposition& out, StripeManager& manager) {
  std::vector<StripeStats> groups;
  for (const auto& g : manager.list()) groups.push_back(manager.stats(g.group));
  auto block = [&](const char* name, const char* help, auto field) {
    out.family(name, kCounter, help);
    if (!groups.empty()) out.sample(static_cast<double>(field(groups.front())));
  };
  block("asn_stripe_bytes_total", "File bytes the stripe block striped (all groups).",
        [](const StripeStats& s) { return s.bytes_striped; });
  block("asn_stripe_data_units_total", "Data units the stripe block wrote.",
        [](const StripeStats& s) { return s.data_units; });
  block("asn_stripe_parity_units_total", "Parity units the stripe block wrote.",
        [](const StripeStats& s) { return s.parity_units; });
  block("asn_stripe_read_bytes_total", "File bytes read back through the stripe block.",
        [](const StripeStats& s) { return s.bytes_read; });
  block("asn_stripe_rebuilt_units_total", "Units rebuilt onto replaced members.",
        [](const StripeStats& s) { return s.units_rebuilt; });
  block("asn_stripe_errors_total", "Errors the stripe block's data path reported.",
        [](const StripeStats& s) { return s.errors; });
  std::map<uint32_t, StripeMemberStats> members;  // by port: a port may serve several groups
  for (const auto& g : groups) {
    for (const auto& m : g.members) members[m.port] = m;
  }
  out.family("asn_stripe_member_units_total", kCounter, "Units a member port stored.");
  for (const auto& [port, m] : members) {
    out.sample({{"port", std::to_string(port)}}, static_cast<double>(m.units));
  }
  out.family("asn_stripe_member_bytes_total", kCounter, "Bytes a member port stored.");
  for (const auto& [port, m] : members) {
    out.sample({{"port", std::to_string(port)}}, static_cast<double>(m.bytes));
  }
  auto per_group = [&](const char* name, Type type, const char* help, auto field) {
    out.family(name, type, help);
    for (const auto& s : groups) {
      out.sample({{"group", std::to_string(s.group.group)}}, static_cast<double>(field(s)));
    }
  };
  per_group("asn_stripe_failed_members", kGauge, "Members of the group marked failed.",
            [](const StripeStats& s) { return s.group.state.failed_ports_size(); });
  per_group("asn_stripe_scrubbed_stripes_total", kCounter,
            "Stripes checked by `asnctl stripe check|repair` since asnd started.",
            [](const StripeStats& s) { return s.scrubbed_stripes; });
  per_group("asn_stripe_mismatches_total", kCounter,
            "Stripes whose parity did not check (md's mismatch_cnt), since asnd started.",
            [](const StripeStats& s) { return s.scrub_mismatches; });
  per_group("asn_stripe_repaired_total", kCounter,
            "Stripes a repair set right, since asnd started.",
            [](const StripeStats& s) { return s.scrub_repaired; });
}

void listeners(Exposition& out, const Listeners& listeners) {
  const auto stats = listeners.stats();
  out.family("asn_listener_connections", kGauge, "Open connections of the listener.");
  for (const auto& s : stats) out.sample({{"listener", s.name}}, s.open_connections);
  out.family("asn_listener_accepted_total", kCounter, "Connections the listener accepted.");
  for (const auto& s : stats) out.sample({{"listener", s.name}}, static_cast<double>(s.accepted));
  out.family("asn_listener_refused_total", kCounter,
             "Connections closed at once: over a connection cap, or out of descriptors.");
  for (const auto& s : stats) {
    out.sample({{"listener", s.name}, {"reason", "over_limit"}},
               static_cast<double>(s.refused_over_limit));
    out.sample({{"listener", s.name}, {"reason", "no_descriptor"}},
               static_cast<double>(s.refused_no_descriptor));
  }
}

void grpc_calls(Exposition& out, const GrpcCalls& calls) {
  out.family("asn_grpc_calls_total", kCounter, "gRPC calls answered, by method and status code.");
  for (const auto& c : calls.counts()) {
    out.sample({{"method", c.method}, {"code", c.code}}, static_cast<double>(c.calls));
  }
}

}  // namespace

std::string collect(const Sources& s) {
  Exposition out;
  board(out, s.device);
  ports(out, s.device);
  managers(out, s.reconciler);
  tdm(out, s.tdm);
  locks(out, s.locks);
  stripes(out, s.stripe);
  if (s.listeners != nullptr) listeners(out, *s.listeners);
  if (s.grpc_calls != nullptr) grpc_calls(out, *s.grpc_calls);
  return out.text();
}

}  // namespace asn::metrics

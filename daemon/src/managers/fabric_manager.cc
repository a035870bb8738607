#include "managers/fabric_manager.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include "asn/topology/error.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_words.hpp"
#include "asn/topology/schedule.hpp"
#include "error.hpp"
#include "managers/stopwatch.hpp"

namespace asn {

namespace r = regs::route;
using topology::ChannelMode;
using topology::RoutingMode;

namespace {

constexpr uint32_t kFabricSchema = 1;

using Clock = std::chrono::steady_clock;

const char* mode_name(RoutingMode mode) {
  switch (mode) {
    case RoutingMode::kStatic:
      return "static";
    case RoutingMode::kMinimal:
      return "minimal";
    case RoutingMode::kUgal:
      return "UGAL";
    case RoutingMode::kAldfb:
      return "ALDFB";
  }
  return "?";
}

[[noreturn]] void refuse(ErrorCode code, const std::string& what) {
  throw Error(code, what + "; nothing was written");
}

// The tables of a route table, and their names for messages.
struct TableWords {
  const regmap::TableRef* table;
  const char* name;
  const std::vector<uint32_t>* words;
};

}  // namespace

// What a document puts on the board: the tables, encoded at the board's sizes.
struct FabricManager::Plan {
  bool placed = false;
  std::optional<topology::Fabric> fabric;
  topology::RouteTables tables;
  std::vector<uint32_t> config, port_map, schedule, dest;

  std::vector<TableWords> words() const {
    return {{&r::kConfig, "config", &config},
            {&r::kPortMap, "port_map", &port_map},
            {&r::kSchedule, "schedule", &schedule},
            {&r::kDestTable, "dest_table", &dest}};
  }
};

FabricManager::FabricManager(Device& device, const StateStore& store)
    : device_(device), state_(store, "fabric", kFabricSchema) {}

FabricManager::Plan FabricManager::plan(const state::v1::FabricState& doc) const {
  Plan plan;
  plan.placed = doc.placed();
  if (!plan.placed) return plan;
  const ChannelMode channels = doc.double_rate() ? ChannelMode::kDoubleRate : ChannelMode::kDilated;
  try {
    plan.fabric.emplace(doc.terminals(), doc.k());
    plan.tables = topology::compute_route_tables(*plan.fabric, doc.router(), channels);
  } catch (const topology::TopologyError& e) {
    refuse(ErrorCode::kInvalidArgument, e.what());
  }
  const auto mode = static_cast<RoutingMode>(doc.mode());
  if (mode == RoutingMode::kStatic && doc.enable()) {
    if (auto why = topology::StaticSchedule::unsupported(*plan.fabric)) {
      refuse(ErrorCode::kFailedPrecondition,
             "routing mode static needs the conflict-free static schedule, and this fabric has "
             "none (" +
                 *why + "): choose another mode (asnctl routing set --mode aldfb)");
    }
  }
  return plan;
}

FabricManager::Plan FabricManager::prepare(const state::v1::FabricState& doc,
                                           PhaseTimes* times) const {
  auto phase = Clock::now();
  Plan plan = this->plan(doc);
  if (times) times->compute_us = micros_since(phase);
  phase = Clock::now();
  check_board(plan);
  if (plan.placed) {
    // Always the escape VC rule: the seed's (VcPolicy::kSeed) deadlocks a lossless fabric and
    // exists only for asnsim's comparisons.
    plan.config = topology::encode_config(
        plan.tables.registers,
        {static_cast<RoutingMode>(doc.mode()), doc.enable(), topology::VcPolicy::kEscape});
    plan.port_map =
        topology::encode_port_map_table(plan.tables.port_map, device_.entries(r::kPortMap));
    plan.schedule =
        topology::encode_schedule_table(plan.tables.schedule, device_.entries(r::kSchedule));
    plan.dest = topology::encode_dest_table(plan.tables.dest_table, device_.entries(r::kDestTable));
  }
  if (times) times->verify_us = micros_since(phase);
  return plan;
}

// The board must hold the fabric: its ports, its destination table, its dimensions.
void FabricManager::check_board(const Plan& plan) const {
  if (!plan.placed) return;
  const auto layout = device_.layout();
  const uint32_t ports = layout->caps.get(regmap::Cap::kPorts);
  const uint32_t radix = static_cast<uint32_t>(plan.tables.port_map.size());
  if (radix > ports) {
    std::string hint;
    if (plan.fabric->radix(ChannelMode::kDoubleRate) <= ports && radix > ports) {
      hint = fmt::format(" (with double-rate channels it would need {}: --channels double-rate)",
                         plan.fabric->radix(ChannelMode::kDoubleRate));
    }
    refuse(ErrorCode::kFailedPrecondition,
           fmt::format("radix: this fabric needs {} ports per router (004 Eq 9) and this board has "
                       "{}{}",
                       radix, ports, hint));
  }
  const uint32_t routers = plan.fabric->routers();
  const uint32_t entries = layout->caps.get(regmap::Cap::kRouteEntries);
  if (routers > entries) {
    refuse(ErrorCode::kFailedPrecondition,
           fmt::format("routers: this fabric has {} routers and the board's destination table "
                       "{} entries (id.cap_route_entries)",
                       routers, entries));
  }
}

void FabricManager::write_and_commit(const Plan& plan, PhaseTimes& times) {
  auto start = Clock::now();
  for (const TableWords& t : plan.words()) device_.write_entries(*t.table, 0, *t.words);
  // Verify: the shadow banks read back what was written before anything is committed.
  for (const TableWords& t : plan.words()) {
    const uint32_t count = static_cast<uint32_t>(t.words->size() / t.table->words());
    const std::vector<uint32_t> back = device_.read_entries(*t.table, 0, count, Bank::kShadow);
    for (size_t w = 0; w < back.size(); ++w) {
      if (back[w] == (*t.words)[w]) continue;
      throw Error(
          ErrorCode::kHardware,
          fmt::format("route.{}[{}] word {} of the shadow bank reads back 0x{:x}, not the "
                      "0x{:x} written; nothing was committed",
                      t.name, w / t.table->words(), w % t.table->words(), back[w], (*t.words)[w]));
    }
  }
  times.write_us = micros_since(start);
  start = Clock::now();
  device_.swap_banks(r::kConfig);  // every ROUTE table shares the bank bit: one commit
  times.commit_us = micros_since(start);
}

bool FabricManager::board_holds(const Plan& plan) {
  if (!plan.placed) return true;  // no tables to hold
  for (const TableWords& t : plan.words()) {
    const uint32_t count = static_cast<uint32_t>(t.words->size() / t.table->words());
    if (device_.read_entries(*t.table, 0, count, Bank::kActive) != *t.words) return false;
  }
  return true;
}

std::vector<uint32_t> FabricManager::read_thresholds() {
  const unsigned ports = device_.layout()->caps.get(regmap::Cap::kPorts);
  Device::ReadBatch batch;
  for (unsigned p = 0; p < ports; ++p) batch.add(regs::port::kAldfbThresholdPackets, p);
  device_.read(batch);
  std::vector<uint32_t> thresholds;
  for (unsigned p = 0; p < ports; ++p) thresholds.push_back(static_cast<uint32_t>(batch[p]));
  return thresholds;
}

std::vector<std::pair<uint32_t, uint32_t>> FabricManager::differing_thresholds(
    const state::v1::FabricState& doc) {
  const std::vector<uint32_t> board = read_thresholds();
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const auto& [port, packets] : doc.thresholds()) {
    if (port < board.size() && board[port] != packets) out.emplace_back(port, packets);
  }
  return out;
}

std::string FabricManager::apply_thresholds(const state::v1::FabricState& doc) {
  const auto differing = differing_thresholds(doc);
  for (const auto& [port, packets] : differing) {
    device_.write(regs::port::kAldfbThresholdPackets, packets, port);
  }
  const size_t changed = differing.size();
  return changed == 0 ? "" : fmt::format("{} threshold{}", changed, changed == 1 ? "" : "s");
}

void FabricManager::change(const state::v1::FabricState& next, const Plan& plan, bool tables_held,
                           PhaseTimes& times) {
  const auto start = Clock::now();
  state_.begin(next);  // the intent, before the first write
  try {
    if (!tables_held) write_and_commit(plan, times);
    apply_thresholds(next);
  } catch (const Error&) {
    state_.rollback();
    throw;
  }
  state_.commit();
  times.commit_us += micros_since(start) - times.write_us - times.commit_us;
}

TopologyOutcome FabricManager::set_topology(const TopologyRequest& request, bool validate_only) {
  const auto start = Clock::now();
  std::lock_guard lock(mutex_);
  state_.require_usable();
  state::v1::FabricState next = state_.doc().value_or(state::v1::FabricState());
  if (!next.placed()) {
    // A switch placed for the first time routes, adaptively: ALDFB (004 L842-940) works for
    // every fabric, the static schedule only for some. `asnctl routing set` changes it.
    next.set_mode(static_cast<uint32_t>(RoutingMode::kAldfb));
    next.set_enable(true);
  }
  next.set_placed(true);
  next.set_terminals(request.terminals);
  next.set_k(request.k);
  next.set_router(request.router);
  next.set_double_rate(request.double_rate);

  TopologyOutcome outcome;
  const Plan plan = prepare(next, &outcome.times);
  if (!validate_only) refuse_if_owned(next);
  if (!validate_only) {
    const bool same = state_.doc() && state_.doc()->SerializeAsString() == next.SerializeAsString();
    const bool held = board_holds(plan);  // read once: 16k words at N = 32768
    if (!same || !held) {
      change(next, plan, held, outcome.times);
      outcome.changed = true;
    }
  }
  outcome.view = view_of(next);
  if (validate_only) outcome.view.status = "checked, not written (validate only)";
  outcome.times.total_us = micros_since(start);
  return outcome;
}

TopologyView FabricManager::view_of(const state::v1::FabricState& doc) const {
  TopologyView view;
  view.revision = state_.revision();
  view.status = state_.status();
  if (!doc.placed()) return view;
  view.placed = true;
  view.request = {doc.terminals(), doc.k(), doc.router(), doc.double_rate()};
  try {
    const topology::Fabric fabric(doc.terminals(), doc.k());
    const ChannelMode channels =
        doc.double_rate() ? ChannelMode::kDoubleRate : ChannelMode::kDilated;
    view.dimensions = fabric.dimensions();
    view.routers = fabric.routers();
    view.radix = fabric.radix(channels);
    if (doc.router() < fabric.routers()) view.digits = fabric.digits(doc.router());
    view.diameter = fabric.diameter();
    view.worst_case_hops = fabric.worst_case_hops();
    view.no_static_schedule = topology::StaticSchedule::unsupported(fabric).value_or("");
  } catch (const topology::TopologyError&) {
    // A stored fabric is one that passed these checks; a newer asnd may know more.
  }
  return view;
}

TopologyView FabricManager::topology() const {
  std::lock_guard lock(mutex_);
  return view_of(state_.doc().value_or(state::v1::FabricState()));
}

RoutingView FabricManager::set_routing(const RoutingChange& change, bool validate_only) {
  std::lock_guard lock(mutex_);
  state_.require_usable();
  state::v1::FabricState next = state_.doc().value_or(state::v1::FabricState());
  const auto layout = device_.layout();
  if (change.mode || change.enable) {
    if (!next.placed()) {
      refuse(ErrorCode::kFailedPrecondition,
             "the switch is in no fabric yet, and the routing mode is committed with its tables: "
             "place it first (asnctl fabric set --terminals N --k K --router R)");
    }
    if (change.mode) next.set_mode(static_cast<uint32_t>(*change.mode));
    if (change.enable) next.set_enable(*change.enable);
  }
  if (change.threshold) {
    const uint32_t depth = layout->caps.get(regmap::Cap::kQueueDepth);
    if (*change.threshold > depth) {
      refuse(ErrorCode::kInvalidArgument,
             fmt::format("threshold: {} packets is beyond the queue depth, {} (id.cap_queue_depth)",
                         *change.threshold, depth));
    }
    const uint32_t ports = layout->ports();
    if (change.port) layout->require_port(*change.port, "; nothing was written");
    for (uint32_t p = change.port.value_or(0); p < (change.port ? *change.port + 1 : ports); ++p) {
      (*next.mutable_thresholds())[p] = *change.threshold;
    }
  } else if (change.port) {
    refuse(ErrorCode::kInvalidArgument, "port: a port is given only with a threshold");
  }
  const Plan plan = prepare(next);
  if (!validate_only) refuse_if_owned(next);
  if (validate_only) {
    RoutingView preview;
    preview.mode = {static_cast<RoutingMode>(next.mode()), next.enable()};
    preview.queue_depth = layout->caps.get(regmap::Cap::kQueueDepth);
    preview.revision = state_.revision();
    preview.thresholds = read_thresholds();
    for (const auto& [port, packets] : next.thresholds()) {
      if (port < preview.thresholds.size()) preview.thresholds[port] = packets;
    }
    return preview;
  }
  PhaseTimes times;
  this->change(next, plan, board_holds(plan), times);
  RoutingView view;
  view.mode = {static_cast<RoutingMode>(next.mode()), next.enable()};
  view.queue_depth = layout->caps.get(regmap::Cap::kQueueDepth);
  view.revision = state_.revision();
  view.thresholds = read_thresholds();
  return view;
}

void FabricManager::check_thresholds(const state::v1::FabricState& doc) const {
  const auto layout = device_.layout();
  const uint32_t depth = layout->caps.get(regmap::Cap::kQueueDepth);
  for (const auto& [port, packets] : doc.thresholds()) {
    layout->require_port(port, " (thresholds); nothing was written");
    if (packets > depth) {
      refuse(ErrorCode::kInvalidArgument,
             fmt::format("thresholds: {} packets for port {} is beyond the queue depth, {} "
                         "(id.cap_queue_depth)",
                         packets, port, depth));
    }
  }
}

void FabricManager::refuse_if_owned(const state::v1::FabricState& next) const {
  if (!owner_) return;
  if (state_.doc() && state_.doc()->SerializeAsString() == next.SerializeAsString()) return;
  refuse(ErrorCode::kFailedPrecondition,
         fmt::format("this switch's topology and routing are set by {}: change the fabric file "
                     "and run 'asnctl fabric apply FILE'",
                     *owner_));
}

TopologyOutcome FabricManager::apply_document(const state::v1::FabricState& doc,
                                              bool validate_only) {
  const auto start = Clock::now();
  std::lock_guard lock(mutex_);
  state_.require_usable();
  check_thresholds(doc);
  TopologyOutcome outcome;
  const Plan plan = prepare(doc, &outcome.times);
  if (!validate_only) {
    const bool same = state_.doc() && state_.doc()->SerializeAsString() == doc.SerializeAsString();
    const bool held = board_holds(plan);
    if (!same || !held) {
      change(doc, plan, held, outcome.times);
      outcome.changed = true;
    }
  }
  outcome.view = view_of(doc);
  outcome.times.total_us = micros_since(start);
  return outcome;
}

void FabricManager::set_owner(std::optional<std::string> owner) {
  std::lock_guard lock(mutex_);
  owner_ = std::move(owner);
}

RoutingView FabricManager::routing() {
  const auto layout = device_.layout();
  RoutingView view;
  view.mode = topology::decode_mode(device_.read_entries(r::kConfig, 0, 1, Bank::kActive));
  view.queue_depth = layout->caps.get(regmap::Cap::kQueueDepth);
  view.thresholds = read_thresholds();
  std::lock_guard lock(mutex_);
  view.revision = state_.revision();
  return view;
}

RoutesView FabricManager::routes(std::optional<uint32_t> dest) {
  RoutesView view;
  const std::vector<uint32_t> config = device_.read_entries(r::kConfig, 0, 1, Bank::kActive);
  view.registers = topology::decode_config(config);
  view.mode = topology::decode_mode(config);
  const uint32_t ports = device_.entries(r::kPortMap);
  for (uint32_t word : device_.read_entries(r::kPortMap, 0, ports, Bank::kActive)) {
    view.ports.push_back(topology::decode_port_map(word));
  }
  const uint32_t entries = device_.entries(r::kDestTable);
  if (dest && *dest >= entries) {
    throw Error(ErrorCode::kNotFound,
                fmt::format("dest: router {} is beyond the destination table ({} entries)", *dest,
                            entries));
  }
  const uint32_t first = dest.value_or(0);
  const uint32_t count = dest ? 1 : entries;
  const std::vector<uint32_t> words =
      device_.read_entries(r::kDestTable, first, count, Bank::kActive);
  const uint32_t per = r::kDestTable.words();
  for (uint32_t i = 0; i < count; ++i) {
    topology::DestEntry entry = topology::decode_dest({words.data() + i * per, per});
    if (entry.valid || dest) view.routes.emplace_back(first + i, entry);
  }
  return view;
}

QueuesView FabricManager::queues(const std::vector<uint32_t>& ports) {
  const auto layout = device_.layout();
  const unsigned count = layout->caps.get(regmap::Cap::kPorts);
  const unsigned vcs = layout->caps.get(regmap::Cap::kVcsPerPort);
  std::vector<uint32_t> which = ports;
  if (which.empty()) {
    for (unsigned p = 0; p < count; ++p) which.push_back(p);
  }
  Device::ReadBatch batch;
  for (uint32_t p : which) {
    layout->require_port(p);
    batch.add(regs::port::kAldfbThresholdPackets, p);
    for (unsigned vc = 0; vc < vcs; ++vc) batch.add(regs::port::kVcOccupancyPackets.at(vc), p);
  }
  device_.read(batch);
  QueuesView view;
  view.queue_depth = layout->caps.get(regmap::Cap::kQueueDepth);
  size_t at = 0;
  for (uint32_t p : which) {
    QueuesView::Port& q = view.ports.emplace_back();
    q.port = p;
    q.threshold = static_cast<uint32_t>(batch[at++]);
    for (unsigned vc = 0; vc < vcs; ++vc)
      q.vc_packets.push_back(static_cast<uint32_t>(batch[at++]));
  }
  return view;
}

std::string FabricManager::reconcile(ReconcileCause cause) {
  std::lock_guard lock(mutex_);
  return state_.reconcile(cause, [this](const state::v1::FabricState& doc) {
    const Plan plan = prepare(doc);
    std::string did = "no fabric";
    if (plan.placed && board_holds(plan)) {
      did = "the board already holds it";
    } else if (plan.placed) {
      PhaseTimes times;
      write_and_commit(plan, times);
      did = fmt::format("programmed router {} of {} terminals, k {} ({} routing{})", doc.router(),
                        doc.terminals(), doc.k(), mode_name(static_cast<RoutingMode>(doc.mode())),
                        doc.enable() ? "" : ", disabled");
    }
    if (std::string thresholds = apply_thresholds(doc); !thresholds.empty()) {
      did += "; set " + thresholds;
    }
    return did;
  });
}

ManagerSummary FabricManager::summary() const {
  std::lock_guard lock(mutex_);
  return state_.summary("fabric");
}

std::string FabricManager::drift() {
  std::lock_guard lock(mutex_);
  if (!state_.doc()) return "";
  const state::v1::FabricState& doc = *state_.doc();
  std::vector<std::string> what;
  // The plan is computed again rather than kept: one path from the document to the words, as
  // a restore takes. Measured: 2 ms of asnd CPU per `asnctl status` at N 32768, k 32.
  if (!board_holds(prepare(doc))) {
    what.push_back(
        "the ROUTE block's active tables are not the fabric's (`asnctl routes` shows "
        "what the board routes by)");
  }
  for (const auto& [port, packets] : differing_thresholds(doc)) {
    what.push_back(
        fmt::format("port {}'s ALDFB threshold is not the {} packets set", port, packets));
  }
  return fmt::format("{}", fmt::join(what, "; "));
}

}  // namespace asn

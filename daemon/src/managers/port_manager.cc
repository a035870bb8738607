#include "managers/port_manager.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "error.hpp"

namespace asn {

namespace {

constexpr uint32_t kPortsSchema = 1;

std::set<uint32_t> down_set(const state::v1::PortsState& doc) {
  return {doc.admin_down().begin(), doc.admin_down().end()};
}

}  // namespace

PortManager::PortManager(Device& device, const StateStore& store)
    : device_(device), state_(store, "ports", kPortsSchema) {}

std::vector<PortAdminState> PortManager::differing(const state::v1::PortsState& doc) {
  const auto down = down_set(doc);
  const unsigned ports = device_.layout()->caps.get(regmap::Cap::kPorts);
  Device::ReadBatch batch;
  for (unsigned p = 0; p < ports; ++p) batch.add(regs::port::kControlEnable, p);
  device_.read(batch);
  std::vector<PortAdminState> out;
  for (unsigned p = 0; p < ports; ++p) {
    const bool want = down.count(p) == 0;
    if ((batch[p] != 0) != want) out.push_back({p, want});
  }
  return out;
}

// Writes port.control.enable where the board differs from the document; returns what
// changed in words.
std::string PortManager::apply(const state::v1::PortsState& doc) {
  std::vector<std::string> changed;
  for (const PortAdminState& p : differing(doc)) {
    device_.write(regs::port::kControlEnable, p.up ? 1 : 0, p.port);
    changed.push_back(fmt::format("port {} {}", p.port, p.up ? "up" : "down"));
  }
  if (changed.empty()) return "the board already holds it";
  return fmt::format("set {}", fmt::join(changed, ", "));
}

std::string PortManager::drift() {
  std::lock_guard lock(mutex_);
  if (!state_.doc()) return "";
  std::vector<std::string> ports;
  for (const PortAdminState& p : differing(*state_.doc())) {
    ports.push_back(fmt::format("port {} is {} on the board, {} in the desired state", p.port,
                                p.up ? "down" : "up", p.up ? "up" : "down"));
  }
  return fmt::format("{}", fmt::join(ports, "; "));
}

std::string PortManager::reconcile(ReconcileCause cause) {
  std::lock_guard lock(mutex_);
  return state_.reconcile(cause, [this](const state::v1::PortsState& doc) { return apply(doc); });
}

ManagerSummary PortManager::summary() const {
  std::lock_guard lock(mutex_);
  return state_.summary("ports");
}

uint64_t PortManager::set(std::span<const PortAdminState> settings, bool validate_only) {
  const auto layout = device_.layout();
  std::set<uint32_t> seen;
  for (const auto& s : settings) {
    layout->require_port(s.port, "; nothing was changed");
    if (!seen.insert(s.port).second) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("port {} is given twice; nothing was changed", s.port));
    }
  }
  std::lock_guard lock(mutex_);
  state_.require_usable();
  auto down = state_.doc() ? down_set(*state_.doc()) : std::set<uint32_t>();
  for (const auto& s : settings) {
    if (s.up) {
      down.erase(s.port);
    } else {
      down.insert(s.port);
    }
  }
  if (validate_only) return state_.revision();
  state::v1::PortsState next;
  for (uint32_t p : down) next.add_admin_down(p);
  state_.begin(next);
  try {
    apply(next);
  } catch (const Error&) {
    state_.rollback();
    throw;
  }
  state_.commit();
  return state_.revision();
}

bool PortManager::admin_up(uint32_t port) const {
  std::lock_guard lock(mutex_);
  if (!state_.doc()) return true;
  const auto& down = state_.doc()->admin_down();
  return std::find(down.begin(), down.end(), port) == down.end();
}

}  // namespace asn

#include "asn/fabric_schedule/fabric_plan.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace asn::fabric_schedule {

schedule::Phase to_phase(const Target& t, std::span<const Conn> conns, const Schedule& s,
                         std::string name, schedule::Timing timing) {
  schedule::Phase phase;
  phase.name = std::move(name);
  phase.timing = std::move(timing);
  phase.parts.resize(t.switches());
  for (uint32_t sw = 0; sw < t.switches(); ++sw) {
    phase.parts[sw].switch_name = t.switch_name(sw);
    phase.parts[sw].slots.resize(s.slots);
  }
  std::vector<uint32_t> links;
  for (size_t i = 0; i < conns.size(); ++i) {
    links.clear();
    t.path(conns[i].src, conns[i].dst, s.path_of[i], links);
    // Along the path, each switch connects the port the data enters at to the one it
    // leaves by, in the connection's slot.
    Attach at = t.terminal_attach(conns[i].src);
    auto circuit = [&](uint32_t sw, uint32_t from, uint32_t to) {
      phase.parts[sw].slots[s.slot_of[i]].connections.push_back({from, to, {}});
    };
    for (uint32_t l : links) {
      const LinkEnds e = t.link_ends(l);
      circuit(e.from.sw, at.port, e.from.port);
      at = e.to;
    }
    circuit(at.sw, at.port, t.terminal_attach(conns[i].dst).port);
  }
  return phase;
}

namespace {

using Circuit = std::tuple<uint32_t, uint32_t, uint32_t>;  // slot, input, output

std::set<Circuit> circuits(const schedule::Part& part) {
  std::set<Circuit> out;
  for (uint32_t s = 0; s < part.slots.size(); ++s) {
    for (const auto& c : part.slots[s].connections) out.insert({s, c.from, c.to});
  }
  return out;
}

Reconfiguration between(const schedule::Phase& a, const schedule::Phase& b) {
  Reconfiguration r{a.name, b.name, {}};
  for (size_t sw = 0; sw < a.parts.size(); ++sw) {
    const std::set<Circuit> before = circuits(a.parts[sw]), after = circuits(b.parts[sw]);
    SwitchChange change{a.parts[sw].switch_name, 0, 0};
    for (const Circuit& c : before) change.torn_down += after.count(c) == 0 ? 1 : 0;
    for (const Circuit& c : after) change.set_up += before.count(c) == 0 ? 1 : 0;
    if (change.torn_down != 0 || change.set_up != 0) r.switches.push_back(change);
  }
  return r;
}

}  // namespace

FabricProgram compile_program(const Target& t, std::span<const PhaseInput> phases,
                              const Options& options, std::string plan_name) {
  FabricProgram out;
  out.plan.name = std::move(plan_name);
  for (uint32_t sw = 0; sw < t.switches(); ++sw) out.plan.switches.push_back(t.switch_name(sw));
  for (const PhaseInput& in : phases) {
    Schedule s = compile(t, in.conns, options);
    out.phases.push_back({in.name, in.conns.size(), s.slots, s.lower_bound, s.method, s.baselines,
                          s.elapsed, s.cut_by_time});
    out.plan.phases.push_back(to_phase(t, in.conns, s, in.name, in.timing));
    if (out.plan.phases.size() >= 2) {
      const auto& p = out.plan.phases;
      out.reconfigure.push_back(between(p[p.size() - 2], p.back()));
    }
  }
  return out;
}

}  // namespace asn::fabric_schedule

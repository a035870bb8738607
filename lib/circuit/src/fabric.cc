#include "asn/circuit/fabric.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "asn/circuit/error.hpp"

namespace asn::circuit {

namespace {

CircuitError invalid(const std::string& field, const std::string& what) {
  return CircuitError(ErrorKind::kInvalidArgument, field, what);
}

}  // namespace

Fabric::Fabric(uint32_t nodes, uint32_t degree) : nodes_(nodes), degree_(degree), out_(nodes) {
  LinkSlots check(degree);  // throws for a degree a link cannot have
  if (nodes < 2) throw invalid("nodes", std::to_string(nodes) + "; a fabric has at least 2");
}

uint32_t Fabric::add_link(uint32_t from, uint32_t port, uint32_t to) {
  if (from >= nodes_ || to >= nodes_) {
    throw invalid("link", "node " + std::to_string(from >= nodes_ ? from : to) +
                              " does not exist (nodes 0.." + std::to_string(nodes_ - 1) + ")");
  }
  if (link_at(from, port) >= 0) {
    throw invalid("link", "node " + std::to_string(from) + " port " + std::to_string(port) +
                              " already has a link");
  }
  if (out_[from].size() <= port) out_[from].resize(port + 1, -1);
  out_[from][port] = static_cast<int64_t>(links_.size());
  links_.push_back({from, port, to});
  slots_.emplace_back(degree_);
  return static_cast<uint32_t>(links_.size() - 1);
}

int64_t Fabric::link_at(uint32_t node, uint32_t port) const {
  if (node >= nodes_ || port >= out_[node].size()) return -1;
  return out_[node][port];
}

std::shared_ptr<const Path> Fabric::route(const Request& r) const {
  const std::string range = " (nodes 0.." + std::to_string(nodes_ - 1) + ")";
  if (r.id == 0) throw invalid("id", "0 is no circuit id; ids start at 1");
  if (r.src >= nodes_)
    throw invalid("src", "node " + std::to_string(r.src) + " does not exist" + range);
  if (r.dst >= nodes_)
    throw invalid("dst", "node " + std::to_string(r.dst) + " does not exist" + range);
  if (r.src == r.dst) throw invalid("dst", "the source itself; a circuit joins two nodes");
  auto path = std::make_shared<Path>();
  path->nodes.push_back(r.src);
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const uint32_t node = path->nodes.back();
    const int64_t link = link_at(node, r.ports[i]);
    if (link < 0) {
      throw invalid("ports[" + std::to_string(i) + "]",
                    "node " + std::to_string(node) + " has no link on port " +
                        std::to_string(r.ports[i]) + " (" + std::to_string(out_[node].size()) +
                        " ports numbered)");
    }
    path->ports.push_back(r.ports[i]);
    path->links.push_back(static_cast<uint32_t>(link));
    path->nodes.push_back(links_[link].to);
  }
  if (path->nodes.back() != r.dst) {
    throw invalid("ports", "the path ends at node " + std::to_string(path->nodes.back()) +
                               ", not at dst " + std::to_string(r.dst));
  }
  return path;
}

Message Fabric::begin(const Request& r) const {
  Message m;
  m.path = route(r);
  m.id = r.id;
  m.protocol = r.protocol;
  m.pick = r.pick;
  uint32_t dynamic = degree_;
  for (uint32_t l : m.path->links) dynamic = std::min(dynamic, slot_count(slots_[l].dynamic()));
  // A size the caller asked for must fit; a policy's (all, Table 3.1) is cut to what the
  // path leaves to run time.
  m.size = cset_size(r.protocol, degree_);
  if (r.protocol.cset != CsetPolicy::kSized) m.size = std::max(1u, std::min(m.size, dynamic));
  if (m.size == 0 || m.size > dynamic) {
    throw CircuitError(ErrorKind::kResourceExhausted, "cset_size",
                       std::to_string(m.size) + " slots asked; the path's links leave " +
                           std::to_string(dynamic) + " of " + std::to_string(degree_) +
                           " slots to run time (1.." + std::to_string(dynamic) + " accepted)");
  }
  if (r.protocol.on_block == OnBlock::kHold && r.protocol.hold_time == 0) {
    throw invalid("hold_time", "0 with holding; holding needs a time (dropping is holding 0)");
  }
  // Forward: the source offers a window of its dynamic slots, knowing nothing of the
  // network (002 L443, L482). Backward: the probe starts with every dynamic slot (002 L462).
  const SlotMask dyn = slots_[m.path->links[0]].dynamic();
  if (r.protocol.direction == Direction::kForward) {
    m.kind = Kind::kRes;
    m.cset = r.protocol.cset == CsetPolicy::kAggressive ? dyn : cset_window(dyn, m.size, r.pick);
  } else {
    m.kind = Kind::kProb;
    m.cset = dyn;
  }
  return m;
}

Message Fabric::release(const Message& first, uint32_t slot) {
  Message m = first;
  m.kind = Kind::kRel;
  m.at = 0;
  m.slot = slot;
  m.expired = false;
  return m;
}

Step Fabric::deliver(const Message& m) {
  if (!m.path || m.at > m.path->hops()) throw std::logic_error("message off its path");
  LinkSlots* link = m.at < m.path->hops() ? &slots_.at(m.path->links[m.at]) : nullptr;
  return handle(m, link);
}

}  // namespace asn::circuit

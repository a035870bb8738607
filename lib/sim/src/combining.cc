// Hotspot traffic and combining in the routers' queues (001 L545-569, L641): hot fetch-and-adds
// that meet in a router's input queues merge into one, the router keeping a wait-buffer record;
// the memory at the hot node serves the one request that arrives; the reply is split at each
// router that merged, so that every requester gets the value of some serial order.
//
// Replies travel back on the path the request came by (001 L569: "requests return on the path
// on which they were sent"), one router per routing_delay + channel_latency cycles, on a
// return network of their own that is not congested (the Ultracomputer's switch has a separate
// return path component, 001 L267; here it is not simulated flit by flit). A wait-buffer
// record is freed when the reply passes its router.
#include <algorithm>

#include "fabric.hpp"

namespace asn::sim {

std::string check_serial_order(uint64_t initial, uint64_t final_value,
                               std::vector<FetchAdd> returned) {
  std::sort(returned.begin(), returned.end(), [](const FetchAdd& a, const FetchAdd& b) {
    return a.value != b.value ? a.value < b.value : a.operand < b.operand;
  });
  uint64_t expected = initial;
  for (size_t i = 0; i < returned.size(); ++i) {
    if (returned[i].value != expected) {
      return "reply " + std::to_string(i) + " of " + std::to_string(returned.size()) +
             " in value order returned " + std::to_string(returned[i].value) +
             " where a serial order has " + std::to_string(expected);
    }
    expected += returned[i].operand;
  }
  if (expected != final_value) {
    return "the memory holds " + std::to_string(final_value) + ", the replies add up to " +
           std::to_string(expected);
  }
  return "";
}

namespace detail {

// A hot request's increment: 1..16, never 0, so that every reply value is distinct and the
// serial order the check finds is the only one.
uint64_t Network::new_hot_request() {
  const uint64_t id = next_request_++;
  const uint64_t operand = 1 + operand_random_.below(16);
  hot_requests_.emplace(id, HotRequest{now_, operand, operand, {}});
  return id;
}

// A hot request arriving at router r (from a channel or its terminal) merges into the oldest
// hot request to the same address queued in r's input VCs, if r's wait buffer has a free
// record (when full, no more combining there: 001 L625, Wong's wait-buffer sizes) and, with
// combine_ways set, the queued request has merged fewer than combine_ways - 1 packets at this
// router. The kept request carries both increments on; the record remembers its increment
// before the merge. True if the packet was merged (and freed).
bool Network::try_combine(uint32_t r, uint32_t id) {
  const Packet& p = packets_[id];
  if (!settings_.combining || p.request == 0) return false;
  Router& router = routers_[r];
  const bool measuring = now_ >= measure_start_;
  for (const uint32_t kept_id : router.hot) {
    const Packet& kept = packets_[kept_id];
    if (kept.dest != p.dest || !may_merge_here(kept, r)) continue;
    if (router.wait_used >= settings_.wait_buffer) {
      if (measuring) ++wait_buffer_full;
      return false;
    }
    HotRequest& k = hot_requests_.at(kept.request);
    const HotRequest& a = hot_requests_.at(p.request);
    k.combines.push_back({p.request, k.total, r, kept.hops, p.hops});
    k.total += a.total;
    ++router.wait_used;
    if (measuring) ++combines;
    --in_network_;
    free_packets_.push_back(id);
    return true;
  }
  return false;
}

// combine_ways: the kept packet's records at this router are the last ones of its request
// (it is here, so every record made later is made here).
bool Network::may_merge_here(const Packet& kept, uint32_t r) const {
  if (settings_.combine_ways == 0) return true;
  const std::vector<Combine>& records = hot_requests_.at(kept.request).combines;
  uint32_t here = 0;
  for (auto it = records.rbegin();
       it != records.rend() && it->router == r && it->kept_hop == kept.hops; ++it) {
    ++here;
  }
  return here + 1 < settings_.combine_ways;
}

// The packet reached its terminal at `delivered`: a hot request is served by the memory
// there (one fetch-and-add of everything it carries), any other is counted as delivered.
void Network::deliver(uint32_t id, uint64_t delivered) {
  const Packet& p = packets_[id];
  const bool measuring = now_ >= measure_start_;
  if (p.request != 0) {
    const uint64_t value = memory_;
    memory_ += hot_requests_.at(p.request).total;
    if (p.created >= measure_start_) detour_hops += p.detours;
    serve(p.request, value, delivered, p.hops);
    return;
  }
  // Hotspot latencies run from request to reply, like the hot requests'.
  const uint64_t reply = settings_.pattern == Pattern::kHotspot ? reply_cycles(p.hops + 1) : 0;
  if (measuring) {
    window.delivered_flits += p.size;
    total.delivered_flits += p.size;
    cold_delivered_flits += p.size;
  }
  if (p.created >= measure_start_) {
    const auto latency = static_cast<uint32_t>(delivered + reply - p.created);
    latencies.push_back(latency);
    if (settings_.pattern == Pattern::kHotspot) cold_latencies.push_back(latency);
    hops += p.hops;
    detour_hops += p.detours;
    ++delivered_packets;
  }
}

// The reply carrying `value` to `request` is at the router `hop` channels from its source at
// cycle `at`: each record of a merge into it (at that router or one nearer the source) splits
// off the reply of the merged request there, value + the kept request's increment before the
// merge (001 L553: Y to one, Y + e to the other); the rest goes on to the requester. Every
// request in the batch counts as served now, at the memory: throughput is requests served,
// and a combined packet serves all of its requests.
void Network::serve(uint64_t request, uint64_t value, uint64_t at, uint16_t hop) {
  auto node = hot_requests_.extract(request);
  if (node.empty()) throw SimError("internal: hot request " + std::to_string(request) + " lost");
  const HotRequest& q = node.mapped();
  returned.push_back({q.operand, value});
  if (now_ >= measure_start_) {
    window.delivered_flits += settings_.packet_size;
    total.delivered_flits += settings_.packet_size;
    ++hot_served;
  }
  if (q.created >= measure_start_) {
    latencies.push_back(static_cast<uint32_t>(at + reply_cycles(hop + 1) - q.created));
    hops += hop;
    ++delivered_packets;
  }
  for (const Combine& c : q.combines) {
    const uint64_t there = at + reply_cycles(static_cast<uint16_t>(hop - c.kept_hop));
    releases_.emplace(there, c.router);
    serve(c.absorbed, value + c.before, there, c.absorbed_hop);
  }
}

// Frees the wait-buffer records whose replies have passed by now.
void Network::release_wait_buffers() {
  while (!releases_.empty() && releases_.top().first <= now_) {
    --routers_[releases_.top().second].wait_used;
    releases_.pop();
  }
}

}  // namespace detail
}  // namespace asn::sim

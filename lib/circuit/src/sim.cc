// The discrete-event model of asnsim circuits. Every reservation goes through Fabric::begin
// and every control message through Fabric::deliver (the library's hop logic); this file is
// only the carrier (an event queue, control delay per hop, holding queues) and the traffic.
#include "asn/circuit/sim.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>

#include "asn/circuit/error.hpp"

namespace asn::circuit {

namespace {

enum class EventType : uint8_t { kArrival, kDeliver, kTimeout, kStart, kReceived };

struct Event {
  double t = 0;
  uint64_t seq = 0;
  EventType type = EventType::kArrival;
  uint32_t node = 0;
  uint64_t token = 0;  // kTimeout: the held message; kReceived: unused
  Message msg;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Pending {
  double born = 0;  // when the message was ready (the request arrived)
  uint32_t dst = 0;
};

struct Node {
  std::deque<Pending> queue;  // requests waiting; the front one is being reserved
  bool reserving = false;
};

struct Held {
  uint64_t token = 0;
  Message msg;
};

class Simulation {
 public:
  explicit Simulation(const SimSettings& s)
      : s_(s), fabric_(torus(s.side, s.degree)), nodes_(s.side * s.side), rng_(s.seed) {}

  SimResult run() {
    for (uint32_t n = 0; n < nodes_.size(); ++n) schedule_arrival(n, 0);
    while (!events_.empty() && events_.top().t < s_.time) {
      const Event e = events_.top();
      events_.pop();
      now_ = e.t;
      dispatch(e);
    }
    const double span = s_.time - s_.warmup;
    r_.throughput = static_cast<double>(r_.messages) / span;
    if (established_ > 0) {
      r_.latency = setup_sum_ / static_cast<double>(established_);
      r_.latency_total = r_.latency + static_cast<double>(s_.message) * s_.degree;
    }
    return r_;
  }

 private:
  bool measured() const { return now_ >= s_.warmup; }

  void push(Event e) {
    e.seq = seq_++;
    events_.push(std::move(e));
  }

  void schedule_arrival(uint32_t node, double after) {
    std::exponential_distribution<double> gap(s_.rate);
    Event e;
    e.t = after + gap(rng_);
    e.type = EventType::kArrival;
    e.node = node;
    push(e);
  }

  void send(const Message& m, double delay) {
    Event e;
    e.t = now_ + delay;
    e.type = EventType::kDeliver;
    e.msg = m;
    push(e);
  }

  void dispatch(const Event& e) {
    switch (e.type) {
      case EventType::kArrival:
        arrival(e.node);
        return;
      case EventType::kStart:
        start(e.node);
        return;
      case EventType::kDeliver:
        deliver(e.msg);
        return;
      case EventType::kTimeout:
        timeout(e.token, e.node);
        return;
      case EventType::kReceived:
        if (measured()) ++r_.messages;
        return;
    }
  }

  void arrival(uint32_t node) {
    const uint32_t n = static_cast<uint32_t>(nodes_.size());
    const uint32_t dst = (node + 1 + static_cast<uint32_t>(rng_() % (n - 1))) % n;
    nodes_[node].queue.push_back({now_, dst});
    if (!nodes_[node].reserving) start(node);
    schedule_arrival(node, now_);
  }

  // A reservation for the node's oldest request: a fresh id and pick on every attempt, so a
  // retry offers other slots (002 L447).
  void start(uint32_t node) {
    Node& n = nodes_[node];
    if (n.queue.empty()) {
      n.reserving = false;
      return;
    }
    n.reserving = true;
    Request r;
    r.id = ++next_id_;
    r.src = node;
    r.dst = n.queue.front().dst;
    r.ports = xy_ports(s_.side, node, r.dst);
    r.protocol = s_.protocol;
    r.pick = rng_();
    const Message first = fabric_.begin(r);
    firsts_.emplace(r.id, first);
    if (measured()) ++r_.attempts;
    send(first, s_.control);  // processed at the source's control router
  }

  void deliver(const Message& m) {
    ++r_.events;
    const Step step = fabric_.deliver(m);
    if (step.held) hold(m);
    for (const Message& out : step.send) send(out, s_.control);
    if (step.freed && m.at < m.path->hops()) wake(m.path->links[m.at]);
    if (step.done) finish(*step.done);
  }

  // A RES held again after a wake keeps the deadline it got when first held at this hop:
  // the hold time bounds the whole wait there (002 L441), not each wait between wakes.
  void hold(const Message& m) {
    const uint32_t link = m.path->links[m.at];
    auto [it, fresh] = deadline_.try_emplace(m.id, m.at, now_ + s_.protocol.hold_time);
    if (!fresh && it->second.first != m.at) it->second = {m.at, now_ + s_.protocol.hold_time};
    held_[link].push_back({++next_token_, m});
    Event e;
    e.t = it->second.second;
    e.type = EventType::kTimeout;
    e.node = link;
    e.token = next_token_;
    push(e);
  }

  // Slots of `link` freed: its held messages try again now.
  void wake(uint32_t link) {
    auto it = held_.find(link);
    if (it == held_.end()) return;
    std::vector<Held> waiting = std::move(it->second);
    held_.erase(it);
    for (const Held& h : waiting) send(h.msg, 0);
  }

  void timeout(uint64_t token, uint32_t link) {
    auto it = held_.find(link);
    if (it == held_.end()) return;
    auto& list = it->second;
    auto h =
        std::find_if(list.begin(), list.end(), [&](const Held& x) { return x.token == token; });
    if (h == list.end()) return;  // woken before its time ran out
    Message m = h->msg;
    list.erase(h);
    if (list.empty()) held_.erase(it);
    m.expired = true;
    send(m, 0);
  }

  void finish(const Outcome& o);

  SimSettings s_;
  Fabric fabric_;
  std::vector<Node> nodes_;
  std::mt19937_64 rng_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::unordered_map<CircuitId, Message> firsts_;
  std::map<uint32_t, std::vector<Held>> held_;
  std::unordered_map<CircuitId, std::pair<uint32_t, double>> deadline_;  // hop, when
  double now_ = 0;
  uint64_t seq_ = 0;
  CircuitId next_id_ = 0;
  uint64_t next_token_ = 0;
  uint64_t established_ = 0;
  double setup_sum_ = 0;
  SimResult r_;
};

void Simulation::finish(const Outcome& o) {
  const Message first = firsts_.at(o.id);
  firsts_.erase(o.id);
  deadline_.erase(o.id);
  const uint32_t node = first.path->nodes.front();
  Node& n = nodes_[node];
  Event next;
  next.node = node;
  next.type = EventType::kStart;
  if (!o.established) {
    if (measured()) ++r_.failures;
    const bool fda =
        s_.protocol.direction == Direction::kForward && s_.protocol.cset == CsetPolicy::kAggressive;
    const uint32_t mrt = fda ? s_.mrt_fda : s_.mrt;
    next.t = now_ + static_cast<double>(mrt > 0 ? rng_() % mrt : 0);
    push(next);
    return;
  }
  if (measured()) {
    ++established_;
    setup_sum_ += now_ - n.queue.front().born;
  }
  n.queue.pop_front();
  // The message: one packet per frame on the circuit's slot; REL leaves after the last.
  const double transmit = static_cast<double>(s_.message) * s_.degree;
  Event received;
  received.t = now_ + transmit;
  received.type = EventType::kReceived;
  push(received);
  send(Fabric::release(first, o.slot), transmit + s_.control);
  next.t = now_;  // the node can reserve its next circuit while this one sends
  push(next);
}

void check(const SimSettings& s) {
  const auto bad = [](const std::string& field, const std::string& what) {
    return CircuitError(ErrorKind::kInvalidArgument, field, what);
  };
  if (!(s.rate > 0) || s.rate > 1) throw bad("rates", "a rate in (0, 1] per node per time unit");
  if (s.message == 0) throw bad("message", "at least 1 packet");
  if (s.control == 0) throw bad("control", "at least 1 time unit per hop");
  if (s.warmup >= s.time) throw bad("warmup", "must be shorter than --time");
  if (s.mrt == 0 || s.mrt_fda == 0) throw bad("mrt", "at least 1 (retry at 0..MRT-1)");
  if (s.protocol.cset == CsetPolicy::kSized && s.protocol.cset_size > s.degree) {
    throw CircuitError(ErrorKind::kResourceExhausted, "protocols",
                       "a cset of " + std::to_string(s.protocol.cset_size) +
                           " slots; the degree is " + std::to_string(s.degree));
  }
  if (s.protocol.on_block == OnBlock::kHold && s.protocol.hold_time == 0) {
    throw bad("hold-times", "0 with a holding protocol (use its dropping twin, xD.)");
  }
  torus(s.side, s.degree);  // throws for a size or degree out of range
}

}  // namespace

SimResult simulate(const SimSettings& s) {
  check(s);
  return Simulation(s).run();
}

std::vector<SimResult> simulate_all(const std::vector<SimSettings>& points, unsigned threads,
                                    const std::function<void(size_t, size_t)>& progress) {
  for (const SimSettings& s : points) check(s);
  std::vector<SimResult> out(points.size());
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mu;
  const auto work = [&] {
    for (size_t i = next++; i < points.size(); i = next++) {
      out[i] = Simulation(points[i]).run();
      std::lock_guard<std::mutex> lock(mu);
      if (progress) progress(++done, points.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace asn::circuit

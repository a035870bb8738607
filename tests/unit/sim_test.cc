// asnsim (lib/sim): the simulator on tiny fabrics against results computed by hand, ALDFB's
// one-detour-per-dimension rule over whole runs, determinism, and the errors bad input gets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "asn/sim/network.hpp"
#include "asn/sim/report.hpp"
#include "asn/sim/settings.hpp"
#include "asn/sim/sweep.hpp"
#include "asn/sim/traffic.hpp"

namespace asn::sim {
namespace {

using ::testing::HasSubstr;
using topology::RoutingMode;

// Short runs: the suite also runs under the sanitizers.
Settings small(uint32_t terminals, uint32_t k) {
  Settings s;
  s.terminals = terminals;
  s.k = k;
  s.warmup_cycles = 300;
  s.sample_cycles = 300;
  s.min_samples = 2;
  s.max_samples = 4;
  s.deadlock_cycles = 400;
  return s;
}

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/asnsim_test_XXXXXX";
    path_ = mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// --- Hand-computed results --------------------------------------------------------------------

// One packet at a time (a trace of packets far apart): latency = routers traversed x
// (routing_delay + channel_latency) + packet_size - 1, for every packet.
TEST(SimZeroLoad, LatencyIsHopsTimesRouterPlusChannel) {
  TempDir dir;
  Settings s = small(64, 4);  // 4-ary, r = 2: routers 0..15, digits (d0, d1)
  s.routing_delay = 2;
  s.channel_latency = 3;
  s.packet_size = 2;
  s.pattern = Pattern::kTrace;
  // 0 -> 1: same router (1 router); 0 -> 4: router 0 -> 1, one channel (2 routers);
  // 0 -> 63: router 0 -> 15, both digits differ (3 routers).
  s.trace_file = dir.file("t.trace", "0 0 1 2\n100 0 4 2\n200 0 63 2\n");
  for (RoutingMode mode : {RoutingMode::kMinimal, RoutingMode::kUgal, RoutingMode::kAldfb}) {
    s.internal_speedup = mode == RoutingMode::kAldfb ? 2 : 1;  // output queues: same latency
    const PointResult r = simulate(s, mode, 1.0, 7);
    ASSERT_EQ(r.packets, 3u) << to_string(mode);
    const double per_router = 2 + 3;
    EXPECT_DOUBLE_EQ(r.latency_mean, ((1 + 2 + 3) * per_router + 3 * 1) / 3) << to_string(mode);
    EXPECT_EQ(r.latency_p50, 2 * per_router + 1);
    EXPECT_EQ(r.latency_p99, 3 * per_router + 1);
    EXPECT_DOUBLE_EQ(r.hops_mean, (0 + 1 + 2) / 3.0);
    EXPECT_EQ(r.nonminimal_share, 0);
  }
}

// A trace burst larger than a source queue is delivered in full, late rather than lost.
TEST(SimZeroLoad, TraceLosesNothing) {
  TempDir dir;
  Settings s = small(16, 4);
  s.pattern = Pattern::kTrace;
  s.source_queue_packets = 4;
  std::string burst;
  for (int i = 0; i < 40; ++i) burst += "0 0 5 1\n";
  s.trace_file = dir.file("burst.trace", burst);
  const PointResult r = simulate(s, RoutingMode::kAldfb, 1.0, 1);
  EXPECT_EQ(r.packets, 40u);
  EXPECT_FALSE(r.deadlock);
}

// Benign traffic (004 L604) pairs each two terminals with one directly connected router: each
// pair owns the two lanes of its channel and each destination terminal one source, so minimal
// routing delivers the full offered load with no queue growing.
// Both ways of doubling the channel (two lanes, or one double-rate channel) must carry it; the
// plain flattened butterfly (one terminal-rate channel per pair) carries half (004 L624: "only
// 50% of the maximum throughput").
TEST(SimZeroLoad, MinimalDeliversAConflictFreePermutationAtFullLoad) {
  for (Channels channels : {Channels::kDilated, Channels::kDoubleRate}) {
    Settings s = small(64, 4);
    s.pattern = Pattern::kBenign;
    s.channels = channels;
    s.warmup_cycles = 200;
    s.max_samples = 2;
    const PointResult r = simulate(s, RoutingMode::kMinimal, 1.0, 3);
    EXPECT_FALSE(r.saturated) << to_string(channels);
    EXPECT_FALSE(r.deadlock);
    EXPECT_GT(r.accepted, 0.99) << to_string(channels);
    EXPECT_DOUBLE_EQ(r.hops_mean, 1.0);
    EXPECT_LT(r.latency_p99, 20);  // bounded: a few cycles of arbitration, no queueing
  }
  Settings s = small(64, 4);
  s.pattern = Pattern::kBenign;
  s.channels = Channels::kPlain;
  const PointResult plain = simulate(s, RoutingMode::kMinimal, 1.0, 3);
  EXPECT_TRUE(plain.saturated);
  EXPECT_NEAR(plain.accepted, 0.5, 0.01);
}

TEST(SimTraffic, FixedPatternsArePermutations) {
  for (Pattern p : {Pattern::kBenign, Pattern::kAdversarial, Pattern::kRouterShift,
                    Pattern::kBitComplement, Pattern::kRandomPermutation, Pattern::kTranspose}) {
    Settings s = small(64, 4);
    s.pattern = p;
    const Traffic traffic(s, 11);
    std::vector<uint32_t> sorted = traffic.permutation();
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(sorted[i], i) << to_string(p);
  }
  Settings s = small(64, 4);
  s.pattern = Pattern::kAdversarial;
  const Traffic adversarial(s, 1);
  // Every terminal of router 5 (digits 1,1) goes to router 6 (digits 2,1).
  for (uint32_t t = 20; t < 24; ++t) EXPECT_EQ(adversarial.permutation()[t] / 4, 6u);
  // routershift: router i to router i + 1 across the grid, router 15 (digits 3,3) to router 0.
  s.pattern = Pattern::kRouterShift;
  EXPECT_EQ(parse_pattern("routershift"), Pattern::kRouterShift);
  const Traffic shift(s, 1);
  for (uint32_t t = 0; t < 64; ++t) EXPECT_EQ(shift.permutation()[t], (t + 4) % 64) << t;
  // randperm: another seed, another permutation.
  s.pattern = Pattern::kRandomPermutation;
  EXPECT_NE(Traffic(s, 1).permutation(), Traffic(s, 2).permutation());
  EXPECT_EQ(Traffic(s, 1).permutation(), Traffic(s, 1).permutation());
  EXPECT_NE(Traffic(s, point_seed(1, 0)).permutation(), Traffic(s, point_seed(2, 0)).permutation());
}

// A head whose output VC has no room is routed again each cycle it is blocked (the escape VC
// of Duato's rule must be requestable at every such cycle); a packet that never finds its VC
// full is routed once. Saturated minimal routing (uniform traffic) fills VCs; at zero load none is,
// and the latency shows no second routing_delay (SimZeroLoad.LatencyIsHopsTimesRouterPlusChannel).
TEST(SimReroute, BlockedHeadsAreRoutedAgain) {
  Settings s = small(64, 4);
  s.pattern = Pattern::kUniform;
  s.max_samples = 2;
  const PointResult saturated = simulate(s, RoutingMode::kMinimal, 1.0, 3);
  ASSERT_FALSE(saturated.deadlock) << saturated.message;
  EXPECT_GT(saturated.reroutes, saturated.packets / 10);
  const PointResult light = simulate(s, RoutingMode::kMinimal, 0.05, 3);
  EXPECT_EQ(light.reroutes, 0u);
  EXPECT_FALSE(light.saturated);
}

// --- ALDFB over whole runs --------------------------------------------------------------------

// 004 L848: at most one non-minimal hop per dimension. Adversarial traffic at high load makes
// ALDFB detour often; no packet may detour twice in one dimension.
TEST(SimAldfb, NeverTwoDetoursInOneDimension) {
  for (Pattern p : {Pattern::kAdversarial, Pattern::kUniform}) {
    Settings s = small(64, 4);
    s.pattern = p;
    s.num_vcs = 4;
    s.warmup_cycles = 200;
    s.max_samples = 2;
    const PointResult r = simulate(s, RoutingMode::kAldfb, 0.9, 5);
    ASSERT_FALSE(r.deadlock) << r.message;
    EXPECT_GT(r.nonminimal_share, 0.05) << to_string(p);  // it did detour
    EXPECT_EQ(r.repeated_detours, 0u) << to_string(p);
  }
}

// 004 L1000-1025: with the seed's output-queued switch (here: internal_speedup 2), ALDFB
// accepts all of adversarial traffic at full load, which minimal routing cannot (two lanes for
// four terminals: one half).
TEST(SimAldfb, OutputQueuedDeliversAdversarialAtFullLoad) {
  Settings s = small(64, 4);
  s.pattern = Pattern::kAdversarial;
  s.internal_speedup = 2;
  s.warmup_cycles = 200;
  s.max_samples = 2;
  const PointResult aldfb = simulate(s, RoutingMode::kAldfb, 1.0, 9);
  ASSERT_FALSE(aldfb.deadlock) << aldfb.message;
  EXPECT_GT(aldfb.accepted, 0.97);
  EXPECT_GT(aldfb.nonminimal_share, 0.2);
  EXPECT_EQ(aldfb.repeated_detours, 0u);
  const PointResult minimal = simulate(s, RoutingMode::kMinimal, 1.0, 9);
  EXPECT_NEAR(minimal.accepted, 0.5, 0.01);
}

// With output queues and 4 VCs, one pointer per switch output let the requests to the output's
// other VCs move it past an input whose head waited for a full output-queue VC, each time that
// VC had room again: at router 0 a head waited from cycle 410 on, for an output with 7 credits
// and an idle link. Every head must get through, and all of the load with it.
TEST(SimAldfb, OutputQueuedAllocatorStarvesNoHead) {
  Settings s = small(64, 4);
  s.pattern = Pattern::kAdversarial;
  s.internal_speedup = 2;
  s.num_vcs = 4;
  s.threshold = 4;
  s.warmup_cycles = 1500;
  s.max_samples = 2;
  const PointResult r = simulate(s, RoutingMode::kAldfb, 1.0, 1);
  ASSERT_FALSE(r.deadlock) << r.message;
  EXPECT_GE(r.accepted, 0.99);
}

// iSLIP must grant every requesting head eventually (randperm, minimal, load 1.0; each point
// below starved a head for thousands of cycles at an output VC with credits and an idle lane).
// 1. The output ranked the requests to its different VCs each by that VC's own pointer and
//    compared the distances: a VC whose pointer stood just before its requesters always won,
//    and an input waiting for the other VC, at a fixed distance from a pointer that moved only
//    when that VC was granted, never did (a head waited from cycle 12 on for its terminal).
// 2. A double-rate channel's second pass moved the pointers too: a terminal input (one lane)
//    that sent its other VC in the first pass could not request in the second, whose grant
//    moved the output VC's pointer past it, every cycle in lockstep.
// Input-queued, output-queued and double-rate channels.
TEST(SimAllocator, EveryRequestingHeadIsGranted) {
  struct Case {
    const char* name;
    uint32_t speedup;
    Channels channels;
  };
  // (seed, load index): the permutation is drawn from the point's seed.
  const std::pair<uint64_t, size_t> points[] = {{1, 0}, {6, 0}, {2, 5}};
  for (const Case& c :
       {Case{"IQ", 1, Channels::kDilated}, Case{"OQ", 2, Channels::kDilated},
        Case{"IQ double", 1, Channels::kDoubleRate}, Case{"OQ double", 2, Channels::kDoubleRate}}) {
    for (const auto& [seed, load_index] : points) {
      Settings s = small(64, 4);
      s.pattern = Pattern::kRandomPermutation;
      s.internal_speedup = c.speedup;
      s.channels = c.channels;
      s.warmup_cycles = 3000;
      s.max_samples = 2;
      s.deadlock_cycles = 1000;
      const PointResult r = simulate(s, RoutingMode::kMinimal, 1.0, point_seed(seed, load_index));
      EXPECT_FALSE(r.starvation) << c.name << " seed " << seed << ": " << r.message;
      EXPECT_FALSE(r.deadlock) << c.name << " seed " << seed << ": " << r.message;
    }
  }
}

// --- Deadlock detection -----------------------------------------------------------------------

// With two VCs (one forward, one reverse) the engine's link-number VC rule (004 L893-935)
// does not keep UGAL's four-hop paths free of cyclic waits: under heavy uniform load this
// fabric locks up within a few hundred cycles, and the run must stop and say so.
TEST(SimDeadlock, StopsTheRunWithAMessage) {
  Settings s = small(64, 4);
  s.vc_rule = VcRule::kSeed;  // the seed's rule deadlocks UGAL (asnsim prove names a cycle)
  s.pattern = Pattern::kAdversarial;
  s.vc_buf_size = 2;
  s.warmup_cycles = 3000;
  const PointResult r = simulate(s, RoutingMode::kUgal, 1.0, 1);
  ASSERT_TRUE(r.deadlock);
  EXPECT_FALSE(r.starvation);
  // The report is the cycle itself, each VC with the credits of the VC it waits for.
  EXPECT_THAT(r.message, HasSubstr("deadlock: a cycle of"));
  EXPECT_THAT(r.message, ::testing::ContainsRegex("r[0-9]+:p[0-9]+/vc[0-9] \\(waited [0-9]+, to "
                                                  "port [0-9]+ VC [0-9]: 0 credits"));
  EXPECT_THAT(r.message, HasSubstr("packets wait"));
  EXPECT_LT(r.cycles, 3000u);
}

// A head that waited long while its output VC had room is not a deadlock. Before the
// allocator's fix and this check, minimal routing with output queues on bit-complement
// traffic at load 0.9 was reported deadlocked with a head that had 6 credits and an idle
// output: it was starved by the allocator. Now it is neither.
TEST(SimDeadlock, WaitingWithRoomIsNoDeadlock) {
  Settings s = small(64, 4);
  s.pattern = Pattern::kBitComplement;
  s.internal_speedup = 2;
  s.warmup_cycles = 2500;
  s.max_samples = 2;
  const PointResult r = simulate(s, RoutingMode::kMinimal, 0.9, 1);
  EXPECT_FALSE(r.deadlock) << r.message;
  EXPECT_FALSE(r.starvation) << r.message;
  EXPECT_GT(r.accepted, 0.3);
}

// A starved point is a state of its own in the table and the CSV, with its report.
TEST(SimDeadlock, StarvationIsItsOwnState) {
  PointResult starved;
  starved.load = 0.9;
  starved.starvation = true;
  starved.message = "starvation: the head of r1:p2/vc0";
  const Results results = {starved};
  EXPECT_THAT(csv(results), HasSubstr(",starvation,"));
  EXPECT_THAT(summary_table(results), HasSubstr("starvation (starvation: the head of r1:p2/vc0)"));
}

// --- Bad input --------------------------------------------------------------------------------

void expect_error(const Settings& s, const std::string& field) {
  try {
    validate(s);
    ADD_FAILURE() << "no error, expected one naming " << field;
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr(field));
  }
}

TEST(SimBadInput, ImpossibleFabric) {
  Settings s = small(24, 4);  // 24 is not a multiple of 4^floor(log4 24) = 16
  expect_error(s, "terminals");
  s = small(64, 1);
  expect_error(s, "k");
}

TEST(SimBadInput, LoadOutsideZeroOne) {
  EXPECT_THROW(parse_loads("0"), SimError);
  EXPECT_THROW(parse_loads("1.5"), SimError);
  EXPECT_THROW(parse_loads("0.1:1.2:0.1"), SimError);
  EXPECT_THROW(parse_loads("abc"), SimError);
  EXPECT_THAT(parse_loads("0.1:1.0:0.1"), ::testing::SizeIs(10));
  EXPECT_DOUBLE_EQ(parse_loads("0.1:1.0:0.1").back(), 1.0);
  try {
    parse_loads("-0.5");
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr("(0, 1]"));
  }
}

TEST(SimBadInput, UnknownModeOrPattern) {
  EXPECT_THROW(parse_mode("dor"), SimError);
  EXPECT_THROW(parse_pattern("tornado"), SimError);
  try {
    parse_mode("static");  // the engine has it, but it needs planned rows in each header
    ADD_FAILURE();
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr("aldfb, ugal, minimal"));
  }
  Settings s = small(48, 4);  // valid fabric, but not a power of two
  s.pattern = Pattern::kBitComplement;
  expect_error(s, "bitcomp");
}

TEST(SimBadInput, TraceLineNamesItsNumber) {
  std::istringstream good("# time source destination size\n5 1 2 1\n\n0, 3, 4, 1\n");
  const auto records = parse_trace(good, "good", 64, 8);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].time, 0u);  // sorted by time
  for (const auto& [text, what] :
       std::vector<std::pair<std::string, std::string>>{{"0 1 2 1\n1 2 x 1\n", "bad:2:"},
                                                        {"0 1 2\n", "bad:1:"},
                                                        {"0 1 2 1\n\n0 1 64 1\n", "bad:3:"},
                                                        {"0 1 1 1\n", "bad:1:"},
                                                        {"0 1 2 9\n", "bad:1:"}}) {
    std::istringstream in(text);
    try {
      parse_trace(in, "bad", 64, 8);
      ADD_FAILURE() << text;
    } catch (const SimError& e) {
      EXPECT_THAT(e.what(), HasSubstr(what)) << text;
    }
  }
  Settings s = small(64, 4);
  s.pattern = Pattern::kTrace;
  s.trace_file = "/nonexistent/trace";
  expect_error(s, "trace");
}

TEST(SimBadInput, UnwritableOutputDirectory) {
  TempDir dir;
  const std::string file = dir.file("plain", "x");
  try {
    prepare_output_dir(file + "/run1");  // below a regular file
    ADD_FAILURE();
  } catch (const SimError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out:"));
  }
  EXPECT_NO_THROW(prepare_output_dir(dir.path() + "/run1"));
}

// T_h is compared with the whole port's queue (the seed's priority encoder has one bit per
// output port): the default is half a VC whatever the VC count, and at most the whole port's
// queue is accepted.
TEST(SimSettings, ThresholdIsAboutThePortsQueue) {
  Settings s = small(64, 4);  // 2 VCs of 8 flits, 1-flit packets: a port queue of 16 packets
  EXPECT_EQ(threshold_packets(s), 4u);
  s.num_vcs = 4;
  EXPECT_EQ(threshold_packets(s), 4u);
  s.threshold = 32;
  EXPECT_NO_THROW(validate(s));
  s.threshold = 33;
  expect_error(s, "threshold: at most the port's queue, 32 packets");
  s = small(64, 4);
  s.vc_buf_size = 1;  // one packet per VC: at least 1
  EXPECT_EQ(threshold_packets(s), 1u);
}

TEST(SimSettings, VcRuleAndVcCount) {
  Settings s = small(64, 4);
  EXPECT_EQ(s.vc_rule, VcRule::kEscape);
  EXPECT_EQ(parse_vc_rule("seed"), VcRule::kSeed);
  EXPECT_THROW(parse_vc_rule("dateline"), SimError);
  s.num_vcs = 1;
  expect_error(s, "num_vcs: the escape VC rule needs at least 2");
  s.vc_rule = VcRule::kSeed;
  expect_error(s, "num_vcs: the seed VC rule needs at least 2");
  s.num_vcs = 9;
  expect_error(s, "num_vcs: at most 8");
  s.num_vcs = 8;
  EXPECT_NO_THROW(validate(s));
  TempDir dir;
  const Settings back = load_settings_yaml(dir.file("rule.yaml", settings_yaml(s)));
  EXPECT_EQ(back.vc_rule, VcRule::kSeed);
  EXPECT_THAT(settings_yaml(s), HasSubstr("vc_rule: seed"));
  EXPECT_THROW(load_settings_yaml(dir.file("bad.yaml", "vc_rule: both\n")), SimError);
}

// A deadlocked or starved point is drawn as a labelled red X at its load (it measured
// nothing), not dropped; a saturated point is hollow and its latency segment dashed; each mode
// keeps its colour; a latency spanning more than a decade gets a log axis.
TEST(SimReport, PlotsMarkStuckAndSaturatedPoints) {
  Settings s = small(64, 4);
  auto point = [](RoutingMode mode, double load, double accepted, double latency) {
    PointResult r;
    r.mode = mode;
    r.load = load;
    r.offered = load;
    r.accepted = accepted;
    r.latency_mean = r.latency_p99 = latency;
    r.converged = true;
    return r;
  };
  Results results;
  results.push_back(point(RoutingMode::kAldfb, 0.5, 0.5, 5));
  PointResult saturated = point(RoutingMode::kAldfb, 1.0, 0.65, 400);
  saturated.saturated = true;
  results.push_back(saturated);
  results.push_back(point(RoutingMode::kUgal, 0.5, 0.5, 8));
  PointResult deadlocked = point(RoutingMode::kUgal, 1.0, 0, 0);
  deadlocked.deadlock = true;
  results.push_back(deadlocked);
  PointResult starved = point(RoutingMode::kMinimal, 0.8, 0, 0);
  starved.starvation = true;
  results.push_back(starved);

  const std::string throughput = svg_plot(s, results, Metric::kAccepted);
  EXPECT_THAT(throughput, HasSubstr("class=\"stuck\""));
  EXPECT_THAT(throughput, HasSubstr("ugal deadlock</text>"));
  EXPECT_THAT(throughput, HasSubstr("minimal starvation</text>"));
  EXPECT_THAT(throughput, HasSubstr("fill=\"white\" stroke=\"#1f77b4\""));  // hollow, aldfb's
  const std::string latency = svg_plot(s, results, Metric::kLatencyMean);
  EXPECT_THAT(latency, HasSubstr("stroke-dasharray"));
  EXPECT_THAT(latency, HasSubstr("latency grows"));
  EXPECT_THAT(latency, HasSubstr("(log scale)"));  // 5 to 400 cycles
  // The same mode, the same colour in every plot.
  EXPECT_THAT(latency, HasSubstr("stroke=\"#2ca02c\" stroke-width=\"2\"/>\n<text"));
  EXPECT_THAT(throughput, HasSubstr("stroke=\"#2ca02c\" stroke-width=\"2\"/>\n<text"));
}

TEST(SimSettings, YamlRoundTrip) {
  TempDir dir;
  Settings s = small(64, 4);
  s.modes = {RoutingMode::kAldfb, RoutingMode::kMinimal};
  s.pattern = Pattern::kAdversarial;
  s.loads = {0.2, 0.4};
  s.seed = 99;
  const Settings back = load_settings_yaml(dir.file("run.yaml", settings_yaml(s)));
  EXPECT_EQ(settings_yaml(back), settings_yaml(s));
  EXPECT_THROW(load_settings_yaml(dir.file("bad.yaml", "terminals: 64\nbogus: 1\n")), SimError);
}

}  // namespace
}  // namespace asn::sim

// asnsim's hot spots and combining (001 L487-569): without combining, hotspot traffic saturates
// at 1 / (1 + h(N - 1)) and the other traffic slows with it (tree saturation); with combining
// in the routers' queues the hot requests pass the bound, and every run's replies form a
// serial order of fetch-and-add, which the checker verifies and rejects when corrupted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "asn/sim/combining.hpp"
#include "asn/sim/network.hpp"
#include "asn/sim/report.hpp"
#include "asn/sim/settings.hpp"
#include "asn/sim/sweep.hpp"

namespace asn::sim {
namespace {

using ::testing::HasSubstr;
using topology::RoutingMode;

// 16 terminals, 4 routers: a fabric small enough for a second's run.
Settings hotspot(double h, bool combining) {
  Settings s;
  s.terminals = 16;
  s.k = 4;
  s.pattern = Pattern::kHotspot;
  s.hot_fraction = h;
  s.combining = combining;
  s.warmup_cycles = 1000;
  s.sample_cycles = 500;
  s.min_samples = 3;
  s.max_samples = 6;
  return s;
}

// --- The serial-order checker ----------------------------------------------------------------

// Four fetch-and-adds from 0 in the order 4, 8, 1, 2 (001 L559's example), returned shuffled.
std::vector<FetchAdd> figure_1_4() { return {{1, 12}, {4, 0}, {2, 13}, {8, 4}}; }

TEST(SimSerialOrder, AcceptsAPermutationOfPrefixSums) {
  EXPECT_EQ(check_serial_order(0, 15, figure_1_4()), "");
  EXPECT_EQ(check_serial_order(7, 7, {}), "");
  // Zero increments share a value with the next request: still a serial order.
  EXPECT_EQ(check_serial_order(5, 8, {{3, 5}, {0, 5}}), "");
}

TEST(SimSerialOrder, RejectsACorruptedReply) {
  std::vector<FetchAdd> replies = figure_1_4();
  replies[2].value = 14;  // FAA(X, 2) saw 14: no order gives it
  EXPECT_THAT(check_serial_order(0, 15, replies), HasSubstr("where a serial order has 13"));
  replies = figure_1_4();
  replies[0].value = 4;  // two requests saw the same value
  EXPECT_NE(check_serial_order(0, 15, replies), "");
  EXPECT_THAT(check_serial_order(0, 16, figure_1_4()), HasSubstr("the memory holds 16"));
  EXPECT_NE(check_serial_order(1, 16, figure_1_4()), "");  // not from the initial value
}

// --- Without combining: the seed's bound and tree saturation ---------------------------------

// Offered well past the bound, the accepted rate is within 10% of 1 / (1 + h(N - 1)).
TEST(SimHotspot, SaturatesNearTheBoundWithoutCombining) {
  for (const double h : {0.1, 0.3}) {
    const Settings s = hotspot(h, false);
    const PointResult r = simulate(s, RoutingMode::kAldfb, 0.8, 5);
    const double bound = 1.0 / (1.0 + h * 15);
    EXPECT_DOUBLE_EQ(r.hot_bound, bound);
    EXPECT_NEAR(r.accepted, bound, 0.1 * bound) << "h " << h;
    EXPECT_TRUE(r.saturated);
    EXPECT_EQ(r.combines, 0u);
    EXPECT_EQ(r.serial_order_error, "");
  }
}

// The requests not for the hot address slow too: at h = 0.2 and load 0.5 they are offered
// 0.4 flits/cycle/terminal, which uniform traffic alone carries at a few cycles' latency.
TEST(SimHotspot, OtherTrafficSuffersTreeSaturation) {
  const PointResult hot = simulate(hotspot(0.2, false), RoutingMode::kAldfb, 0.5, 5);
  Settings uniform = hotspot(0.2, false);
  uniform.pattern = Pattern::kUniform;
  const PointResult alone = simulate(uniform, RoutingMode::kAldfb, 0.4, 5);
  EXPECT_NEAR(alone.accepted, 0.4, 0.02);
  EXPECT_LT(hot.cold_accepted, 0.75 * 0.4);
  EXPECT_GT(hot.cold_latency_mean, 10 * alone.latency_mean);
}

// --- With combining --------------------------------------------------------------------------

// At the same h and a load twice the bound, combining carries the whole load, with replies in
// a serial order and the other traffic at its uniform latency.
TEST(SimCombining, PassesTheBound) {
  const double h = 0.2, bound = 1.0 / (1.0 + h * 15);
  const PointResult off = simulate(hotspot(h, false), RoutingMode::kAldfb, 2 * bound, 5);
  const PointResult on = simulate(hotspot(h, true), RoutingMode::kAldfb, 2 * bound, 5);
  EXPECT_LT(off.accepted, 1.1 * bound);
  EXPECT_NEAR(on.accepted, 2 * bound, 0.05 * bound);
  EXPECT_FALSE(on.saturated);
  EXPECT_GT(on.combines, on.hot_requests / 2);
  EXPECT_EQ(on.serial_order_error, "");
  EXPECT_LT(on.cold_latency_mean, off.cold_latency_mean / 10);
}

// A wait buffer of 0 records combines nothing: the bound is back.
TEST(SimCombining, NoWaitBufferNoCombining) {
  Settings s = hotspot(0.2, true);
  s.wait_buffer = 0;
  const PointResult r = simulate(s, RoutingMode::kAldfb, 0.6, 5);
  EXPECT_EQ(r.combines, 0u);
  EXPECT_GT(r.wait_buffer_full, 0u);
  EXPECT_NEAR(r.accepted, r.hot_bound, 0.1 * r.hot_bound);
}

// A small wait buffer fills at a high load: combining stops there, and what did combine still
// returns a serial order (records freed as replies pass, none lost).
TEST(SimCombining, SmallWaitBufferStaysSerial) {
  Settings s = hotspot(0.3, true);
  s.wait_buffer = 2;
  for (RoutingMode mode : {RoutingMode::kMinimal, RoutingMode::kAldfb}) {
    const PointResult r = simulate(s, mode, 0.9, 9);
    EXPECT_GT(r.combines, 0u);
    EXPECT_GT(r.wait_buffer_full, 0u);
    EXPECT_EQ(r.serial_order_error, "");
  }
}

// The two-way switch (001 Ch. 4) merges one packet into a queued request per router: fewer
// merges than unlimited combining at a load where requests pile up, still a serial order.
TEST(SimCombining, TwoWayMergesOnePerRouter) {
  Settings s = hotspot(0.3, true);
  s.wait_buffer = 64;
  const PointResult unlimited = simulate(s, RoutingMode::kAldfb, 0.9, 5);
  s.combine_ways = 2;
  const PointResult two_way = simulate(s, RoutingMode::kAldfb, 0.9, 5);
  EXPECT_EQ(two_way.serial_order_error, "");
  EXPECT_GT(two_way.combines, 0u);
  EXPECT_LT(two_way.accepted, unlimited.accepted);
  EXPECT_GT(two_way.accepted, two_way.hot_bound);
}

TEST(SimCombining, DeterministicForASeed) {
  Settings s = hotspot(0.2, true);
  s.loads = {0.3, 0.6};
  s.threads = 2;
  const std::string a = csv(run_sweep(s));
  EXPECT_EQ(a, csv(run_sweep(s)));
  s.seed = 2;
  EXPECT_NE(a, csv(run_sweep(s)));
}

// --- Settings --------------------------------------------------------------------------------

TEST(SimHotspotSettings, BadValuesNameTheField) {
  auto message = [](Settings s) {
    try {
      validate(s);
    } catch (const SimError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Settings s = hotspot(1.5, false);
  EXPECT_THAT(message(s), HasSubstr("hot_fraction"));
  s = hotspot(0.1, false);
  s.hot_node = 16;
  EXPECT_THAT(message(s), HasSubstr("hot_node: a terminal, 0..15"));
  s = hotspot(0.1, true);
  s.pattern = Pattern::kUniform;
  EXPECT_THAT(message(s), HasSubstr("combining: needs traffic 'hotspot'"));
  s = hotspot(0.1, true);
  s.combine_ways = 1;
  EXPECT_THAT(message(s), HasSubstr("combine_ways: 0 (unlimited) or 2.."));
  EXPECT_EQ(message(hotspot(0.1, true)), "");
  EXPECT_EQ(parse_pattern("hotspot"), Pattern::kHotspot);
  EXPECT_TRUE(parse_on_off("combining", "on"));
  EXPECT_THROW(parse_on_off("combining", "yes"), SimError);
}

// settings.yaml repeats a hotspot run: its four keys are written and read back.
TEST(SimHotspotSettings, YamlRoundTrip) {
  Settings s = hotspot(0.2, true);
  s.hot_node = 7;
  s.wait_buffer = 5;
  s.combine_ways = 2;
  const std::string path = ::testing::TempDir() + "/sim_combining_settings.yaml";
  std::ofstream(path) << settings_yaml(s);
  const Settings back = load_settings_yaml(path);
  std::remove(path.c_str());
  EXPECT_EQ(back.pattern, Pattern::kHotspot);
  EXPECT_DOUBLE_EQ(back.hot_fraction, 0.2);
  EXPECT_EQ(back.hot_node, 7u);
  EXPECT_TRUE(back.combining);
  EXPECT_EQ(back.wait_buffer, 5u);
  EXPECT_EQ(back.combine_ways, 2u);
}

}  // namespace
}  // namespace asn::sim

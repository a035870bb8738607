// The Prometheus text format asnd writes for listen.metrics (daemon/src/metrics/exposition).
#include <gtest/gtest.h>

#include <stdexcept>

#include "metrics/exposition.hpp"

namespace asn::metrics {
namespace {

TEST(MetricsExpositionTest, HelpAndTypeComeBeforeTheSamplesOfTheirFamily) {
  Exposition out;
  out.family("asn_port_rx_packets_total", Type::kCounter, "Packets received.");
  out.sample({{"port", "0"}}, 12);
  out.sample({{"port", "1"}}, 0);
  out.family("asn_board_generation", Type::kGauge, "The generation.");
  out.sample(3);
  EXPECT_EQ(out.text(),
            "# HELP asn_port_rx_packets_total Packets received.\n"
            "# TYPE asn_port_rx_packets_total counter\n"
            "asn_port_rx_packets_total{port=\"0\"} 12\n"
            "asn_port_rx_packets_total{port=\"1\"} 0\n"
            "# HELP asn_board_generation The generation.\n"
            "# TYPE asn_board_generation gauge\n"
            "asn_board_generation 3\n");
}

TEST(MetricsExpositionTest, LabelValuesAndHelpAreEscaped) {
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");
  Exposition out;
  out.family("asn_x", Type::kGauge, "line one\nline two");
  out.sample({{"listener", "unix:/run/\"asn\"/a.sock"}, {"code", "OK"}}, 1);
  EXPECT_EQ(out.text(),
            "# HELP asn_x line one\\nline two\n"
            "# TYPE asn_x gauge\n"
            "asn_x{listener=\"unix:/run/\\\"asn\\\"/a.sock\",code=\"OK\"} 1\n");
}

TEST(MetricsExpositionTest, ValuesPrintAsIntegersWhenTheyAreWhole) {
  Exposition out;
  out.family("asn_v", Type::kGauge, "v");
  out.sample({{"k", "big"}}, 18446744073709.0);
  out.sample({{"k", "frac"}}, 0.25);
  out.sample({{"k", "neg"}}, -2);
  EXPECT_EQ(out.text(),
            "# HELP asn_v v\n# TYPE asn_v gauge\n"
            "asn_v{k=\"big\"} 18446744073709\nasn_v{k=\"frac\"} 0.25\nasn_v{k=\"neg\"} -2\n");
}

TEST(MetricsExpositionTest, NamesThatBreakTheConventionsAreRefused) {
  Exposition out;
  EXPECT_THROW(out.sample(1), std::logic_error);  // no family yet
  EXPECT_THROW(out.family("asn_grants", Type::kCounter, "no _total"), std::logic_error);
  EXPECT_THROW(out.family("asn_open_total", Type::kGauge, "a gauge named as a counter"),
               std::logic_error);
  EXPECT_THROW(out.family("9asn", Type::kGauge, "starts with a digit"), std::logic_error);
  EXPECT_THROW(out.family("asn-x", Type::kGauge, "a dash"), std::logic_error);
  out.family("asn_ok", Type::kGauge, "ok");
  EXPECT_THROW(out.family("asn_ok", Type::kGauge, "twice"), std::logic_error);
  EXPECT_THROW(out.sample({{"__reserved", "x"}}, 1), std::logic_error);
  EXPECT_THROW(out.sample({{"a:b", "x"}}, 1), std::logic_error);
}

}  // namespace
}  // namespace asn::metrics

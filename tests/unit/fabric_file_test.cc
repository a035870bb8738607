// The fabric file of `asnctl load-schedule --fabric` (fabric_file.hpp): what it reads, the
// error for each kind of mistake with its line and column, durations, and the plan's
// switches it lacks.
#include "asn/schedule/fabric_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "asn/schedule/plan_file.hpp"
#include "support.hpp"

namespace asn::schedule {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

constexpr char kRack7[] = R"(fabric: rack7            # a name
switches:
  - {name: r0, endpoint: unix:/run/asn/asn0.sock}
  - {name: r1, endpoint: 10.0.0.2:7411, timeout: 2s}   # optional per-switch timeout
arm_margin: 50 ms
)";

// The problem parse_fabric_file reports for `text`; fails the test if it parses.
Problem parse_error(const std::string& text) {
  try {
    parse_fabric_file(text, "f.yaml");
  } catch (const PlanError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.problem();
  }
  ADD_FAILURE() << "parsed:\n" << text;
  return {};
}

// A fabric file whose second switch (line 4) is `item`.
std::string with_switch(const std::string& item) {
  return "fabric: f\nswitches:\n  - {name: a, endpoint: 'unix:/a.sock'}\n  - " + item + "\n";
}

TEST(FabricFile, ReadsEveryKey) {
  FabricFile fabric = parse_fabric_file(kRack7, "rack7.yaml");
  EXPECT_EQ(fabric.name, "rack7");
  EXPECT_EQ(fabric.file, "rack7.yaml");
  ASSERT_EQ(fabric.switches.size(), 2u);
  EXPECT_EQ(fabric.switches[0].name, "r0");
  EXPECT_EQ(fabric.switches[0].endpoint, "unix:/run/asn/asn0.sock");
  EXPECT_EQ(fabric.switches[0].timeout, milliseconds(2000));  // the default
  EXPECT_EQ(fabric.switches[0].mark, (Mark{3, 5}));
  EXPECT_EQ(fabric.switches[1].name, "r1");
  EXPECT_EQ(fabric.switches[1].endpoint, "10.0.0.2:7411");
  EXPECT_EQ(fabric.switches[1].timeout, milliseconds(2000));
  EXPECT_EQ(fabric.switches[1].mark, (Mark{4, 5}));
  EXPECT_EQ(fabric.arm_margin, milliseconds(50));
  EXPECT_EQ(fabric.find_switch("r1"), &fabric.switches[1]);
  EXPECT_EQ(fabric.find_switch("r2"), nullptr);
}

TEST(FabricFile, DefaultsAndBlockStyle) {
  FabricFile fabric = parse_fabric_file(R"(fabric: f
switches:
  - name: a
    endpoint: "[::1]:7411"
    timeout: 250 ms
)");
  EXPECT_EQ(fabric.arm_margin, kDefaultArmMargin);
  EXPECT_EQ(fabric.arm_margin, milliseconds(100));
  EXPECT_EQ(fabric.file, "<fabric>");
  ASSERT_EQ(fabric.switches.size(), 1u);
  EXPECT_EQ(fabric.switches[0].endpoint, "[::1]:7411");
  EXPECT_EQ(fabric.switches[0].timeout, milliseconds(250));
  EXPECT_EQ(fabric.switches[0].mark, (Mark{3, 5}));
}

TEST(FabricFile, Durations) {
  auto margin = [](const std::string& text) {
    return parse_fabric_file(
               "fabric: f\nswitches: [{name: a, endpoint: x:1}]\narm_margin: " + text + "\n")
        .arm_margin;
  };
  EXPECT_EQ(margin("2s"), milliseconds(2000));
  EXPECT_EQ(margin("1.5 s"), milliseconds(1500));
  EXPECT_EQ(margin("0.000000001 s"), nanoseconds(1));
  EXPECT_EQ(margin("20ms"), milliseconds(20));
  EXPECT_EQ(margin("250 us"), std::chrono::microseconds(250));
  EXPECT_EQ(margin("1.5 ns"), nanoseconds(2));  // rounded up
  EXPECT_EQ(margin("60 s"), std::chrono::seconds(60));

  auto timeout = [](const std::string& text) {
    return parse_fabric_file("fabric: f\nswitches: [{name: a, endpoint: x:1, timeout: " + text +
                             "}]\n")
        .switches[0]
        .timeout;
  };
  EXPECT_EQ(timeout("1.5s"), milliseconds(1500));
  EXPECT_EQ(timeout("10 us"), milliseconds(1));  // rounded up to whole milliseconds
  EXPECT_EQ(timeout("600 s"), std::chrono::minutes(10));
}

TEST(FabricFile, BadDurations) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"50", "has no unit"}, Case{"fast", "does not start with a number"},
                        Case{"50 min", "unknown unit 'min' (units: s, ms, us, ns)"},
                        Case{"125 cycles", "cycles need a board's clock"},
                        Case{"1.2.3 ms", "unknown unit"}, Case{"1. s", "needs digits after it"},
                        Case{"0 ms", "out of range: give more than 0 and at most 1 min"},
                        Case{"61 s", "out of range"}, Case{"99999999999999999 s", "out of range"},
                        Case{"1234567890123456789 ms", "more than 18 digits"}}) {
    SCOPED_TRACE(c.text);
    Problem p = parse_error(std::string("fabric: f\nswitches: [{name: a, endpoint: x:1}]\n") +
                            "arm_margin: " + c.text + "\n");
    EXPECT_EQ(p.field, "arm_margin");
    EXPECT_EQ(p.mark, (Mark{3, 13}));
    EXPECT_THAT(p.message, HasSubstr(c.message));
  }
  Problem timeout = parse_error(with_switch("{name: b, endpoint: x:2, timeout: 11 min}"));
  EXPECT_EQ(timeout.to_string(),
            "f.yaml:4:39: switches[1].timeout: '11 min' is not a time: unknown unit 'min' "
            "(units: s, ms, us, ns) (write a number and a unit: '2s', '500 ms', '250 us', "
            "'100 ns')");
  Problem long_timeout = parse_error(with_switch("{name: b, endpoint: x:2, timeout: 601 s}"));
  EXPECT_EQ(long_timeout.to_string(),
            "f.yaml:4:39: switches[1].timeout: '601 s' is out of range: give more than 0 and at "
            "most 10 min");
  EXPECT_THAT(parse_error(with_switch("{name: b, endpoint: x:2, timeout: [2s]}")).message,
              HasSubstr("expected a time such as '2s' or '50 ms' (got a list)"));
}

TEST(FabricFile, RefusesNoSwitches) {
  Problem none = parse_error("fabric: f\nswitches: []\n");
  EXPECT_EQ(none.field, "switches");
  EXPECT_EQ(none.mark, (Mark{2, 11}));
  EXPECT_THAT(none.message, HasSubstr("lists no switch"));
  Problem null = parse_error("fabric: f\nswitches:\n");
  EXPECT_THAT(null.message, HasSubstr("lists no switch"));
  Problem missing = parse_error("fabric: f\n");
  EXPECT_EQ(missing.field, "switches");
  EXPECT_THAT(missing.message, HasSubstr("needs 'switches:'"));
  Problem map = parse_error("fabric: f\nswitches: {r0: x:1}\n");
  EXPECT_THAT(map.message, HasSubstr("expected a list such as"));
}

TEST(FabricFile, RefusesDuplicateNamesAndEndpoints) {
  Problem name = parse_error(with_switch("{name: a, endpoint: x:2}"));
  EXPECT_EQ(name.to_string(),
            "f.yaml:4:12: switches[1].name: switch 'a' is listed twice (first at line 3)");
  Problem endpoint = parse_error(with_switch("{name: b, endpoint: 'unix:/a.sock'}"));
  EXPECT_EQ(endpoint.field, "switches[1].endpoint");
  EXPECT_EQ(endpoint.mark, (Mark{4, 26}));  // inside the quotes
  EXPECT_THAT(endpoint.message, HasSubstr("already the endpoint of switch 'a' (line 3)"));
}

TEST(FabricFile, RefusesBadEndpoints) {
  Problem empty = parse_error(with_switch("{name: b, endpoint: ''}"));
  EXPECT_EQ(empty.field, "switches[1].endpoint");
  EXPECT_EQ(empty.mark, (Mark{4, 26}));
  EXPECT_THAT(empty.message, HasSubstr("is empty"));
  Problem null = parse_error(with_switch("{name: b, endpoint: }"));
  EXPECT_EQ(null.field, "switches[1].endpoint");
  EXPECT_THAT(null.message, HasSubstr("(got nothing)"));
  Problem absent = parse_error(with_switch("{name: b}"));
  EXPECT_EQ(absent.field, "switches[1]");
  EXPECT_EQ(absent.mark, (Mark{4, 5}));
  EXPECT_THAT(absent.message, HasSubstr("switch 'b' needs 'endpoint:'"));
  Problem blank = parse_error("fabric: f\nswitches:\n  - name: b\n    endpoint: host 7411\n");
  EXPECT_THAT(blank.message, HasSubstr("has a blank or control character"));
}

TEST(FabricFile, RefusesUnknownKeysAndBadNames) {
  Problem top = parse_error("fabric: f\nswitches: [{name: a, endpoint: x:1}]\narm_marign: 5 ms\n");
  EXPECT_EQ(top.to_string(), "f.yaml:3:1: arm_marign: unknown key (did you mean 'arm_margin'?)");
  Problem in_switch = parse_error(with_switch("{name: b, endpont: x:2}"));
  EXPECT_EQ(in_switch.field, "switches[1].endpont");
  EXPECT_EQ(in_switch.mark, (Mark{4, 15}));
  EXPECT_THAT(in_switch.message, HasSubstr("did you mean 'endpoint'?"));
  Problem unnamed = parse_error(with_switch("{endpoint: x:2}"));
  EXPECT_EQ(unnamed.field, "switches[1]");
  EXPECT_THAT(unnamed.message, HasSubstr("needs 'name:'"));
  Problem scalar = parse_error(with_switch("r1"));
  EXPECT_EQ(scalar.mark, (Mark{4, 5}));
  EXPECT_THAT(scalar.message, HasSubstr("expected keys such as"));
  Problem bad_name = parse_error(with_switch("{name: 'b c', endpoint: x:2}"));
  EXPECT_THAT(bad_name.message, HasSubstr("is not a name"));
  EXPECT_THAT(parse_error("switches: [{name: a, endpoint: x:1}]\n").message,
              HasSubstr("needs 'fabric: NAME'"));
  EXPECT_THAT(parse_error("").message, HasSubstr("the file is empty: a fabric file needs"));
  Problem yaml = parse_error("fabric: f\nswitches:\n  - {name: a, endpoint: x:1}\n - oops\n");
  EXPECT_EQ(yaml.mark.line, 4u);
  EXPECT_THAT(yaml.message, HasSubstr("not valid YAML"));
}

TEST(FabricFile, LoadsAFile) {
  test::TempDir dir;
  std::string path = dir.file("rack7.yaml");
  test::write_file(path, kRack7);
  FabricFile fabric = load_fabric_file(path);
  EXPECT_EQ(fabric.file, path);
  EXPECT_EQ(fabric.switches.size(), 2u);

  test::write_file(path, with_switch("{name: a, endpoint: x:2}"));
  try {
    load_fabric_file(path);
    ADD_FAILURE() << "loaded";
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path + ":4:12: switches[1].name:"));
  }
  try {
    load_fabric_file(dir.file("absent.yaml"));
    ADD_FAILURE() << "loaded";
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read the fabric file: No such file"));
  }
}

TEST(FabricFile, MissingSwitchesOfAPlan) {
  FabricFile fabric = parse_fabric_file(kRack7);
  Plan plan = parse_plan(R"(plan: f
switches: [r2, r0, r3]
defaults: {slot_length: 1 us, guard_band: 48 ns}
phases:
  - name: a
)");
  EXPECT_THAT(missing_switches(fabric, plan), ElementsAre("r2", "r3"));
  plan.switches = {"r1"};  // a file may list switches the plan does not use
  EXPECT_THAT(missing_switches(fabric, plan), IsEmpty());
  plan.switches.clear();
  EXPECT_THAT(missing_switches(fabric, plan), IsEmpty());
}

}  // namespace
}  // namespace asn::schedule

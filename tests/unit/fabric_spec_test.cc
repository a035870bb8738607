// The fabric file of `asnctl fabric apply` (lib/fabric_spec): what it reads, each check as a
// whole with the switch and field it names, the documents etcd holds (JSON round trip,
// byte-identical for the same input), the diff, and the one file serving load-schedule's
// reader too.
#include "asn/fabric_spec/fabric_spec.hpp"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "asn/schedule/error.hpp"
#include "asn/schedule/fabric_file.hpp"

namespace asn::fabric {
namespace {

using google::protobuf::util::MessageDifferencer;
using schedule::PlanError;
using schedule::Problem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kExample = std::string(ASN_EXAMPLES_DIR) + "/fabrics/rack7.yaml";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fabric file of N = 64, k = 4 whose switches are `items` (one per line, from line 6).
std::string fabric_with(const std::string& items, const std::string& routing = "") {
  return "fabric: t\n"
         "topology: {terminals: 64, k: 4}\n" +
         (routing.empty() ? std::string("routing: {mode: minimal}\n") : routing + "\n") +
         "arm_margin: 10 ms\n"
         "switches:\n" +
         items;
}

std::string item(const std::string& name, int router, const std::string& extra = "",
                 const std::string& profile = "emulated-64port") {
  return "  - {name: " + name + ", router: " + std::to_string(router) + ", profile: " + profile +
         ", endpoint: 'unix:/" + name + ".sock'" + extra + "}\n";
}

// Every problem parse_fabric_spec reports for `text`; fails the test if it parses.
std::vector<Problem> problems_of(const std::string& text) {
  try {
    parse_fabric_spec(text, "f.yaml");
  } catch (const PlanError& e) {
    EXPECT_EQ(e.kind(), schedule::ErrorKind::kInvalidArgument);
    return e.problems();
  }
  ADD_FAILURE() << "parsed:\n" << text;
  return {Problem{}};
}

Problem problem_of(const std::string& text) { return problems_of(text).front(); }

TEST(FabricSpec, TheExampleIsSixteenSwitchesOfOneFabric) {
  const FabricSpec spec = load_fabric_spec(kExample);
  EXPECT_EQ(spec.name(), "rack7");
  EXPECT_EQ(spec.terminals(), 64u);
  EXPECT_EQ(spec.k(), 4u);
  EXPECT_FALSE(spec.double_rate());
  EXPECT_EQ(spec.routing().mode(), static_cast<uint32_t>(RoutingMode::kAldfb));
  EXPECT_TRUE(spec.routing().enable());
  EXPECT_EQ(spec.routing().threshold(), 12u);
  EXPECT_EQ(spec.arm_margin_ns(), 100'000'000u);
  ASSERT_EQ(spec.switches_size(), 16);
  EXPECT_THAT(missing_routers(spec), IsEmpty());
  for (int i = 0; i < 16; ++i) {
    const SwitchSpec& sw = spec.switches(i);
    EXPECT_EQ(sw.router(), static_cast<uint32_t>(i));  // r00..r15: name order is router order
    EXPECT_EQ(sw.fabric(), "rack7");
    EXPECT_EQ(sw.profile(), "emulated-64port");
    EXPECT_EQ(sw.terminals(), 64u);
    EXPECT_EQ(sw.k(), 4u);
    EXPECT_EQ(sw.timeout_ms(), 2000u);
  }
  const SwitchSpec* r05 = find_switch(spec, "r05");
  ASSERT_NE(r05, nullptr);
  EXPECT_EQ(r05->endpoint(), "unix:/run/asn/r05.sock");
  EXPECT_EQ(r05->routing().threshold(), 12u);  // the fabric's, with its own for ports 4, 5
  EXPECT_EQ(r05->routing().thresholds().size(), 2u);
  EXPECT_EQ(r05->routing().thresholds().at(4), 8u);
  EXPECT_THAT(find_switch(spec, "r04")->routing().thresholds(), IsEmpty());
  EXPECT_EQ(find_switch(spec, "r16"), nullptr);
}

TEST(FabricSpec, TheExampleSplitsIntoSeventeenDocuments) {
  const auto documents = etcd_documents(load_fabric_spec(kExample), "/asn");
  ASSERT_EQ(documents.size(), 17u);
  EXPECT_TRUE(documents.contains("/asn/fabrics/rack7/fabric"));
  EXPECT_TRUE(documents.contains("/asn/fabrics/rack7/switches/r00/desired"));
  EXPECT_TRUE(documents.contains("/asn/fabrics/rack7/switches/r15/desired"));
  EXPECT_EQ(fabric_key("/asn", "rack7"), "/asn/fabrics/rack7/fabric");
  EXPECT_EQ(switch_key("/asn", "rack7", "r03"), "/asn/fabrics/rack7/switches/r03/desired");
  // Proto field names, every field printed, one line: legible in etcdctl get.
  const std::string& r03 = documents.at("/asn/fabrics/rack7/switches/r03/desired");
  EXPECT_THAT(r03, HasSubstr("\"double_rate\":false"));
  EXPECT_THAT(r03, HasSubstr("\"router\":3"));
  EXPECT_EQ(r03.find('\n'), std::string::npos);
}

TEST(FabricSpec, LoadScheduleReadsTheSameFile) {
  const schedule::FabricFile fabric = schedule::load_fabric_file(kExample);
  EXPECT_EQ(fabric.name, "rack7");
  ASSERT_EQ(fabric.switches.size(), 16u);
  EXPECT_EQ(fabric.switches[5].name, "r05");
  EXPECT_EQ(fabric.switches[5].endpoint, "unix:/run/asn/r05.sock");
  EXPECT_EQ(fabric.arm_margin, std::chrono::milliseconds(100));
}

TEST(FabricSpec, DefaultsFollowTheCli) {
  // No routing: the tables are placed and nothing routes (a switch after `fabric set` alone).
  FabricSpec spec = parse_fabric_spec(fabric_with(item("a", 0), "routing: {}"));
  EXPECT_EQ(spec.routing().mode(), static_cast<uint32_t>(RoutingMode::kStatic));
  EXPECT_FALSE(spec.routing().enable());
  EXPECT_FALSE(spec.routing().has_threshold());
  // A mode routes unless told otherwise, as `asnctl routing set --mode`.
  spec = parse_fabric_spec(fabric_with(item("a", 0), "routing: {mode: ugal}"));
  EXPECT_EQ(spec.routing().mode(), static_cast<uint32_t>(RoutingMode::kUgal));
  EXPECT_TRUE(spec.routing().enable());
  spec = parse_fabric_spec(fabric_with(item("a", 0), "routing: {mode: ugal, enable: false}"));
  EXPECT_FALSE(spec.routing().enable());
  spec = parse_fabric_spec(
      "fabric: t\ntopology: {terminals: 64, k: 4, channels: double-rate}\nswitches:\n" +
      item("a", 0));
  EXPECT_TRUE(spec.double_rate());
  EXPECT_TRUE(spec.switches(0).double_rate());
  EXPECT_EQ(spec.arm_margin_ns(), 100'000'000u);
  EXPECT_EQ(routing_mode_name(3), "aldfb");
  EXPECT_EQ(routing_mode_name(9), "mode 9");
}

TEST(FabricSpec, ASwitchesOwnThresholdReplacesTheFabricsPerPortOnes) {
  const FabricSpec spec =
      parse_fabric_spec(fabric_with(item("a", 0, ", routing: {threshold: 20}") + item("b", 1),
                                    "routing: {mode: aldfb, threshold: 12, thresholds: {7: 3}}"));
  const SwitchSpec& a = spec.switches(0);
  EXPECT_EQ(a.routing().threshold(), 20u);
  EXPECT_THAT(a.routing().thresholds(), IsEmpty());
  EXPECT_EQ(a.routing().mode(), static_cast<uint32_t>(RoutingMode::kAldfb));
  const SwitchSpec& b = spec.switches(1);
  EXPECT_EQ(b.routing().threshold(), 12u);
  EXPECT_EQ(b.routing().thresholds().at(7), 3u);
}

TEST(FabricSpec, MissingRoutersAreShownNotRefused) {
  const FabricSpec spec = parse_fabric_spec(fabric_with(item("a", 0) + item("b", 3)));
  EXPECT_THAT(missing_routers(spec), ElementsAre(1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

TEST(FabricSpec, SwitchesAreSortedByName) {
  const FabricSpec spec =
      parse_fabric_spec(fabric_with(item("c", 0) + item("a", 1) + item("b", 2)));
  ASSERT_EQ(spec.switches_size(), 3);
  EXPECT_EQ(spec.switches(0).name(), "a");
  EXPECT_EQ(spec.switches(2).name(), "c");
}

// Each check names the file, line, column, the switch, the field and what would be accepted.
TEST(FabricSpecErrors, RouterRepeated) {
  const Problem p = problem_of(fabric_with(item("a", 2) + item("b", 2)));
  EXPECT_EQ(
      p.to_string(),
      "f.yaml:7:23: switches[1].router, switch 'b': 2 is already the router of switch 'a': give "
      "each switch its own, 0 to 15");
}

TEST(FabricSpecErrors, RouterOutsideTheFabric) {
  const Problem p = problem_of(fabric_with(item("a", 0) + item("b", 16)));
  EXPECT_EQ(p.switch_name, "b");
  EXPECT_EQ(p.field, "switches[1].router");
  EXPECT_EQ(p.mark.line, 7u);
  EXPECT_THAT(p.message, HasSubstr("has routers 0 to 15"));
}

TEST(FabricSpecErrors, NotA2dfb) {
  const Problem p =
      problem_of("fabric: t\ntopology: {terminals: 60, k: 4}\nswitches:\n" + item("a", 0));
  EXPECT_EQ(p.field, "topology.terminals");
  EXPECT_EQ(p.mark, (schedule::Mark{2, 23}));
  EXPECT_THAT(p.message, HasSubstr("is not a 2DFB"));
}

TEST(FabricSpecErrors, NamesMustBeEtcdKeySegments) {
  Problem p = problem_of(fabric_with(item("a", 0) + item("Rack_B", 1)));
  EXPECT_EQ(p.switch_name, "Rack_B");
  EXPECT_EQ(p.field, "switches[1].name");
  EXPECT_THAT(p.message, HasSubstr("a-z 0-9"));
  p = problem_of("fabric: Rack7\ntopology: {terminals: 64, k: 4}\nswitches:\n" + item("a", 0));
  EXPECT_EQ(p.field, "fabric");
  EXPECT_EQ(p.mark.line, 1u);
}

TEST(FabricSpecErrors, NamesAndEndpointsRepeated) {
  // The shared part's own checks, in load-schedule's words.
  Problem p = problem_of(fabric_with(item("a", 0) + item("a", 1)));
  EXPECT_EQ(p.field, "switches[1].name");
  EXPECT_THAT(p.message, HasSubstr("listed twice"));
  p = problem_of(fabric_with(item("a", 0) +
                             "  - {name: b, router: 1, profile: emulated-64port, endpoint: "
                             "'unix:/a.sock'}\n"));
  EXPECT_EQ(p.field, "switches[1].endpoint");
  EXPECT_THAT(p.message, HasSubstr("already the endpoint of switch 'a'"));
}

TEST(FabricSpecErrors, UnknownProfile) {
  const Problem p = problem_of(fabric_with(item("a", 0, "", "emulated-65port")));
  EXPECT_EQ(p.switch_name, "a");
  EXPECT_EQ(p.field, "switches[0].profile");
  EXPECT_THAT(p.message, HasSubstr("unknown board profile 'emulated-65port'"));
  EXPECT_THAT(p.message, HasSubstr("emulated-64port"));  // what would be accepted
}

TEST(FabricSpecErrors, RadixBeyondTheProfilesPorts) {
  // N = 64, k = 4 needs 16 ports (10 double-rate); a SUME has 4.
  const Problem p = problem_of(fabric_with(item("a", 0) + item("b", 1, "", "netfpga-sume")));
  EXPECT_EQ(p.switch_name, "b");
  EXPECT_EQ(p.field, "switches[1].profile");
  EXPECT_THAT(p.message, HasSubstr("'netfpga-sume' has 4 ports and router 1 needs 16"));
}

TEST(FabricSpecErrors, RoutersBeyondTheDestinationTable) {
  // N = 16384, k = 2: 8192 routers of radix 28; emulated-255port routes to 4096.
  const Problem p = problem_of("fabric: t\ntopology: {terminals: 16384, k: 2}\nswitches:\n" +
                               item("a", 0, "", "emulated-255port"));
  EXPECT_EQ(p.field, "switches[0].profile");
  EXPECT_THAT(p.message, HasSubstr("routes to 4096 routers"));
  EXPECT_THAT(p.message, HasSubstr("the fabric has 8192"));
}

TEST(FabricSpecErrors, ThresholdsBeyondTheQueueDepthOrThePorts) {
  // The fabric's threshold is checked against every switch's profile, at the fabric's line.
  Problem p = problem_of(fabric_with(item("a", 0), "routing: {mode: aldfb, threshold: 500}"));
  EXPECT_EQ(p.switch_name, "a");
  EXPECT_EQ(p.field, "routing.threshold");
  EXPECT_EQ(p.mark.line, 3u);
  EXPECT_THAT(p.message, HasSubstr("beyond the queue depth of 'emulated-64port', 128"));
  // Found at every switch: one problem.
  const auto problems = problems_of(
      fabric_with(item("a", 0) + item("b", 1) + item("c", 2), "routing: {threshold: 500}"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("(and at 2 more switches)"));
  // A switch's own, at its line.
  p = problem_of(fabric_with(item("a", 0) + item("b", 1, ", routing: {thresholds: {70: 8}}")));
  EXPECT_EQ(p.switch_name, "b");
  EXPECT_EQ(p.field, "switches[1].routing.thresholds.70");
  EXPECT_EQ(p.mark.line, 7u);
  EXPECT_THAT(p.message, HasSubstr("its ports are 0 to 63"));
}

TEST(FabricSpecErrors, StaticRoutingWithoutAStaticSchedule) {
  // The conflict-free static schedule exists for k = 2..4 only.
  const Problem p = problem_of(
      "fabric: t\ntopology: {terminals: 64, k: 8}\n"
      "routing: {mode: static}\nswitches:\n" +
      item("a", 0));
  EXPECT_EQ(p.field, "routing.mode");
  EXPECT_EQ(p.mark.line, 3u);
  EXPECT_THAT(p.message, HasSubstr("give minimal, ugal or aldfb"));
  // Placed but not routing: nothing needs the schedule.
  EXPECT_NO_THROW(
      parse_fabric_spec("fabric: t\ntopology: {terminals: 64, k: 8}\n"
                        "routing: {mode: static, enable: false}\nswitches:\n" +
                        item("a", 0)));
}

TEST(FabricSpecErrors, EveryFindingIsListedInFileOrder) {
  const auto problems = problems_of(
      fabric_with(item("a", 0) + item("b", 0) + item("c", 99) + item("d", 3, "", "nope")));
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_EQ(problems[0].switch_name, "b");
  EXPECT_EQ(problems[1].switch_name, "c");
  EXPECT_EQ(problems[2].switch_name, "d");
}

TEST(FabricSpecErrors, KeysOfLaterWorkAreRefused) {
  Problem p = problem_of(fabric_with(item("a", 0)) + "plans: [halo]\n");
  EXPECT_EQ(p.field, "plans");
  EXPECT_THAT(p.message, HasSubstr("TDM plans and stripe groups are not part"));
  p = problem_of(fabric_with(item("a", 0, ", stripe_groups: [g0]")));
  EXPECT_EQ(p.field, "switches[0].stripe_groups");
  EXPECT_THAT(p.message, HasSubstr("unknown key"));
}

TEST(FabricSpecErrors, BadWordsAndMissingKeys) {
  Problem p = problem_of(fabric_with(item("a", 0), "routing: {mode: adaptive}"));
  EXPECT_EQ(p.field, "routing.mode");
  EXPECT_THAT(p.message, HasSubstr("give static, minimal, ugal or aldfb"));
  p = problem_of("fabric: t\ntopology: {terminals: 64, k: 4, channels: triple}\nswitches:\n" +
                 item("a", 0));
  EXPECT_EQ(p.field, "topology.channels");
  EXPECT_THAT(p.message, HasSubstr("dilated"));
  p = problem_of("fabric: t\nswitches:\n" + item("a", 0));
  EXPECT_EQ(p.field, "topology");
  p = problem_of(fabric_with("  - {name: a, profile: emulated-64port, endpoint: 'unix:/a'}\n"));
  EXPECT_EQ(p.field, "switches[0]");
  EXPECT_THAT(p.message, HasSubstr("switch 'a' needs 'router:'"));
  p = problem_of(fabric_with(item("a", 0, ", routing: {mode: ugal}")));
  EXPECT_EQ(p.field, "switches[0].routing.mode");
  EXPECT_THAT(p.message, HasSubstr("is the fabric's"));
}

TEST(FabricSpecDocuments, RoundTrip) {
  const FabricSpec spec = load_fabric_spec(kExample);
  const auto documents = etcd_documents(spec, "/asn");
  EXPECT_TRUE(MessageDifferencer::Equals(
      parse_fabric_document(documents.at("/asn/fabrics/rack7/fabric")), spec));
  for (const SwitchSpec& sw : spec.switches()) {
    const SwitchSpec back =
        parse_switch_document(documents.at(switch_key("/asn", "rack7", sw.name())));
    EXPECT_TRUE(MessageDifferencer::Equals(back, sw)) << sw.name();
  }
}

TEST(FabricSpecDocuments, SameInputSameBytes) {
  const std::string text = read_file(kExample);
  EXPECT_EQ(etcd_documents(parse_fabric_spec(text), "/asn"),
            etcd_documents(parse_fabric_spec(text), "/asn"));
  // Map entries by port whatever order they were inserted in.
  Routing forward, backward;
  for (uint32_t port = 0; port < 64; ++port) (*forward.mutable_thresholds())[port] = port;
  for (uint32_t port = 64; port-- > 0;) (*backward.mutable_thresholds())[port] = port;
  EXPECT_EQ(to_json(forward), to_json(backward));
  EXPECT_THAT(to_json(forward), HasSubstr("\"thresholds\":{\"0\":0,\"1\":1,\"2\":2,"));
}

TEST(FabricSpecDocuments, DamageIsRefused) {
  EXPECT_THROW(parse_switch_document("{\"name\": "), std::invalid_argument);
  EXPECT_THROW(parse_switch_document("{\"name\": \"a\", \"fabric\": \"t\", \"colour\": 1}"),
               std::invalid_argument);
  EXPECT_THROW(parse_switch_document("{\"fabric\": \"t\"}"), std::invalid_argument);
  try {
    parse_switch_document(
        "{\"fabric\": \"t\", \"name\": \"a\", \"terminals\": 64, \"k\": 4, \"router\": 3, "
        "\"profile\": \"netfpga-sume\"}");
    FAIL() << "parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch 'a': profile: 'netfpga-sume' has 4 ports"));
  }
  try {
    parse_fabric_document(
        "{\"name\": \"t\", \"terminals\": 64, \"k\": 4, \"switches\": [{\"fabric\": \"t\", "
        "\"name\": \"a\", \"router\": 40, \"profile\": \"emulated-64port\"}]}");
    FAIL() << "parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch 'a': router: 40 is outside the fabric"));
  }
}

TEST(FabricSpecDiff, OneSwitchsThresholdsChangeOnlyThatSwitch) {
  const std::string text = read_file(kExample);
  std::string changed = text;
  const std::string from = "routing: {thresholds: {4: 8, 5: 8}}";
  changed.replace(changed.find(from), from.size(), "routing: {thresholds: {4: 6, 5: 8}}");
  const FabricDiff d = diff(etcd_documents(parse_fabric_spec(text), "/asn"),
                            etcd_documents(parse_fabric_spec(changed), "/asn"));
  EXPECT_THAT(d.added, IsEmpty());
  EXPECT_THAT(d.removed, IsEmpty());
  EXPECT_EQ(d.unchanged, 15u);
  // The fabric document holds every switch: it names the one changed.
  ASSERT_EQ(d.changed.size(), 2u);
  EXPECT_EQ(d.changed[0].key, "/asn/fabrics/rack7/fabric");
  EXPECT_THAT(d.changed[0].fields, ElementsAre("switches: ~ r05"));
  EXPECT_EQ(d.changed[1].key, "/asn/fabrics/rack7/switches/r05/desired");
  EXPECT_THAT(d.changed[1].fields, ElementsAre("routing.thresholds.4: 8 -> 6"));
  EXPECT_EQ(render_diff(d),
            "~ /asn/fabrics/rack7/fabric\n"
            "    switches: ~ r05\n"
            "~ /asn/fabrics/rack7/switches/r05/desired\n"
            "    routing.thresholds.4: 8 -> 6\n"
            "0 to add, 2 to change, 0 to remove, 15 unchanged.\n");
}

TEST(FabricSpecDiff, AModeChangeAndASwitchAddedAndRemoved) {
  const FabricDiff d = diff(
      etcd_documents(parse_fabric_spec(fabric_with(item("a", 0) + item("b", 1))), "/p"),
      etcd_documents(
          parse_fabric_spec(fabric_with(item("a", 0) + item("c", 2), "routing: {mode: aldfb}")),
          "/p"));
  EXPECT_THAT(d.added, ElementsAre("/p/fabrics/t/switches/c/desired"));
  EXPECT_THAT(d.removed, ElementsAre("/p/fabrics/t/switches/b/desired"));
  ASSERT_EQ(d.changed.size(), 2u);
  EXPECT_EQ(d.changed[0].key, "/p/fabrics/t/fabric");
  EXPECT_THAT(d.changed[0].fields, ElementsAre("routing.mode: minimal -> aldfb", "switches: ~ a",
                                               "switches: + c", "switches: - b"));
  // A change of every switch names a few.
  const FabricDiff all = diff(etcd_documents(load_fabric_spec(kExample), "/asn"),
                              etcd_documents(parse_fabric_spec(std::regex_replace(
                                                 read_file(kExample), std::regex("aldfb"), "ugal")),
                                             "/asn"));
  ASSERT_EQ(all.changed.size(), 17u);
  EXPECT_THAT(all.changed[0].fields,
              ElementsAre("routing.mode: aldfb -> ugal",
                          "switches: ~ r00, r01, r02, r03, r04, r05, r06, r07 and 8 more"));
  EXPECT_EQ(d.changed[1].key, "/p/fabrics/t/switches/a/desired");
  EXPECT_THAT(d.changed[1].fields, ElementsAre("routing.mode: minimal -> aldfb"));
  EXPECT_EQ(render_diff(d),
            "+ /p/fabrics/t/switches/c/desired\n"
            "~ /p/fabrics/t/fabric\n"
            "    routing.mode: minimal -> aldfb\n"
            "    switches: ~ a\n"
            "    switches: + c\n"
            "    switches: - b\n"
            "~ /p/fabrics/t/switches/a/desired\n"
            "    routing.mode: minimal -> aldfb\n"
            "- /p/fabrics/t/switches/b/desired\n"
            "1 to add, 2 to change, 1 to remove, 0 unchanged.\n");
}

TEST(FabricSpecDiff, NothingStoredAndNothingChanged) {
  const auto wanted = etcd_documents(load_fabric_spec(kExample), "/asn");
  const FabricDiff first = diff({}, wanted);
  EXPECT_EQ(first.added.size(), 17u);
  const FabricDiff again = diff(wanted, wanted);
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(render_diff(again), "no changes (17 documents)\n");
  // A stored document that cannot be read is replaced, and the diff says why.
  auto damaged = wanted;
  damaged["/asn/fabrics/rack7/switches/r00/desired"] = "{";
  const FabricDiff repair = diff(damaged, wanted);
  ASSERT_EQ(repair.changed.size(), 1u);
  EXPECT_THAT(repair.changed[0].fields.front(), HasSubstr("(replaced: the switch document"));
}

}  // namespace
}  // namespace asn::fabric

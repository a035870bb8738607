// Routing end to end, as an operator drives it: the real asnctl places the real asnd's switch
// in a 2DFB fabric on an emulated 255-port board, shows its tables, routing and queues,
// refuses what the board cannot hold, and the placement is still in force after an asnd
// restart (the board left as it is) and after a board reset (reprogrammed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kBigBoard = R"(backend:
  kind: emulated
  emulated:
    profile: emulated-255port
)";

class FabricTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("fab")};

  void start() {
    ASSERT_TRUE(asnd_.start({}, kBigBoard))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }
};

CommandResult local_asnctl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ASNCTL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

TEST(TopologyCommandTest, ComparesTheTopologiesOfTheSeedsTables) {
  // 004 Table 1 (L456-463): N = 1024, k = 32 needs routers of radix 94.
  auto r = local_asnctl({"topology", "--terminals", "1024", "--k", "32", "--compare"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("2DFB         94     32  1         32"));
  EXPECT_THAT(r.out, HasSubstr("folded-Clos"));
  EXPECT_THAT(r.out, HasSubstr("DBHC"));
  EXPECT_THAT(r.out, HasSubstr("hypercube"));

  r = local_asnctl({"topology", "--terminals", "32768", "--k", "32", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_number(r.out, "radix"), 156u);
  EXPECT_EQ(json_number(r.out, "routers"), 1024u);

  r = local_asnctl({"topology", "--terminals", "1000", "--k", "32"});
  EXPECT_EQ(r.exit_code, 2) << r.all();  // a usage error: asnd is not involved
  EXPECT_THAT(r.err, HasSubstr("terminals: N = 1000 is not a multiple of"));
}

TEST_F(FabricTest, AnOperatorPlacesTheSwitchAndItStaysPlaced) {
  start();
  auto r = asnd_.asnctl({"fabric", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("the switch is in no fabric"));

  // A dry run checks against the board and writes nothing.
  r = asnd_.asnctl({"fabric", "set", "-N", "1024", "-k", "32", "-r", "3", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("validate only"));
  EXPECT_THAT(asnd_.asnctl({"fabric", "show"}).out, HasSubstr("in no fabric"));

  r = asnd_.asnctl({"fabric", "set", "-N", "1024", "-k", "32", "-r", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("router 3 of a 2DFB of 1024 terminals, 32 per router"));
  EXPECT_THAT(r.out, HasSubstr("radix:            94 ports"));
  EXPECT_THAT(r.out, HasSubstr("committed in"));

  r = asnd_.asnctl({"-o", "json", "fabric", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_number(r.out, "terminals"), 1024u);
  EXPECT_EQ(json_number(r.out, "router"), 3u);

  // Router 5's lanes: dimension 0, digit 5; router 3 is this one.
  r = asnd_.asnctl({"routes", "--dest", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("routing aldfb"));
  const std::string routes_before = asnd_.asnctl({"-o", "json", "routes"}).out;
  EXPECT_THAT(routes_before, HasSubstr("\"local\": true"));

  r = asnd_.asnctl({"routing", "set", "--mode", "minimal", "--threshold", "12"});
  const std::string routes_placed = asnd_.asnctl({"-o", "json", "routes"}).out;
  ASSERT_EQ(r.exit_code, 0) << r.all();
  r = asnd_.asnctl({"routing", "set", "--threshold", "30", "--port", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  r = asnd_.asnctl({"routing", "show"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(r.out, HasSubstr("routing minimal"));
  EXPECT_THAT(squeezed(r.out), HasSubstr("0-39 12\n 40 30\n 41-254 12"));

  r = asnd_.asnctl({"-o", "json", "queues"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(json_number(r.out, "queue_depth"), 128u);

  // Refused, named, nothing written: the switch keeps its place.
  r = asnd_.asnctl({"fabric", "set", "-N", "16384", "-k", "128", "-r", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: radix"));
  EXPECT_THAT(r.err, HasSubstr("nothing was written"));
  r = asnd_.asnctl({"routing", "set", "--threshold", "500"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("beyond the queue depth, 128"));
  EXPECT_EQ(json_number(asnd_.asnctl({"-o", "json", "fabric", "show"}).out, "router"), 3u);

  // A threshold and a route table entry written behind asnd's back: status says the fabric
  // state differs, and what; a restart puts the board back.
  ASSERT_EQ(asnd_.asnctl({"regs", "write", "port[40].aldfb_threshold=7"}).exit_code, 0);
  r = asnd_.asnctl({"status"});
  EXPECT_THAT(r.out, HasSubstr("running, 1 warning"));
  EXPECT_THAT(r.out, HasSubstr("fabric state: differs from the board"));
  EXPECT_THAT(r.out, HasSubstr("port 40's ALDFB threshold is not the 30 packets set"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("ROUTE block")));
  r = asnd_.asnctl({"regs", "write", "route.dest_table[5].w0=0", "route.control.commit=1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(asnd_.asnctl({"status"}).out, HasSubstr("the ROUTE block's active tables are not"));
  ASSERT_EQ(asnd_.stop(), 0);
  start();
  EXPECT_THAT(asnd_.asnctl({"status"}).out, HasSubstr("running, all well"));
  EXPECT_EQ(asnd_.asnctl({"-o", "json", "routes"}).out, routes_placed);

  // A restart: the board already holds it and is left as it is.
  const std::string routes_set = asnd_.asnctl({"-o", "json", "routes"}).out;
  ASSERT_EQ(asnd_.stop(), 0);
  start();
  EXPECT_THAT(asnd_.log(), HasSubstr("fabric state: revision 3: the board already holds it"));
  EXPECT_EQ(asnd_.asnctl({"-o", "json", "routes"}).out, routes_set);

  // A board reset forgets the tables; the reconciler programs them again before the reset
  // answers.
  r = asnd_.asnctl({"board", "reset", "--yes"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_THAT(asnd_.log(), HasSubstr("programmed router 3 of 1024 terminals, k 32 (minimal "
                                     "routing); set 255 thresholds"));
  EXPECT_EQ(asnd_.asnctl({"-o", "json", "routes"}).out, routes_set);
  r = asnd_.asnctl({"routing", "show"});
  EXPECT_THAT(squeezed(r.out), HasSubstr(" 40 30\n"));
  EXPECT_THAT(asnd_.asnctl({"status"}).out, Not(HasSubstr("pending")));
}

TEST_F(FabricTest, ABoardTooSmallIsRefusedBeforeAnythingIsWritten) {
  ASSERT_TRUE(asnd_.start()) << asnd_.log();  // netfpga-1g: 6 ports
  auto r = asnd_.asnctl({"fabric", "set", "-N", "64", "-k", "4", "-r", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION: radix: this fabric needs 16 ports per "
                               "router (004 Eq 9) and this board has 6"));
  EXPECT_THAT(asnd_.asnctl({"fabric", "show"}).out, HasSubstr("in no fabric"));
}

}  // namespace
}  // namespace asn::test

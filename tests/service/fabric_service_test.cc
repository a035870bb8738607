// The Fabric gRPC service through a real gRPC server on a Unix socket, over the emulated
// board: placing a switch programs tables the board's routing engine then routes by; bad
// input is refused naming the field and the limit, with nothing written and the active
// tables still routing; the desired state survives a restart and a board reset.
#include "services/fabric_service.hpp"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "asn/model/board.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "asn/topology/schedule.hpp"
#include "bus/emulated_bus.hpp"
#include "daemon_stack.hpp"
#include "device/device.hpp"
#include "managers/fabric_manager.hpp"
#include "state/reconciler.hpp"
#include "state/store.hpp"
#include "status_assert.hpp"
#include "support.hpp"

namespace asn {
namespace {

using ::testing::HasSubstr;

using model::engines::PacketHeader;
using model::engines::RouteStatus;

class FabricServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { start("emulated-255port"); }
  void TearDown() override { stop(); }

  void start(const std::string& profile) {
    profile_ = profile;
    test::DaemonStackOptions options;
    options.board_name = board_name_;
    options.profile = profile;
    options.dir = dir_.path();
    stack_ = std::make_unique<test::DaemonStack>(options);
    FabricManager& fabric = stack_->add_manager<FabricManager>();
    stack_->start();
    admin_ = v1::Fabric::NewStub(stack_->serve<FabricService>("admin.sock", Role::kAdmin, fabric));
    reader_ =
        v1::Fabric::NewStub(stack_->serve<FabricService>("reader.sock", Role::kReader, fabric));
    bus_ = &stack_->bus();
    reconciler_ = &stack_->reconciler();
  }

  void stop() { stack_.reset(); }

  // asnd stopped and started again on the same board and state directory.
  void restart() {
    stop();
    start(profile_);
  }

  model::EmulatedBoard& board() { return stack_->board(); }

  grpc::Status place(uint32_t terminals, uint32_t k, uint32_t router,
                     v1::SetTopologyResponse* response = nullptr, bool validate_only = false,
                     v1::ChannelMode channels = v1::DILATED) {
    v1::SetTopologyRequest request;
    request.set_terminals(terminals);
    request.set_k(k);
    request.set_router(router);
    request.set_channels(channels);
    request.set_validate_only(validate_only);
    v1::SetTopologyResponse ignored;
    grpc::ClientContext context;
    return admin_->SetTopology(&context, request, response ? response : &ignored);
  }

  grpc::Status set_routing(const v1::SetRoutingRequest& request) {
    v1::SetRoutingResponse response;
    grpc::ClientContext context;
    return admin_->SetRouting(&context, request, &response);
  }

  v1::GetRoutesResponse routes() {
    v1::GetRoutesResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(admin_->GetRoutes(&context, {}, &response).ok());
    return response;
  }

  v1::RoutingSettings routing() {
    v1::RoutingSettings response;
    grpc::ClientContext context;
    EXPECT_TRUE(admin_->GetRouting(&context, {}, &response).ok());
    return response;
  }

  v1::Topology topology() {
    v1::Topology response;
    grpc::ClientContext context;
    EXPECT_TRUE(admin_->GetTopology(&context, {}, &response).ok());
    return response;
  }

  test::TempDir dir_;
  std::string board_name_ = test::unique_name("fab");
  std::string profile_;
  std::unique_ptr<test::DaemonStack> stack_;
  test::PatchedBus* bus_ = nullptr;
  Reconciler* reconciler_ = nullptr;
  std::unique_ptr<v1::Fabric::Stub> admin_, reader_;
};

// For every destination terminal, a packet from terminal port 0 of router `router` leaves by
// a port that brings it closer: a terminal port of this router when the destination is
// here, else a channel to the destination's digit in a dimension where they differ. The
// port's meaning comes from the library, not from the board.
void expect_board_routes_minimally(model::EmulatedBoard& board, const topology::Fabric& fabric,
                                   uint32_t router, topology::ChannelMode channels) {
  const topology::RouteTables expected = topology::compute_route_tables(fabric, router, channels);
  const std::vector<uint32_t> own = fabric.digits(router);
  for (uint32_t terminal = 0; terminal < fabric.terminals(); ++terminal) {
    SCOPED_TRACE("terminal " + std::to_string(terminal));
    const auto decision = board.route_packet(PacketHeader{.dest_terminal = terminal}, 0);
    ASSERT_EQ(decision.status, RouteStatus::kOk);
    ASSERT_LT(decision.port, expected.port_map.size());
    const topology::PortMapEntry& port = expected.port_map[decision.port];
    const uint32_t dest_router = terminal / fabric.k();
    if (dest_router == router) {
      EXPECT_EQ(port.role, topology::PortRole::kTerminal);
      EXPECT_EQ(port.digit, terminal % fabric.k());
      EXPECT_TRUE(decision.local);
      continue;
    }
    const std::vector<uint32_t> dest = fabric.digits(dest_router);
    ASSERT_EQ(port.role, topology::PortRole::kChannel);
    EXPECT_NE(own[port.dimension], dest[port.dimension]);
    EXPECT_EQ(port.digit, dest[port.dimension]);
    EXPECT_TRUE(decision.minimal);
  }
}

TEST_F(FabricServiceTest, PlacingTheSwitchProgramsTablesTheBoardRoutesBy) {
  v1::SetTopologyResponse response;
  ASSERT_OK(place(64, 4, 5, &response));
  EXPECT_TRUE(response.changed());
  const v1::Topology& t = response.topology();
  EXPECT_TRUE(t.configured());
  EXPECT_EQ(t.dimensions(), 2u);
  EXPECT_EQ(t.routers(), 16u);
  EXPECT_EQ(t.radix(), 16u);  // 4 + 2 * 2 * 3 (004 Eq 9)
  EXPECT_THAT(t.digits(), ::testing::ElementsAre(1u, 1u));
  EXPECT_EQ(t.status(), "in force");
  EXPECT_TRUE(t.no_static_schedule().empty());
  EXPECT_GT(response.times().total_us(), 0u);

  // A first placement routes adaptively, ALDFB, enabled.
  const v1::RoutingSettings settings = routing();
  EXPECT_EQ(settings.mode(), v1::ALDFB);
  EXPECT_TRUE(settings.enable());
  expect_board_routes_minimally(board(), topology::Fabric(64, 4), 5,
                                topology::ChannelMode::kDilated);

  // Placed elsewhere, double-rate: the board routes by the new tables.
  ASSERT_OK(place(64, 4, 10, nullptr, false, v1::DOUBLE_RATE));
  EXPECT_EQ(topology().radix(), 10u);  // 4 + 2 * 3
  expect_board_routes_minimally(board(), topology::Fabric(64, 4), 10,
                                topology::ChannelMode::kDoubleRate);
}

TEST_F(FabricServiceTest, RoutesAreWhatTheLibraryComputes) {
  ASSERT_OK(place(1024, 32, 7));
  const topology::RouteTables expected = topology::compute_route_tables(
      topology::Fabric(1024, 32), 7, topology::ChannelMode::kDilated);
  const v1::GetRoutesResponse all = routes();
  ASSERT_EQ(all.ports_size(), 94);
  for (const auto& port : all.ports()) {
    const topology::PortMapEntry& e = expected.port_map[port.port()];
    EXPECT_EQ(port.role(), e.role == topology::PortRole::kTerminal ? "terminal" : "channel");
    EXPECT_EQ(port.digit(), e.digit);
    EXPECT_EQ(port.lane(), e.lane);
  }
  ASSERT_EQ(all.routes_size(), 32);
  for (const auto& route : all.routes()) {
    const topology::DestEntry& e = expected.dest_table[route.router()];
    EXPECT_EQ(route.local(), e.local);
    if (e.local) continue;
    ASSERT_EQ(route.dims_size(), 1);
    EXPECT_THAT(route.dims(0).ports(), ::testing::ElementsAre(e.dims[0].port_a, e.dims[0].port_b));
  }

  v1::GetRoutesRequest one;
  one.set_dest(3);
  v1::GetRoutesResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(reader_->GetRoutes(&context, one, &response).ok());
  ASSERT_EQ(response.routes_size(), 1);
  EXPECT_EQ(response.routes(0).router(), 3u);
  EXPECT_THAT(response.routes(0).digits(), ::testing::ElementsAre(3u));

  one.set_dest(5000);
  grpc::ClientContext beyond;
  const grpc::Status status = reader_->GetRoutes(&beyond, one, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("4096 entries"));
}

struct BadTopology {
  const char* name;
  uint32_t terminals, k, router;
  grpc::StatusCode code;
  const char* says;
};

// Each refusal names the field and the limit, writes nothing, and the tables that were
// active keep routing.
TEST_F(FabricServiceTest, BadTopologiesAreRefusedAndTheOldTablesKeepRouting) {
  ASSERT_OK(place(64, 4, 5));
  const std::string before = routes().SerializeAsString();
  const BadTopology cases[] = {
      {"N not a multiple", 63, 4, 0, grpc::StatusCode::INVALID_ARGUMENT,
       "terminals: N = 63 is not a multiple of k^floor(log_k N) = 16"},
      {"k below 2", 64, 1, 0, grpc::StatusCode::INVALID_ARGUMENT, "k >= 2"},
      {"router outside", 64, 4, 16, grpc::StatusCode::INVALID_ARGUMENT,
       "router: router 16 is outside the fabric: 0..15"},
      {"too many dimensions", 64, 2, 0, grpc::StatusCode::INVALID_ARGUMENT,
       "dimensions: 5 dimensions; the ROUTE block holds up to 4"},
      {"radix beyond 8-bit ports", 16384, 128, 0, grpc::StatusCode::INVALID_ARGUMENT, "radix 382"},
      {"more routers than destination entries", 59049, 9, 0, grpc::StatusCode::FAILED_PRECONDITION,
       "routers: this fabric has 6561 routers"},
      {"N zero", 0, 4, 0, grpc::StatusCode::INVALID_ARGUMENT, "terminals"},
  };
  for (const BadTopology& c : cases) {
    SCOPED_TRACE(c.name);
    const uint64_t writes = bus_->writes;
    const grpc::Status status = place(c.terminals, c.k, c.router);
    EXPECT_EQ(status.error_code(), c.code);
    EXPECT_THAT(status.error_message(), HasSubstr(c.says));
    EXPECT_THAT(status.error_message(), HasSubstr("nothing was written"));
    EXPECT_EQ(bus_->writes, writes);
  }
  EXPECT_EQ(routes().SerializeAsString(), before);
  EXPECT_EQ(topology().router(), 5u);
  expect_board_routes_minimally(board(), topology::Fabric(64, 4), 5,
                                topology::ChannelMode::kDilated);
}

TEST_F(FabricServiceTest, ValidateOnlyChecksAgainstTheBoardAndWritesNothing) {
  const uint64_t writes = bus_->writes;
  v1::SetTopologyResponse response;
  ASSERT_OK(place(32768, 32, 777, &response, true));
  EXPECT_FALSE(response.changed());
  EXPECT_EQ(response.topology().radix(), 156u);
  EXPECT_THAT(response.topology().status(), HasSubstr("validate only"));
  EXPECT_EQ(bus_->writes, writes);
  EXPECT_FALSE(topology().configured());
}

TEST_F(FabricServiceTest, PlacingNeedsTheConfigurePermission) {
  v1::SetTopologyRequest request;
  request.set_terminals(64);
  request.set_k(4);
  v1::SetTopologyResponse response;
  grpc::ClientContext context;
  const grpc::Status status = reader_->SetTopology(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("use the admin socket"));
  EXPECT_FALSE(topology().configured());
}

TEST_F(FabricServiceTest, BadRoutingSettingsAreRefusedAndChangeNothing) {
  ASSERT_OK(place(1024, 32, 0));  // k = 32: no static schedule
  const v1::RoutingSettings before = routing();
  const uint64_t writes = bus_->writes;

  v1::SetRoutingRequest too_deep;
  too_deep.set_threshold(129);
  grpc::Status status = set_routing(too_deep);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("threshold: 129 packets is beyond the queue "
                                                "depth, 128 (id.cap_queue_depth)"));

  v1::SetRoutingRequest no_port;
  no_port.set_threshold(10);
  no_port.set_port(255);
  status = set_routing(no_port);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("port 255 does not exist: the board has ports 0 "
                                                "to 254"));

  v1::SetRoutingRequest unknown_mode;
  unknown_mode.set_mode(static_cast<v1::RoutingMode>(9));
  status = set_routing(unknown_mode);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("mode: 9 is not a routing mode"));

  v1::SetRoutingRequest static_mode;
  static_mode.set_mode(v1::STATIC);
  status = set_routing(static_mode);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("static schedule"));
  EXPECT_THAT(status.error_message(), HasSubstr("k = 2..4 only"));

  EXPECT_EQ(bus_->writes, writes);
  EXPECT_EQ(routing().SerializeAsString(), before.SerializeAsString());
}

TEST_F(FabricServiceTest, StaticRoutingFollowsTheScheduleAndRefusesAFabricWithoutOne) {
  ASSERT_OK(place(16, 4, 1));
  v1::SetRoutingRequest static_mode;
  static_mode.set_mode(v1::STATIC);
  ASSERT_OK(set_routing(static_mode));
  EXPECT_EQ(routing().mode(), v1::STATIC);

  // The board routes by the programmed schedule: each request of router 1 (terminals 4-7)
  // of a permutation leaves on the first channel its schedule row names (004 L376-431).
  const topology::Fabric fabric(16, 4);
  const auto schedule = topology::StaticSchedule::for_fabric(fabric);
  const std::vector<uint32_t> destinations = {9, 2, 15, 0, 12, 7, 5, 3, 1, 14, 4, 6, 13, 8, 11, 10};
  const auto plan = topology::plan_static_routes(fabric, destinations);
  for (uint32_t source = 4; source < 8; ++source) {
    SCOPED_TRACE("terminal " + std::to_string(source));
    PacketHeader header{.dest_terminal = destinations[source]};
    header.initial_row = plan[source].initial_row;
    header.final_row = plan[source].final_row;
    header.in_port = static_cast<uint16_t>(source % 4);
    const auto decision = board().route_packet(header, 0);
    ASSERT_EQ(decision.status, RouteStatus::kOk);
    const uint32_t dest_router = fabric.terminal_router(destinations[source]);
    if (dest_router == 1) {
      EXPECT_TRUE(decision.local);
      continue;
    }
    const uint32_t length = (fabric.digits(dest_router)[0] + 4 - 1) % 4;
    const topology::ScheduleRow row = schedule.initial_row(length, header.initial_row);
    const auto first = std::find_if(row.steps.begin(), row.steps.end(),
                                    [](const topology::ScheduleStep& s) { return s.hop(); });
    ASSERT_NE(first, row.steps.end());
    EXPECT_EQ(decision.port, fabric.channel_port(1, 0, (1 + first->length) % 4, first->lane,
                                                 topology::ChannelMode::kDilated));
  }
  const grpc::Status status = place(1024, 32, 0);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("--mode aldfb"));
  EXPECT_EQ(topology().terminals(), 16u);
}

TEST_F(FabricServiceTest, RoutingIsDisabledAndEnabledWithoutForgettingThePlace) {
  v1::SetRoutingRequest disable;
  disable.set_enable(false);
  grpc::Status status = set_routing(disable);  // no fabric yet: nothing to disable
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("asnctl fabric set"));

  ASSERT_OK(place(64, 4, 5));
  const PacketHeader to_router0{.dest_terminal = 0};
  ASSERT_EQ(board().route_packet(to_router0, 0).status, RouteStatus::kOk);
  ASSERT_OK(set_routing(disable));
  EXPECT_FALSE(routing().enable());
  EXPECT_EQ(board().route_packet(to_router0, 0).status, RouteStatus::kDisabled);
  EXPECT_EQ(topology().router(), 5u);

  v1::SetRoutingRequest enable;
  enable.set_enable(true);
  ASSERT_OK(set_routing(enable));
  EXPECT_EQ(routing().mode(), v1::ALDFB);
  expect_board_routes_minimally(board(), topology::Fabric(64, 4), 5,
                                topology::ChannelMode::kDilated);
}

TEST_F(FabricServiceTest, ThresholdsSteerTheBoardsAldfbDetours) {
  ASSERT_OK(place(64, 4, 0));  // router (0, 0)
  v1::SetRoutingRequest request;
  request.set_threshold(4);
  ASSERT_OK(set_routing(request));
  request.set_threshold(20);
  request.set_port(6);
  ASSERT_OK(set_routing(request));
  const v1::RoutingSettings settings = routing();
  EXPECT_EQ(settings.thresholds(6).packets(), 20u);
  EXPECT_EQ(settings.thresholds(7).packets(), 4u);

  // Terminal 4 * 2 = 8 sits at router 2, digits (2, 0): dimension 0, peer digit 2. With its
  // direct lanes over their threshold, ALDFB takes a detour in the dimension and sets h1.
  const topology::RouteTables tables =
      topology::compute_route_tables(topology::Fabric(64, 4), 0, topology::ChannelMode::kDilated);
  const topology::DirectPorts direct = tables.dest_table[2].dims[0];
  const PacketHeader to_router2{.dest_terminal = 8};
  auto decision = board().route_packet(to_router2, 0);
  ASSERT_EQ(decision.status, RouteStatus::kOk);
  EXPECT_TRUE(decision.minimal);
  for (unsigned vc = 0; vc < 2; ++vc) {
    board().set_queue_occupancy(direct.port_a, vc, 9);
    board().set_queue_occupancy(direct.port_b, vc, 9);
  }
  // The direct lanes are ports 6 (A) and 7 (B). T_h is compared with the port's whole queue
  // (both VCs: 18 packets): port 6, at threshold 20, is still usable.
  ASSERT_EQ(direct.port_a, 6u);
  ASSERT_EQ(direct.port_b, 7u);
  decision = board().route_packet(to_router2, 0);
  ASSERT_EQ(decision.status, RouteStatus::kOk);
  EXPECT_EQ(decision.port, 6u);
  EXPECT_TRUE(decision.minimal);
  EXPECT_FALSE(decision.header.h1);
  // At threshold 4 everywhere, neither has: a detour in dimension 0, h1 set (004 L896).
  request.clear_port();
  request.set_threshold(4);
  ASSERT_OK(set_routing(request));
  decision = board().route_packet(to_router2, 0);
  ASSERT_EQ(decision.status, RouteStatus::kOk);
  EXPECT_FALSE(decision.minimal);
  EXPECT_TRUE(decision.header.h1);
  EXPECT_EQ(tables.port_map[decision.port].dimension, 0u);

  v1::GetQueueStatusRequest queues;
  queues.add_ports(direct.port_a);
  v1::QueueStatus status;
  grpc::ClientContext context;
  ASSERT_TRUE(reader_->GetQueueStatus(&context, queues, &status).ok());
  ASSERT_EQ(status.ports_size(), 1);
  EXPECT_THAT(status.ports(0).vc_packets(), ::testing::ElementsAre(9u, 9u));
  EXPECT_EQ(status.ports(0).threshold(), 4u);
  EXPECT_EQ(status.queue_depth(), 128u);

  grpc::ClientContext all_context;
  ASSERT_TRUE(reader_->GetQueueStatus(&all_context, {}, &status).ok());
  EXPECT_EQ(status.ports_size(), 255);
}

TEST_F(FabricServiceTest, ARestartLeavesMatchingTablesAndABoardResetGetsThemBack) {
  ASSERT_OK(place(1024, 32, 9));
  v1::SetRoutingRequest request;
  request.set_threshold(17);
  request.set_port(40);
  ASSERT_OK(set_routing(request));
  const std::string before = routes().SerializeAsString();

  restart();
  EXPECT_EQ(bus_->writes, 0u);  // the board already held it
  EXPECT_EQ(routes().SerializeAsString(), before);
  EXPECT_EQ(routing().thresholds(40).packets(), 17u);
  const auto summaries = reconciler_->summaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_THAT(summaries[0].last_restore, HasSubstr("the board already holds it"));

  board().board_reset();  // behind asnd's back: the tables are gone
  EXPECT_NE(routes().SerializeAsString(), before);
  reconciler_->reset_board("the test", [&] { return board().generation(); });  // done above
  EXPECT_EQ(routes().SerializeAsString(), before);
  EXPECT_EQ(routing().thresholds(40).packets(), 17u);
  EXPECT_THAT(reconciler_->summaries()[0].last_restore, HasSubstr("programmed router 9"));
}

TEST_F(FabricServiceTest, AFabricTooWideForTheBoardIsRefusedWithTheDoubleRateHint) {
  stop();
  board_name_ = test::unique_name("fab64");
  start("emulated-64port");
  const uint64_t writes = bus_->writes;
  grpc::Status status = place(1024, 32, 0);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("radix: this fabric needs 94 ports per router (004 Eq 9) and this board "
                        "has 64 (with double-rate channels it would need 63"));
  EXPECT_EQ(bus_->writes, writes);
  ASSERT_OK(place(1024, 32, 0, nullptr, false, v1::DOUBLE_RATE));
  EXPECT_EQ(topology().radix(), 63u);
}

}  // namespace
}  // namespace asn

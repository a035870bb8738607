// Crash atomicity of a fabric change, against the real asnd: asnd is killed (SIGKILL) at
// random points of a SetTopology that moves the switch between two fabrics whose ROUTE tables
// differ in config, port_map and dest_table, hundreds of times. After every kill the board's
// memory is opened directly and its active banks must hold, word for word, the old fabric's
// tables in every table or the new fabric's in every table, never a mix; a change asnd
// acknowledged must be the one found. asnd is then started again on the same board and state
// directory, and its reconciler must have finished whatever the crash interrupted: the
// desired state is "in force", names the fabric the board now routes by, and a change whose
// intent was stored before the crash is the one in force (finished, not lost).
//
// ASN_CRASH_ITERATIONS sets the number of kills (default 200), ASN_CRASH_SEED the seed of
// the kill delays (default: random, printed).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/route_tables.hpp"
#include "asn/topology/route_words.hpp"
#include "asn/v1/device.grpc.pb.h"
#include "asn/v1/fabric.grpc.pb.h"
#include "asnd_harness.hpp"
#include "bus/emulated_bus.hpp"
#include "crash_harness.hpp"
#include "device/device.hpp"

namespace asn::test {
namespace {

using Clock = std::chrono::steady_clock;
namespace r = regs::route;

constexpr char kProfile[] = "emulated-255port";
constexpr char kConfig[] =
    "backend:\n"
    "  kind: emulated\n"
    "  emulated:\n"
    "    profile: emulated-255port\n";

// A place in a fabric, as SetTopology asks for it (dilated channels).
struct Place {
  const char* name;
  uint32_t terminals;
  uint32_t k;
  uint32_t router;
};

// Two fabrics whose tables differ in config (digits, geometry), port_map (radix 156 against
// 94) and dest_table (1024 routers against 32); neither has a static schedule (k = 32), so
// route.schedule is all zero in both. Either change writes all 4096 dest_table entries.
constexpr Place kA{"A (N 32768, k 32, router 3)", 32768, 32, 3};
constexpr Place kB{"B (N 1024, k 32, router 7)", 1024, 32, 7};

// The ROUTE tables, in the order they are compared.
struct Table {
  const regmap::TableRef* ref;
  const char* name;
};
const std::array<Table, 4> kTables = {{{&r::kConfig, "config"},
                                       {&r::kPortMap, "port_map"},
                                       {&r::kDestTable, "dest_table"},
                                       {&r::kSchedule, "schedule"}}};

// Every word of every table, in kTables' order.
using Words = std::array<std::vector<uint32_t>, 4>;

// What the fabric manager commits for `place` at the board's sizes: the tables lib/topology
// computes, encoded by route_words, with the routing mode a first placement commits (ALDFB,
// enabled; FabricManager::set_topology), which no later SetTopology changes.
Words expected_words(const Place& place, Device& device) {
  const topology::Fabric fabric(place.terminals, place.k);
  const topology::RouteTables tables =
      topology::compute_route_tables(fabric, place.router, topology::ChannelMode::kDilated);
  Words words;
  words[0] = topology::encode_config(tables.registers, {topology::RoutingMode::kAldfb, true});
  words[1] = topology::encode_port_map_table(tables.port_map, device.entries(r::kPortMap));
  words[2] = topology::encode_dest_table(tables.dest_table, device.entries(r::kDestTable));
  words[3] = topology::encode_schedule_table(tables.schedule, device.entries(r::kSchedule));
  return words;
}

// The first word where `board` and `want` differ, as "entry E word W: 0x.. (want 0x..)".
std::string first_difference(const Table& table, const std::vector<uint32_t>& board,
                             const std::vector<uint32_t>& want) {
  if (board.size() != want.size()) {
    return "has " + std::to_string(board.size()) + " words, not " + std::to_string(want.size());
  }
  const uint32_t per = table.ref->words();
  for (size_t w = 0; w < board.size(); ++w) {
    if (board[w] == want[w]) continue;
    char text[96];
    std::snprintf(text, sizeof text, "entry %zu word %zu is 0x%x (it would be 0x%x)", w / per,
                  w % per, board[w], want[w]);
    return text;
  }
  return "equal";
}

// Table by table, which of the two fabrics the board's words are (both where they agree).
std::string describe(const Words& board, const Words& a, const Words& b) {
  std::string out;
  for (size_t t = 0; t < kTables.size(); ++t) {
    out += "\n  route." + std::string(kTables[t].name) + ": ";
    const bool is_a = board[t] == a[t];
    const bool is_b = board[t] == b[t];
    if (is_a && is_b) {
      out += "A and B (equal in both)";
    } else if (is_a) {
      out += "A";
    } else if (is_b) {
      out += "B";
    } else {
      out += "neither; against A " + first_difference(kTables[t], board[t], a[t]) + "; against B " +
             first_difference(kTables[t], board[t], b[t]);
    }
  }
  return out;
}

// The board's memory as a crash left it, opened the way asnd opens it (without its clock).
struct BoardImage {
  Words active;
  Words a;
  Words b;
  model::OpenReport report;
};

BoardImage read_board(const AsndProcess& asnd) {
  EmulatedBusOptions options;
  options.board_name = asnd.board();
  options.profile = kProfile;
  options.shm_dir = asnd.shm_dir();
  options.run_clock = false;
  EmulatedBus bus(options);  // locks the board; destroyed before asnd starts again
  Device device(bus);
  BoardImage image;
  image.report = bus.open_report();
  for (size_t t = 0; t < kTables.size(); ++t) {
    image.active[t] =
        device.read_entries(*kTables[t].ref, 0, device.entries(*kTables[t].ref), Bank::kActive);
  }
  image.a = expected_words(kA, device);
  image.b = expected_words(kB, device);
  return image;
}

// asnd's gRPC API on its Unix socket; a fresh channel for every start.
struct Client {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Fabric::Stub> fabric;
  std::unique_ptr<v1::Device::Stub> device;

  explicit Client(const AsndProcess& asnd) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);  // 4096 register reads with their descriptions
    channel = grpc::CreateCustomChannel("unix:" + asnd.socket(), grpc::InsecureChannelCredentials(),
                                        args);
    fabric = v1::Fabric::NewStub(channel);
    device = v1::Device::NewStub(channel);
  }
};

v1::SetTopologyRequest request_for(const Place& place) {
  v1::SetTopologyRequest request;
  request.set_terminals(place.terminals);
  request.set_k(place.k);
  request.set_router(place.router);
  request.set_channels(v1::DILATED);
  return request;
}

const Place* place_of(const v1::Topology& topology) {
  for (const Place* p : {&kA, &kB}) {
    if (topology.configured() && topology.terminals() == p->terminals && topology.k() == p->k &&
        topology.router() == p->router && topology.channels() == v1::DILATED) {
      return p;
    }
  }
  return nullptr;
}

// The fabric manager's last reconciliation, as GetInfo reports it.
std::string fabric_last_restore(Client& client) {
  grpc::ClientContext context;
  set_deadline(context, std::chrono::seconds(10));
  v1::DeviceInfo info;
  const grpc::Status status = client.device->GetInfo(&context, v1::GetInfoRequest(), &info);
  if (!status.ok()) return "GetInfo failed: " + status.error_message();
  for (const auto& s : info.state()) {
    if (s.manager() == "fabric") return s.last_restore();
  }
  return "no fabric manager in GetInfo";
}

// The active banks as the running asnd reads them (ReadRegisters by name, word by word);
// empty with a message in `error` when a read failed.
Words read_active_through_asnd(Client& client, const Words& sizes, std::string& error) {
  Words words;
  for (size_t t = 0; t < kTables.size(); ++t) {
    const uint32_t per = kTables[t].ref->words();
    const size_t total = sizes[t].size();
    for (size_t first = 0; first < total; first += 4096) {
      v1::ReadRegistersRequest request;
      for (size_t w = first; w < std::min(total, first + 4096); ++w) {
        request.add_items()->set_name("route." + std::string(kTables[t].name) + "_active[" +
                                      std::to_string(w / per) + "].w" + std::to_string(w % per));
      }
      grpc::ClientContext context;
      set_deadline(context, std::chrono::seconds(20));
      v1::ReadRegistersResponse response;
      const grpc::Status status = client.device->ReadRegisters(&context, request, &response);
      if (!status.ok()) {
        error = "ReadRegisters: " + status.error_message();
        return {};
      }
      for (const auto& result : response.results()) {
        if (!result.has_value()) {
          error = result.ref().name() + ": " + result.error().message();
          return {};
        }
        words[t].push_back(static_cast<uint32_t>(result.value().value()));
      }
    }
  }
  return words;
}

class CrashTest : public CrashFixture {
 protected:
  CrashTest() : CrashFixture("cr", kConfig) {}
};

TEST_F(CrashTest, AKilledFabricChangeLeavesTheOldOrTheNewTablesNeverAMix) {
  const uint64_t iterations = env_number("ASN_CRASH_ITERATIONS", 200);
  const auto seed = static_cast<uint32_t>(env_number("ASN_CRASH_SEED", std::random_device{}()));
  std::mt19937 random(seed);
  std::printf("[ crash    ] seed %u (ASN_CRASH_SEED), %llu iterations\n", seed,
              static_cast<unsigned long long>(iterations));
  SCOPED_TRACE("ASN_CRASH_SEED=" + std::to_string(seed));
  const auto test_start = Clock::now();

  // Place the switch in A, then measure a change, both ways, as the client sees it.
  ASSERT_TRUE(start());
  std::optional<Client> client(std::in_place, asnd_);
  const Place* current = &kA;
  std::vector<double> durations;
  for (int i = 0; i < 7; ++i) {
    const Place& next = i % 2 == 0 ? kA : kB;
    grpc::ClientContext context;
    set_deadline(context, std::chrono::seconds(20));
    v1::SetTopologyResponse response;
    const auto begin = Clock::now();
    const grpc::Status status = client->fabric->SetTopology(&context, request_for(next), &response);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << asnd_.log();
    ASSERT_TRUE(response.changed());
    if (i > 0) durations.push_back(ms);  // the first call also connects
    current = &next;
  }
  std::sort(durations.begin(), durations.end());
  const double change_ms = durations[durations.size() / 2];
  std::printf("[ crash    ] a change takes %.1f ms (median of %zu, %.1f to %.1f)\n", change_ms,
              durations.size(), durations.front(), durations.back());

  KillDelays delays(random, change_ms);  // 5% at once, 10% after the change, the rest over it

  struct Counts {
    unsigned old_clean = 0;     // old tables; the intent had not been stored
    unsigned old_finished = 0;  // old tables; the restart finished the stored intent
    unsigned new_finished = 0;  // new tables; the mark had not been cleared
    unsigned new_clean = 0;     // new tables; the change had completed
    unsigned acknowledged = 0;  // SetTopology answered before the kill
  } counts;
  // Where the time goes, summed over the iterations (ms).
  struct Spent {
    double change = 0;   // from the call to asnd reaped
    double board = 0;    // opening and reading the board memory
    double restart = 0;  // asnd started until it serves
    double checks = 0;   // GetTopology, GetInfo, the active banks through asnd
  } spent;
  auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  uint64_t done = 0;

  for (uint64_t iteration = 0; iteration < iterations; ++iteration) {
    const Place& from = *current;
    const Place& to = current == &kA ? kB : kA;
    const double delay_ms = delays.draw();
    SCOPED_TRACE("iteration " + std::to_string(iteration) + ", change " + from.name + " -> " +
                 to.name + ", kill after " + std::to_string(delay_ms) + " ms");

    // The change, and the kill after `delay_ms`.
    const auto issued = Clock::now();
    bool acknowledged = false;
    ASSERT_TRUE(call_then_kill<v1::SetTopologyResponse>(
        [&](grpc::ClientContext& context, grpc::CompletionQueue& queue) {
          return client->fabric->AsyncSetTopology(&context, request_for(to), &queue);
        },
        delay_ms, acknowledged));
    counts.acknowledged += acknowledged;
    client.reset();
    spent.change += ms_since(issued);

    // The board as the crash left it: all old or all new.
    const auto board_start = Clock::now();
    const BoardImage board = read_board(asnd_);
    spent.board += ms_since(board_start);
    ASSERT_FALSE(board.report.created || board.report.reinitialised)
        << "the board memory was not kept: " << board.report.reason;
    const Words& old_words = &from == &kA ? board.a : board.b;
    const Words& new_words = &to == &kA ? board.a : board.b;
    const bool found_old = board.active == old_words;
    const bool found_new = board.active == new_words;
    delays.found(found_new);
    ASSERT_TRUE(found_old || found_new)
        << "the active banks are a MIX of the two fabrics (A is " << kA.name << ", B is " << kB.name
        << "):" << describe(board.active, board.a, board.b);
    if (acknowledged) {
      EXPECT_TRUE(found_new) << "asnd acknowledged the change, and the board holds the old tables";
    }

    // asnd again: its reconciler finishes what the crash interrupted.
    const size_t log_before = asnd_.log().size();
    const auto restart = Clock::now();
    ASSERT_TRUE(start());
    spent.restart += ms_since(restart);
    const auto checks_start = Clock::now();
    client.emplace(asnd_);
    v1::Topology topology;
    {
      grpc::ClientContext get;
      set_deadline(get, std::chrono::seconds(10));
      const grpc::Status got =
          client->fabric->GetTopology(&get, v1::GetTopologyRequest(), &topology);
      ASSERT_TRUE(got.ok()) << got.error_message();
    }
    EXPECT_EQ(topology.status(), "in force") << asnd_.log().substr(log_before);
    const Place* desired = place_of(topology);
    ASSERT_NE(desired, nullptr) << "asnd names neither fabric: " << topology.ShortDebugString();
    const std::string restored = fabric_last_restore(*client);
    const bool finished =
        restored.find("finished a change an earlier asnd had not confirmed") != std::string::npos;
    EXPECT_EQ(finished, asnd_.log().find("finished a change", log_before) != std::string::npos)
        << restored;
    // The new tables reached the board only after the intent was stored; an intent that was
    // stored is finished, never rolled back.
    if (found_new) {
      EXPECT_EQ(desired, &to) << "the board held the new tables, and asnd went back to the old "
                                 "fabric: "
                              << restored;
    }
    if (desired == &to && found_old) {
      EXPECT_TRUE(finished) << "the new fabric is in force without the restart finishing it: "
                            << restored;
    }
    if (desired == &from) {
      EXPECT_FALSE(finished) << restored;
    }

    // The board routes by what the desired state says, as the running asnd reads it.
    std::string error;
    const Words active = read_active_through_asnd(*client, board.a, error);
    ASSERT_TRUE(error.empty()) << error;
    const Words& desired_words = desired == &kA ? board.a : board.b;
    ASSERT_TRUE(active == desired_words)
        << "after the restart the active banks are not " << desired->name << ":"
        << describe(active, board.a, board.b);

    if (found_old) {
      ++(finished ? counts.old_finished : counts.old_clean);
    } else {
      ++(finished ? counts.new_finished : counts.new_clean);
    }
    spent.checks += ms_since(checks_start);
    current = desired;
    ++done;
    if (HasFailure()) break;
  }

  const double seconds = std::chrono::duration<double>(Clock::now() - test_start).count();
  const unsigned old_found = counts.old_clean + counts.old_finished;
  const unsigned new_found = counts.new_clean + counts.new_finished;
  std::printf(
      "[ crash    ] %llu kills in %.1f s: old tables found %u times (%u with the change's intent "
      "stored, finished by the restart), new tables %u times (%u with the pending mark not yet "
      "cleared, finished by the restart; %u acknowledged); the restart finished a pending "
      "change %u times\n",
      static_cast<unsigned long long>(done), seconds, old_found, counts.old_finished, new_found,
      counts.new_finished, counts.acknowledged, counts.old_finished + counts.new_finished);
  const double per = done > 0 ? static_cast<double>(done) : 1.0;
  std::printf(
      "[ crash    ] per kill: change and kill %.0f ms, board read %.0f ms, asnd restart %.0f ms, "
      "checks through asnd %.0f ms\n",
      spent.change / per, spent.board / per, spent.restart / per, spent.checks / per);
  RecordProperty("seed", std::to_string(seed));
  RecordProperty("old_found", std::to_string(old_found));
  RecordProperty("new_found", std::to_string(new_found));
  RecordProperty("pending_finished", std::to_string(counts.old_finished + counts.new_finished));
  // The kills demonstrably hit both sides of the commit.
  EXPECT_GE(old_found, 1u) << "no kill landed before a commit; seed " << seed;
  EXPECT_GE(new_found, 1u) << "no kill landed after a commit; seed " << seed;
}

}  // namespace
}  // namespace asn::test

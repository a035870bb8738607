// Crash atomicity of a TDM schedule load, against the real asnd: asnd is killed (SIGKILL) at
// random points of a LoadSchedule that moves the switch between two phases of one plan whose
// programs differ in every part (slot count, slot length, guard band, policy and wormhole,
// and every slot table entry; each slot a full permutation of the 64 ports, so the slot
// table write is 1024 x 16 words). After every kill the board's memory is opened directly
// and its active banks (the timing entry, and the slot table entries it counts) must hold,
// word for word, the old program or the new one, never a mix; a load asnd acknowledged must
// be the one found. asnd is then started again on the same board and state directory, and
// its reconciler must have finished whatever the crash interrupted: the desired state is
// "in force", its phase is the program the board runs, the sequencer runs, and a load whose
// intent was stored before the crash is the one in force (finished, not rolled back).
//
// The inactive banks are cleared (all zero, as after a reset) while asnd is down, unless a
// swap is armed, so that each load writes its program over something else: a partly written
// bank is then visible, and a swap of one would show in the active banks.
//
// ASN_CRASH_ITERATIONS sets the number of kills (default 100), ASN_CRASH_SEED the seed of
// the kill delays (default: random, printed).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
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
#include "asn/schedule/compile.hpp"
#include "asn/schedule/plan_file.hpp"
#include "asn/schedule/tdm_program.hpp"
#include "asn/v1/device.grpc.pb.h"
#include "asn/v1/tdm.grpc.pb.h"
#include "asnd_harness.hpp"
#include "bus/emulated_bus.hpp"
#include "crash_harness.hpp"
#include "device/device.hpp"
#include "device/layout.hpp"
#include "managers/tdm_words.hpp"

namespace asn::test {
namespace {

using Clock = std::chrono::steady_clock;
namespace t = regs::tdm;

constexpr char kProfile[] = "emulated-64port";
constexpr char kConfig[] =
    "backend:\n"
    "  kind: emulated\n"
    "  emulated:\n"
    "    profile: emulated-64port\n";
constexpr char kPlanName[] = "crash";
constexpr char kPlanFile[] = "crash.yaml";

// One phase of the plan: `all_to_all` times every ordered pair of the 64 ports, and
// `shifts` more shifts of them (by first_shift, first_shift + 2, ...), compiled as asnd
// compiles them (edge colouring: repeated pairs): every slot a full permutation. A and B
// differ in slot count, slot length, guard band, policy and wormhole.
struct Phase {
  const char* name;
  uint32_t slots;
  uint32_t all_to_all;
  uint32_t first_shift;
  uint32_t shifts;
  const char* timing;  // the phase's timing keys, YAML
};
// A: 16 x 63 + 16 = 1024 slots of 1 us, fixed, no wormhole slot. B: 11 x 63 + 7 = 700
// slots of 2 us, sla with a 3 us wormhole slot. No slot of A equals B's slot of that number.
constexpr Phase kA{.name = "A",
                   .slots = 1024,
                   .all_to_all = 16,
                   .first_shift = 1,
                   .shifts = 16,
                   .timing = "policy: fixed\n    slot_length: 1 us\n    guard_band: 48 ns\n"};
constexpr Phase kB{.name = "B",
                   .slots = 700,
                   .all_to_all = 11,
                   .first_shift = 2,
                   .shifts = 7,
                   .timing =
                       "policy: sla\n    wormhole: {length: 3 us}\n    slot_length: 2 us\n"
                       "    guard_band: 100 ns\n"};

std::string plan_text() {
  std::string text = std::string("plan: ") + kPlanName + "\nboard: " + kProfile + "\nphases:\n";
  for (const Phase* phase : {&kA, &kB}) {
    text += std::string("  - name: ") + phase->name + "\n    " + phase->timing + "    pattern:\n";
    for (uint32_t i = 0; i < phase->all_to_all; ++i) text += "      - all_to_all: {ports: 64}\n";
    for (uint32_t i = 0; i < phase->shifts; ++i) {
      text +=
          "      - shift: {ports: 64, by: " + std::to_string(phase->first_shift + 2 * i) + "}\n";
    }
  }
  return text;
}

// What asnd writes for a phase: lib/schedule's program at the board's limits, encoded by
// tdm_words (the manager's own encoding).
struct Program {
  const Phase* phase = nullptr;
  uint64_t id = 0;
  uint32_t slots = 0;
  std::string entries;           // slots x 64 bytes, as GetSchedule returns them
  std::vector<uint32_t> timing;  // tdm.timing's entry
  std::vector<uint32_t> table;   // the first `slots` entries of tdm.slot_table
};

struct Programs {
  Program a;
  Program b;
  const Program& of(const Phase* phase) const { return phase == &kA ? a : b; }
};

// The board's limits as TdmManager::limits() takes them.
schedule::BoardLimits limits_of(Device& device) {
  const auto layout = device.layout();
  schedule::BoardLimits limits;
  limits.board = board_kind_name(layout->kind);
  limits.ports = layout->caps.get(regmap::Cap::kPorts);
  limits.slots = layout->caps.get(regmap::Cap::kTdmSlots);
  limits.clock_hz = layout->caps.get(regmap::Cap::kClockHz);
  return limits;
}

Programs expected_programs(Device& device) {
  schedule::Plan plan = schedule::parse_plan(plan_text(), kPlanFile);
  schedule::compile_plan(plan, {schedule::Algorithm::kOptimal});
  const schedule::BoardLimits limits = limits_of(device);
  schedule::validate(plan, limits).throw_if_errors();
  Programs programs;
  for (const Phase* phase : {&kA, &kB}) {
    const schedule::TdmProgram compiled = schedule::make_tdm_program(plan, phase->name, "", limits);
    const state::v1::TdmPhase record = tdm_words::to_record(compiled, "", std::nullopt);
    Program& p = phase == &kA ? programs.a : programs.b;
    p.phase = phase;
    p.id = record.program_id();
    p.slots = record.slots();
    p.entries = record.entries();
    p.timing = tdm_words::timing_words(record);
    p.table = tdm_words::slot_words(record);
  }
  return programs;
}

// The TDM banks as a crash left them.
struct TdmBanks {
  std::vector<uint32_t> timing;
  std::vector<uint32_t> table;  // as many entries as the timing counts (at most the board's)
};

TdmBanks read_banks(Device& device, Bank bank, uint32_t slots = 0) {
  TdmBanks banks;
  banks.timing = device.read_entries(t::kTiming, 0, 1, bank);
  if (slots == 0) slots = t::kTimingSlots.get(banks.timing);
  slots = std::min(slots, device.entries(t::kSlotTable));
  banks.table = device.read_entries(t::kSlotTable, 0, slots, bank);
  return banks;
}

bool holds(const TdmBanks& banks, const Program& program) {
  return banks.timing == program.timing && banks.table == program.table;
}

// The first word where `board` and `want` differ.
std::string first_difference(const std::vector<uint32_t>& board, const std::vector<uint32_t>& want,
                             uint32_t per) {
  const size_t n = std::min(board.size(), want.size());
  for (size_t w = 0; w < n; ++w) {
    if (board[w] == want[w]) continue;
    char text[96];
    std::snprintf(text, sizeof text, "entry %zu word %zu is 0x%x (it would be 0x%x)", w / per,
                  w % per, board[w], want[w]);
    return text;
  }
  if (board.size() != want.size()) {
    return "has " + std::to_string(board.size() / per) + " entries, not " +
           std::to_string(want.size() / per);
  }
  return "equal";
}

std::string describe(const TdmBanks& banks, const Programs& programs) {
  std::string out;
  for (const Program* p : {&programs.a, &programs.b}) {
    out += std::string("\n  against ") + p->phase->name + ": tdm.timing " +
           first_difference(banks.timing, p->timing, t::kTiming.words()) + "; tdm.slot_table " +
           first_difference(banks.table, p->table, t::kSlotTable.words());
  }
  return out;
}

// How far the load had written the inactive banks (cleared before it) when asnd died: the
// slot table is written first, entry by entry, then the timing entry.
enum class Written { kNothing, kSlotTablePart, kSlotTable, kBoth, kOther };

Written written(const TdmBanks& shadow, const Program& to) {
  const auto zero = [](uint32_t w) { return w == 0; };
  // The leading words of the new slot table, then zeros.
  const auto [ours, theirs] = std::mismatch(to.table.begin(), to.table.end(), shadow.table.begin());
  const auto words = static_cast<size_t>(ours - to.table.begin());
  if (!std::all_of(theirs, shadow.table.end(), zero)) return Written::kOther;
  if (shadow.timing == to.timing)
    return words == to.table.size() ? Written::kBoth : Written::kOther;
  if (!std::all_of(shadow.timing.begin(), shadow.timing.end(), zero)) return Written::kOther;
  if (words == to.table.size()) return Written::kSlotTable;
  return words == 0 ? Written::kNothing : Written::kSlotTablePart;
}

struct BoardImage {
  TdmBanks active;
  bool armed = false;
  bool enabled = false;
  Written shadow = Written::kOther;
  model::OpenReport report;
};

// The board's memory as a crash left it, opened the way asnd opens it (without its clock).
// Unless a swap is armed, the inactive banks are then cleared for the next load.
BoardImage read_board(const AsndProcess& asnd, const Program& to) {
  EmulatedBusOptions options;
  options.board_name = asnd.board();
  options.profile = kProfile;
  options.shm_dir = asnd.shm_dir();
  options.run_clock = false;
  EmulatedBus bus(options);  // locks the board; destroyed before asnd starts again
  Device device(bus);
  BoardImage image;
  image.report = bus.open_report();
  image.active = read_banks(device, Bank::kActive);
  image.armed = device.read(t::kStatusArmed) != 0;
  image.enabled = device.read(t::kConfigEnable) != 0;
  image.shadow = written(read_banks(device, Bank::kShadow, device.entries(t::kSlotTable)), to);
  if (!image.armed) {
    device.write_entries(
        t::kSlotTable, 0,
        std::vector<uint32_t>(size_t{device.entries(t::kSlotTable)} * t::kSlotTable.words(), 0));
    device.write_entries(t::kTiming, 0, std::vector<uint32_t>(t::kTiming.words(), 0));
  }
  return image;
}

// asnd's gRPC API on its Unix socket; a fresh channel for every start.
struct Client {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Tdm::Stub> tdm;
  std::unique_ptr<v1::Device::Stub> device;

  explicit Client(const AsndProcess& asnd) {
    channel = grpc::CreateChannel("unix:" + asnd.socket(), grpc::InsecureChannelCredentials());
    tdm = v1::Tdm::NewStub(channel);
    device = v1::Device::NewStub(channel);
  }
};

v1::LoadScheduleRequest request_for(const Phase& phase) {
  v1::LoadScheduleRequest request;
  request.mutable_plan()->set_text(plan_text());
  request.mutable_plan()->set_file(kPlanFile);
  request.set_phase(phase.name);
  return request;
}

const Phase* phase_named(const std::string& name) {
  for (const Phase* p : {&kA, &kB}) {
    if (name == p->name) return p;
  }
  return nullptr;
}

// The desired state's phase of the plan (ListPlans), or nullptr with `error` set.
const Phase* desired_phase(Client& client, std::string& error) {
  grpc::ClientContext context;
  set_deadline(context, std::chrono::seconds(10));
  v1::ListPlansResponse plans;
  const grpc::Status status = client.tdm->ListPlans(&context, v1::ListPlansRequest(), &plans);
  if (!status.ok()) {
    error = "ListPlans failed: " + status.error_message();
    return nullptr;
  }
  for (const auto& plan : plans.plans()) {
    if (plan.name() == kPlanName && plan.active()) return phase_named(plan.active_phase());
  }
  error = "no active plan '" + std::string(kPlanName) + "': " + plans.ShortDebugString();
  return nullptr;
}

// The TDM manager's last reconciliation, as GetInfo reports it.
std::string tdm_last_restore(Client& client) {
  grpc::ClientContext context;
  set_deadline(context, std::chrono::seconds(10));
  v1::DeviceInfo info;
  const grpc::Status status = client.device->GetInfo(&context, v1::GetInfoRequest(), &info);
  if (!status.ok()) return "GetInfo failed: " + status.error_message();
  for (const auto& s : info.state()) {
    if (s.manager() == "tdm") return s.last_restore();
  }
  return "no tdm manager in GetInfo";
}

// The running program as asnd reports it, entries included, against `want`: empty when
// equal, else what differs.
std::string check_active(const v1::GetScheduleResponse& s, const Program& want) {
  const v1::Program& active = s.active();
  if (!active.present()) return "no active program";
  if (active.program_id() != want.id) {
    return "program id " + std::to_string(active.program_id()) + ", not " + want.phase->name +
           "'s " + std::to_string(want.id);
  }
  if (active.slots() != want.slots || static_cast<uint32_t>(active.entries_size()) != want.slots) {
    return std::to_string(active.slots()) + " slots (" + std::to_string(active.entries_size()) +
           " entries), not " + std::to_string(want.slots);
  }
  for (int slot = 0; slot < active.entries_size(); ++slot) {
    if (active.entries(slot) != want.entries.substr(static_cast<size_t>(slot) * 64, 64)) {
      return "slot " + std::to_string(slot) + " differs from " + want.phase->name + "'s";
    }
  }
  return "";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

class TdmCrashTest : public CrashFixture {
 protected:
  TdmCrashTest() : CrashFixture("tc", kConfig) {}

  // The board's limits and the programs at them, from a board opened before asnd's first
  // start (the board asnd then opens).
  Programs programs_from_board() {
    EmulatedBusOptions options;
    options.board_name = asnd_.board();
    options.profile = kProfile;
    options.shm_dir = asnd_.shm_dir();
    options.run_clock = false;
    EmulatedBus bus(options);
    Device device(bus);
    return expected_programs(device);
  }
};

TEST_F(TdmCrashTest, AKilledScheduleLoadLeavesTheOldOrTheNewProgramNeverAMix) {
  const uint64_t iterations = env_number("ASN_CRASH_ITERATIONS", 100);
  const auto seed = static_cast<uint32_t>(env_number("ASN_CRASH_SEED", std::random_device{}()));
  std::mt19937 random(seed);
  std::printf("[ crash    ] seed %u (ASN_CRASH_SEED), %llu iterations\n", seed,
              static_cast<unsigned long long>(iterations));
  SCOPED_TRACE("ASN_CRASH_SEED=" + std::to_string(seed));
  const auto test_start = Clock::now();

  const Programs programs = programs_from_board();
  // The two programs differ in every part, and every slot of both connects every port.
  {
    const auto& a = programs.a;
    const auto& b = programs.b;
    ASSERT_EQ(a.slots, kA.slots);
    ASSERT_EQ(b.slots, kB.slots);
    ASSERT_NE(a.id, b.id);
    for (size_t w = 0; w < 5; ++w) {  // policy and wormhole, slots, lengths, guard band
      ASSERT_NE(a.timing[w], b.timing[w]) << "timing word " << w;
    }
    for (uint32_t slot = 0; slot < b.slots; ++slot) {
      ASSERT_NE(a.entries.substr(slot * 64, 64), b.entries.substr(slot * 64, 64)) << slot;
    }
    for (const Program* p : {&a, &b}) {
      for (const char byte : p->entries) {
        ASSERT_NE(static_cast<uint8_t>(byte) & schedule::kEntryConnected, 0) << p->phase->name;
      }
    }
  }

  // Load A, then measure a load, both ways, as the client sees it.
  ASSERT_TRUE(start());
  std::optional<Client> client(std::in_place, asnd_);
  const Phase* current = &kA;
  std::vector<double> durations;
  std::vector<double> parse_to_validate, write, readback, wait;
  for (int i = 0; i < 7; ++i) {
    const Phase& next = i % 2 == 0 ? kA : kB;
    grpc::ClientContext context;
    set_deadline(context, std::chrono::seconds(20));
    v1::LoadScheduleResponse response;
    const auto begin = Clock::now();
    const grpc::Status status = client->tdm->LoadSchedule(&context, request_for(next), &response);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << asnd_.log();
    ASSERT_TRUE(response.changed());
    ASSERT_EQ(response.program_id(), programs.of(&next).id);
    if (i > 0) {  // the first call also connects, and starts the sequencer
      durations.push_back(ms);
      const auto& times = response.times();
      parse_to_validate.push_back(
          static_cast<double>(times.parse_us() + times.compile_us() + times.validate_us()) / 1e3);
      write.push_back(static_cast<double>(times.write_us()) / 1e3);
      readback.push_back(static_cast<double>(times.readback_us()) / 1e3);
      wait.push_back(static_cast<double>(times.wait_us()) / 1e3);
    }
    current = &next;
  }
  std::sort(durations.begin(), durations.end());
  const double load_ms = median(durations);
  std::printf(
      "[ crash    ] a load takes %.1f ms (median of %zu, %.1f to %.1f): parse, compile and "
      "validate %.1f ms, write %.1f ms, read back %.1f ms, wait for the swap %.1f ms\n",
      load_ms, durations.size(), durations.front(), durations.back(), median(parse_to_validate),
      median(write), median(readback), median(wait));

  // The inactive banks cleared before the first kill, as after every later one. The channel
  // is closed first: asnd's SIGTERM waits out its 5 s grace while a client stays connected.
  client.reset();
  ASSERT_EQ(asnd_.stop(), 0) << asnd_.log();
  {
    const BoardImage board = read_board(asnd_, programs.of(current == &kA ? &kB : &kA));
    ASSERT_TRUE(holds(board.active, programs.of(current)));
  }
  ASSERT_TRUE(start());
  client.emplace(asnd_);

  KillDelays delays(random, load_ms);  // 5% at once, 10% after the change, the rest over it

  struct Counts {
    unsigned old_clean = 0;     // old program; the intent had not been stored
    unsigned old_finished = 0;  // old program; the restart finished the stored intent
    unsigned new_finished = 0;  // new program; the mark had not been cleared
    unsigned new_clean = 0;     // new program; the load had completed
    unsigned acknowledged = 0;  // LoadSchedule answered before the kill
    unsigned armed = 0;         // the kill found the swap armed
    // How far the inactive banks had been written when an old program was found.
    unsigned nothing_written = 0;
    unsigned inside_slot_table = 0;
    unsigned slot_table_written = 0;
    unsigned both_written = 0;
    unsigned not_cleared = 0;  // the restart before had left the new program there
  } counts;
  struct Spent {
    double load = 0;     // from the call to asnd reaped
    double board = 0;    // opening, reading and clearing the board memory
    double restart = 0;  // asnd started until it serves
    double checks = 0;   // ListPlans, GetInfo, GetSchedule with the slots
  } spent;
  auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  uint64_t done = 0;
  bool shadow_cleared = true;  // the inactive banks were zero when the load began

  for (uint64_t iteration = 0; iteration < iterations; ++iteration) {
    const Phase& from = *current;
    const Phase& to = current == &kA ? kB : kA;
    const double delay_ms = delays.draw();
    SCOPED_TRACE("iteration " + std::to_string(iteration) + ", load " + from.name + " -> " +
                 to.name + ", kill after " + std::to_string(delay_ms) + " ms");

    // The load, and the kill after `delay_ms`.
    const v1::LoadScheduleRequest request = request_for(to);
    const auto issued = Clock::now();
    bool acknowledged = false;
    ASSERT_TRUE(call_then_kill<v1::LoadScheduleResponse>(
        [&](grpc::ClientContext& context, grpc::CompletionQueue& queue) {
          return client->tdm->AsyncLoadSchedule(&context, request, &queue);
        },
        delay_ms, acknowledged));
    counts.acknowledged += acknowledged;
    client.reset();
    spent.load += ms_since(issued);

    // The board as the crash left it: all old or all new.
    const auto board_start = Clock::now();
    const BoardImage board = read_board(asnd_, programs.of(&to));
    spent.board += ms_since(board_start);
    ASSERT_FALSE(board.report.created || board.report.reinitialised)
        << "the board memory was not kept: " << board.report.reason;
    const bool found_old = holds(board.active, programs.of(&from));
    const bool found_new = holds(board.active, programs.of(&to));
    delays.found(found_new);
    ASSERT_TRUE(found_old || found_new)
        << "the active banks are a MIX of the two programs, or neither:"
        << describe(board.active, programs);
    EXPECT_TRUE(board.enabled) << "the sequencer was stopped";
    counts.armed += board.armed;
    if (acknowledged) {
      EXPECT_TRUE(found_new) << "asnd acknowledged the load, and the board holds the old program";
    }

    // asnd again: its reconciler finishes what the crash interrupted.
    const size_t log_before = asnd_.log().size();
    const auto restart = Clock::now();
    ASSERT_TRUE(start());
    spent.restart += ms_since(restart);
    const auto checks_start = Clock::now();
    client.emplace(asnd_);
    std::string error;
    const Phase* desired = desired_phase(*client, error);
    ASSERT_NE(desired, nullptr) << error;
    v1::GetScheduleResponse schedule;
    {
      grpc::ClientContext get;
      set_deadline(get, std::chrono::seconds(10));
      v1::GetScheduleRequest get_request;
      get_request.set_include_slots(true);
      const grpc::Status got = client->tdm->GetSchedule(&get, get_request, &schedule);
      ASSERT_TRUE(got.ok()) << got.error_message();
    }
    EXPECT_EQ(schedule.status(), "in force") << asnd_.log().substr(log_before);
    EXPECT_TRUE(schedule.running());
    EXPECT_TRUE(schedule.enabled());
    EXPECT_FALSE(schedule.armed());
    const std::string restored = tdm_last_restore(*client);
    const bool finished =
        restored.find("finished a change an earlier asnd had not confirmed") != std::string::npos;
    EXPECT_EQ(finished, asnd_.log().find("finished a change", log_before) != std::string::npos)
        << restored;
    // The new program reached the board only after the intent was stored; an intent that
    // was stored is finished, never rolled back.
    if (found_new) {
      EXPECT_EQ(desired, &to) << "the board held the new program, and asnd went back to the "
                                 "old phase: "
                              << restored;
    }
    if (desired == &to && found_old) {
      EXPECT_TRUE(finished) << "the new phase is in force without the restart finishing it: "
                            << restored;
    }
    if (desired == &from) {
      EXPECT_FALSE(finished) << restored;
    }
    // The board runs what the desired state says, entry by entry, as the running asnd reads
    // it.
    const std::string differs = check_active(schedule, programs.of(desired));
    ASSERT_TRUE(differs.empty()) << "after the restart the active program is not " << desired->name
                                 << ": " << differs << "\n"
                                 << restored;

    if (found_old) {
      ++(finished ? counts.old_finished : counts.old_clean);
      if (!shadow_cleared) {
        ++counts.not_cleared;
      } else {
        switch (board.shadow) {
          case Written::kNothing:
            ++counts.nothing_written;
            break;
          case Written::kSlotTablePart:
            ++counts.inside_slot_table;
            break;
          case Written::kSlotTable:
            ++counts.slot_table_written;
            break;
          case Written::kBoth:
            ++counts.both_written;
            break;
          case Written::kOther:
            ADD_FAILURE() << "the inactive banks, cleared before the load, hold neither zeros "
                             "nor the new program written slot table first, then timing";
            break;
        }
        // The intent is stored before the first write.
        if (board.shadow != Written::kNothing) {
          EXPECT_TRUE(finished && desired == &to)
              << "the load had written the inactive banks, and the restart did not finish it: "
              << restored;
        }
      }
    } else {
      ++(finished ? counts.new_finished : counts.new_clean);
    }
    // A swap armed at the kill (the banks were left as they were), or a restart that loaded
    // the new program, leaves the next load's program in the inactive banks.
    shadow_cleared = !board.armed && restored.find("loaded plan") == std::string::npos;
    spent.checks += ms_since(checks_start);
    current = desired;
    ++done;
    if (HasFailure()) break;
  }

  const double seconds = std::chrono::duration<double>(Clock::now() - test_start).count();
  const unsigned old_found = counts.old_clean + counts.old_finished;
  const unsigned new_found = counts.new_clean + counts.new_finished;
  std::printf(
      "[ crash    ] %llu kills in %.1f s: old program found %u times (%u with the load's intent "
      "stored, finished by the restart), new program %u times (%u with the pending mark not "
      "yet cleared, finished by the restart; %u acknowledged); the restart finished a pending "
      "load %u times\n",
      static_cast<unsigned long long>(done), seconds, old_found, counts.old_finished, new_found,
      counts.new_finished, counts.acknowledged, counts.old_finished + counts.new_finished);
  std::printf(
      "[ crash    ] with the old program found, the inactive banks held: nothing of the new "
      "program %u times, part of its slot table %u times, its slot table %u times, its slot "
      "table and timing %u times (armed %u times), not known %u times (not cleared)\n",
      counts.nothing_written, counts.inside_slot_table, counts.slot_table_written,
      counts.both_written, counts.armed, counts.not_cleared);
  const double per = done > 0 ? static_cast<double>(done) : 1.0;
  std::printf(
      "[ crash    ] per kill: load and kill %.0f ms, board read %.0f ms, asnd restart %.0f ms, "
      "checks through asnd %.0f ms\n",
      spent.load / per, spent.board / per, spent.restart / per, spent.checks / per);
  RecordProperty("seed", std::to_string(seed));
  RecordProperty("old_found", std::to_string(old_found));
  RecordProperty("new_found", std::to_string(new_found));
  RecordProperty("pending_finished", std::to_string(counts.old_finished + counts.new_finished));
  // The kills demonstrably hit both sides of the swap.
  EXPECT_GE(old_found, 1u) << "no kill landed before a swap; seed " << seed;
  EXPECT_GE(new_found, 1u) << "no kill landed after a swap; seed " << seed;
}

}  // namespace
}  // namespace asn::test

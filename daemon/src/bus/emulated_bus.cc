#include "bus/emulated_bus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "error.hpp"

namespace asn {

namespace {

namespace id = regs::id;

// The interrupt causes that are events. Bus errors and read-only writes stay in
// id.irq_status for an operator to see (asnctl status): they are diagnostics, not events.
constexpr uint32_t kEventCauses = id::kIrqStatusLinkChange.mask() | id::kIrqStatusTdmSwap.mask() |
                                  id::kIrqStatusRouteCommit.mask();

// The board's time base follows the host's monotonic clock, in core cycles: every asnd of a
// host feeds its board the same time, as PTP keeps the boards of a fabric on one time, so a
// frame number means the same instant on all of them (tdm.frame_counter). While asnd is
// down the board's clock does not run; the next asnd catches it up at once, whole frames by
// division, as the hardware would have run them.
uint64_t host_time_cycles(uint64_t hz) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
  // 128 bits: ns x hz passes 2^64 after a few minutes of uptime.
  return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * hz / 1'000'000'000u);
}

// How long `cycles` of a `hz` clock take, rounded up: a clock thread that sleeps that long
// finds the board's time at or past the event.
std::chrono::nanoseconds cycles_to_time(uint64_t cycles, uint64_t hz) {
  constexpr uint64_t kLongest = uint64_t{1} << 62;  // ~146 years
  const unsigned __int128 ns =
      (static_cast<unsigned __int128>(cycles) * 1'000'000'000u + hz - 1) / hz;
  return std::chrono::nanoseconds(static_cast<int64_t>(ns < kLongest ? ns : kLongest));
}

std::string profile_names(const regmap::RegisterMap& map) {
  std::string names;
  for (const auto& b : map.boards) {
    names += (names.empty() ? "" : ", ") + std::string(b.name);
  }
  return names;
}

}  // namespace

const char* to_string(BusEvent::Kind kind) {
  switch (kind) {
    case BusEvent::Kind::kBankSwapped:
      return "bank swapped";
    case BusEvent::Kind::kCompletionsAvailable:
      return "completions available";
    case BusEvent::Kind::kLinkChange:
      return "link change";
    case BusEvent::Kind::kGenerationChanged:
      return "generation changed";
    case BusEvent::Kind::kBoardFailed:
      return "board failed";
    case BusEvent::Kind::kReconnected:
      return "reconnected";
  }
  return "?";
}

EmulatedBus::EmulatedBus(const EmulatedBusOptions& options)
    : health_check_every_(options.health_check_every) {
  const regmap::RegisterMap& map = options.map ? *options.map : regmap::register_map();
  const regmap::BoardProfile* profile = map.board(options.profile);
  if (profile == nullptr) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("unknown board profile '{}' (profiles: {})", options.profile,
                            profile_names(map)));
  }
  model::OpenOptions open;
  open.power_on_reset = options.power_on_reset;
  open.shm_dir = options.shm_dir;
  open.map = options.map;
  open.storage_dir = options.storage_dir;
  try {
    board_ = model::EmulatedBoard::open(options.board_name, *profile, open);
  } catch (const model::BoardError& e) {
    switch (e.kind()) {
      case model::BoardError::Kind::kBadName:
      case model::BoardError::Kind::kBadProfile:
        throw Error(ErrorCode::kInvalidArgument, e.what());
      case model::BoardError::Kind::kBusy:
      case model::BoardError::Kind::kProfileMismatch:
        throw Error(ErrorCode::kFailedPrecondition, e.what());
      case model::BoardError::Kind::kSystem:
        throw Error(ErrorCode::kUnavailable, e.what());
    }
    throw;
  }
  id_base_ = board_->find_block(id::kType)->base;
  seen_generation_ = board_->generation();
  if (options.run_clock) {
    // What the board's registers show between the clock thread's passes: the host's time in
    // steps of 1 ms, as they did when that thread ticked every millisecond. Not the exact
    // time: asnd reads "one moment" of the sequencer (frame counter, frame start, ...) as a
    // batch that a bus may carry as single reads (tests' PatchedBus), and with frames of a
    // few microseconds a time that moved between those reads would never give one moment.
    const uint64_t hz = board_->profile().cap(regmap::Cap::kClockHz);
    const uint64_t step = std::max<uint64_t>(1, hz / 1000);
    board_->run_clock([hz, step] {
      const uint64_t time = host_time_cycles(hz);
      return time - time % step;
    });
    enable_interrupts();
    run_clock_ = true;
    clock_ = std::thread([this] { clock_loop(); });
  }
}

EmulatedBus::~EmulatedBus() {
  {
    std::lock_guard lock(clock_mutex_);
    stopping_ = true;
  }
  clock_cv_.notify_all();
  if (clock_.joinable()) clock_.join();
}

std::string EmulatedBus::describe() const {
  return fmt::format("emulated board '{}' ({})", board_->name(), board_->profile().name);
}

BoardIdentity EmulatedBus::identity() const {
  return BoardIdentity{"emulated", board_->name(), std::string(board_->profile().name),
                       board_->path()};
}

void EmulatedBus::require_working() const {
  std::lock_guard lock(failed_mutex_);
  if (!failed_.empty()) {
    throw Error(ErrorCode::kUnavailable, fmt::format("{} has failed: {}", describe(), failed_));
  }
}

uint32_t EmulatedBus::read32(uint32_t offset) {
  require_working();
  uint32_t value = 0;
  const bool ok = board_->read32(offset, value);
  notice_events();  // a read of the TDM block runs the clock: a swap may have happened
  if (!ok) {
    throw Error(ErrorCode::kHardware,
                fmt::format("{}: bus error reading offset 0x{:x}", describe(), offset));
  }
  return value;
}

void EmulatedBus::write32(uint32_t offset, uint32_t value) {
  require_working();
  const bool ok = board_->write32(offset, value);
  notice_events();
  if (!ok) {
    throw Error(ErrorCode::kHardware, fmt::format("{}: bus error writing 0x{:x} to offset 0x{:x}",
                                                  describe(), value, offset));
  }
}

void EmulatedBus::execute(std::span<BusOp> ops) {
  require_working();
  // The model's form of the batch; kept per thread, as this runs for every ring operation
  // (that of a large batch, a whole table, is not kept).
  constexpr size_t kKeptOps = 4096;
  thread_local std::vector<model::EmulatedBoard::Op> batch;
  if (batch.capacity() > kKeptOps) batch = {};
  batch.clear();
  for (const auto& op : ops) {
    batch.push_back({op.kind == BusOp::Kind::kWrite, op.offset, op.value, false});
  }
  board_->execute(batch);
  notice_events();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!batch[i].ok) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("{}: bus error at offset 0x{:x} (operation {} of {} in a batch)",
                              describe(), ops[i].offset, i + 1, ops.size()));
    }
    if (ops[i].kind == BusOp::Kind::kRead) ops[i].value = batch[i].value;
  }
}

void EmulatedBus::notice_events() {
  if (!run_clock_ || board_->events() == seen_events_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard lock(clock_mutex_);
    kicked_ = true;
  }
  clock_cv_.notify_one();
}

void EmulatedBus::set_event_handler(std::function<void(const BusEvent&)> handler) {
  std::lock_guard lock(handler_mutex_);
  handler_ = std::move(handler);
}

void EmulatedBus::deliver(const BusEvent& event) {
  std::lock_guard lock(handler_mutex_);
  if (handler_) handler_(event);
}

// As a driver does at probe and after a reset: unmask the causes it handles.
void EmulatedBus::enable_interrupts() {
  uint32_t mask = 0;
  board_->read32(id_base_ + id::kIrqMask.offset, mask);
  board_->write32(id_base_ + id::kIrqMask.offset, mask | kEventCauses);
}

// The board's memory file can be truncated, removed or replaced by someone else while asnd
// runs; the board is then reported failed (once), never crashed on.
void EmulatedBus::check_health() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_health_check_ < health_check_every_) return;
  last_health_check_ = now;
  std::string problem = board_->problem();
  if (problem.empty()) return;
  {
    std::lock_guard lock(failed_mutex_);
    if (!failed_.empty()) return;
    failed_ = problem;
  }
  deliver(BusEvent{BusEvent::Kind::kBoardFailed, id::kType, 0, problem});
}

void EmulatedBus::service_interrupts() {
  const uint32_t generation = board_->generation();
  if (generation != seen_generation_) {
    seen_generation_ = generation;
    enable_interrupts();  // a reset cleared the mask
    deliver(BusEvent{BusEvent::Kind::kGenerationChanged, id::kType, generation, {}});
  }
  if (!board_->irq_pending()) return;
  uint32_t status = 0;
  board_->read32(id_base_ + id::kIrqStatus.offset, status);
  const uint32_t causes = status & kEventCauses;
  if (causes == 0) return;
  board_->write32(id_base_ + id::kIrqStatus.offset, causes);  // W1C: acknowledge
  if ((causes & id::kIrqStatusLinkChange.mask()) != 0) {
    deliver(BusEvent{BusEvent::Kind::kLinkChange, regs::port::kType, generation, {}});
  }
  if ((causes & id::kIrqStatusRouteCommit.mask()) != 0) {
    deliver(BusEvent{BusEvent::Kind::kBankSwapped, regs::route::kType, generation, {}});
  }
  if ((causes & id::kIrqStatusTdmSwap.mask()) != 0) {
    deliver(BusEvent{BusEvent::Kind::kBankSwapped, regs::tdm::kType, generation, {}});
  }
}

// ---- the parity data path ------------------------------------------------------------------

namespace {

ErrorCode error_code(model::StripeError::Kind kind) {
  switch (kind) {
    case model::StripeError::Kind::kNoGroup:
      return ErrorCode::kNotFound;
    case model::StripeError::Kind::kBadRequest:
      return ErrorCode::kInvalidArgument;
    case model::StripeError::Kind::kBadGroup:  // asnd wrote an entry the board cannot use
    case model::StripeError::Kind::kTooManyFailed:
    case model::StripeError::Kind::kNoStorage:
      return ErrorCode::kFailedPrecondition;
    case model::StripeError::Kind::kStorageIo:
      return ErrorCode::kInternal;
  }
  return ErrorCode::kInternal;
}

}  // namespace

template <typename F>
auto EmulatedBus::StripePort::call(F&& request) {
  bus_.require_working();
  try {
    return request(*bus_.board_);
  } catch (const model::StripeError& e) {
    const std::string what = fmt::format("{}: {}", bus_.describe(), e.what());
    if (e.kind() == model::StripeError::Kind::kStorageIo && e.port()) {
      throw StripeMemberError(*e.port(), what);
    }
    throw Error(error_code(e.kind()), what);
  }
}

void EmulatedBus::StripePort::write(uint16_t group, uint64_t offset,
                                    std::span<const uint8_t> bytes) {
  call([&](model::EmulatedBoard& board) { board.stripe_write(group, offset, bytes); });
}

size_t EmulatedBus::StripePort::read(uint16_t group, uint64_t offset, std::span<uint8_t> out) {
  return call([&](model::EmulatedBoard& board) { return board.stripe_read(group, offset, out); });
}

uint64_t EmulatedBus::StripePort::file_size(uint16_t group) {
  return call([&](model::EmulatedBoard& board) { return board.stripe_file_size(group); });
}

void EmulatedBus::StripePort::fail_member(uint16_t group, unsigned port) {
  call([&](model::EmulatedBoard& board) { board.stripe_fail_member(group, port); });
}

void EmulatedBus::StripePort::rebuild_member(uint16_t group, unsigned port,
                                             const Progress& progress) {
  call([&](model::EmulatedBoard& board) { board.stripe_rebuild_member(group, port, progress); });
}

stripe::ScrubReport EmulatedBus::StripePort::scrub(uint16_t group, bool repair, bool dry_run,
                                                   const Progress& progress) {
  return call([&](model::EmulatedBoard& board) {
    return board.stripe_scrub(group, repair, dry_run, progress);
  });
}

void EmulatedBus::StripePort::discard(uint16_t group) {
  call([&](model::EmulatedBoard& board) { board.stripe_discard(group); });
}

// The clock thread is the board's clock and the driver's interrupt handler in one. The
// board's registers need no clock to be current (model::EmulatedBoard::run_clock brings
// the TDM block up to the host's time whenever it is accessed), so the thread runs the
// clock only for what the board does on its own that ends in an interrupt, and sleeps
// until the board's next such event (cycles_to_next_event(): an armed TDM swap's frame
// boundary), or until an access shows that the board has news (events(): an interrupt
// raised by a write, a reset, a new arm or TDM configuration; notice_events() wakes it),
// or at the latest until the next health check. That one is the only timer: nothing tells
// asnd that another process truncated or replaced the board's memory file, or pressed the
// board's external reset input (MemoryHeader::reset_request); every 250 ms (the interval
// check_health has always kept) is soon enough for either, an operator's or a test's time,
// and costs an idle asnd four passes a second instead of a thousand.
void EmulatedBus::clock_loop() {
  using Clock = std::chrono::steady_clock;
  const uint64_t hz = board_->profile().cap(regmap::Cap::kClockHz);
  std::unique_lock lock(clock_mutex_);
  while (!stopping_) {
    kicked_ = false;
    lock.unlock();
    // Read first: whatever the board counts from here on is looked at by this pass or
    // wakes the next one.
    const uint64_t events = board_->events();
    check_health();
    bool working = false;
    {
      std::lock_guard failed(failed_mutex_);
      working = failed_.empty();
    }
    uint64_t cycles = model::kNoEvent;
    if (working) {
      board_->advance_to(host_time_cycles(hz));
      service_interrupts();
      cycles = board_->cycles_to_next_event();
    }
    seen_events_.store(events, std::memory_order_release);
    clock_passes_.fetch_add(1);
    const auto now = Clock::now();
    auto wake = last_health_check_ + health_check_every_;
    if (cycles != model::kNoEvent) wake = std::min(wake, now + cycles_to_time(cycles, hz));
    lock.lock();
    // News during the pass (a swap of our own advance_to among them): another pass.
    if (stopping_ || kicked_ || board_->events() != events) continue;
    planned_sleep_ns_.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count());
    clock_cv_.wait_until(lock, wake, [this] { return stopping_ || kicked_; });
  }
}

}  // namespace asn

#include "emulated_bus.hpp"

#include <fmt/format.h>

#include <chrono>
#include <vector>

#include "error.hpp"

namespace asn {

namespace {

// How often the clock thread advances the model. The model computes whole frames
// arithmetically, so the tick only bounds how late an armed swap is seen, not accuracy.
constexpr auto kClockTick = std::chrono::milliseconds(1);

std::string profile_names() {
  std::string names;
  for (const auto& b : regmap::register_map().boards) {
    names += (names.empty() ? "" : ", ") + std::string(b.name);
  }
  return names;
}

}  // namespace

EmulatedBus::EmulatedBus(const EmulatedBusOptions& options) {
  const regmap::BoardProfile* profile = model::EmulatedBoard::find_profile(options.profile);
  if (profile == nullptr) {
    throw Error(
        ErrorCode::kInvalidArgument,
        fmt::format("unknown board profile '{}' (profiles: {})", options.profile, profile_names()));
  }
  model::OpenOptions open;
  open.power_on_reset = options.power_on_reset;
  open.shm_dir = options.shm_dir;
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
  if (options.run_clock) clock_ = std::thread([this] { clock_loop(); });
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

uint32_t EmulatedBus::read32(uint32_t offset) {
  uint32_t value = 0;
  if (!board_->read32(offset, value)) {
    throw Error(ErrorCode::kHardware,
                fmt::format("{}: bus error reading offset 0x{:x}", describe(), offset));
  }
  return value;
}

void EmulatedBus::write32(uint32_t offset, uint32_t value) {
  if (!board_->write32(offset, value)) {
    throw Error(ErrorCode::kHardware, fmt::format("{}: bus error writing 0x{:x} to offset 0x{:x}",
                                                  describe(), value, offset));
  }
}

void EmulatedBus::execute(std::span<BusOp> ops) {
  std::vector<model::EmulatedBoard::Op> batch;
  batch.reserve(ops.size());
  for (const auto& op : ops) {
    batch.push_back({op.kind == BusOp::Kind::kWrite, op.offset, op.value, false});
  }
  board_->execute(batch);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!batch[i].ok) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("{}: bus error at offset 0x{:x} (operation {} of {} in a batch)",
                              describe(), ops[i].offset, i + 1, ops.size()));
    }
    if (ops[i].kind == BusOp::Kind::kRead) ops[i].value = batch[i].value;
  }
}

void EmulatedBus::clock_loop() {
  const uint64_t hz = board_->profile().clock_hz;
  auto last = std::chrono::steady_clock::now();
  uint64_t carry_ns = 0;  // nanoseconds not yet turned into whole cycles
  std::unique_lock lock(clock_mutex_);
  while (!clock_cv_.wait_for(lock, kClockTick, [this] { return stopping_; })) {
    auto now = std::chrono::steady_clock::now();
    carry_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count();
    last = now;
    uint64_t cycles = carry_ns * hz / 1'000'000'000ull;
    carry_ns -= cycles * 1'000'000'000ull / hz;
    if (cycles > 0) board_->advance(cycles);
  }
}

}  // namespace asn

#include "asn/model/board.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

#include "asn/regmap/regs.hpp"
#include "layout.hpp"
#include "memory_file.hpp"

namespace asn::model {
namespace {

using detail::Effect;
using regmap::BoardProfile;

constexpr size_t kMaxNameLength = 64;
constexpr uint32_t kBusErrorValue = 0xffffffffu;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string hex64(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(value));
  return buf;
}

// 0 would read as "never initialised" to software comparing generations, so skip it.
uint32_t next_generation(uint32_t generation) { return generation + 1 == 0 ? 1 : generation + 1; }

// The profile name of a header, or nothing when the field is not NUL-terminated.
std::optional<std::string> header_profile(const MemoryHeader& header) {
  const void* end = std::memchr(header.profile, '\0', sizeof header.profile);
  if (end == nullptr || end == header.profile) return std::nullopt;
  return std::string(header.profile, static_cast<const char*>(end));
}

}  // namespace

std::string_view to_string(BoardError::Kind kind) {
  switch (kind) {
    case BoardError::Kind::kBadName:
      return "bad name";
    case BoardError::Kind::kBusy:
      return "busy";
    case BoardError::Kind::kProfileMismatch:
      return "profile mismatch";
    case BoardError::Kind::kSystem:
      return "system error";
    case BoardError::Kind::kBadProfile:
      return "bad profile";
  }
  return "?";
}

std::string memory_path(std::string_view name, const OpenOptions& options) {
  if (!valid_name(name)) {
    throw BoardError(BoardError::Kind::kBadName,
                     "board name '" + std::string(name) +
                         "' is invalid: use 1-64 characters of A-Z, a-z, 0-9, '_' and '-'");
  }
  std::string dir = options.shm_dir.empty() ? std::string(".") : options.shm_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir != "/") dir += '/';
  return dir + "asn-board-" + std::string(name);
}

// All state of one open board. Every member function expects `mu` to be held by the caller
// (EmulatedBoard's public functions take it).
class EmulatedBoard::Impl {
 public:
  Impl(std::string_view board_name, const BoardProfile& board_profile, const OpenOptions& options);

  bool read32(uint32_t offset, uint32_t& value);
  bool write32(uint32_t offset, uint32_t value);
  void board_reset();
  void advance(uint64_t cycles);
  bool irq_pending() const;

  mutable std::mutex mu;
  const std::string name;
  const std::string path;
  const BoardProfile& profile;
  const detail::Layout layout;
  OpenReport report;
  detail::MemoryFile file;
  MemoryHeader* header = nullptr;
  uint32_t* image = nullptr;  // the BAR image: word i is byte offset 4 * i

 private:
  // What a bus offset decodes to.
  struct Target {
    size_t block;                        // index into layout.blocks
    const detail::WordDecode* word;      // a register word, or nullptr for a table word
    const detail::WindowDecode* window;  // a table window, or nullptr for a register word
    uint32_t storage;                    // index into image
  };

  const BlockInstance* block_of_type(uint16_t type) const;
  bool decode(uint32_t offset, Target& target) const;
  void init_image();

  uint32_t& reg(const BlockInstance& block, const regmap::RegRef& ref, unsigned word = 0) {
    return image[(block.base + ref.offset) / 4 + word];
  }
  uint32_t& id_reg(const regmap::RegRef& ref) { return reg(layout.blocks.front(), ref); }
  void raise(const regmap::FieldRef& irq) { id_reg(regs::id::kIrqStatus) |= irq.mask(); }
  void bus_error(uint32_t offset);
  void ro_write();

  void apply_effect(Effect effect, const BlockInstance& block, uint32_t old, uint32_t value);
  void port_control_written(const BlockInstance& port, uint32_t old);
  void route_commit();
  uint64_t tdm_frame_cycles();
  void tdm_refresh();
  void tdm_set_current_slot();
  void tdm_swap();
  void tdm_arm();

  const BlockInstance* route_ = nullptr;
  const BlockInstance* tdm_ = nullptr;
};

EmulatedBoard::Impl::Impl(std::string_view board_name, const BoardProfile& board_profile,
                          const OpenOptions& options)
    : name(board_name),
      path(memory_path(board_name, options)),
      profile(board_profile),
      layout(detail::build_layout(regmap::register_map(), board_profile)) {
  if (layout.blocks.front().desc->type != regs::id::kType) {
    throw std::logic_error("register map: the block at offset 0 is not the id block");
  }
  route_ = block_of_type(regs::route::kType);
  tdm_ = block_of_type(regs::tdm::kType);

  const uint64_t digest = regmap::register_map().digest;
  const size_t bytes = kMemoryHeaderBytes + layout.address_space_bytes;
  file = detail::MemoryFile::open_locked(path, name, /*create=*/true);

  const uint64_t old_size = file.size();
  MemoryHeader old{};
  const bool readable = file.read_header(old) &&
                        std::memcmp(old.magic, kMemoryMagic, sizeof old.magic) == 0 &&
                        old.layout_version == kMemoryLayoutVersion;
  const std::optional<std::string> old_profile =
      readable ? header_profile(old) : std::optional<std::string>();

  bool init = true;
  std::string reason;
  if (old_size == 0) {
    report.created = true;
    reason = "new board memory";
  } else if (options.power_on_reset) {
    reason = "power-on reset requested";
  } else if (!readable) {
    reason = "board memory header is not valid (bad magic or layout version)";
  } else if (!old_profile) {
    reason = "board memory header is corrupt (profile name)";
  } else if (*old_profile != profile.name) {
    throw BoardError(BoardError::Kind::kProfileMismatch,
                     "board '" + name + "' holds a " + *old_profile + " board, not " +
                         std::string(profile.name) + " (" + path +
                         "); use power_on_reset (asnd --reset-board) to start it afresh as " +
                         std::string(profile.name) + ", or another board name");
  } else if (old.regmap_digest != digest) {
    reason = "register map changed (digest " + hex64(old.regmap_digest) + " in memory, " +
             hex64(digest) + " now): the board starts as after a firmware update";
  } else if (old.state != kMemoryStateReady) {
    reason = "a previous initialisation of the board memory was interrupted";
  } else if (old.header_bytes != kMemoryHeaderBytes ||
             old.address_space_bytes != layout.address_space_bytes || old_size != bytes) {
    reason = "board memory has the wrong size (" + std::to_string(old_size) + " bytes, " +
             std::to_string(bytes) + " expected)";
  } else {
    init = false;
  }

  std::byte* memory = file.map(bytes);
  header = reinterpret_cast<MemoryHeader*>(memory);
  image = reinterpret_cast<uint32_t*>(memory + kMemoryHeaderBytes);
  if (init) {
    std::memset(memory, 0, kMemoryHeaderBytes);
    std::memcpy(header->magic, kMemoryMagic, sizeof header->magic);
    header->layout_version = kMemoryLayoutVersion;
    header->header_bytes = kMemoryHeaderBytes;
    header->regmap_digest = digest;
    std::memcpy(header->profile, profile.name.data(), profile.name.size());
    header->address_space_bytes = layout.address_space_bytes;
    header->generation = readable && !report.created ? next_generation(old.generation) : 1;
    init_image();
    report.reinitialised = !report.created;
    report.reason = reason;
  }
}

const BlockInstance* EmulatedBoard::Impl::block_of_type(uint16_t type) const {
  for (const BlockInstance& block : layout.blocks) {
    if (block.desc->type == type) return &block;
  }
  return nullptr;
}

void EmulatedBoard::Impl::init_image() {
  header->state = kMemoryStateInitialising;
  // Keep the compiler from moving the stores below across the state changes: a process
  // that dies half way must leave "initialising" behind.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memset(image, 0, layout.address_space_bytes);
  for (const auto& [word, value] : layout.reset_words) image[word] = value;
  header->tdm_phase = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  header->state = kMemoryStateReady;
}

bool EmulatedBoard::Impl::decode(uint32_t offset, Target& target) const {
  if (offset % 4 != 0 || offset >= layout.address_space_bytes) return false;
  // bases[0] == 0, so the block is the last one that starts at or below the offset.
  const auto it = std::upper_bound(layout.bases.begin(), layout.bases.end(), offset);
  const size_t i = static_cast<size_t>(it - layout.bases.begin()) - 1;
  const BlockInstance& block = layout.blocks[i];
  const uint32_t rel = offset - block.base;
  if (rel >= block.desc->size) return false;  // the gap before the next aligned block
  const detail::BlockDecode& decode = layout.decode[layout.decode_index[i]];

  for (const detail::WindowDecode& window : decode.windows) {
    if (rel < window.offset || rel - window.offset >= window.bytes) continue;
    const uint32_t within = rel - window.offset;
    // The window is sized for the largest board; this board implements fewer entries.
    if (within / window.entry_bytes >= window.entries) return false;
    unsigned bank = 0;
    if (window.double_buffered) {
      const bool active = (image[(block.base + decode.bank_offset) / 4] & decode.bank_mask) != 0;
      bank = window.active_window == active ? 1 : 0;
    }
    target = Target{i, nullptr, &window, (block.base + window.bank_offset[bank] + within) / 4};
    return true;
  }
  const size_t word = rel / 4;
  if (word >= decode.words.size() || !decode.words[word].mapped) return false;
  target = Target{i, &decode.words[word], nullptr, offset / 4};
  return true;
}

void EmulatedBoard::Impl::bus_error(uint32_t offset) {
  ++id_reg(regs::id::kBusErrorCount);
  id_reg(regs::id::kBusErrorAddr) = offset;
  raise(regs::id::kIrqStatusBusError);
}

void EmulatedBoard::Impl::ro_write() {
  ++id_reg(regs::id::kRoWriteCount);
  raise(regs::id::kIrqStatusRoWrite);
}

bool EmulatedBoard::Impl::read32(uint32_t offset, uint32_t& value) {
  Target target{};
  if (!decode(offset, target)) {
    bus_error(offset);
    value = kBusErrorValue;
    return false;
  }
  if (target.word == nullptr) {
    value = image[target.storage];  // table words are plain RAM
    return true;
  }
  const uint32_t stored =
      target.word->effect == Effect::kGeneration ? header->generation : image[target.storage];
  // WO bits read as zero and reserved bits too, whatever the memory holds.
  value = stored & target.word->readable();
  return true;
}

bool EmulatedBoard::Impl::write32(uint32_t offset, uint32_t value) {
  Target target{};
  if (!decode(offset, target)) {
    bus_error(offset);
    return false;
  }
  if (target.window != nullptr) {
    if (target.window->writable) {
      image[target.storage] = value;
    } else {
      ro_write();
    }
    return true;
  }
  const detail::WordDecode& word = *target.word;
  if (!word.writable()) {
    ro_write();
    return true;
  }
  const uint32_t old = image[target.storage];
  // RO bits keep their value, RW bits take the new one, W1C bits clear where a 1 is written;
  // WO and reserved bits are never stored.
  image[target.storage] = (old & word.ro) | (value & word.rw) | (old & word.w1c & ~value);
  apply_effect(word.effect, layout.blocks[target.block], old, value);
  return true;
}

void EmulatedBoard::Impl::apply_effect(Effect effect, const BlockInstance& block, uint32_t old,
                                       uint32_t value) {
  switch (effect) {
    case Effect::kBoardControl:
      if ((value & regs::id::kControlBoardReset.mask()) != 0) board_reset();
      break;
    case Effect::kPortControl:
      port_control_written(block, old);
      break;
    case Effect::kRouteControl:
      if ((value & regs::route::kControlCommit.mask()) != 0) route_commit();
      break;
    case Effect::kTdmControl:
      // Both bits at once: arm, then cancel it (a stopped sequencer has swapped already).
      if ((value & regs::tdm::kControlArm.mask()) != 0) tdm_arm();
      if ((value & regs::tdm::kControlDisarm.mask()) != 0) {
        uint32_t& status = reg(*tdm_, regs::tdm::kStatus);
        status = regs::tdm::kStatusArmed.put(status, 0);
      }
      break;
    case Effect::kTdmTiming:
      tdm_refresh();
      break;
    case Effect::kNone:
    case Effect::kGeneration:
      break;
  }
}

void EmulatedBoard::Impl::board_reset() {
  header->generation = next_generation(header->generation);
  init_image();
}

void EmulatedBoard::Impl::port_control_written(const BlockInstance& port, uint32_t old) {
  namespace p = regs::port;
  const uint32_t enable = p::kControlEnable.get(reg(port, p::kControl));
  if (enable == p::kControlEnable.get(old)) return;
  // The emulated link has no cable to lose: it is up exactly while the port is enabled.
  uint32_t& link = reg(port, p::kLink);
  link = p::kLinkUp.put(link, enable);
  link = p::kLinkChanges.put(link, p::kLinkChanges.get(link) + 1);  // put() wraps at 16 bits
  raise(regs::id::kIrqStatusLinkChange);
}

void EmulatedBoard::Impl::route_commit() {
  namespace r = regs::route;
  // Both double-buffered tables follow status.active_bank, so one flip swaps them together
  // without copying a word.
  uint32_t& status = reg(*route_, r::kStatus);
  status ^= r::kStatusActiveBank.mask();
  ++reg(*route_, r::kCommitCount);
  raise(regs::id::kIrqStatusRouteCommit);
}

uint64_t EmulatedBoard::Impl::tdm_frame_cycles() {
  namespace t = regs::tdm;
  const uint64_t slots = t::kSlotsInUseSlots.get(reg(*tdm_, t::kSlotsInUse));
  const uint64_t slot_length = t::kSlotLengthCycles.get(reg(*tdm_, t::kSlotLength));
  uint64_t frame = slots * slot_length;
  if (t::kConfigWormhole.get(reg(*tdm_, t::kConfig)) != 0) {
    frame += t::kWormholeLengthCycles.get(reg(*tdm_, t::kWormholeLength));
  }
  return frame;
}

// Keeps status.running and current_slot in step with the configuration. A stopped
// sequencer is held at the start of a frame, so it restarts in slot 0.
void EmulatedBoard::Impl::tdm_refresh() {
  namespace t = regs::tdm;
  const bool running = t::kConfigEnable.get(reg(*tdm_, t::kConfig)) != 0 && tdm_frame_cycles() > 0;
  uint32_t& status = reg(*tdm_, t::kStatus);
  status = t::kStatusRunning.put(status, running ? 1 : 0);
  if (!running) header->tdm_phase = 0;
  tdm_set_current_slot();
}

void EmulatedBoard::Impl::tdm_set_current_slot() {
  namespace t = regs::tdm;
  uint32_t slot = 0;
  if (t::kStatusRunning.get(reg(*tdm_, t::kStatus)) != 0) {
    const uint64_t slots = t::kSlotsInUseSlots.get(reg(*tdm_, t::kSlotsInUse));
    const uint64_t slot_length = t::kSlotLengthCycles.get(reg(*tdm_, t::kSlotLength));
    const uint64_t phase = header->tdm_phase;
    // Past the preloaded slots is the wormhole slot, numbered slots_in_use.
    slot = static_cast<uint32_t>(phase < slots * slot_length ? phase / slot_length : slots);
  }
  uint32_t& current = reg(*tdm_, t::kCurrentSlot);
  current = t::kCurrentSlotSlot.put(current, slot);
}

void EmulatedBoard::Impl::tdm_swap() {
  namespace t = regs::tdm;
  uint32_t& status = reg(*tdm_, t::kStatus);
  status ^= t::kStatusActiveBank.mask();
  status = t::kStatusArmed.put(status, 0);
  ++reg(*tdm_, t::kSwapCount);
  raise(regs::id::kIrqStatusTdmSwap);
}

void EmulatedBoard::Impl::tdm_arm() {
  namespace t = regs::tdm;
  uint32_t& status = reg(*tdm_, t::kStatus);
  if (t::kStatusRunning.get(status) == 0) {
    tdm_swap();  // no frame boundary will come: a stopped sequencer swaps at once
  } else {
    status = t::kStatusArmed.put(status, 1);
  }
}

// Slot-length policies (SES, SLA, PREEMPT in tdm.config.policy) are stored but not modelled
// yet: every preloaded slot lasts slot_length cycles. They come with the TDM issue.
void EmulatedBoard::Impl::advance(uint64_t cycles) {
  namespace t = regs::tdm;
  if (tdm_ == nullptr || cycles == 0) return;
  if (t::kStatusRunning.get(reg(*tdm_, t::kStatus)) == 0) return;
  const uint64_t frame = tdm_frame_cycles();  // > 0 while running (tdm_refresh keeps it so)

  // O(1) in cycles: whole frames by division, the rest moves the phase.
  uint64_t phase = header->tdm_phase;
  uint64_t frames = 0;
  if (phase >= frame) {
    // The frame was shortened while the sequencer was inside its tail: it ends now.
    frames = 1;
    phase = 0;
  }
  frames += cycles / frame;
  phase += cycles % frame;
  if (phase >= frame) {
    phase -= frame;
    ++frames;
  }
  header->tdm_phase = phase;

  if (frames != 0) {
    uint32_t& lo = reg(*tdm_, t::kFrameCounter, 0);
    uint32_t& hi = reg(*tdm_, t::kFrameCounter, 1);
    const uint64_t counter = ((uint64_t{hi} << 32) | lo) + frames;
    lo = static_cast<uint32_t>(counter);
    hi = static_cast<uint32_t>(counter >> 32);
    // The swap happens at the first boundary crossed; later frames run on the new bank.
    if (t::kStatusArmed.get(reg(*tdm_, t::kStatus)) != 0) tdm_swap();
  }
  tdm_set_current_slot();
}

bool EmulatedBoard::Impl::irq_pending() const {
  // Both words only ever hold their defined bits: writes and raise() never store others.
  const uint32_t* id = image + layout.blocks.front().base / 4;
  return (id[regs::id::kIrqStatus.offset / 4] & id[regs::id::kIrqMask.offset / 4]) != 0;
}

// ---------------------------------------------------------------------------------------

EmulatedBoard::EmulatedBoard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EmulatedBoard::~EmulatedBoard() = default;

std::unique_ptr<EmulatedBoard> EmulatedBoard::open(std::string_view name,
                                                   const BoardProfile& profile,
                                                   const OpenOptions& options) {
  return std::unique_ptr<EmulatedBoard>(
      new EmulatedBoard(std::make_unique<Impl>(name, profile, options)));
}

void EmulatedBoard::destroy(std::string_view name, const OpenOptions& options) {
  const std::string path = memory_path(name, options);
  detail::MemoryFile file = detail::MemoryFile::open_locked(path, name, /*create=*/false);
  if (file.is_open()) file.unlink();  // under the lock, so never a board in use
}

const BoardProfile* EmulatedBoard::find_profile(std::string_view name) {
  for (const BoardProfile& profile : regmap::register_map().boards) {
    if (profile.name == name) return &profile;
  }
  return nullptr;
}

const OpenReport& EmulatedBoard::open_report() const { return impl_->report; }
const BoardProfile& EmulatedBoard::profile() const { return impl_->profile; }
const std::string& EmulatedBoard::name() const { return impl_->name; }
const std::string& EmulatedBoard::path() const { return impl_->path; }

bool EmulatedBoard::read32(uint32_t offset, uint32_t& value) {
  std::lock_guard lock(impl_->mu);
  return impl_->read32(offset, value);
}

bool EmulatedBoard::write32(uint32_t offset, uint32_t value) {
  std::lock_guard lock(impl_->mu);
  return impl_->write32(offset, value);
}

void EmulatedBoard::execute(std::span<Op> ops) {
  std::lock_guard lock(impl_->mu);
  for (Op& op : ops) {
    op.ok = op.write ? impl_->write32(op.offset, op.value) : impl_->read32(op.offset, op.value);
  }
}

void EmulatedBoard::board_reset() {
  std::lock_guard lock(impl_->mu);
  impl_->board_reset();
}

void EmulatedBoard::advance(uint64_t cycles) {
  std::lock_guard lock(impl_->mu);
  impl_->advance(cycles);
}

uint32_t EmulatedBoard::generation() const {
  std::lock_guard lock(impl_->mu);
  return impl_->header->generation;
}

uint32_t EmulatedBoard::address_space_bytes() const { return impl_->layout.address_space_bytes; }

std::span<const BlockInstance> EmulatedBoard::blocks() const { return impl_->layout.blocks; }

const BlockInstance* EmulatedBoard::find_block(uint16_t type, unsigned index) const {
  for (const BlockInstance& block : impl_->layout.blocks) {
    if (block.desc->type == type && block.index == index) return &block;
  }
  return nullptr;
}

bool EmulatedBoard::irq_pending() const {
  std::lock_guard lock(impl_->mu);
  return impl_->irq_pending();
}

}  // namespace asn::model

#include "asn/model/board.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "asn/regmap/regs.hpp"
#include "block_model.hpp"
#include "blocks/id_block.hpp"
#include "engines/board_router_view.hpp"
#include "engines/parity_path.hpp"
#include "layout.hpp"
#include "memory_file.hpp"
#include "owned_profile.hpp"

namespace asn::model {
namespace {

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

std::string hex32(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", value);
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
class EmulatedBoard::Impl final : public detail::BoardContext {
 public:
  Impl(std::string_view board_name, const BoardProfile& board_profile, const OpenOptions& options);

  bool read32(uint32_t offset, uint32_t& value);
  bool write32(uint32_t offset, uint32_t value);
  // A run of consecutive words in one table window (a descriptor, a record, its data) is
  // decoded at its first word only, as a burst. A register access ends the run: its write
  // may swap a bank.
  struct Burst {
    const detail::WindowDecode* window = nullptr;
    uint32_t next_offset = 0;  // the offset that continues the run
    uint32_t within = 0;       // of the run's last word, from the window's start
    uint32_t storage = 0;      // of the run's last word
    bool clock_ran = false;    // the batch ran the clock to now (run_clock) already
  };
  bool access(Op& op, Burst& burst);
  void advance(uint64_t cycles);
  bool irq_pending();
  engines::RouteDecision route_packet(const engines::PacketHeader& header, uint32_t random);
  void set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets);
  void advance_to(uint64_t time);
  uint64_t cycles_to_next_event();
  void set_traffic_pending(uint32_t slot, bool pending);
  // With run_clock: before an access at `offset` to a block whose registers follow the
  // clock, runs the clock up to now, unless `ran` says this access or batch did.
  void catch_up(uint32_t offset, bool& ran);
  // Index of the block of `type`'s first instance; throws std::out_of_range if none.
  size_t block_index(uint16_t type) const;
  detail::RegisterView block_view(size_t block) { return view(block); }

  // BoardContext, for the block models.
  const BoardProfile& profile() const override { return owned_profile.get(); }
  uint32_t generation() const override { return header->generation; }
  void raise(const regmap::FieldRef& cause) override {
    detail::RegisterView id = id_view();
    const uint32_t enabled = id.word(regs::id::kIrqMask);
    const uint32_t before = id.word(regs::id::kIrqStatus) & enabled;
    detail::IdBlockModel::raise(id, cause);
    // An interrupt the driver enabled and has not yet seen: the line goes up.
    if ((id.word(regs::id::kIrqStatus) & enabled) != before) note_event();
  }
  void note_event() { events.fetch_add(1, std::memory_order_release); }
  void board_reset() override;
  std::span<uint64_t> private_state(const BlockInstance& block) override;
  std::span<std::byte> dram(const BlockInstance& block) override;
  size_t dram_total() const { return dram_total_; }

  mutable std::mutex mu;
  const std::string name;
  const std::string path;
  const regmap::RegisterMap& map;
  const detail::OwnedProfile owned_profile;
  const detail::Layout layout;
  OpenReport report;
  detail::MemoryFile file;
  MemoryHeader* header = nullptr;
  uint32_t* image = nullptr;              // the BAR image: word i is byte offset 4 * i
  std::function<uint64_t()> time_source;  // run_clock's; empty: advance() only
  std::atomic<uint64_t> events{0};        // EmulatedBoard::events()

 private:
  // What a bus offset decodes to.
  struct Target {
    size_t block;                        // index into layout.blocks
    const detail::WordDecode* word;      // a register word, or nullptr for a table word
    const detail::WindowDecode* window;  // a table window, or nullptr for a register word
    uint32_t storage;                    // index into image
    uint32_t within = 0;                 // a table word's byte offset in its window
  };

  void create_models();
  bool decode(uint32_t offset, Target& target) const;
  // The access itself, at a decoded target (nullptr: nothing answers at `offset`).
  bool read(const Target* target, uint32_t offset, uint32_t& value);
  bool write(const Target* target, uint32_t offset, uint32_t value);
  void init_image();
  detail::RegisterView view(size_t block) {
    return detail::RegisterView(image, layout.blocks[block],
                                layout.decode[layout.decode_index[block]]);
  }
  detail::RegisterView id_view() { return view(0); }

  // One model per block instance, in layout order, and where its private state starts.
  std::vector<std::unique_ptr<detail::BlockModel>> models_;
  std::vector<size_t> private_offset_;
  // Where each model's DRAM starts, after the BAR image, and how much there is in all.
  std::vector<size_t> dram_offset_;
  std::vector<size_t> dram_size_;
  size_t dram_total_ = 0;
  std::byte* dram_ = nullptr;
};

namespace {

bool same_field(const regmap::FieldRef& a, const regmap::RegisterDesc& reg,
                const regmap::FieldDesc& field) {
  return a.reg.offset == reg.offset && a.lsb == field.lsb && a.width == field.width;
}

bool lists(const std::vector<regmap::FieldRef>& fields, const regmap::RegisterDesc& reg,
           const regmap::FieldDesc& field) {
  return std::any_of(fields.begin(), fields.end(),
                     [&](const regmap::FieldRef& f) { return same_field(f, reg, field); });
}

const regmap::RegisterDesc* register_named(const regmap::BlockDesc& block, std::string_view name) {
  for (const regmap::RegisterDesc& reg : block.registers) {
    if (reg.name == name) return &reg;
  }
  return nullptr;
}

// A model acts on the write-only fields and bank swaps it lists; a map that has others for
// its block is refused (the behaviour would silently be missing).
void check_contract(const detail::BlockModel& model, const BlockInstance& block) {
  const regmap::BlockDesc& desc = *block.desc;
  auto refuse = [&](const std::string& what) {
    throw std::logic_error("register map block '" + std::string(desc.name) + "': " + what +
                           " has no behaviour in the model");
  };
  const auto wo = model.write_only_fields();
  for (const regmap::RegisterDesc& reg : desc.registers) {
    if (reg.since > block.version) continue;
    for (const regmap::FieldDesc& field : reg.fields) {
      if (field.access == regmap::Access::kWO && field.since <= block.version &&
          !lists(wo, reg, field)) {
        refuse("write-only field " + std::string(reg.name) + "." + std::string(field.name));
      }
    }
  }
  const auto swaps = model.swaps();
  for (const regmap::TableDesc& table : desc.tables) {
    if (!table.double_buffered() || table.since > block.version) continue;
    const regmap::RegisterDesc* reg = register_named(desc, table.swap_register);
    const regmap::FieldDesc* field = nullptr;
    for (const regmap::FieldDesc& f : reg ? reg->fields : std::span<const regmap::FieldDesc>()) {
      if (f.name == table.swap_field) field = &f;
    }
    if (field == nullptr || !lists(swaps, *reg, *field)) {
      refuse("the bank swap of table " + std::string(table.name));
    }
  }
}

}  // namespace

EmulatedBoard::Impl::Impl(std::string_view board_name, const BoardProfile& board_profile,
                          const OpenOptions& options)
    : name(board_name),
      path(memory_path(board_name, options)),
      map(options.map ? *options.map : regmap::register_map()),
      owned_profile(board_profile),
      layout(detail::build_layout(map, owned_profile.get())) {
  if (layout.blocks.front().desc->type != regs::id::kType) {
    throw std::logic_error("register map: the block at offset 0 is not the id block");
  }
  create_models();

  const BoardProfile& profile = owned_profile.get();
  const uint64_t digest = map.digest;
  const size_t bar_bytes = kMemoryHeaderBytes + layout.address_space_bytes;
  const size_t bytes = bar_bytes + dram_total_;
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
  } else if (old.header_bytes != kMemoryHeaderBytes) {
    reason = "board memory header says it is " + std::to_string(old.header_bytes) +
             " bytes long; it is " + std::to_string(kMemoryHeaderBytes) +
             " (the header is damaged)";
  } else if (old.address_space_bytes != layout.address_space_bytes) {
    reason = "board memory header gives an address space of " +
             std::to_string(old.address_space_bytes) + " bytes; a " + std::string(profile.name) +
             " board has " + std::to_string(layout.address_space_bytes) +
             " (the header is damaged)";
  } else if (old_size != bytes) {
    reason = "board memory file is " + std::to_string(old_size) + " bytes; header, register " +
             "space and DRAM take " + std::to_string(bytes) +
             " (the file was truncated or extended)";
  } else {
    init = false;
  }

  std::byte* memory = file.map(bytes, bar_bytes);
  header = reinterpret_cast<MemoryHeader*>(memory);
  image = reinterpret_cast<uint32_t*>(memory + kMemoryHeaderBytes);
  dram_ = memory + bar_bytes;
  if (!init) {
    // Words that are fixed by the profile must read as the profile says, or the memory is
    // damaged and none of it is trusted (a capability read from it would size tables).
    for (const auto& identity : layout.identity_words) {
      if (image[identity.word] == identity.value) continue;
      reason = identity.name + " reads " + hex32(image[identity.word]) +
               " in the board memory, where a " + std::string(profile.name) + " board has " +
               hex32(identity.value) + ": the memory is damaged";
      init = true;
      break;
    }
  }
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
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    models_[i]->attach(*this, v);
  }
}

void EmulatedBoard::Impl::create_models() {
  size_t next = 0;
  for (const BlockInstance& block : layout.blocks) {
    auto model = detail::make_block_model(*block.desc);
    check_contract(*model, block);
    private_offset_.push_back(next);
    next += model->private_words();
    constexpr size_t kPage = 4096;
    const size_t dram = (model->dram_bytes(owned_profile.get()) + kPage - 1) / kPage * kPage;
    dram_offset_.push_back(dram_total_);
    dram_size_.push_back(dram);
    dram_total_ += dram;
    models_.push_back(std::move(model));
  }
  if (next > kModelStateWords) {
    throw std::logic_error("the block models need " + std::to_string(next) +
                           " words of private state; the memory header holds " +
                           std::to_string(kModelStateWords));
  }
}

std::span<uint64_t> EmulatedBoard::Impl::private_state(const BlockInstance& block) {
  const size_t i = static_cast<size_t>(&block - layout.blocks.data());
  return {header->model_state + private_offset_[i], models_[i]->private_words()};
}

std::span<std::byte> EmulatedBoard::Impl::dram(const BlockInstance& block) {
  const size_t i = static_cast<size_t>(&block - layout.blocks.data());
  return {dram_ + dram_offset_[i], dram_size_[i]};
}

void EmulatedBoard::Impl::init_image() {
  header->state = kMemoryStateInitialising;
  // Keep the compiler from moving the stores below across the state changes: a process
  // that dies half way must leave "initialising" behind.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memset(image, 0, layout.address_space_bytes);
  std::memset(header->model_state, 0, sizeof header->model_state);
  // DRAM is reinitialised too (the lock table is emptied), as a hole: no page is touched.
  file.zero(kMemoryHeaderBytes + layout.address_space_bytes, dram_total_);
  for (const auto& [word, value] : layout.reset_words) image[word] = value;
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    models_[i]->reset(*this, v);
  }
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
      const bool active = (image[block.base / 4 + window.bank_word] & window.bank_mask) != 0;
      bank = window.active_window == active ? 1 : 0;
    }
    target =
        Target{i, nullptr, &window, (block.base + window.bank_offset[bank] + within) / 4, within};
    return true;
  }
  const size_t word = rel / 4;
  if (word >= decode.words.size() || !decode.words[word].mapped()) return false;
  target = Target{i, &decode.words[word], nullptr, offset / 4};
  return true;
}

void EmulatedBoard::Impl::catch_up(uint32_t offset, bool& ran) {
  if (ran || !time_source || offset >= layout.address_space_bytes) return;
  const auto it = std::upper_bound(layout.bases.begin(), layout.bases.end(), offset);
  const size_t block = static_cast<size_t>(it - layout.bases.begin()) - 1;
  if (!models_[block]->clocked()) return;
  ran = true;
  // Before the access is decoded: the clock may swap the banks a window shows.
  advance_to(time_source());
}

bool EmulatedBoard::Impl::read32(uint32_t offset, uint32_t& value) {
  bool ran = false;
  catch_up(offset, ran);
  Target target{};
  return read(decode(offset, target) ? &target : nullptr, offset, value);
}

bool EmulatedBoard::Impl::write32(uint32_t offset, uint32_t value) {
  bool ran = false;
  catch_up(offset, ran);
  Target target{};
  return write(decode(offset, target) ? &target : nullptr, offset, value);
}

bool EmulatedBoard::Impl::access(Op& op, Burst& burst) {
  if (!burst.clock_ran && time_source) {
    catch_up(op.offset, burst.clock_ran);
    // The clock may have swapped banks (or reset the board) under the run.
    if (burst.clock_ran) burst.window = nullptr;
  }
  if (burst.window != nullptr && op.offset == burst.next_offset) {
    const detail::WindowDecode& window = *burst.window;
    const uint32_t within = burst.within + 4;
    // Past the window, past the entries this board implements or a write to a read-only
    // window: decoded in full below, which answers as a single access would.
    if (within < window.bytes && within / window.entry_bytes < window.entries &&
        (!op.write || window.writable)) {
      burst = Burst{&window, op.offset + 4, within, burst.storage + 1, burst.clock_ran};
      if (op.write) {
        image[burst.storage] = op.value;
      } else {
        op.value = image[burst.storage];
      }
      return true;
    }
  }
  Target target{};
  const bool decoded = decode(op.offset, target);
  burst = Burst{.clock_ran = burst.clock_ran};
  if (decoded && target.window != nullptr) {
    burst = Burst{target.window, op.offset + 4, target.within, target.storage, burst.clock_ran};
  }
  const Target* at = decoded ? &target : nullptr;
  return op.write ? write(at, op.offset, op.value) : read(at, op.offset, op.value);
}

bool EmulatedBoard::Impl::read(const Target* target, uint32_t offset, uint32_t& value) {
  if (target == nullptr) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::bus_error(id, offset);
    value = kBusErrorValue;
    return false;
  }
  // Table words are plain RAM; in registers WO and reserved bits read as zero, whatever the
  // memory holds.
  value = image[target->storage];
  if (target->word != nullptr) value &= target->word->readable();
  return true;
}

bool EmulatedBoard::Impl::write(const Target* at, uint32_t offset, uint32_t value) {
  if (at == nullptr) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::bus_error(id, offset);
    return false;
  }
  const Target& target = *at;
  const bool writable = target.window ? target.window->writable : target.word->writable();
  if (!writable) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::ro_write(id);
    return true;
  }
  if (target.window != nullptr) {
    image[target.storage] = value;
    return true;
  }
  const detail::WordDecode& word = *target.word;
  const uint32_t old = image[target.storage];
  // RO bits keep their value, RW bits take the new one, W1C bits clear where a 1 is written;
  // WO and reserved bits are never stored.
  image[target.storage] = (old & word.ro) | (value & word.rw) | (old & word.w1c & ~value);
  detail::RegisterView v = view(target.block);
  models_[target.block]->on_write(*this, v, *word.reg, word.element, old, value);
  // An arm, a new configuration: the block's next event may have moved.
  if (models_[target.block]->clocked()) note_event();
  return true;
}

void EmulatedBoard::Impl::board_reset() {
  // The time base runs on through a reset: it counts a clock that PTP disciplines outside
  // the board's reset domain (for the emulated boards, the host's clock).
  std::optional<size_t> tdm;
  for (size_t i = 0; i < layout.blocks.size() && !tdm; ++i) {
    if (layout.blocks[i].desc->type == regs::tdm::kType) tdm = i;
  }
  const uint64_t time = tdm ? view(*tdm).get64(regs::tdm::kTime) : 0;
  header->generation = next_generation(header->generation);
  init_image();
  if (tdm) view(*tdm).set64(regs::tdm::kTime, time);
  note_event();
}

void EmulatedBoard::Impl::advance(uint64_t cycles) {
  // The external reset input is sampled on the clock, as hardware samples a reset line.
  if (std::atomic_ref<uint32_t>(header->reset_request).exchange(0) != 0) board_reset();
  if (cycles == 0) return;
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    models_[i]->advance(*this, v, cycles);
  }
}

// The engine reads the ROUTE block and the PORT blocks, nothing else.
engines::RouteDecision EmulatedBoard::Impl::route_packet(const engines::PacketHeader& header,
                                                         uint32_t random) {
  size_t route = layout.blocks.size();
  std::vector<detail::RegisterView> ports;
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const uint16_t type = layout.blocks[i].desc->type;
    if (type == regs::route::kType) route = i;
    if (type == regs::port::kType) ports.push_back(view(i));
  }
  if (route == layout.blocks.size()) {
    engines::RouteDecision none;
    none.status = engines::RouteStatus::kBadConfig;
    return none;
  }
  detail::RegisterView route_view = view(route);
  const detail::engines::BoardRouterView router(route_view, ports, owned_profile.get());
  return engines::route_packet(router, header, random);
}

size_t EmulatedBoard::Impl::block_index(uint16_t type) const {
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    if (layout.blocks[i].desc->type == type) return i;
  }
  throw std::out_of_range("the board has no block of type " + std::to_string(type));
}

void EmulatedBoard::Impl::advance_to(uint64_t time) {
  detail::RegisterView tdm = view(block_index(regs::tdm::kType));
  const uint64_t now = tdm.get64(regs::tdm::kTime);
  advance(time > now ? time - now : 0);
}

uint64_t EmulatedBoard::Impl::cycles_to_next_event() {
  // The external reset input is sampled on the clock: at once.
  if (std::atomic_ref<uint32_t>(header->reset_request).load() != 0) return 0;
  uint64_t soonest = kNoEvent;
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    soonest = std::min(soonest, models_[i]->cycles_to_event(*this, v));
  }
  return soonest;
}

void EmulatedBoard::Impl::set_traffic_pending(uint32_t slot, bool pending) {
  const size_t i = block_index(regs::tdm::kType);
  // The input changes now: the frames up to now ran with the old one.
  if (time_source) advance_to(time_source());
  detail::RegisterView tdm = view(i);
  if (slot >= regs::tdm::kTrafficPending.count * 32) {
    throw std::out_of_range("no slot " + std::to_string(slot));
  }
  const regmap::FieldRef word = regs::tdm::kTrafficPendingSlots.at(slot / 32);
  const uint32_t bit = 1u << (slot % 32);
  const uint32_t old = tdm.get(word);
  tdm.set(word, pending ? old | bit : old & ~bit);
  models_[i]->on_input(*this, tdm);
  note_event();  // PREEMPT's frames after the next boundary change length
}

void EmulatedBoard::Impl::set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets) {
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    if (layout.blocks[i].desc->type != regs::port::kType || layout.blocks[i].index != port) {
      continue;
    }
    if (vc >= regs::port::kVcOccupancy.count) break;
    detail::RegisterView v = view(i);
    v.set(regs::port::kVcOccupancyPackets.at(vc), packets);
    return;
  }
  throw std::out_of_range("no queue " + std::to_string(vc) + " of port " + std::to_string(port));
}

bool EmulatedBoard::Impl::irq_pending() {
  detail::RegisterView id = id_view();
  return detail::IdBlockModel::irq_pending(id);
}

// ---------------------------------------------------------------------------------------

EmulatedBoard::EmulatedBoard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EmulatedBoard::~EmulatedBoard() = default;

std::unique_ptr<EmulatedBoard> EmulatedBoard::open(std::string_view name,
                                                   const BoardProfile& profile,
                                                   const OpenOptions& options) {
  std::unique_ptr<EmulatedBoard> board(
      new EmulatedBoard(std::make_unique<Impl>(name, profile, options)));
  // The parity data path, on a board with a STRIPE block of version 2: it reaches the
  // block's registers under the board's lock, and the storage servers the options attach.
  Impl& impl = *board->impl_;
  const auto stripe = std::find_if(
      impl.layout.blocks.begin(), impl.layout.blocks.end(),
      [](const BlockInstance& b) { return b.desc->type == regs::stripe::kType && b.version >= 2; });
  if (stripe == impl.layout.blocks.end()) return board;
  std::unique_ptr<StorageServers> storage;
  try {
    if (!options.storage_dir.empty())
      storage = std::make_unique<StorageServers>(options.storage_dir);
  } catch (const StripeError& e) {
    throw BoardError(BoardError::Kind::kSystem, e.what());
  }
  const auto block = static_cast<size_t>(stripe - impl.layout.blocks.begin());
  auto registers = [&impl, block](const std::function<void(detail::RegisterView&)>& fn) {
    std::lock_guard lock(impl.mu);
    detail::RegisterView v = impl.block_view(block);
    fn(v);
  };
  board->parity_ = std::make_unique<detail::engines::ParityPath>(registers, std::move(storage));
  return board;
}

void EmulatedBoard::destroy(std::string_view name, const OpenOptions& options) {
  const std::string path = memory_path(name, options);
  detail::MemoryFile file = detail::MemoryFile::open_locked(path, name, /*create=*/false);
  if (file.is_open()) file.unlink();  // under the lock, so never a board in use
}

const BoardProfile* EmulatedBoard::find_profile(std::string_view name) {
  return regmap::register_map().board(name);
}

const OpenReport& EmulatedBoard::open_report() const { return impl_->report; }
const BoardProfile& EmulatedBoard::profile() const { return impl_->owned_profile.get(); }
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
  Impl::Burst burst;
  for (Op& op : ops) op.ok = impl_->access(op, burst);
}

void EmulatedBoard::board_reset() {
  std::lock_guard lock(impl_->mu);
  impl_->board_reset();
}

void EmulatedBoard::advance(uint64_t cycles) {
  std::lock_guard lock(impl_->mu);
  impl_->advance(cycles);
}

void EmulatedBoard::run_clock(std::function<uint64_t()> time) {
  std::lock_guard lock(impl_->mu);
  impl_->time_source = std::move(time);
}

uint64_t EmulatedBoard::cycles_to_next_event() {
  std::lock_guard lock(impl_->mu);
  return impl_->cycles_to_next_event();
}

uint64_t EmulatedBoard::events() const { return impl_->events.load(std::memory_order_acquire); }

uint32_t EmulatedBoard::generation() const {
  std::lock_guard lock(impl_->mu);
  return impl_->header->generation;
}

uint32_t EmulatedBoard::address_space_bytes() const { return impl_->layout.address_space_bytes; }

uint64_t EmulatedBoard::dram_bytes() const { return impl_->dram_total(); }

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

engines::RouteDecision EmulatedBoard::route_packet(const engines::PacketHeader& header,
                                                   uint32_t random) {
  std::lock_guard lock(impl_->mu);
  return impl_->route_packet(header, random);
}

void EmulatedBoard::set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets) {
  std::lock_guard lock(impl_->mu);
  impl_->set_queue_occupancy(port, vc, packets);
}

void EmulatedBoard::advance_to(uint64_t time) {
  std::lock_guard lock(impl_->mu);
  impl_->advance_to(time);
}

void EmulatedBoard::set_traffic_pending(uint32_t slot, bool pending) {
  std::lock_guard lock(impl_->mu);
  impl_->set_traffic_pending(slot, pending);
}

std::string EmulatedBoard::problem() const {
  std::lock_guard lock(impl_->mu);
  return impl_->file.problem();
}

}  // namespace asn::model

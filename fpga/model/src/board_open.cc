// Opening an emulated board: the board memory file (created, kept or reinitialised, and
// why), the image's reset values, and the check that each block's model implements every
// write-only field and bank swap the register map declares. Bus access and the clock are in
// board.cc.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "asn/model/board.hpp"
#include "board_impl.hpp"
#include "engines/parity_path.hpp"

namespace asn::model {
namespace {

using regmap::BoardProfile;

constexpr size_t kMaxNameLength = 64;

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

// The profile name of a header, or nothing when the field is not NUL-terminated.
std::optional<std::string> header_profile(const MemoryHeader& header) {
  const void* end = std::memchr(header.profile, '\0', sizeof header.profile);
  if (end == nullptr || end == header.profile) return std::nullopt;
  return std::string(header.profile, static_cast<const char*>(end));
}

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
    header->generation = readable && !report.created ? detail::next_generation(old.generation) : 1;
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

}  // namespace asn::model

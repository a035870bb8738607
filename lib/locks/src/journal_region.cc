// RegionJournal: the checkpoint and log of a DurableTable in one region of memory (the
// layout and the order of stores are described in durable.hpp).
#include <atomic>
#include <cstring>

#include "asn/locks/durable.hpp"
#include "codec.hpp"
#include "format.hpp"

namespace asn::locks {
namespace {

using detail::cat;

constexpr uint64_t kRegionMagic = 0x314a524b4c4e5341ULL;  // "ASNLKRJ1" little-endian
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kSlotHeaderBytes = 24;
constexpr size_t kRegionRecordHeaderBytes = 16;

// Header fields, by byte offset.
constexpr size_t kMagicAt = 0;
constexpr size_t kVersionAt = 8;
constexpr size_t kSlotSizeAt = 16;
constexpr size_t kLogSizeAt = 24;
constexpr size_t kStateAt = 32;

constexpr size_t pad8(size_t n) { return (n + 7) & ~size_t{7}; }

thread_local std::function<void()> store_hook;

uint64_t* word(std::byte* at) { return reinterpret_cast<uint64_t*>(at); }

uint64_t load_word(std::byte* at) {
  return std::atomic_ref<uint64_t>(*word(at)).load(std::memory_order_acquire);
}
void store_word(std::byte* at, uint64_t value) {
  std::atomic_ref<uint64_t>(*word(at)).store(value, std::memory_order_release);
  if (store_hook) [[unlikely]]
    store_hook();
}
// Stores bytes (one at a time under a test's hook, so that it sees every point between).
void store_bytes(std::byte* at, const void* from, size_t n) {
  if (!store_hook) [[likely]] {
    std::memcpy(at, from, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    at[i] = static_cast<const std::byte*>(from)[i];
    store_hook();
  }
}
void zero_bytes(std::byte* at, size_t n) {
  static constexpr uint8_t kZeros[8] = {};
  store_bytes(at, kZeros, n);  // n < 8: the padding of a record
}

LockError bad_region(const std::string& message) {
  return LockError(ErrorKind::kInvalidArgument, "lock journal region: " + message);
}

std::span<const uint8_t> bytes_at(std::byte* at, size_t n) {
  return {reinterpret_cast<const uint8_t*>(at), n};
}

uint64_t commit_word(uint64_t generation, size_t length) {
  return (generation & 0xffffffffu) << 32 | length;
}

}  // namespace

void RegionJournal::set_store_hook(std::function<void()> hook) { store_hook = std::move(hook); }

size_t RegionJournal::bytes_for(size_t capacity_entries) {
  // Per entry: the held entry at worst (5 varints of 10 bytes and the mode), its own file
  // (a 128-byte id with its length and two counts), half a session (an id and a 64-byte
  // label with its length).
  constexpr size_t kPerEntry = 51 + 131 + 38;
  size_t slot = kSlotHeaderBytes + 4096 + capacity_entries * kPerEntry;
  size_t size = pad8(kHeaderBytes + slot * 8 / 3 + 4096);
  size = (size + 4095) & ~size_t{4095};
  while ((((size - kHeaderBytes) - ((size - kHeaderBytes) / 4 & ~size_t{7})) / 2 & ~size_t{7}) <
         slot) {
    size += 4096;
  }
  return size;
}

RegionJournal::RegionJournal(std::span<std::byte> region) : region_(region) {
  if (region.size() < kMinRegionBytes) {
    throw bad_region(cat("a region of ", region.size(),
                         " bytes is too small: a journal needs at "
                         "least ",
                         kMinRegionBytes, " (its ", kHeaderBytes,
                         "-byte header, two checkpoint slots and a log); "
                         "RegionJournal::bytes_for(capacity) suggests a size"));
  }
  if (reinterpret_cast<uintptr_t>(region.data()) % 8 != 0) {
    throw bad_region("the region does not start on an 8-byte boundary");
  }
  uint64_t magic = load_word(at(kMagicAt));
  if (magic == 0) {
    // Formatted on first use. A crash before the magic is stored leaves it to be formatted
    // again: there was nothing in it.
    bool zero = true;
    for (size_t i = 0; i < kHeaderBytes && zero; ++i) zero = region[i] == std::byte{0};
    if (!zero) throw bad_region("the header is not a journal's and not zeros: refusing it");
    size_t rest = region.size() - kHeaderBytes;
    log_size_ = rest / 4 & ~size_t{7};
    slot_size_ = (rest - log_size_) / 2 & ~size_t{7};
    log_offset_ = kHeaderBytes + 2 * slot_size_;
    // Slot 0 holds the empty checkpoint of generation 1; the log starts empty.
    std::byte* slot0 = at(kHeaderBytes);
    store_word(slot0, 0);
    store_word(slot0 + 8, 1);
    store_word(slot0 + 16, detail::image_checksum(1, {}));
    store_word(at(log_offset_), 0);
    store_word(at(kVersionAt), kVersion);
    store_word(at(kSlotSizeAt), slot_size_);
    store_word(at(kLogSizeAt), log_size_);
    store_word(at(kStateAt), uint64_t{1} << 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    store_word(at(kMagicAt), kRegionMagic);
  } else if (magic != kRegionMagic) {
    throw bad_region("the region holds something that is not a lock journal: refusing it");
  } else {
    uint64_t version = load_word(at(kVersionAt));
    if (version != kVersion) {
      throw bad_region(cat("journal version ", version, "; this build reads version ", kVersion));
    }
    uint64_t slot_size = load_word(at(kSlotSizeAt));
    uint64_t log_size = load_word(at(kLogSizeAt));
    if (slot_size % 8 != 0 || log_size % 8 != 0 || slot_size < kSlotHeaderBytes ||
        slot_size > region.size() || log_size > region.size() ||
        kHeaderBytes + 2 * slot_size + log_size > region.size()) {
      throw bad_region(cat("the journal formatted in this region (slots of ", slot_size,
                           " bytes, a log of ", log_size, ") does not fit its ", region.size(),
                           " bytes"));
    }
    slot_size_ = slot_size;
    log_size_ = log_size;
    log_offset_ = kHeaderBytes + 2 * slot_size_;
  }
  uint64_t state = load_word(at(kStateAt));
  generation_ = state >> 1;
  slot_ = static_cast<unsigned>(state & 1);
  log_end_ = scan_log();
}

size_t RegionJournal::slot_offset(unsigned slot) const { return kHeaderBytes + slot * slot_size_; }

size_t RegionJournal::checkpoint_capacity() const { return slot_size_ - kSlotHeaderBytes; }

std::vector<uint8_t> RegionJournal::read_checkpoint() {
  std::byte* slot = at(slot_offset(slot_));
  uint64_t length = load_word(slot);
  uint64_t generation = load_word(slot + 8);
  if (generation != generation_ || length > checkpoint_capacity() ||
      detail::image_checksum(generation, bytes_at(slot + kSlotHeaderBytes, length)) !=
          load_word(slot + 16)) {
    throw LockError(ErrorKind::kInvalidArgument,
                    cat("lock journal region: the checkpoint of generation ", generation_,
                        " in slot ", slot_, " is damaged"));
  }
  auto bytes = bytes_at(slot + kSlotHeaderBytes, length);
  return {bytes.begin(), bytes.end()};
}

size_t RegionJournal::scan_log() const {
  size_t offset = 0;
  while (offset + kRegionRecordHeaderBytes <= log_size_) {
    std::byte* record = at(log_offset_ + offset);
    uint64_t commit = load_word(record);
    size_t length = commit & 0xffffffffu;
    if (commit >> 32 != (generation_ & 0xffffffffu) || length == 0 ||
        length > log_size_ - offset - kRegionRecordHeaderBytes) {
      break;
    }
    if (detail::record_checksum(generation_, offset,
                                bytes_at(record + kRegionRecordHeaderBytes, length)) !=
        load_word(record + 8)) {
      break;  // torn (cannot happen with the order of stores) or damaged
    }
    offset += kRegionRecordHeaderBytes + pad8(length);
  }
  return offset;
}

void RegionJournal::replay(const std::function<void(std::span<const uint8_t>)>& record) {
  size_t offset = 0;
  while (offset < log_end_) {
    std::byte* at_record = at(log_offset_ + offset);
    size_t length = load_word(at_record) & 0xffffffffu;
    record(bytes_at(at_record + kRegionRecordHeaderBytes, length));
    offset += kRegionRecordHeaderBytes + pad8(length);
  }
}

bool RegionJournal::fits(size_t bytes) const {
  return bytes > 0 && bytes <= 0xffffffffu &&
         log_size_ - log_end_ >= kRegionRecordHeaderBytes + pad8(bytes);
}

void RegionJournal::append(std::span<const uint8_t> bytes) {
  if (bytes.empty()) throw LockError(ErrorKind::kInvalidArgument, "empty journal record");
  if (!fits(bytes.size())) {
    throw LockError(ErrorKind::kResourceExhausted,
                    cat("lock journal region: the log is full (", log_end_, " of ", log_size_,
                        " bytes used); a record of ", bytes.size(), " bytes does not fit"));
  }
  std::byte* record = at(log_offset_ + log_end_);
  size_t length = bytes.size();
  size_t next = log_end_ + kRegionRecordHeaderBytes + pad8(length);
  store_bytes(record + kRegionRecordHeaderBytes, bytes.data(), length);
  zero_bytes(record + kRegionRecordHeaderBytes + length, pad8(length) - length);
  store_word(record + 8, detail::record_checksum(generation_, log_end_, bytes));
  // The log ends at the next record until it commits.
  if (next + 8 <= log_size_) store_word(at(log_offset_ + next), 0);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  store_word(record, commit_word(generation_, length));
  log_end_ = next;
}

void RegionJournal::write_checkpoint(std::span<const uint8_t> checkpoint) {
  if (checkpoint.size() > checkpoint_capacity()) {
    throw LockError(
        ErrorKind::kResourceExhausted,
        cat("lock journal region: a checkpoint of ", checkpoint.size(),
            " bytes does not fit a slot of ", checkpoint_capacity(), " bytes (the region holds ",
            region_.size(), "; RegionJournal::bytes_for(capacity) suggests a size)"));
  }
  unsigned slot = slot_ ^ 1u;
  uint64_t generation = generation_ + 1;
  std::byte* at_slot = at(slot_offset(slot));
  store_bytes(at_slot + kSlotHeaderBytes, checkpoint.data(), checkpoint.size());
  store_word(at_slot, checkpoint.size());
  store_word(at_slot + 8, generation);
  store_word(at_slot + 16, detail::image_checksum(generation, checkpoint));
  std::atomic_signal_fence(std::memory_order_seq_cst);
  store_word(at(kStateAt), generation << 1 | slot);  // the switch
  generation_ = generation;
  slot_ = slot;
  log_end_ = 0;
}

}  // namespace asn::locks

// The Device layer: typed access to a board through the references generated from the
// register map (asn/regmap/regs.hpp): registers, fields, 64-bit counters, table entries and
// banks, in batches. It walks the board's block list (device/layout.hpp) and resolves the
// names operators use (device/resolver.hpp). No manager or service computes an offset.
//
// Thread safety: any thread may call any member. The layout is an immutable snapshot,
// replaced as a whole by rediscover(); read-modify-write sequences hold the device's lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "asn/regmap/regs.hpp"
#include "bus/register_bus.hpp"
#include "bus/stripe_data_port.hpp"
#include "device/layout.hpp"
#include "device/target.hpp"

namespace asn {

enum class Bank : uint8_t { kShadow, kActive };

class Device {
 public:
  // Walks the board's blocks; throws what walk_board() throws.
  explicit Device(RegisterBus& bus, const regmap::RegisterMap& map = regmap::register_map());

  // Walks again (after a board reset) and publishes the new layout.
  void rediscover();
  // The current layout. Hold the pointer for as long as a consistent view is needed.
  std::shared_ptr<const DeviceLayout> layout() const;

  RegisterBus& bus() { return bus_; }
  // The striping data path's client side; nullptr on a real board (bus/stripe_data_port.hpp).
  StripeDataPort* stripe_data_port() { return bus_.stripe_data_port(); }
  const regmap::RegisterMap& map() const { return map_; }

  // ---- typed access; instance is the port number for per-port blocks --------------------
  // Access to an item newer than the board's block version throws kFailedPrecondition.
  uint32_t read(regmap::RegRef reg, unsigned instance = 0);
  uint32_t read(regmap::FieldRef field, unsigned instance = 0);
  uint64_t read64(regmap::RegRef reg, unsigned instance = 0);
  void write(regmap::RegRef reg, uint32_t value, unsigned instance = 0);
  // RW fields read-modify-write under the device lock; WO and W1C fields touch only their
  // own bits.
  void write(regmap::FieldRef field, uint32_t value, unsigned instance = 0);

  // Many reads in one bus transaction, in the order added (one system call on a kernel
  // backend): e.g. a ring's producer index and the entries it may have filled.
  class ReadBatch {
   public:
    ReadBatch() { items_.reserve(4); }
    size_t add(regmap::RegRef reg, unsigned instance = 0);
    size_t add(regmap::FieldRef field, unsigned instance = 0);
    size_t add64(regmap::RegRef reg, unsigned instance = 0);
    // `count` whole entries from `first`, as read_entries().
    size_t add_entries(const regmap::TableRef& table, uint32_t first, uint32_t count,
                       Bank bank = Bank::kShadow);
    uint64_t operator[](size_t item) const { return values_.at(item); }
    // The words of an add_entries() item, entries concatenated.
    std::span<const uint32_t> entries(size_t item) const;

   private:
    friend class Device;
    struct Item {
      regmap::RegRef reg{};
      unsigned instance = 0;
      regmap::FieldRef field{};  // width 0: the whole register
      bool wide = false;
      const regmap::TableRef* table = nullptr;  // entries: words_[begin, begin + words)
      uint32_t first = 0;
      uint32_t count = 0;
      Bank bank = Bank::kShadow;
      size_t begin = 0;
    };
    std::vector<Item> items_;
    size_t reads_ = 0;        // bus reads the items make
    size_t entry_words_ = 0;  // of them, words of entries
    std::vector<uint64_t> values_;
    std::vector<uint32_t> words_;
  };
  // Checks every item (entries within their table), then reads all of them at once.
  void read(ReadBatch& batch);

  // Many writes in one bus transaction, in the order added (one system call on a kernel
  // backend): e.g. a ring's descriptor, its producer index and its doorbell.
  class WriteBatch {
   public:
    WriteBatch() { items_.reserve(4); }
    void add(regmap::RegRef reg, uint32_t value, unsigned instance = 0);
    // A field whose register has no other RW field (a read-modify-write cannot be batched:
    // Device::write(WriteBatch&) refuses the batch otherwise).
    void add(regmap::FieldRef field, uint32_t value, unsigned instance = 0);
    // Whole entries from `first` into the shadow bank, as write_entries().
    void add_entries(const regmap::TableRef& table, uint32_t first,
                     std::span<const uint32_t> words);

   private:
    friend class Device;
    struct Item {
      regmap::RegRef reg{};      // a register, when table is null
      regmap::FieldRef field{};  // width 0: the whole register
      unsigned instance = 0;
      uint32_t value = 0;
      const regmap::TableRef* table = nullptr;  // entries words_[begin, begin + count)
      uint32_t first = 0;
      size_t begin = 0;
      size_t count = 0;
    };
    std::vector<Item> items_;
    std::vector<uint32_t> words_;
  };
  // Checks every item (whole entries within the table, batchable fields), then writes all of
  // them at once.
  void write(WriteBatch& batch);

  // ---- tables ---------------------------------------------------------------------------
  // Entries the board implements.
  uint32_t entries(const regmap::TableRef& table) const;
  // `count` entries from `first`, words concatenated (table.words() per entry), in one
  // batch. The active bank of a single-bank table is its only bank.
  std::vector<uint32_t> read_entries(const regmap::TableRef& table, uint32_t first, uint32_t count,
                                     Bank bank = Bank::kShadow);
  // Writes whole entries from `first` into the shadow bank (the only bank of a single-bank
  // table) in one batch; words.size() must be a multiple of table.words().
  void write_entries(const regmap::TableRef& table, uint32_t first,
                     std::span<const uint32_t> words);
  // Which physical bank is active (0 or 1), and the swap (commit or arm) of a
  // double-buffered table.
  unsigned active_bank(const regmap::TableRef& table);
  void swap_banks(const regmap::TableRef& table);

  // ---- symbolic access, for the API -----------------------------------------------------
  Target resolve(std::string_view name) const;
  Target resolve(uint32_t offset) const;
  uint64_t read(const Target& target);
  // Reads many targets in one batch (64-bit ones high, low, high).
  std::vector<uint64_t> read(std::span<const Target> targets);
  // Throws kFailedPrecondition for a read-only target, kInvalidArgument for a value wider
  // than the target or with reserved bits set. Writes nothing; the caller says so.
  void check_write(const Target& target, uint64_t value) const;
  // check_write() for every item first, then all writes in one bus transaction.
  void write(std::span<const std::pair<Target, uint64_t>> items);
  std::vector<Target> enumerate(std::string_view block, bool include_tables) const;

  // Board reset through id.control.board_reset; walks again. Returns the new generation.
  uint32_t reset_board();

 private:
  const DeviceBlock& block_for(const DeviceLayout& layout, uint16_t type, unsigned instance,
                               uint16_t since, std::string_view what) const;
  // Batches resolve every item against one layout snapshot.
  uint32_t address(const DeviceLayout& layout, regmap::RegRef reg, unsigned instance) const;
  uint32_t address(regmap::RegRef reg, unsigned instance) const;
  uint32_t window_base(const DeviceLayout& layout, const regmap::TableRef& table, Bank bank) const;
  // The bus reads of read_entries() and writes of write_entries(), appended to `ops` (throw
  // as they do).
  void entry_reads(const DeviceLayout& layout, const regmap::TableRef& table, uint32_t first,
                   uint32_t count, Bank bank, std::vector<BusOp>& ops) const;
  void entry_writes(const DeviceLayout& layout, const regmap::TableRef& table, uint32_t first,
                    std::span<const uint32_t> words, std::vector<BusOp>& ops) const;
  uint64_t read_counter(uint32_t low_offset);
  void publish(std::shared_ptr<const DeviceLayout> layout);

  RegisterBus& bus_;
  const regmap::RegisterMap& map_;
  mutable std::mutex layout_mutex_;  // guards the pointer only; the layout is immutable
  std::shared_ptr<const DeviceLayout> layout_;
  std::mutex rmw_mutex_;  // makes read-modify-write sequences atomic among asnd's threads
};

}  // namespace asn

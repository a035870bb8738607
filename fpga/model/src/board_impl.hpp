// Internal: EmulatedBoard::Impl, all state of one open board, shared by the files that
// implement it: board_open.cc (the memory file, the image and the models' contract, at open
// and on a reset) and board.cc (bus access, the clock, the public functions).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "block_model.hpp"
#include "blocks/id_block.hpp"
#include "layout.hpp"
#include "memory_file.hpp"
#include "owned_profile.hpp"

namespace asn::model {
namespace detail {

// The generation after `generation`, for a new image at open (board_open.cc) and a board
// reset (board.cc): 0 would read as "never initialised" to software comparing generations,
// so it is skipped.
inline uint32_t next_generation(uint32_t generation) {
  return generation + 1 == 0 ? 1 : generation + 1;
}

}  // namespace detail

// All state of one open board. Every member function expects `mu` to be held by the caller
// (EmulatedBoard's public functions take it).
class EmulatedBoard::Impl final : public detail::BoardContext {
 public:
  Impl(std::string_view board_name, const regmap::BoardProfile& board_profile,
       const OpenOptions& options);

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
  const regmap::BoardProfile& profile() const override { return owned_profile.get(); }
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

}  // namespace asn::model

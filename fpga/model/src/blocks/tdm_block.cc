// The tdm block: its registers configure the slot sequencer (engines/tdm_sequencer), which
// runs on the core clock and swaps the slot-table banks at a frame boundary.
#include "../engines/tdm_sequencer.hpp"
#include "asn/regmap/regs.hpp"
#include "blocks.hpp"

namespace asn::model::detail {
namespace {

namespace t = regs::tdm;

class TdmBlockModel final : public BlockModel {
 public:
  std::vector<regmap::FieldRef> write_only_fields() const override {
    return {t::kControlArm, t::kControlDisarm};
  }
  std::vector<regmap::FieldRef> swaps() const override { return {t::kControlArm}; }
  size_t private_words() const override { return engines::TdmSequencer::kStateWords; }

  void reset(BoardContext& board, RegisterView& view) override {
    engines::TdmSequencer(view, state(board, view), board).refresh();
  }

  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg, unsigned,
                uint32_t, uint32_t written) override {
    engines::TdmSequencer sequencer(view, state(board, view), board);
    if (reg.offset == t::kControl.offset) {
      // Both bits at once: arm, then cancel it (a stopped sequencer has swapped already).
      if ((written & t::kControlArm.mask()) != 0) sequencer.arm();
      if ((written & t::kControlDisarm.mask()) != 0) sequencer.disarm();
    } else if (reg.offset == t::kConfig.offset) {
      sequencer.refresh();
    }
  }

  // tdm.traffic_pending changed: PREEMPT's frame grows or shrinks.
  void on_input(BoardContext& board, RegisterView& view) override {
    engines::TdmSequencer(view, state(board, view), board).input_changed();
  }

  void advance(BoardContext& board, RegisterView& view, uint64_t cycles) override {
    engines::TdmSequencer(view, state(board, view), board).advance(cycles);
  }

  bool clocked() const override { return true; }

  uint64_t cycles_to_event(BoardContext& board, RegisterView& view) override {
    return engines::TdmSequencer(view, state(board, view), board).cycles_to_swap();
  }

 private:
  static std::span<uint64_t> state(BoardContext& board, RegisterView& view) {
    return board.private_state(view.block());
  }
};

}  // namespace

std::unique_ptr<BlockModel> make_tdm_model() { return std::make_unique<TdmBlockModel>(); }

}  // namespace asn::model::detail

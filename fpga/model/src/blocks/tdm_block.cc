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
  size_t private_words() const override { return 1; }  // the phase within the frame

  void reset(BoardContext& board, RegisterView& view) override {
    engines::TdmSequencer(view, phase(board, view), board).refresh();
  }

  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg, unsigned,
                uint32_t, uint32_t written) override {
    engines::TdmSequencer sequencer(view, phase(board, view), board);
    if (reg.offset == t::kControl.offset) {
      // Both bits at once: arm, then cancel it (a stopped sequencer has swapped already).
      if ((written & t::kControlArm.mask()) != 0) sequencer.arm();
      if ((written & t::kControlDisarm.mask()) != 0) sequencer.disarm();
    } else if (reg.offset == t::kConfig.offset || reg.offset == t::kSlotsInUse.offset ||
               reg.offset == t::kSlotLength.offset || reg.offset == t::kWormholeLength.offset) {
      sequencer.refresh();
    }
  }

  void advance(BoardContext& board, RegisterView& view, uint64_t cycles) override {
    engines::TdmSequencer(view, phase(board, view), board).advance(cycles);
  }

 private:
  static uint64_t& phase(BoardContext& board, RegisterView& view) {
    return board.private_state(view.block())[0];
  }
};

}  // namespace

std::unique_ptr<BlockModel> make_tdm_model() { return std::make_unique<TdmBlockModel>(); }

}  // namespace asn::model::detail

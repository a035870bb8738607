// The lock block (version 2): its rings and registers drive the lock engine
// (engines/lock_engine), whose table lives in the block's board DRAM.
#include <memory>

#include "../engines/lock_engine.hpp"
#include "asn/regmap/regs.hpp"
#include "blocks.hpp"

namespace asn::model::detail {
namespace {

namespace l = regs::lock;

class LockBlockModel final : public BlockModel {
 public:
  std::vector<regmap::FieldRef> write_only_fields() const override { return {l::kDoorbellRing}; }

  size_t dram_bytes(const regmap::BoardProfile& profile) const override {
    return engines::LockEngine::dram_bytes(profile.cap(regmap::Cap::kLockEntries));
  }

  // A new board or a board reset: the DRAM was zeroed, so the table starts empty.
  void reset(BoardContext& board, RegisterView& view) override {
    engine_.reset();
    start(board, view);
  }

  // An open of kept memory: the table is restored from DRAM.
  void attach(BoardContext& board, RegisterView& view) override {
    if (!engine_) start(board, view);
  }

  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg, unsigned,
                uint32_t, uint32_t written) override {
    if (!engine_) return;
    if (reg.offset == l::kDoorbell.offset) {
      if ((written & l::kDoorbellRing.mask()) != 0) engine_->doorbell(view, board);
    } else if (reg.offset == l::kConfig.offset) {
      engine_->doorbell(view, board);  // requests rung while disabled
    } else if (reg.offset == l::kCompletionConsumer.offset) {
      engine_->consumer_moved(view, board);
    }
  }

 private:
  void start(BoardContext& board, RegisterView& view) {
    if (view.version() < 2) return;  // no engine before version 2
    engine_ = std::make_unique<engines::LockEngine>(view, board, board.dram(view.block()),
                                                    board.profile().cap(regmap::Cap::kLockEntries));
  }

  std::unique_ptr<engines::LockEngine> engine_;
};

}  // namespace

std::unique_ptr<BlockModel> make_lock_model() { return std::make_unique<LockBlockModel>(); }

}  // namespace asn::model::detail

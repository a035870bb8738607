// The route block: control.commit swaps the banks of port_map and dest_table at once (both
// follow status.active_bank, so one flip swaps them together without copying a word).
#include "asn/regmap/regs.hpp"
#include "blocks.hpp"

namespace asn::model::detail {
namespace {

namespace r = regs::route;

class RouteBlockModel final : public BlockModel {
 public:
  std::vector<regmap::FieldRef> write_only_fields() const override { return {r::kControlCommit}; }
  std::vector<regmap::FieldRef> swaps() const override { return {r::kControlCommit}; }

  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg, unsigned,
                uint32_t, uint32_t written) override {
    if (reg.offset != r::kControl.offset || (written & r::kControlCommit.mask()) == 0) return;
    view.swap_banks(r::kDestTable);
    ++view.word(r::kCommitCount);
    board.raise(regs::id::kIrqStatusRouteCommit);
  }
};

}  // namespace

std::unique_ptr<BlockModel> make_route_model() { return std::make_unique<RouteBlockModel>(); }

}  // namespace asn::model::detail

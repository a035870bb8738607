// The port block: an emulated port has no cable to lose, so its link is up exactly while
// the port is enabled.
#include "asn/regmap/regs.hpp"
#include "blocks.hpp"

namespace asn::model::detail {
namespace {

namespace p = regs::port;

class PortBlockModel final : public BlockModel {
 public:
  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg, unsigned,
                uint32_t old, uint32_t) override {
    if (reg.offset != p::kControl.offset) return;
    const uint32_t enable = view.get(p::kControlEnable);
    if (enable == p::kControlEnable.get(old)) return;
    view.set(p::kLinkUp, enable);
    view.set(p::kLinkChanges, view.get(p::kLinkChanges) + 1);  // set() wraps at 16 bits
    board.raise(regs::id::kIrqStatusLinkChange);
  }
};

}  // namespace

std::unique_ptr<BlockModel> make_port_model() { return std::make_unique<PortBlockModel>(); }

}  // namespace asn::model::detail

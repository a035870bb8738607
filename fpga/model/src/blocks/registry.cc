// Which model implements which block type. A new block type is a new file under blocks/ and
// one line here.
#include <stdexcept>
#include <string>

#include "asn/regmap/regs.hpp"
#include "blocks.hpp"
#include "id_block.hpp"

namespace asn::model::detail {

std::unique_ptr<BlockModel> make_block_model(const regmap::BlockDesc& block) {
  switch (block.type) {
    case regs::id::kType:
      return std::make_unique<IdBlockModel>();
    case regs::port::kType:
      return make_port_model();
    case regs::route::kType:
      return make_route_model();
    case regs::tdm::kType:
      return make_tdm_model();
    case regs::stripe::kType:
      return make_stripe_model();
    case regs::lock::kType:
      return make_lock_model();
    default:
      throw std::logic_error("the model has no behaviour for block " + std::string(block.name));
  }
}

}  // namespace asn::model::detail

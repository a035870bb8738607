// Internal: the id block. Besides identification it is the interrupt controller and the
// error counters of the bus, so the board reports bus errors and read-only writes to it.
#pragma once

#include "../block_model.hpp"

namespace asn::model::detail {

class IdBlockModel final : public BlockModel {
 public:
  std::vector<regmap::FieldRef> write_only_fields() const override;
  void reset(BoardContext& board, RegisterView& view) override;
  void on_write(BoardContext& board, RegisterView& view, const regmap::RegisterDesc& reg,
                unsigned element, uint32_t old, uint32_t written) override;

  // Wiring from the bus decoder and the other blocks into the id block's registers.
  static void raise(RegisterView& view, const regmap::FieldRef& cause);
  static void bus_error(RegisterView& view, uint32_t offset);
  static void ro_write(RegisterView& view);
  static bool irq_pending(RegisterView& view);
};

}  // namespace asn::model::detail

#include "id_block.hpp"

#include "asn/regmap/regs.hpp"

namespace asn::model::detail {

namespace id = regs::id;

std::vector<regmap::FieldRef> IdBlockModel::write_only_fields() const {
  return {id::kControlBoardReset};
}

void IdBlockModel::reset(BoardContext& board, RegisterView& view) {
  // The generation outlives a reset (it counts them): it lives in the memory header.
  view.set(id::kGenerationValue, board.generation());
}

void IdBlockModel::on_write(BoardContext& board, RegisterView&, const regmap::RegisterDesc& reg,
                            unsigned, uint32_t, uint32_t written) {
  if (reg.offset == id::kControl.offset && (written & id::kControlBoardReset.mask()) != 0) {
    board.board_reset();
  }
}

void IdBlockModel::raise(RegisterView& view, const regmap::FieldRef& cause) {
  view.word(id::kIrqStatus) |= cause.mask();
}

void IdBlockModel::bus_error(RegisterView& view, uint32_t offset) {
  ++view.word(id::kBusErrorCount);
  view.word(id::kBusErrorAddr) = offset;
  raise(view, id::kIrqStatusBusError);
}

void IdBlockModel::ro_write(RegisterView& view) {
  ++view.word(id::kRoWriteCount);
  raise(view, id::kIrqStatusRoWrite);
}

bool IdBlockModel::irq_pending(RegisterView& view) {
  // Both words only ever hold their defined bits: writes and raise() never store others.
  return (view.word(id::kIrqStatus) & view.word(id::kIrqMask)) != 0;
}

}  // namespace asn::model::detail

#include "block_model.hpp"

#include <stdexcept>
#include <string>

#include "layout.hpp"

namespace asn::model::detail {

const WindowDecode& RegisterView::window(const regmap::TableRef& table) const {
  const WindowDecode* window = find_window(*decode_, table.offset);
  if (window == nullptr || table.block_type != block_->desc->type) {
    throw std::logic_error("block " + std::string(block_->desc->name) +
                           " has no table window at offset " + std::to_string(table.offset));
  }
  return *window;
}

uint32_t RegisterView::entries(const regmap::TableRef& table) const {
  return window(table).entries;
}

std::span<uint32_t> RegisterView::entry(const regmap::TableRef& table, uint32_t index, Bank bank) {
  const WindowDecode& w = window(table);
  if (index >= w.entries) {
    throw std::out_of_range("entry " + std::to_string(index) + " of a table with " +
                            std::to_string(w.entries) + " entries");
  }
  // Physical bank b is the storage at bank_offset[b]; the bank bit names the active one.
  unsigned physical = 0;
  if (w.double_buffered) {
    const bool bit = (image_[block_->base / 4 + w.bank_word] & w.bank_mask) != 0;
    physical = (bank == Bank::kActive) == bit ? 1 : 0;
  }
  uint32_t* first = image_ + (block_->base + w.bank_offset[physical] + index * w.entry_bytes) / 4;
  return {first, w.entry_bytes / 4};
}

void RegisterView::swap_banks(const regmap::TableRef& table) {
  const WindowDecode& w = window(table);
  if (!w.double_buffered) throw std::logic_error("swap_banks on a table with one bank");
  image_[block_->base / 4 + w.bank_word] ^= w.bank_mask;
}

}  // namespace asn::model::detail

// Blocks whose registers and tables are, so far, plain storage: the STRIPE block until the
// parity data path arrives (the LOCK block has its engine: lock_block.cc). The board still
// refuses a map that gives them a write-only field or a bank swap, since this model would
// not act on it.
#include "blocks.hpp"

namespace asn::model::detail {

std::unique_ptr<BlockModel> make_storage_model() {
  class StorageBlockModel final : public BlockModel {};
  return std::make_unique<StorageBlockModel>();
}

}  // namespace asn::model::detail

// The STRIPE block (version 2): its group table and counters are the configuration and the
// statistics of the parity data path (engines/parity_path, 004 L1131), which runs when a
// client's traffic arrives (EmulatedBoard::stripe_*), not on a register write: a group entry
// is plain RAM that software changes with valid cleared, and the engine reads it on every
// request (and between batches of stripes), so it never acts on a half-written entry. A
// board reset clears the table and the counters with every other register (the board does
// that before reset()); the storage servers' data is not on the board and survives it.
#include "blocks.hpp"

namespace asn::model::detail {
namespace {

class StripeBlockModel final : public BlockModel {};

}  // namespace

std::unique_ptr<BlockModel> make_stripe_model() { return std::make_unique<StripeBlockModel>(); }

}  // namespace asn::model::detail

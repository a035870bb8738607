// EmulatedBoard's parity data path: the client side of engines/parity_path (board_open.cc creates
// the engine when the board opens).
#include "asn/model/board.hpp"
#include "engines/parity_path.hpp"

namespace asn::model {

std::string_view to_string(StripeError::Kind kind) {
  switch (kind) {
    case StripeError::Kind::kNoGroup:
      return "no group";
    case StripeError::Kind::kBadGroup:
      return "bad group";
    case StripeError::Kind::kBadRequest:
      return "bad request";
    case StripeError::Kind::kTooManyFailed:
      return "too many failed members";
    case StripeError::Kind::kNoStorage:
      return "no storage";
    case StripeError::Kind::kStorageIo:
      return "storage I/O error";
  }
  return "?";
}

detail::engines::ParityPath& EmulatedBoard::parity_path() {
  if (!parity_) {
    throw StripeError(StripeError::Kind::kBadRequest,
                      "board '" + name() + "' has no parity data path (STRIPE block version 2)");
  }
  return *parity_;
}

void EmulatedBoard::stripe_write(uint16_t group, uint64_t offset, std::span<const uint8_t> bytes) {
  parity_path().write(group, offset, bytes);
}

size_t EmulatedBoard::stripe_read(uint16_t group, uint64_t offset, std::span<uint8_t> out) {
  return parity_path().read(group, offset, out);
}

uint64_t EmulatedBoard::stripe_file_size(uint16_t group) { return parity_path().file_size(group); }

void EmulatedBoard::stripe_fail_member(uint16_t group, unsigned port) {
  parity_path().fail_member(group, port);
}

void EmulatedBoard::stripe_rebuild_member(uint16_t group, unsigned port,
                                          const StripeProgress& progress) {
  parity_path().rebuild_member(group, port, progress);
}

stripe::ScrubReport EmulatedBoard::stripe_scrub(uint16_t group, bool repair, bool dry_run,
                                                const StripeProgress& progress) {
  return parity_path().scrub(group, repair, dry_run, progress);
}

void EmulatedBoard::stripe_discard(uint16_t group) { parity_path().discard(group); }

void EmulatedBoard::stripe_inject_member_fault(uint16_t group, unsigned port, int err,
                                               uint64_t after) {
  parity_path().inject_fault(group, port, err, after);
}

}  // namespace asn::model

// Client traffic of the striping data path (issue 10, 004 L1131-1190). On a real board file
// data arrives on the switch's ports from the clients and leaves on the member ports to the
// storage servers; asnd never carries it. The emulated board has no wire, so its backend
// offers this port instead: it injects a client's write or read of a stripe group as if it
// had arrived on a port, and the board's parity path (fpga/model, engines/parity_path) does
// the rest, reading only the STRIPE block's registers, and sending units to the emulated
// storage servers behind the member ports. RegisterBus::stripe_data_port() is nullptr on
// a real board; the Stripe service then answers FAILED_PRECONDITION.
//
// Every call throws asn::Error: kNotFound for a group the STRIPE table does not hold (not
// valid), kFailedPrecondition when more members have failed than the layout tolerates or a
// member's storage server is unreachable, kInvalidArgument for a bad offset or port,
// StripeMemberError for an I/O error of a member's storage server, kInternal for another
// storage I/O error (the group's length; naming the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "asn/stripe/parity.hpp"
#include "error.hpp"

namespace asn {

// A member's storage server failed an I/O of the call (issue 27 item 5): its port, and in the
// message the operation, the file and the errno text. StripeManager marks that member failed
// (as fail-member does) and runs the call again degraded where the level tolerates it; what
// escapes it is UNAVAILABLE.
class StripeMemberError : public Error {
 public:
  StripeMemberError(unsigned port, std::string_view message)
      : Error(ErrorCode::kUnavailable, message), port_(port) {}
  unsigned port() const { return port_; }

 private:
  unsigned port_;
};

class StripeDataPort {
 public:
  virtual ~StripeDataPort() = default;

  // Called while a long operation runs: bytes (or stripes) done out of total.
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  // Writes `bytes` at file `offset` of the group's file. Returns when every stripe the bytes
  // touch is on all its live members with its parity; a stripe the bytes cover partly is
  // completed from what the members hold (the parity path reads the rest of the stripe).
  // The file grows to offset + bytes.size() if it was shorter.
  virtual void write(uint16_t group, uint64_t offset, std::span<const uint8_t> bytes) = 0;

  // Reads up to out.size() bytes at file `offset`; returns how many (fewer at the end of
  // the file). Units of failed members are rebuilt from the others and parity.
  virtual size_t read(uint16_t group, uint64_t offset, std::span<uint8_t> out) = 0;

  // The group's file length in bytes, as its storage servers hold it.
  virtual uint64_t file_size(uint16_t group) = 0;

  // The storage server behind `port` fails for this group: what it held is gone (its disk
  // is replaced by an empty one). The STRIPE entry's failed mask, which asnd sets, is what
  // tells the parity path to rebuild the member's units on reads.
  virtual void fail_member(uint16_t group, unsigned port) = 0;

  // Rebuilds every unit of `port` for the group from the other members and parity onto its
  // (replacement) storage server. asnd clears the failed bit afterwards.
  virtual void rebuild_member(uint16_t group, unsigned port, const Progress& progress) = 0;

  // Reads every stripe of the group's file and verifies its parity against its data; with
  // `repair` (and not `dry_run`) rewrites what is wrong (asn::stripe::repair_stripe).
  // Findings name members by index in member order. kFailedPrecondition when the failed
  // members leave nothing to check against, or (repair) any member has failed.
  virtual stripe::ScrubReport scrub(uint16_t group, bool repair, bool dry_run,
                                    const Progress& progress) = 0;

  // The group was deleted: its storage servers drop its file.
  virtual void discard(uint16_t group) = 0;
};

}  // namespace asn

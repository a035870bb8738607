// The switch lock domain (issue 9): the board's lock engine (LOCK block version 2), driven
// through its request and completion rings (device/lock_rings.hpp). Each call posts one
// descriptor, rings the doorbell and collects the completion records that carry its tag up
// to the operation's terminal record: the engine of the emulated board answers during the
// doorbell write; a real board's producer index is polled until `timeout`, after which the
// call throws asn::Error kUnavailable naming the ring. The results are LockTable's, field
// for field (the engine runs the same table and sends back grants, ranges and messages).
//
// The table lives in board DRAM and survives asnd: a new SwitchDomain drains the records a
// previous asnd left in the completion ring (their callers are gone) and goes on with the
// engine's sessions, locks, waiters, request ids and tokens. A board reset empties it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/device.hpp"
#include "device/lock_rings.hpp"
#include "locks/lock_domain.hpp"

namespace asn {

class SwitchDomain final : public LockDomain {
 public:
  struct Options {
    std::chrono::milliseconds timeout{2000};  // a real board's answer to one operation
  };

  // Enables the engine and drains stale completions. Throws kFailedPrecondition when the
  // board's lock block has no engine (version 1).
  explicit SwitchDomain(Device& device, Options options);
  explicit SwitchDomain(Device& device) : SwitchDomain(device, Options{}) {}

  std::string_view name() const override { return "switch"; }
  // Enables the engine again (a reset cleared lock.config) and drains stale completions.
  void board_reset() override;

  locks::SessionId open_session(std::string_view label) override;
  locks::Outcome request(const locks::Request& request) override;
  locks::Change release(locks::SessionId session, std::string_view file,
                        const locks::RangeSpec& ranges) override;
  locks::Change downgrade(locks::SessionId session, std::string_view file,
                          const locks::RangeSpec& ranges) override;
  locks::Change cancel(locks::RequestId request) override;
  locks::Change expire(locks::SessionId session) override;
  locks::Token raise_token_floor(locks::Token floor) override;
  // lock.status: the engine has no usable table (error set, or not ready).
  std::optional<std::string> unusable() override;

  std::vector<DomainSession> sessions() override;
  size_t held_entries(locks::SessionId session) override;
  std::vector<std::string> files(std::string_view after, size_t limit) override;
  locks::FileLocks list(std::string_view file) override;
  locks::Stats stats() override;

 private:
  // Posts `d` (its tag set here), rings the doorbell, returns the records of the operation,
  // the terminal one last.
  std::vector<LockCompletion> call(LockDescriptor d);
  // A list of more ranges than a request may have (kDefaultMaxRanges) does not fit in
  // request_data, which holds one request of that many: the engine is sent its first
  // kDefaultMaxRanges + 1 ranges, which it refuses as LockTable refuses the whole list,
  // after the same file and session checks, and `Trimmed` turns that refusal into the
  // whole list's (which names its real length).
  struct Trimmed {
    std::string error;       // what the engine says of the trimmed list
    locks::LockError whole;  // what LockTable says of the whole list
  };
  static std::optional<Trimmed> set_ranges(LockDescriptor& d, const locks::RangeSpec& ranges);
  static void untrim(const std::optional<Trimmed>& trimmed, std::optional<locks::LockError>& error);
  locks::Change change(LockDescriptor d, const std::optional<Trimmed>& trimmed = std::nullopt);

  Device& device_;
  LockRings rings_;
  Options options_;
  uint32_t next_tag_ = 1;
};

}  // namespace asn

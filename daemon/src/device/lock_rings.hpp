// The LOCK block's rings (block version 2), typed: a request descriptor with its file id and
// ranges posted into the request ring and request_data, the doorbell, and completion records
// drained from the completion ring with their data from result_data. The record and
// operation codes and the data layout are those of fpga/regmap/asn_regmap.yaml (block lock);
// every offset comes from the generated references through Device.
//
// Not thread-safe: one owner (the SwitchDomain, under the LockManager's mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/locks/range.hpp"
#include "asn/regmap/regs.hpp"
#include "device/device.hpp"

namespace asn {

// The operation codes and record kinds of fpga/regmap/asn_regmap.yaml (lock.request.op,
// lock.completion.kind), generated.
using LockOpCode = regs::lock::RequestOp;
using LockRecordKind = regs::lock::CompletionKind;

struct LockDescriptor {
  LockOpCode op = LockOpCode::kOpenSession;
  bool exclusive = false;
  bool try_mode = false;
  uint32_t tag = 0;
  uint64_t session = 0;   // or the request id (cancel), or the cursor (list sessions)
  std::string_view file;  // or the label (open session), or the cursor (list files)
  std::span<const locks::ByteRange> ranges;  // a list, or
  std::optional<locks::Strided> strided;     // a strided description
  uint32_t limit = 0;                        // list operations: at most this many (0: all)
};

struct LockCompletion {
  LockRecordKind kind = LockRecordKind::kEnd;
  uint8_t error = 0;  // 0 none, else locks::ErrorKind + 1
  bool exclusive = false;
  bool has_index = false;
  uint32_t tag = 0;
  uint64_t request = 0;
  uint64_t token = 0;
  uint64_t session = 0;
  uint64_t value = 0;    // list sessions: the session's held entries
  uint32_t waiting = 0;  // list sessions: the session's waiting requests
  std::string file;
  std::vector<locks::ByteRange> ranges;
  std::string message;
};

class LockRings {
 public:
  // Throws kFailedPrecondition when the board's lock block is older than version 2.
  explicit LockRings(Device& device);

  uint32_t request_entries() const { return request_entries_; }
  uint32_t completion_entries() const { return completion_entries_; }

  // Sets lock.config.enable.
  void enable();
  enum class Doorbell { kRing, kLater };
  // Writes the descriptor and its data into the next request slot, advances the producer
  // index and (kRing) rings the doorbell, in one bus batch (the indices are read first);
  // with kLater the engine sees it at the next doorbell. Throws kResourceExhausted when the
  // ring or request_data has no room for it now.
  void post(const LockDescriptor& descriptor, Doorbell ring = Doorbell::kRing);
  void ring_doorbell();
  // The records posted since the last drain (at most `max`), with their data; advances the
  // consumer index past them, which lets a stalled engine post more.
  std::vector<LockCompletion> drain(size_t max = SIZE_MAX);
  // Where the engine's producer index is (a real board is polled on it).
  uint32_t completion_producer();

 private:
  Device& device_;
  uint32_t request_entries_ = 0;
  uint32_t completion_entries_ = 0;
  uint32_t data_words_ = 0;
  uint32_t data_next_ = 0;  // where the next request's data goes in request_data
};

}  // namespace asn

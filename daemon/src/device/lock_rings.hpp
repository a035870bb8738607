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

// The ring indices asnd owns (request producer, completion consumer) are kept here and
// written, never read back; the engine's are read only when they are needed: the request
// consumer when the ring or request_data looks full, the completion producer together with
// the first slot it may have filled. So a lock operation takes three bus transactions
// (post; producer and slot; the record's data), as a NIC driver keeps its own head and tail
// (Corundum's mqnic_tx_ring) instead of reading the device's on every packet.
class LockRings {
 public:
  // Takes the ring indices as the board has them. Throws kFailedPrecondition when the board's
  // lock block is older than version 2.
  explicit LockRings(Device& device);

  uint32_t request_entries() const { return request_entries_; }
  uint32_t completion_entries() const { return completion_entries_; }

  // Sets the rings up as at a driver's probe or after a board reset: takes the indices
  // again, drops the requests the engine has not consumed and the records not read (no
  // caller waits for them), and sets lock.config.enable. An engine that was stalled posts
  // the rest of its backlog now: drain() it.
  void enable();
  enum class Doorbell { kRing, kLater };
  // Writes the slots drain() handed back, the descriptor and its data into the next request
  // slot, advances the producer index and (kRing) rings the doorbell, in one bus batch; with
  // kLater the engine sees it at the next doorbell. Throws kResourceExhausted when the ring
  // or request_data has no room for it now.
  void post(const LockDescriptor& descriptor, Doorbell ring = Doorbell::kRing);
  void ring_doorbell();
  // The records posted since the last drain (at most `max`), with their data. Their slots
  // (and result_data) are handed back to the engine with the next post() or acknowledge():
  // a caller that waits for more records of a stalled engine acknowledges first. Throws
  // kUnavailable when the board was reset since the rings were set up (id.generation moved:
  // enable() sets them up again).
  std::vector<LockCompletion> drain(size_t max = SIZE_MAX);
  // Advances lock.completion_consumer past what drain() returned, if it is not already.
  void acknowledge();
  // Where the engine's producer index is (a real board is polled on it).
  uint32_t completion_producer();

 private:
  // Reads the ring indices into the shadows, and the board's generation.
  void take_indices();
  uint32_t read_request_consumer();
  void read_records(uint32_t first, uint32_t count, std::span<const uint32_t> words,
                    std::vector<LockCompletion>& out);

  Device& device_;
  uint32_t request_entries_ = 0;
  uint32_t completion_entries_ = 0;
  uint32_t data_words_ = 0;
  uint32_t data_next_ = 0;            // where the next request's data goes in request_data
  uint32_t request_producer_ = 0;     // as asnd last wrote it
  uint32_t request_consumer_ = 0;     // as last read: the engine is at or past it
  uint32_t completion_consumer_ = 0;  // the next record to read
  uint32_t completion_written_ = 0;   // lock.completion_consumer as asnd last wrote it
  uint32_t generation_ = 0;           // id.generation when the indices were taken
};

}  // namespace asn

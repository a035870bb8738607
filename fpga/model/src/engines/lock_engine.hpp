// Internal: the switch's lock engine (004 L1192-1262, issue 9), behind LOCK block version 2.
// The lock table is a locks::DurableTable whose journal (checkpoint + operation log) is a
// locks::RegionJournal on the block's board DRAM, a region of the board memory file: the
// table outlives asnd, kill -9 included, and is restored from the region when the board is
// opened again. A board reset zeroes the DRAM, and so empties the table (sessions, locks,
// waiters; request ids and tokens start again from 1).
//
// Software drives it only through the block's rings (fpga/regmap/asn_regmap.yaml, block
// lock): request descriptors in the request ring with their file ids and ranges in
// request_data; on a doorbell the engine consumes them in order and answers each with
// completion records in the completion ring, their file ids, ranges and messages in
// result_data (a circular buffer freed as software advances the completion consumer). Every
// operation is logged in DRAM before its records are written (DurableTable logs first).
//
// Flow control: when the completion ring or result_data has no room, the records wait in
// the engine (status.stalled, backlog) and the engine consumes no further request until
// software advances completion_consumer. Records waiting in the engine when the process
// dies are lost with it (the operations themselves are in DRAM): what is lost are grants
// of queued requests and their cancellation notices, whose waiter died with asnd too; a
// new asnd finds the grants by listing the file.
//
// The engine reads and writes only the LOCK block's registers, rings and windows, and its
// DRAM.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../block_model.hpp"
#include "asn/locks/durable.hpp"

namespace asn::model::detail::engines {

// Operation codes of lock.request.op and record kinds of lock.completion.kind.
enum class LockOp : uint8_t {
  kOpenSession = 1,
  kRequest = 2,
  kRelease = 3,
  kDowngrade = 4,
  kCancel = 5,
  kExpire = 6,
  kListSessions = 7,
  kListFiles = 8,
  kListFile = 9,
  kRaiseTokenFloor = 10,
};

enum class LockRecord : uint8_t {
  kGranted = 1,  // = locks::Status + 1 for the outcome of a request (1..5)
  kQueued = 2,
  kConflict = 3,
  kTableFull = 4,
  kInvalid = 5,
  kDone = 6,     // release/downgrade/cancel/expire: value = entries released
  kRefused = 7,  // ... refused: error, message, index
  kGrantedLater = 8,
  kCancelled = 9,
  kSession = 10,  // open: the new session; list sessions: one session, its label as file,
                  // value its held entries, word 15 its waiting requests
  kFile = 11,     // list files: one file id
  kHeld = 12,     // list file: one held entry (its range)
  kEnd = 13,      // ends a list
  kWaiting = 14,  // list file: one waiting request (its ranges)
};

class LockEngine {
 public:
  // DRAM the engine needs for a table of `entries` entries.
  static size_t dram_bytes(size_t entries);

  // The table kept in `dram`: restored when the region holds one, else empty. Sets
  // status.ready / restored / error and the counters. Rebuilds where software is in the
  // completion ring (records posted before a restart and not yet consumed stay there).
  LockEngine(RegisterView& view, BoardContext& board, std::span<std::byte> dram, size_t entries);
  ~LockEngine();

  // lock.doorbell.ring, lock.config (enable) or lock.completion_consumer was written.
  void doorbell(RegisterView& view, BoardContext& board);
  void consumer_moved(RegisterView& view, BoardContext& board);

 private:
  struct Record {
    std::array<uint32_t, 16> words{};
    std::vector<uint32_t> data;
  };
  struct Posted {
    uint32_t slot;
    uint32_t index;  // its data in result_data
    uint32_t end;
  };

  void consume(RegisterView& view, BoardContext& board);
  void flush(RegisterView& view, BoardContext& board);
  void execute(RegisterView& view, std::span<const uint32_t> descriptor);
  void publish(RegisterView& view);
  bool allocate(uint32_t words, uint32_t& index) const;
  void free_consumed(RegisterView& view);

  std::unique_ptr<locks::RegionJournal> journal_;
  std::unique_ptr<locks::DurableTable> table_;
  std::string error_;
  std::deque<Record> backlog_;
  std::deque<Posted> posted_;
  uint32_t data_head_ = 0;
  uint32_t data_words_ = 0;  // result_data entries
};

}  // namespace asn::model::detail::engines

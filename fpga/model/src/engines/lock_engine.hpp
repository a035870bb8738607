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
#include "asn/regmap/regs.hpp"

namespace asn::model::detail::engines {

// Operation codes of lock.request.op and record kinds of lock.completion.kind, as the
// register map names them. A request's outcome is its record kind: locks::Status + 1
// (granted .. invalid); done/refused end a release, downgrade, cancel, expiry or floor raise
// (value: entries released); session answers an open and lists one session (its label as
// the file, value its held entries, word 15 its waiting requests); file, held and waiting
// are list records, end closes a list.
using LockOp = regs::lock::RequestOp;
using LockRecord = regs::lock::CompletionKind;

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

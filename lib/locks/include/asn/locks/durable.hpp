// A lock table that survives the process that drives it (issue 9): the switch's lock engine
// keeps it in board memory, which outlives asnd, and asnd's software domain keeps it in its
// state directory. Both use this one mechanism: a checkpoint of the whole table and a log of
// the operations applied since, as a database keeps a snapshot and a write-ahead log.
//
// LockTable is deterministic: the same operations in the same order give the same session
// ids, request ids, tokens, grants and counters. So the table is restored by loading the
// checkpoint and replaying the log, and every operation is logged before it is applied and
// its result returned: a caller never sees a result that a crash could take back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/locks/lock_table.hpp"

namespace asn::locks {

// Where a DurableTable keeps its checkpoint and log. Implementations: RegionJournal (a fixed
// region of memory, such as the board memory the emulated switch maps) and FileJournal (a
// directory). Errors (no room, I/O) throw LockError kResourceExhausted / std::system_error.
class JournalMedium {
 public:
  virtual ~JournalMedium() = default;

  // The last checkpoint written (empty when there is none).
  virtual std::vector<uint8_t> read_checkpoint() = 0;
  // Calls `record` for each log record appended since that checkpoint, in order. A record
  // torn by a crash in the middle of append() (its checksum does not match) ends the log:
  // it and anything after it are discarded.
  virtual void replay(const std::function<void(std::span<const uint8_t>)>& record) = 0;
  // Appends one record. When this returns, the record survives the process being killed.
  virtual void append(std::span<const uint8_t> record) = 0;
  // Replaces the checkpoint and empties the log in one step: a crash leaves either the old
  // checkpoint with the old log or the new checkpoint with an empty log.
  virtual void write_checkpoint(std::span<const uint8_t> checkpoint) = 0;
  // Bytes of log since the last checkpoint (the table checkpoints when it grows too long).
  virtual size_t log_bytes() const = 0;
  // Whether one more record of `bytes` fits (a fixed region can be full).
  virtual bool fits(size_t bytes) const = 0;
};

// A LockTable whose every change is logged before it is applied.
class DurableTable {
 public:
  // Restores the table from `medium`: the checkpoint, then the log replayed (an empty medium
  // gives an empty table). `checkpoint_after` bytes of log trigger a checkpoint.
  DurableTable(JournalMedium& medium, TableLimits limits, size_t checkpoint_after = 64u << 20);
  ~DurableTable();

  // As LockTable's, each logged first. `label` is kept with the session (in checkpoints
  // too): asnd keeps who owns the session and its lease there.
  SessionId open_session(std::string_view label = {});
  Outcome request(const Request& request);
  Change release(SessionId session, std::string_view file, const RangeSpec& ranges);
  Change downgrade(SessionId session, std::string_view file, const RangeSpec& ranges);
  Change cancel(RequestId request);
  Change expire(SessionId session);

  // Reads.
  const LockTable& table() const;

  // Writes a checkpoint now (also done on its own when the log grows past checkpoint_after).
  void checkpoint();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace asn::locks

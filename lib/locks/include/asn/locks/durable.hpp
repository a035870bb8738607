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

// A JournalMedium in one fixed region of memory that the caller owns and that outlives the
// process (the emulated board's memory: a file in tmpfs mapped MAP_SHARED). Plain stores to
// such a mapping survive the process being killed, so nothing is flushed; the order of the
// stores is what keeps the region consistent at every point of a crash.
//
// Layout (all words little-endian, 8-aligned; the region must be 8-aligned):
//   header (64 bytes): magic "ASNLKRJ1", version, slot and log sizes, and the state word:
//     generation << 1 | active slot, replaced by one aligned 64-bit store;
//   two checkpoint slots, each: length, generation, checksum, then the snapshot bytes;
//   the log: records, each: a commit word (generation's low 32 bits << 32 | length), a
//     checksum of (generation, offset, payload), the payload padded to 8 bytes.
// append() writes the payload and checksum, zeroes the commit word of the record that will
// follow, and only then (after a compiler fence: the stores of a process that is killed
// reach the mapping in program order up to where it stopped, so no CPU fence is needed, and
// ThreadSanitizer refuses atomic_thread_fence) stores its own commit word: a record is
// valid from that one store on, and the log ends at the first word that is not a valid
// commit word of the current generation. write_checkpoint() fills the inactive slot and
// then switches the state word to it with the next generation: from that store on the new
// checkpoint is read and the old log, whose records carry the old generation, is empty.
// A region of zeros is formatted on first use (slots of 3/8 of it each, the log the rest);
// anything else that is not a journal is refused rather than overwritten.
class RegionJournal final : public JournalMedium {
 public:
  // Throws LockError kInvalidArgument for a region too small (under kMinRegionBytes), not
  // 8-aligned, holding something that is not a journal of this version, or smaller than
  // the journal formatted in it.
  explicit RegionJournal(std::span<std::byte> region);

  static constexpr size_t kMinRegionBytes = 1024;

  // A region size (a multiple of 4096) whose checkpoint slots hold the checkpoint of a full
  // table of `capacity_entries` entries in the worst case of the encoding: every entry on
  // its own file with a 128-byte id, ids and offsets of full 64-bit width, and a session
  // with a 64-byte label for every two entries; the log gets 2/3 of a slot. Real tables
  // need much less of it (about 15 bytes an entry), and a sparse file only takes the pages
  // written: 1,048,576 entries give 615 MB of address space (16,384: 9.6 MB).
  static size_t bytes_for(size_t capacity_entries);

  std::vector<uint8_t> read_checkpoint() override;
  void replay(const std::function<void(std::span<const uint8_t>)>& record) override;
  void append(std::span<const uint8_t> record) override;  // kResourceExhausted when full
  void write_checkpoint(std::span<const uint8_t> checkpoint) override;  // too big: likewise
  size_t log_bytes() const override { return log_end_; }
  bool fits(size_t bytes) const override;

  size_t checkpoint_capacity() const;  // the largest checkpoint a slot holds
  size_t log_capacity() const { return log_size_; }
  uint64_t generation() const { return generation_; }

  // For crash tests: `hook` is called after every store this thread makes into a region
  // (each byte of a copied record or checkpoint, each word), so a test can copy the region
  // at every point a kill could stop the writer. Empty: none (the default).
  static void set_store_hook(std::function<void()> hook);

 private:
  std::byte* at(size_t offset) const { return region_.data() + offset; }
  size_t slot_offset(unsigned slot) const;
  size_t scan_log() const;

  std::span<std::byte> region_;
  size_t slot_size_ = 0;
  size_t log_offset_ = 0;
  size_t log_size_ = 0;
  uint64_t generation_ = 0;
  unsigned slot_ = 0;
  size_t log_end_ = 0;
};

// A JournalMedium in a directory (asnd's state directory), made on first use:
//   checkpoint       the last checkpoint, with its generation: written as checkpoint.tmp,
//                    fsync'd and renamed over this name (and the directory fsync'd);
//   log.<generation> the records appended since that checkpoint.
// Records are stored into a window of the log file mapped MAP_SHARED (`window_bytes` at a
// time, its blocks reserved with posix_fallocate before it is mapped, so that a full disk is
// an error of append() and never a SIGBUS): a record is in the page cache when append()
// returns, which survives the process being killed (kill -9), not the machine losing power;
// no system call per record (a write() each cost a third of the software domain's time per
// lock operation). A record torn by a crash (its checksum does not match), and the zeros of
// the window after the last record, end the log and are cut off when the journal is
// opened; a clean close cuts them too. A checkpoint starts a new log file (log.<generation + 1>,
// made before the rename): a crash before the rename leaves the old checkpoint and log, after it
// the new checkpoint and its empty log; logs of other generations are deleted. Errors of the file
// system throw std::system_error naming the file.
class FileJournal final : public JournalMedium {
 public:
  static constexpr size_t kLogWindowBytes = size_t{4} << 20;

  // `window_bytes`: how much of the log is mapped at a time (tests make it a page).
  explicit FileJournal(std::string directory, size_t window_bytes = kLogWindowBytes);
  ~FileJournal() override;
  FileJournal(const FileJournal&) = delete;
  FileJournal& operator=(const FileJournal&) = delete;

  std::vector<uint8_t> read_checkpoint() override;
  void replay(const std::function<void(std::span<const uint8_t>)>& record) override;
  void append(std::span<const uint8_t> record) override;
  void write_checkpoint(std::span<const uint8_t> checkpoint) override;
  size_t log_bytes() const override { return log_end_; }
  bool fits(size_t bytes) const override;

  uint64_t generation() const { return generation_; }

 private:
  std::string path(std::string_view name) const;
  std::string log_name(uint64_t generation) const;
  int open_log(uint64_t generation, bool truncate);

  // Maps the window of the log that holds the next `bytes` from log_end_ (throws
  // std::system_error, the window before still mapped, when the file cannot grow).
  void map_window(size_t bytes);
  void unmap_window();

  std::string directory_;
  size_t window_bytes_ = kLogWindowBytes;
  int fd_ = -1;
  uint64_t generation_ = 0;
  size_t log_end_ = 0;
  uint8_t* window_ = nullptr;  // mapped: window_length_ bytes of the log from window_offset_
  size_t window_offset_ = 0;
  size_t window_length_ = 0;
};

// A LockTable whose every change is logged before it is applied.
//
// Record encoding (varints): an operation byte, then: open_session: label; request:
// session, file, mode | wait << 1, ranges; release and downgrade: session, file, ranges;
// cancel: request; expire: session; withdraw: count, then the request ids in increasing
// order, each as its distance from the one before. Ranges: 0, count, (offset, length) each; or 1,
// offset, block_length, stride, count (a strided request stays strided).
//
// What is not logged: a request refused as invalid, a release or downgrade whose file,
// session or ranges are invalid, a cancel or expire that fails: these change nothing, not
// even a counter. When the medium has no room for a record (a full region), the table
// checkpoints and tries again; if there is still no room the operation is refused with a
// LockError kResourceExhausted (request: kTableFull with it; a change: its error;
// open_session(): thrown) and changes nothing.
class DurableTable {
 public:
  // Restores the table from `medium`: the checkpoint, then the log replayed (an empty medium
  // gives an empty table). `checkpoint_after` bytes of log trigger a checkpoint. The log is
  // replayed under the limits of the checkpoint (what it was written under); if `limits`
  // differ, the table is then moved to them and checkpointed, and a first open writes a
  // checkpoint too (so the limits are recorded). Throws LockError for a damaged checkpoint,
  // a record that does not decode (naming its number), or a state over `limits.capacity`.
  DurableTable(JournalMedium& medium, TableLimits limits, size_t checkpoint_after = 64u << 20);
  ~DurableTable();
  DurableTable(const DurableTable&) = delete;
  DurableTable& operator=(const DurableTable&) = delete;

  // As LockTable's, each logged first. `label` is kept with the session (in checkpoints
  // too): asnd keeps who owns the session and its lease there.
  SessionId open_session(std::string_view label = {});
  Outcome request(const Request& request);
  Change release(SessionId session, std::string_view file, const RangeSpec& ranges);
  Change downgrade(SessionId session, std::string_view file, const RangeSpec& ranges);
  Change cancel(RequestId request);
  // One record for all the requests.
  Change withdraw(std::span<const RequestId> requests);
  Change expire(SessionId session);
  // Logged only when it raises the floor.
  Token raise_token_floor(Token floor);

  // Reads.
  const LockTable& table() const;

  // Writes a checkpoint now (also done on its own when the log grows past checkpoint_after).
  void checkpoint();

  // Operations logged (for tests and counters) and checkpoints written since construction.
  uint64_t records_logged() const;
  uint64_t checkpoints_written() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace asn::locks

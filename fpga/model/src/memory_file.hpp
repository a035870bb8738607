// Internal: the board memory file, locked for the lifetime of the object and mapped shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "asn/model/board.hpp"

namespace asn::model::detail {

class MemoryFile {
 public:
  // Opens the file (creating it when `create`) and takes an exclusive flock on it. Returns a
  // closed MemoryFile when the file does not exist and !create. Throws BoardError kBusy when
  // another open file description holds the lock, kSystem on any other failure.
  static MemoryFile open_locked(const std::string& path, std::string_view board_name, bool create);

  MemoryFile() = default;
  MemoryFile(MemoryFile&& other) noexcept;
  MemoryFile& operator=(MemoryFile&& other) noexcept;
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile();

  bool is_open() const { return fd_ >= 0; }
  uint64_t size() const;
  // Copies the header out of the file; false when the file is shorter than a header.
  bool read_header(MemoryHeader& header) const;
  // Sets the file to `bytes` (when it differs) and maps it read-write, shared, guarded
  // against SIGBUS (sigbus_guard.hpp). The first `reserve` bytes (all when larger) get their
  // pages now; the rest stays sparse until written (board DRAM: hundreds of MB on a large
  // profile, mostly never touched), where a full tmpfs shows as a caught SIGBUS (problem()).
  std::byte* map(size_t bytes, size_t reserve = SIZE_MAX);
  // Zeroes [offset, offset + bytes) of the file and gives its pages back (a hole), or
  // writes zeros where the file system cannot punch holes.
  void zero(size_t offset, size_t bytes);
  // What is wrong with the mapped file now, or "": it shrank or grew (someone truncated
  // it), a SIGBUS was caught in its mapping, or the path no longer names it (removed or
  // replaced: another process could open a new board under the same name).
  std::string problem() const;
  // Removes the file from its directory (the lock is still held).
  void unlink();

 private:
  MemoryFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& what, int err) const;
  void close();

  int fd_ = -1;
  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  int guard_ = -1;
};

}  // namespace asn::model::detail

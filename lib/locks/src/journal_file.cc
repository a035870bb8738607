// FileJournal: the checkpoint and log of a DurableTable in a directory (see durable.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "asn/locks/durable.hpp"
#include "codec.hpp"
#include "format.hpp"

namespace asn::locks {
namespace {

using detail::cat;

constexpr char kFileMagic[8] = {'A', 'S', 'N', 'L', 'K', 'F', 'J', '1'};
constexpr size_t kCheckpointHeaderBytes = 32;  // magic, generation, length, checksum
constexpr size_t kFileRecordHeaderBytes = 12;  // u32 length, u64 checksum
constexpr size_t kMaxRecordBytes = 0xffffffffu;

[[noreturn]] void fail(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), "lock journal: " + what);
}

// The whole file; nullopt when it does not exist.
std::optional<std::vector<uint8_t>> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail(errno, cat("cannot open ", path));
  }
  std::vector<uint8_t> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  uint8_t buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      fail(error, cat("cannot read ", path));
    }
    if (n == 0) break;
    out.insert(out.end(), buffer, buffer + n);
  }
  ::close(fd);
  return out;
}

void write_all(int fd, const uint8_t* data, size_t n, off_t offset, const std::string& path) {
  while (n > 0) {
    ssize_t done = ::pwrite(fd, data, n, offset);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) fail(errno, cat("cannot write ", path));
    data += done;
    n -= static_cast<size_t>(done);
    offset += done;
  }
}

void sync_directory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(errno, cat("cannot open directory ", directory));
  int rc = ::fsync(fd);
  int error = errno;
  ::close(fd);
  if (rc != 0) fail(error, cat("cannot fsync directory ", directory));
}

// Calls fn(bytes, offset) for each valid record of a log; returns the bytes they take.
template <typename Fn>
size_t scan(std::span<const uint8_t> log, uint64_t generation, Fn&& fn) {
  size_t offset = 0;
  while (log.size() - offset >= kFileRecordHeaderBytes) {
    const uint8_t* header = log.data() + offset;
    uint32_t length = 0;
    for (int i = 0; i < 4; ++i) length |= uint32_t{header[i]} << (8 * i);
    if (length == 0 || length > log.size() - offset - kFileRecordHeaderBytes) break;
    auto bytes = log.subspan(offset + kFileRecordHeaderBytes, length);
    if (detail::record_checksum(generation, offset, bytes) != detail::get64(header + 4)) break;
    fn(bytes);
    offset += kFileRecordHeaderBytes + length;
  }
  return offset;
}

}  // namespace

std::string FileJournal::path(std::string_view name) const {
  return directory_ + "/" + std::string(name);
}

std::string FileJournal::log_name(uint64_t generation) const {
  char name[32];
  std::snprintf(name, sizeof name, "log.%016" PRIx64, generation);
  return name;
}

int FileJournal::open_log(uint64_t generation, bool truncate) {
  std::string file = path(log_name(generation));
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  if (fd < 0) fail(errno, cat("cannot open log file ", file));
  return fd;
}

FileJournal::FileJournal(std::string directory, size_t window_bytes)
    : directory_(std::move(directory)), window_bytes_(window_bytes) {
  if (directory_.empty()) directory_ = ".";
  if (::mkdir(directory_.c_str(), 0755) != 0 && errno != EEXIST) {
    fail(errno, cat("cannot make directory ", directory_));
  }
  struct stat st {};
  if (::stat(directory_.c_str(), &st) != 0) fail(errno, cat("cannot stat ", directory_));
  if (!S_ISDIR(st.st_mode)) fail(ENOTDIR, cat(directory_, " is not a directory"));

  std::vector<uint8_t> checkpoint = read_checkpoint();  // checks it; learns its generation
  (void)checkpoint;
  fd_ = open_log(generation_, false);
  std::optional<std::vector<uint8_t>> log = read_file(path(log_name(generation_)));
  size_t valid = log ? scan(*log, generation_, [](std::span<const uint8_t>) {}) : 0;
  if (log && valid != log->size()) {  // a record torn by a crash: cut it off
    if (::ftruncate(fd_, static_cast<off_t>(valid)) != 0) {
      int error = errno;
      ::close(fd_);
      fail(error, cat("cannot truncate ", path(log_name(generation_))));
    }
  }
  log_end_ = valid;
  // Leftovers of checkpoints a crash interrupted, and logs they superseded.
  std::string keep = log_name(generation_);
  if (DIR* dir = ::opendir(directory_.c_str())) {
    std::vector<std::string> stale;
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if ((name.starts_with("log.") && name != keep) || name == "checkpoint.tmp") {
        stale.push_back(name);
      }
    }
    ::closedir(dir);
    for (const std::string& name : stale) ::unlink(path(name).c_str());
  }
  sync_directory(directory_);
}

FileJournal::~FileJournal() {
  unmap_window();
  if (fd_ < 0) return;
  // The window's zeros after the last record go (the next open would cut them anyway).
  if (::ftruncate(fd_, static_cast<off_t>(log_end_)) != 0) {
    // Left as it is: the next open cuts the zeros after the last record.
  }
  ::close(fd_);
}

std::vector<uint8_t> FileJournal::read_checkpoint() {
  std::string file = path("checkpoint");
  std::optional<std::vector<uint8_t>> bytes = read_file(file);
  if (!bytes) {
    generation_ = 0;
    return {};
  }
  auto damaged = [&](const std::string& why) {
    return LockError(ErrorKind::kInvalidArgument,
                     cat("lock journal: checkpoint file ", file, " is damaged: ", why));
  };
  if (bytes->size() < kCheckpointHeaderBytes || std::memcmp(bytes->data(), kFileMagic, 8) != 0) {
    throw damaged("no journal checkpoint header");
  }
  uint64_t generation = detail::get64(bytes->data() + 8);
  uint64_t length = detail::get64(bytes->data() + 16);
  if (length != bytes->size() - kCheckpointHeaderBytes) throw damaged("truncated");
  std::span<const uint8_t> payload = std::span(*bytes).subspan(kCheckpointHeaderBytes);
  if (detail::image_checksum(generation, payload) != detail::get64(bytes->data() + 24)) {
    throw damaged("checksum mismatch");
  }
  generation_ = generation;
  return {payload.begin(), payload.end()};
}

void FileJournal::replay(const std::function<void(std::span<const uint8_t>)>& record) {
  std::optional<std::vector<uint8_t>> log = read_file(path(log_name(generation_)));
  if (!log) return;
  std::span<const uint8_t> bytes = std::span(*log).first(std::min(log->size(), log_end_));
  scan(bytes, generation_, record);
}

bool FileJournal::fits(size_t bytes) const { return bytes > 0 && bytes <= kMaxRecordBytes; }

void FileJournal::map_window(size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t offset = log_end_ / page * page;
  const size_t needed = (log_end_ - offset + bytes + page - 1) / page * page;
  const size_t length = std::max(window_bytes_, needed);
  const std::string file = path(log_name(generation_));
  // posix_fallocate returns the error instead of setting errno.
  if (int error = ::posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(length));
      error != 0) {
    fail(error, cat("cannot extend ", file, " by ", length, " bytes"));
  }
  void* map =
      ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  if (map == MAP_FAILED) fail(errno, cat("cannot map ", file));
  unmap_window();
  window_ = static_cast<uint8_t*>(map);
  window_offset_ = offset;
  window_length_ = length;
}

void FileJournal::unmap_window() {
  if (window_ != nullptr) ::munmap(window_, window_length_);
  window_ = nullptr;
  window_offset_ = 0;
  window_length_ = 0;
}

void FileJournal::append(std::span<const uint8_t> record) {
  if (!fits(record.size())) {
    throw LockError(ErrorKind::kResourceExhausted,
                    cat("lock journal: a record of ", record.size(), " bytes is not accepted"));
  }
  const size_t bytes = kFileRecordHeaderBytes + record.size();
  if (window_ == nullptr || log_end_ + bytes > window_offset_ + window_length_) {
    map_window(bytes);  // throws with nothing written
  }
  // The order of the stores does not matter: a record a kill interrupts fails its checksum.
  uint8_t* at = window_ + (log_end_ - window_offset_);
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(record.size() >> (8 * i));
  detail::put64(at + 4, detail::record_checksum(generation_, log_end_, record));
  std::memcpy(at + kFileRecordHeaderBytes, record.data(), record.size());
  log_end_ += bytes;
}

void FileJournal::write_checkpoint(std::span<const uint8_t> checkpoint) {
  uint64_t generation = generation_ + 1;
  int fd_log = open_log(generation, true);  // the new, empty log: before the switch
  std::string tmp = path("checkpoint.tmp");
  try {
    std::vector<uint8_t> header(kCheckpointHeaderBytes);
    std::memcpy(header.data(), kFileMagic, 8);
    detail::put64(header.data() + 8, generation);
    detail::put64(header.data() + 16, checkpoint.size());
    detail::put64(header.data() + 24, detail::image_checksum(generation, checkpoint));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail(errno, cat("cannot create ", tmp));
    try {
      write_all(fd, header.data(), header.size(), 0, tmp);
      write_all(fd, checkpoint.data(), checkpoint.size(), kCheckpointHeaderBytes, tmp);
      if (::fsync(fd) != 0) fail(errno, cat("cannot fsync ", tmp));
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path("checkpoint").c_str()) != 0) {
      fail(errno, cat("cannot rename ", tmp, " to ", path("checkpoint")));
    }
  } catch (...) {
    ::close(fd_log);
    ::unlink(path(log_name(generation)).c_str());
    ::unlink(tmp.c_str());
    throw;
  }
  // The switch is done: the new checkpoint and its empty log are the journal.
  std::string old_log = path(log_name(generation_));
  unmap_window();
  ::close(fd_);
  fd_ = fd_log;
  generation_ = generation;
  log_end_ = 0;
  ::unlink(old_log.c_str());
  sync_directory(directory_);
}

}  // namespace asn::locks

#include "memory_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace asn::model::detail {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

MemoryFile MemoryFile::open_locked(const std::string& path, std::string_view board_name,
                                   bool create) {
  // A destroy() in another process may unlink the file between our open() and flock(); the
  // lock would then guard an orphaned inode. Retry until the locked file is the one the
  // path names.
  for (int attempt = 0;; ++attempt) {
    // O_NOFOLLOW: /dev/shm is world-writable, so never follow a planted symlink.
    const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0);
    const int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) {
      const int err = errno;
      if (!create && err == ENOENT) return MemoryFile();
      throw BoardError(BoardError::Kind::kSystem,
                       "cannot open board memory " + path + ": " + errno_text(err));
    }
    MemoryFile file(fd, path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        throw BoardError(
            BoardError::Kind::kBusy,
            "board '" + std::string(board_name) + "' is in use by another process (" + path + ")");
      }
      file.fail("cannot lock", err);
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) != 0) file.fail("cannot stat", errno);
    if (!S_ISREG(held.st_mode)) file.fail("not a regular file:", EINVAL);
    if (::stat(path.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
        named.st_ino == held.st_ino) {
      return file;
    }
    if (attempt >= 8) file.fail("file keeps being replaced:", EAGAIN);
  }
}

MemoryFile::MemoryFile(MemoryFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)) {}

MemoryFile& MemoryFile::operator=(MemoryFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
  }
  return *this;
}

MemoryFile::~MemoryFile() { close(); }

void MemoryFile::close() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  // Closing the last descriptor of the open file description releases the flock.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void MemoryFile::fail(const std::string& what, int err) const {
  throw BoardError(BoardError::Kind::kSystem,
                   "board memory " + path_ + ": " + what + " " + errno_text(err));
}

uint64_t MemoryFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail("cannot stat", errno);
  return static_cast<uint64_t>(st.st_size);
}

bool MemoryFile::read_header(MemoryHeader& header) const {
  if (size() < sizeof header) return false;
  size_t done = 0;
  auto* out = reinterpret_cast<char*>(&header);
  while (done < sizeof header) {
    const ssize_t n = ::pread(fd_, out + done, sizeof header - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", errno);
    if (n == 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::byte* MemoryFile::map(size_t bytes) {
  if (size() != bytes && ::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    fail("cannot resize", errno);
  }
  // Reserve the pages now: on a full tmpfs a store into a sparse mapping is a SIGBUS, an
  // error here is a message.
  const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes));
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) fail("cannot allocate", err);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) fail("cannot map", errno);
  map_ = p;
  map_bytes_ = bytes;
  return static_cast<std::byte*>(p);
}

void MemoryFile::unlink() {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) fail("cannot remove", errno);
}

}  // namespace asn::model::detail

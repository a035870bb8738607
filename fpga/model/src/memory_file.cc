#include "memory_file.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "sigbus_guard.hpp"

namespace asn::model::detail {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string owner_name(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return pw ? "uid " + std::to_string(uid) + " (" + pw->pw_name + ")"
            : "uid " + std::to_string(uid);
}

[[noreturn]] void refuse(const std::string& what) {
  throw BoardError(BoardError::Kind::kSystem, what);
}

// The board memory's directory must be one only asnd's user (or root) can change:
// otherwise another user could plant, swap or lock the file. asnd creates it (0700) when
// it is missing.
void check_directory(const std::string& dir, bool create) {
  if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    refuse("cannot create the board memory directory " + dir + ": " + errno_text(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (!create && errno == ENOENT) return;
    refuse("board memory directory " + dir + ": " + errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) refuse("board memory directory " + dir + " is not a directory");
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    refuse("board memory directory " + dir + " belongs to " + owner_name(st.st_uid) +
           ", not to asnd's user or root: another user could change the board behind asnd's "
           "back. Use a directory of asnd's own (the default, /dev/shm/asn, is created 0700)");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    refuse("board memory directory " + dir + " is writable by " +
           ((st.st_mode & S_IWOTH) ? std::string("everyone") : std::string("its group")) +
           ": another user could plant or lock the board's memory. Use a directory of asnd's "
           "own (the default, /dev/shm/asn, is created 0700)");
  }
}

// A board memory file another user owns, or may write, could be changed behind asnd's back.
void check_file(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse("board memory " + path + ": cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) refuse("board memory " + path + " is not a regular file");
  if (st.st_uid != ::geteuid()) {
    refuse("board memory " + path + " belongs to " + owner_name(st.st_uid) + ", not to asnd's " +
           owner_name(::geteuid()) +
           ": whoever owns it could change the board behind asnd's "
           "back. Remove it (asnd then starts a fresh board) or give it to asnd's user");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    refuse("board memory " + path + " is writable by others (mode " + mode +
           "): they could change the board behind asnd's back. Remove it, or chmod 600 it");
  }
}

}  // namespace

MemoryFile MemoryFile::open_locked(const std::string& path, std::string_view board_name,
                                   bool create) {
  check_directory(path.substr(0, path.rfind('/')), create);
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
    check_file(fd, path);
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
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      guard_(std::exchange(other.guard_, -1)) {}

MemoryFile& MemoryFile::operator=(MemoryFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    guard_ = std::exchange(other.guard_, -1);
  }
  return *this;
}

MemoryFile::~MemoryFile() { close(); }

void MemoryFile::close() {
  unguard_mapping(guard_);
  guard_ = -1;
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

std::byte* MemoryFile::map(size_t bytes, size_t reserve) {
  if (size() != bytes && ::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    fail("cannot resize", errno);
  }
  // Reserve the pages now: on a full tmpfs a store into a sparse mapping is a SIGBUS, an
  // error here is a message.
  const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(std::min(bytes, reserve)));
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) fail("cannot allocate", err);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) fail("cannot map", errno);
  map_ = p;
  map_bytes_ = bytes;
  guard_ = guard_mapping(p, bytes);
  return static_cast<std::byte*>(p);
}

void MemoryFile::zero(size_t offset, size_t bytes) {
  if (bytes == 0) return;
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(bytes)) == 0) {
    return;
  }
  std::memset(static_cast<std::byte*>(map_) + offset, 0, bytes);
}

std::string MemoryFile::problem() const {
  if (map_ == nullptr) return "";
  if (mapping_faulted(guard_)) {
    return "board memory " + path_ + " shrank while in use (an access past its end was caught)";
  }
  struct stat held {};
  if (::fstat(fd_, &held) != 0) return "board memory " + path_ + ": " + errno_text(errno);
  if (static_cast<uint64_t>(held.st_size) != map_bytes_) {
    return "board memory " + path_ + " is " + std::to_string(held.st_size) +
           " bytes; the board needs " + std::to_string(map_bytes_) +
           " (someone truncated or extended it)";
  }
  struct stat named {};
  if (::stat(path_.c_str(), &named) != 0) {
    return "board memory " + path_ +
           " was removed while in use: another asnd could now open a "
           "new board under the same name";
  }
  if (named.st_dev != held.st_dev || named.st_ino != held.st_ino) {
    return "board memory " + path_ + " was replaced by another file while in use";
  }
  return "";
}

void MemoryFile::unlink() {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) fail("cannot remove", errno);
}

}  // namespace asn::model::detail

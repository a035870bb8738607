#include "asn/model/storage_servers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "asn/model/board.hpp"

namespace asn::model {
namespace {

[[noreturn]] void io_error(const std::string& what, const std::string& path, int err) {
  throw StripeError(StripeError::Kind::kStorageIo,
                    "storage server: " + what + " " + path + ": " + std::strerror(err));
}

// Stores kept open between requests: a large file is written in many requests, and opening
// each store per request would cost more than the I/O of a small one. Bounded, as 64 ports
// times 256 groups would pass the process's file limit.
constexpr size_t kMaxOpenStores = 256;

bool make_dir(const std::string& path) {
  return ::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST;
}

// A file created or renamed in `dir` is on stable storage once the directory is too.
void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_error("cannot open", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) io_error("cannot sync", dir, err);
}

}  // namespace

StorageServers::StorageServers(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (dir_.empty() || !make_dir(dir_)) {
    throw StripeError(
        StripeError::Kind::kNoStorage,
        "cannot create the storage servers' directory '" + dir_ + "': " + std::strerror(errno));
  }
  // One board at a time: two boards striping into the same stores would corrupt each
  // other's files (as two asnd sharing a state_dir would).
  const std::string lock = dir_ + "/lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    throw StripeError(StripeError::Kind::kNoStorage,
                      "cannot lock the storage servers' directory '" + dir_ + "': " +
                          (err == EWOULDBLOCK ? std::string("another board uses it")
                                              : std::string(std::strerror(err))));
  }
}

StorageServers::~StorageServers() {
  fds_.clear();
  ::close(lock_fd_);  // releases the lock
}

StorageServers::Fd::~Fd() { ::close(fd); }

template <typename F>
auto StorageServers::on_member(unsigned port, uint16_t group, const char* what, F&& io) {
  int injected = 0;
  {
    std::lock_guard lock(faults_mu_);
    if (auto it = faults_.find(std::make_pair(port, group)); it != faults_.end()) {
      if (it->second.after == 0) {
        injected = it->second.err;
      } else {
        --it->second.after;
      }
    }
  }
  try {
    if (injected != 0) io_error(what, store_path(port, group), injected);
    return io();
  } catch (const StripeError& e) {
    if (e.kind() != StripeError::Kind::kStorageIo || e.port()) throw;
    throw StripeError(e.kind(), e.what(), port);
  }
}

std::string StorageServers::store_path(unsigned port, uint16_t group) const {
  return dir_ + "/port-" + std::to_string(port) + "/group-" + std::to_string(group) + ".data";
}

std::string StorageServers::size_path(uint16_t group) const {
  return dir_ + "/group-" + std::to_string(group) + ".size";
}

std::string StorageServers::bitmap_path(unsigned port, uint16_t group) const {
  return dir_ + "/port-" + std::to_string(port) + "/group-" + std::to_string(group) + ".bitmap";
}

std::shared_ptr<StorageServers::Fd> StorageServers::store(unsigned port, uint16_t group,
                                                          bool create) {
  const auto key = std::make_pair(port, group);
  // Held across the open too: two groups' first requests may create the same port-<P>.
  std::lock_guard lock(fds_mu_);
  if (auto it = fds_.find(key); it != fds_.end()) return it->second;
  if (fds_.size() >= kMaxOpenStores) fds_.clear();  // closed as their holders finish
  const std::string path = store_path(port, group);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    const std::string port_dir = dir_ + "/port-" + std::to_string(port);
    if (!make_dir(port_dir)) io_error("cannot create", port_dir, errno);
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    // The new name on stable storage too, so that a later fdatasync of the store (durability
    // fsync) keeps a file that can be found. Once per store.
    if (fd >= 0) sync_dir(port_dir);
  }
  if (fd < 0) {
    if (errno == ENOENT && !create) return nullptr;
    io_error("cannot open", path, errno);
  }
  auto out = std::make_shared<Fd>(fd);
  fds_.emplace(key, out);
  return out;
}

void StorageServers::close_store(unsigned port, uint16_t group) {
  std::lock_guard lock(fds_mu_);
  fds_.erase(std::make_pair(port, group));
}

void StorageServers::read(unsigned port, uint16_t group, uint64_t offset, std::span<uint8_t> out) {
  on_member(port, group, "cannot read", [&] {
    const auto store_fd = store(port, group, /*create=*/false);
    const int fd = store_fd ? store_fd->fd : -1;
    size_t done = 0;
    while (fd >= 0 && done < out.size()) {
      const ssize_t n =
          ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) io_error("cannot read", store_path(port, group), errno);
      if (n == 0) break;  // past the end: never received
      done += static_cast<size_t>(n);
    }
    std::memset(out.data() + done, 0, out.size() - done);
  });
}

void StorageServers::write(unsigned port, uint16_t group, uint64_t offset,
                           std::span<const uint8_t> bytes) {
  on_member(port, group, "cannot write", [&] {
    const auto store_fd = store(port, group, /*create=*/true);
    const int fd = store_fd->fd;
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) io_error("cannot write", store_path(port, group), n < 0 ? errno : EIO);
      done += static_cast<size_t>(n);
    }
  });
}

void StorageServers::open(unsigned port, uint16_t group) {
  on_member(port, group, "cannot open", [&] { store(port, group, /*create=*/true); });
}

void StorageServers::inject_fault(unsigned port, uint16_t group, int err, uint64_t after) {
  std::lock_guard lock(faults_mu_);
  if (err == 0) {
    faults_.erase(std::make_pair(port, group));
  } else {
    faults_[std::make_pair(port, group)] = Fault{err, after};
  }
}

void StorageServers::truncate(unsigned port, uint16_t group, uint64_t bytes) {
  on_member(port, group, "cannot truncate", [&] {
    const auto store_fd = store(port, group, /*create=*/false);
    if (!store_fd) return;
    const int fd = store_fd->fd;
    struct stat st {};
    if (::fstat(fd, &st) != 0) io_error("cannot stat", store_path(port, group), errno);
    if (static_cast<uint64_t>(st.st_size) <= bytes) return;
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      io_error("cannot truncate", store_path(port, group), errno);
    }
  });
}

void StorageServers::sync(unsigned port, uint16_t group) {
  on_member(port, group, "cannot sync", [&] {
    const auto store_fd = store(port, group, /*create=*/false);
    if (store_fd && ::fdatasync(store_fd->fd) != 0) {
      io_error("cannot sync", store_path(port, group), errno);
    }
  });
}

std::string StorageServers::read_bitmap(unsigned port, uint16_t group) {
  return on_member(port, group, "cannot read", [&]() -> std::string {
    const std::string path = bitmap_path(port, group);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return {};
      io_error("cannot open", path, errno);
    }
    std::string out;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        ::close(fd);
        if (n < 0) io_error("cannot read", path, err);
        return out;
      }
      out.append(buffer, static_cast<size_t>(n));
    }
  });
}

// In place, as md rewrites its bitmap's sectors: a rename would cost a directory sync on
// every change. A write torn by a power cut leaves a bitmap the parity path cannot parse,
// which it takes as every region dirty.
void StorageServers::write_bitmap(unsigned port, uint16_t group, std::string_view bytes,
                                  bool sync) {
  on_member(port, group, "cannot write", [&] {
    const std::string port_dir = dir_ + "/port-" + std::to_string(port);
    if (!make_dir(port_dir)) io_error("cannot create", port_dir, errno);
    const std::string path = bitmap_path(port, group);
    bool created = false;
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      created = true;
    }
    if (fd < 0) io_error("cannot open", path, errno);
    int err = 0;
    const ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), 0);
    if (n != static_cast<ssize_t>(bytes.size())) {
      err = n < 0 ? errno : EIO;
    } else if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0 ||
               (sync && ::fdatasync(fd) != 0)) {
      err = errno;
    }
    ::close(fd);
    if (err != 0) io_error("cannot write", path, err);
    if (created && sync) sync_dir(port_dir);
  });
}

uint64_t StorageServers::file_size(uint16_t group) const {
  const std::string path = size_path(group);
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) {
    if (errno == ENOENT) return 0;
    io_error("cannot open", path, errno);
  }
  unsigned long long bytes = 0;
  const int got = std::fscanf(f, "%llu", &bytes);
  std::fclose(f);
  if (got != 1) io_error("cannot parse", path, EINVAL);
  return bytes;
}

// Written whole to a temporary file and renamed over the old one, so a reader (or an asnd
// killed half way) sees the old length or the new one, never a torn one. Without `sync` the
// emulation survives a process kill (the page cache keeps the file); with it (durability
// fsync) a power cut too: the file is synced before the rename, the directory after.
void StorageServers::set_file_size(uint16_t group, uint64_t bytes, bool sync) {
  const std::string path = size_path(group);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) io_error("cannot create", tmp, errno);
  const std::string text = std::to_string(bytes) + "\n";
  const ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  const bool synced = !sync || ::fdatasync(fd) == 0;
  if (!synced) err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) io_error("cannot write", tmp, n < 0 ? err : EIO);
  if (!synced) io_error("cannot sync", tmp, err);
  if (::rename(tmp.c_str(), path.c_str()) != 0) io_error("cannot rename to", path, errno);
  if (sync) sync_dir(dir_);
}

void StorageServers::fail(unsigned port, uint16_t group) {
  close_store(port, group);
  for (const std::string& path : {store_path(port, group), bitmap_path(port, group)}) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) io_error("cannot remove", path, errno);
  }
}

void StorageServers::discard(uint16_t group) {
  // Every port-<P> directory, not only the group's members: the entry may already be gone.
  std::vector<unsigned> ports;
  if (DIR* d = ::opendir(dir_.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      unsigned port = 0;
      char tail = 0;
      if (std::sscanf(e->d_name, "port-%u%c", &port, &tail) == 1) ports.push_back(port);
    }
    ::closedir(d);
  }
  for (unsigned port : ports) fail(port, group);
  const std::string path = size_path(group);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) io_error("cannot remove", path, errno);
}

}  // namespace asn::model

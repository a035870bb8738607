#include "state/store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "asn/state/v1/state.pb.h"
#include "error.hpp"
#include "unique_fd.hpp"

namespace asn {

namespace {

// FNV-1a 64 over the fields that matter, in a fixed order: damage to any of them shows.
uint64_t checksum(const state::v1::StateFile& file) {
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
  };
  mix(file.kind());
  mix(fmt::format("\n{}\n{}\n{}\n", file.schema(), file.revision(), file.pending() ? 1 : 0));
  mix(file.body());
  return hash;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error(ErrorCode::kFailedPrecondition,
              fmt::format("state file {} {}; asnd leaves the board as it is. Move the file aside "
                          "(asnd then starts without that state) or restore it from a backup",
                          path, why));
}

std::string read_all(const std::string& path, int fd, size_t size) {
  std::string data(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, data.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(path, fmt::format("cannot be read ({})", std::strerror(errno)));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

void write_all(const std::string& path, int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Error(ErrorCode::kUnavailable,
                  fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string StateStore::path_of(std::string_view kind) const {
  return fmt::format("{}/{}.state", dir_, kind);
}

std::optional<StoredHeader> StateStore::load(std::string_view kind, uint32_t max_schema,
                                             google::protobuf::Message& body) const {
  const std::string path = path_of(kind);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    refuse(path, fmt::format("cannot be opened ({})", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) refuse(path, "is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kMaxStateFileBytes) {
    refuse(path, fmt::format("is {} bytes, more than a state file can be ({})", st.st_size,
                             kMaxStateFileBytes));
  }
  const std::string data = read_all(path, fd.get(), static_cast<size_t>(st.st_size));
  state::v1::StateFile file;
  if (!file.ParseFromString(data)) refuse(path, "is damaged (not a state file)");
  if (file.checksum() != checksum(file)) refuse(path, "is damaged (its checksum does not match)");
  if (file.kind() != kind) {
    refuse(path, fmt::format("belongs to '{}', not '{}'", file.kind(), kind));
  }
  if (file.schema() > max_schema) {
    refuse(path, fmt::format("was written by a newer asnd (schema {}; this asnd reads up to {})",
                             file.schema(), max_schema));
  }
  if (!body.ParseFromString(file.body())) refuse(path, "is damaged (its document does not parse)");
  return StoredHeader{file.schema(), file.revision(), file.pending()};
}

void StateStore::save(std::string_view kind, const StoredHeader& header,
                      const google::protobuf::Message& body) const {
  state::v1::StateFile file;
  file.set_kind(std::string(kind));
  file.set_schema(header.schema);
  file.set_revision(header.revision);
  file.set_pending(header.pending);
  if (!body.SerializeToString(file.mutable_body())) {
    throw Error(ErrorCode::kInternal, fmt::format("cannot serialise the {} state", kind));
  }
  file.set_checksum(checksum(file));
  std::string data;
  file.SerializeToString(&data);

  const std::string path = path_of(kind);
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& what) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot {} {}: {}", what, tmp, std::strerror(err)));
  };
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640));
    if (fd.get() < 0) fail("create");
    write_all(tmp, fd.get(), data);
    if (::fsync(fd.get()) != 0) fail("flush");
    if (::close(fd.release()) != 0) fail("close");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
  // The rename itself is durable only once the directory is.
  UniqueFd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
}

void StateStore::remove(std::string_view kind) const {
  const std::string path = path_of(kind);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot remove {}: {}", path, std::strerror(errno)));
  }
  UniqueFd dir(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() >= 0) ::fsync(dir.get());
}

}  // namespace asn

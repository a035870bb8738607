// The desired-state store: one typed, versioned document per manager under asnd's state
// directory (<state_dir>/<kind>.state, a StateFile of asn/state/v1/state.proto), replaced
// atomically (temp file, fsync, rename, fsync the directory) so a crash leaves the old
// document or the new one, never a mix.
#pragma once

#include <google/protobuf/message.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace asn {

// A document file larger than this is damage, not state.
inline constexpr size_t kMaxStateFileBytes = 64u << 20;

struct StoredHeader {
  uint32_t schema = 0;
  uint64_t revision = 0;
  bool pending = false;  // a change was stored but not confirmed on the board
};

class StateStore {
 public:
  explicit StateStore(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string path_of(std::string_view kind) const;

  // Loads `kind`'s document into `body`. Returns nothing when there is none. Throws
  // asn::Error kFailedPrecondition, naming the file and what to do, when it is damaged
  // (checksum, parse, size, not a regular file), belongs to another kind, or was written by
  // a newer asnd (schema above `max_schema`).
  std::optional<StoredHeader> load(std::string_view kind, uint32_t max_schema,
                                   google::protobuf::Message& body) const;
  // Replaces `kind`'s document. Throws kUnavailable when the disk refuses (full, read-only);
  // the previous document is then still in place.
  void save(std::string_view kind, const StoredHeader& header,
            const google::protobuf::Message& body) const;
  // Removes `kind`'s document (there is then none).
  void remove(std::string_view kind) const;

 private:
  std::string dir_;
};

}  // namespace asn

// The byte encoding of the lock library's snapshots and journal records: LEB128 varints,
// length-prefixed strings, little-endian 64-bit words, and a 64-bit checksum. A Reader
// never reads past its bytes and throws LockError kInvalidArgument naming what it read and
// where; count() bounds a count by the bytes left before anything is allocated for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/locks/error.hpp"

namespace asn::locks::detail {

// A 64-bit hash of `bytes` (not cryptographic: it finds torn and damaged bytes).
uint64_t checksum64(std::span<const uint8_t> bytes, uint64_t seed = 0);

// The checksums of both journals (a file's, journal_file.cc, and a memory region's,
// journal_region.cc): of one record, seeded by where it lies, so that a record copied to
// another place or generation does not pass; and of a checkpoint image.
inline uint64_t record_checksum(uint64_t generation, size_t offset,
                                std::span<const uint8_t> bytes) {
  return checksum64(bytes, (generation << 20) ^ offset ^ (uint64_t{bytes.size()} << 44));
}
inline uint64_t image_checksum(uint64_t generation, std::span<const uint8_t> bytes) {
  return checksum64(bytes, generation * 0x9e3779b97f4a7c15ULL + bytes.size());
}

inline void put64(uint8_t* at, uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}
inline uint64_t get64(const uint8_t* at) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{at[i]} << (8 * i);
  return value;
}

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}

  void u8(uint8_t value) { out_.push_back(value); }
  void varint(uint64_t value) {
    uint8_t buffer[10];
    size_t n = 0;
    while (value >= 0x80) {
      buffer[n++] = static_cast<uint8_t>(value) | 0x80;
      value >>= 7;
    }
    buffer[n++] = static_cast<uint8_t>(value);
    out_.insert(out_.end(), buffer, buffer + n);
  }
  void bytes(std::string_view text) {
    varint(text.size());
    out_.insert(out_.end(), text.begin(), text.end());
  }
  void fixed64(uint64_t value) {
    size_t at = out_.size();
    out_.resize(at + 8);
    put64(out_.data() + at, value);
  }

 private:
  std::vector<uint8_t>& out_;
};

class Reader {
 public:
  // `what` names the bytes in errors: "lock table snapshot", "journal record 3".
  Reader(std::span<const uint8_t> in, std::string what) : in_(in), what_(std::move(what)) {}

  size_t remaining() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }

  uint8_t u8(std::string_view field) {
    if (pos_ >= in_.size()) truncated(field);
    return in_[pos_++];
  }
  uint64_t varint(std::string_view field) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= in_.size()) truncated(field);
      uint8_t byte = in_[pos_++];
      if (shift == 63 && byte > 1) fail(std::string(field) + " does not fit 64 bits");
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    fail(std::string(field) + " does not fit 64 bits");
  }
  // A count of items of at least `min_bytes` each: at most what the bytes left can hold.
  size_t count(std::string_view field, size_t min_bytes) {
    uint64_t n = varint(field);
    if (n > remaining() / min_bytes) {
      fail(std::string(field) + " " + std::to_string(n) + " is more than the " +
           std::to_string(remaining()) + " bytes left can hold");
    }
    return static_cast<size_t>(n);
  }
  std::string_view bytes(std::string_view field, size_t max) {
    uint64_t n = varint(field);
    if (n > max) {
      fail(std::string(field) + " is " + std::to_string(n) + " bytes; at most " +
           std::to_string(max) + " are allowed");
    }
    if (n > remaining()) truncated(field);
    std::string_view out(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return out;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw LockError(ErrorKind::kInvalidArgument,
                    what_ + ": " + message + " (at byte " + std::to_string(pos_) + ")");
  }

 private:
  [[noreturn]] void truncated(std::string_view field) const {
    fail("truncated: the bytes end in the middle of " + std::string(field));
  }

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  std::string what_;
};

}  // namespace asn::locks::detail

// StripeManager's file data and members: writes, reads, failing and rebuilding a member.
// Each holds the group's lock for its whole call (a rebuild for all of it: a write in the
// middle would skip the member being rebuilt and leave it stale).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "error.hpp"
#include "managers/stripe_manager.hpp"

namespace asn {

namespace {

bool has(const google::protobuf::RepeatedField<uint32_t>& ports, uint32_t port) {
  return std::find(ports.begin(), ports.end(), port) != ports.end();
}

void check_member(uint32_t group, const state::v1::StripeGroupState& st, uint32_t port) {
  if (has(st.data_ports(), port) || has(st.parity_ports(), port)) return;
  std::vector<uint32_t> members(st.data_ports().begin(), st.data_ports().end());
  members.insert(members.end(), st.parity_ports().begin(), st.parity_ports().end());
  throw Error(ErrorCode::kInvalidArgument,
              fmt::format("port {} is not a member of stripe group {} (members: {})", port, group,
                          fmt::join(members, ",")));
}

// Runs a call of the data port for a group that exists (the caller holds the group's lock, so
// it cannot be deleted meanwhile). The board answers NOT_FOUND when its group table does not
// hold the group valid: after a board reset the table is back to its reset values until
// asnd's reconciler programs the groups again, and a request that spans the reset finds its
// entry cleared (issue 27). The group exists, so that is not NOT_FOUND for the caller but a
// state that passes: UNAVAILABLE, retry.
template <typename F>
auto on_board(uint32_t group, F&& call) {
  try {
    return call();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kNotFound) throw;
    throw Error(ErrorCode::kUnavailable,
                fmt::format("stripe group {} exists, but the board's group table does not hold "
                            "it now (a board reset, until asnd programs the groups again): retry "
                            "the call ({})",
                            group, e.what()));
  }
}

// A write of `length` bytes at `offset` must end at or before the group's most file bytes;
// checked without an overflow for any offset and length (issue 27).
void check_extent(uint32_t group, uint64_t offset, uint64_t length) {
  const uint64_t limit = kStripeMaxFileBytes;
  if (offset <= limit && length <= limit - offset) return;
  const std::string end = length > ~uint64_t{0} - offset
                              ? "offset + length wraps past 2^64"
                              : fmt::format("it would end at byte {}", offset + length);
  throw Error(ErrorCode::kOutOfRange,
              fmt::format("offset: a write of {} bytes at offset {} to stripe group {} passes "
                          "the group's maximum file size of {} bytes (64 GiB): {}; give an "
                          "offset + length of at most {}",
                          length, offset, group, limit, end, limit));
}

}  // namespace

StripeChange StripeManager::fail_member(uint32_t group, uint32_t port) {
  std::lock_guard group_guard(group_lock(group));
  return mark_failed(group, port, "fail-member", nullptr);
}

namespace {

// A member's I/O error the level does not tolerate leaves the member unmarked: the error may
// pass (a cable, a full filesystem), while a mark would make the file unreadable until a
// rebuild that cannot run. The call fails UNAVAILABLE, retryable; what was acknowledged
// before stays on the members (issue 27 item 5).
[[noreturn]] void refuse_member_io(uint32_t group, const state::v1::StripeGroupState& st,
                                   const StripeMemberError& io) {
  throw Error(ErrorCode::kUnavailable,
              fmt::format("stripe group {}: the storage server of member port {} failed ({}); "
                          "RAID {} tolerates {} failed member(s) and port(s) {} failed already, "
                          "so it was not marked failed and the call was not acknowledged: "
                          "retry once its storage is back, or rebuild a failed member first",
                          group, io.port(), io.what(), st.raid(), st.parity_ports_size(),
                          fmt::join(st.failed_ports(), ",")));
}

}  // namespace

StripeChange StripeManager::mark_failed(uint32_t group, uint32_t port, const std::string& why,
                                        const StripeMemberError* io) {
  std::lock_guard lock(mutex_);
  state_.require_usable();
  state::v1::StripeGroupState next = existing(group);
  check_member(group, next, port);
  StripeChange out;
  out.revision = state_.revision();
  if (!has(next.failed_ports(), port)) {
    if (next.failed_ports_size() >= next.parity_ports_size()) {
      if (io != nullptr) refuse_member_io(group, next, *io);
      throw Error(
          ErrorCode::kFailedPrecondition,
          fmt::format("stripe group {} has failed members already (ports {}) and RAID {} "
                      "tolerates {}: failing port {} too would lose the file; rebuild a member "
                      "first",
                      group, fmt::join(next.failed_ports(), ","), next.raid(),
                      next.parity_ports_size(), port));
    }
    std::set<uint32_t> failed(next.failed_ports().begin(), next.failed_ports().end());
    failed.insert(port);
    next.clear_failed_ports();
    next.mutable_failed_ports()->Add(failed.begin(), failed.end());
    (*next.mutable_failed_why())[port] = why;
    // The mark first: from then on reads rebuild the member's units and writes skip it, so
    // losing its data below (or a crash before) never serves a unit it no longer holds.
    out = commit_group(group, &next);
  }
  if (StripeDataPort* data = device_.stripe_data_port()) {
    on_board(group, [&] { data->fail_member(static_cast<uint16_t>(group), port); });
  }
  out.group = view(group, next, entry_words(&next));
  return out;
}

// md marks a member faulty on an I/O error and goes on degraded; so does this, through the
// operator's own path (mark_failed). The call runs again whole: a write is idempotent, and
// the parity path resyncs the stripes the refused attempt may have torn (its write-intent
// bitmap) before it serves them. Each round marks one more member, so it ends.
template <typename F>
auto StripeManager::tolerating_member_errors(uint32_t group, const char* operation, F&& call) {
  for (;;) {
    try {
      return on_board(group, call);
    } catch (const StripeMemberError& e) {
      {
        std::lock_guard lock(mutex_);
        if (has(existing(group).failed_ports(), e.port())) throw;  // marked: no new round
      }
      const std::string why = fmt::format("{}: {}", operation, e.what());
      spdlog::warn(
          "stripe group {}: member port {} failed by itself during a {}: {}; marking "
          "it failed and going on degraded",
          group, e.port(), operation, e.what());
      mark_failed(group, e.port(), why, &e);
      spdlog::warn(
          "stripe group {}: member port {} marked failed; replace its storage and run "
          "asnctl stripe rebuild-member {} {}",
          group, e.port(), group, e.port());
    }
  }
}

StripeChange StripeManager::rebuild_member(uint32_t group, uint32_t port,
                                           const Progress& progress) {
  std::lock_guard group_guard(group_lock(group));
  StripeDataPort& data = data_port();
  {
    std::lock_guard lock(mutex_);
    state_.require_usable();
    const state::v1::StripeGroupState& st = existing(group);
    check_member(group, st, port);
    if (!has(st.failed_ports(), port)) {
      throw Error(ErrorCode::kFailedPrecondition,
                  fmt::format("port {} of stripe group {} has not failed: nothing to rebuild "
                              "(asnctl stripe fail-member marks a member failed)",
                              port, group));
    }
  }
  // Without the document's lock: a rebuild of a large file takes long, and other groups go
  // on. The group's own lock keeps this group's writes out.
  on_board(group, [&] { data.rebuild_member(static_cast<uint16_t>(group), port, progress); });
  std::lock_guard lock(mutex_);
  state::v1::StripeGroupState next = existing(group);
  std::vector<uint32_t> failed;
  for (uint32_t p : next.failed_ports()) {
    if (p != port) failed.push_back(p);
  }
  next.clear_failed_ports();
  next.mutable_failed_ports()->Add(failed.begin(), failed.end());
  next.mutable_failed_why()->erase(port);
  StripeChange out = commit_group(group, &next);
  out.group = view(group, next, entry_words(&next));
  return out;
}

// Issue 27 item 4. Refused up front from the desired state, naming the failed ports; the
// parity path checks the same on the board's entry. A check of a degraded group that has
// redundancy left runs: it is what an operator wants to know before a rebuild, and the one
// equation the rebuild did not use still says whether a stripe is consistent.
StripeScrub StripeManager::scrub(uint32_t group, bool repair, bool dry_run,
                                 const Progress& progress) {
  std::lock_guard group_guard(group_lock(group));
  StripeDataPort& data = data_port();
  state::v1::StripeGroupState st;
  {
    std::lock_guard lock(mutex_);
    state_.require_usable();
    st = existing(group);
  }
  const int failed = st.failed_ports_size();
  if (repair && failed > 0) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("stripe group {} has failed members (ports {}): a repair needs every "
                            "member to tell a wrong unit from a right one; rebuild them first "
                            "(asnctl stripe rebuild-member {} PORT), or check without repairing",
                            group, fmt::join(st.failed_ports(), ","), group));
  }
  if (failed >= st.parity_ports_size()) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("stripe group {} has {} failed member(s) (ports {}) and RAID {} has "
                            "{} parity member(s): no redundancy is left to check the data "
                            "against; rebuild a member first (asnctl stripe rebuild-member {} "
                            "PORT)",
                            group, failed, fmt::join(st.failed_ports(), ","), st.raid(),
                            st.parity_ports_size(), group));
  }
  StripeScrub out;
  // Without the document's lock, as a rebuild: other groups go on.
  out.report = tolerating_member_errors(group, repair ? "repair" : "check", [&] {
    return data.scrub(static_cast<uint16_t>(group), repair, dry_run, progress);
  });
  {
    std::lock_guard lock(mutex_);
    st = existing(group);  // a member may have failed meanwhile
    ScrubTotals& totals = scrub_totals_[group];
    totals.stripes += out.report.stripes;
    totals.mismatches += out.report.mismatches;
    totals.repaired += out.report.repaired;
  }
  out.group = view(group, st, entry_words(&st));
  return out;
}

uint64_t StripeManager::write(uint32_t group, uint64_t offset, std::span<const uint8_t> bytes) {
  StripeDataPort& data = data_port();
  std::lock_guard group_guard(group_lock(group));
  {
    std::lock_guard lock(mutex_);
    existing(group);
  }
  check_extent(group, offset, bytes.size());
  return tolerating_member_errors(group, "write", [&] {
    data.write(static_cast<uint16_t>(group), offset, bytes);
    return data.file_size(static_cast<uint16_t>(group));
  });
}

size_t StripeManager::read(uint32_t group, uint64_t offset, std::span<uint8_t> out) {
  StripeDataPort& data = data_port();
  std::lock_guard group_guard(group_lock(group));
  {
    std::lock_guard lock(mutex_);
    existing(group);
  }
  if (out.size() > ~uint64_t{0} - offset) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("length: offset + length wraps past 2^64 (offset {}, length {}); "
                            "give a length of at most 2^64 - 1 - offset",
                            offset, out.size()));
  }
  return tolerating_member_errors(
      group, "read", [&] { return data.read(static_cast<uint16_t>(group), offset, out); });
}

uint64_t StripeManager::file_size(uint32_t group) {
  StripeDataPort& data = data_port();
  std::lock_guard group_guard(group_lock(group));
  {
    std::lock_guard lock(mutex_);
    existing(group);
  }
  return on_board(group, [&] { return data.file_size(static_cast<uint16_t>(group)); });
}

uint64_t StripeManager::stripe_bytes(uint32_t group) {
  std::lock_guard lock(mutex_);
  const auto& st = existing(group);
  return uint64_t{static_cast<uint32_t>(st.data_ports_size())} * st.unit_bytes();
}

StripeStreamWriter::StripeStreamWriter(StripeManager& manager, uint32_t group, uint64_t offset)
    : manager_(manager),
      group_(group),
      stripe_(manager.stripe_bytes(group)),
      start_(offset),
      position_(offset) {
  file_size_ = manager_.file_size(group);
}

void StripeStreamWriter::flush(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  file_size_ = manager_.write(group_, position_, bytes);
  position_ += bytes.size();
}

uint64_t StripeStreamWriter::add(std::span<const uint8_t> bytes) {
  // Before any sum below: the stream's end stays within the group's limit, far from 2^64.
  check_extent(group_, position_, buffer_.size() + uint64_t{bytes.size()});
  if (!buffer_.empty()) {
    // Complete the buffered stripe first.
    const uint64_t end = position_ + buffer_.size();
    const uint64_t boundary = (end / stripe_ + 1) * stripe_;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(boundary - end, bytes.size()));
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.begin() + static_cast<long>(take));
    bytes = bytes.subspan(take);
    if (position_ + buffer_.size() < boundary) return acked();
    flush(buffer_);
    buffer_.clear();
  }
  // Whole stripes straight from the message, the rest kept.
  const uint64_t cut = (position_ + bytes.size()) / stripe_ * stripe_;
  if (cut > position_) {
    const size_t whole = static_cast<size_t>(cut - position_);
    flush(bytes.first(whole));
    bytes = bytes.subspan(whole);
  }
  buffer_.assign(bytes.begin(), bytes.end());
  return acked();
}

uint64_t StripeStreamWriter::finish() {
  flush(buffer_);
  buffer_.clear();
  return acked();
}

}  // namespace asn

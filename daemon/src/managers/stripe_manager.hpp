// Stripe groups (issue 10, 004 L1131-1190): which ports a file is striped over, with parity
// computed in the switch. Each group is an entry of the STRIPE group table, kept as desired
// state (restored after an asnd restart and a board reset), and the group's file data, which
// on the emulated board passes through asnd (bus/stripe_data_port.hpp).
//
// A change is checked whole before anything is written (asn::stripe::validate and the
// board's ports and table), stored as the pending intent, then programmed entry by entry:
// valid cleared, the entry written, valid set, and read back. A group's entry is never
// half-written: the parity path skips an entry whose valid bit is clear.
//
// Data operations of one group (write, read, fail, rebuild, delete) are serialized by the
// group's own lock, so a rebuild never races a write that would skip the member it rebuilds;
// different groups run in parallel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "asn/state/v1/state.pb.h"
#include "asn/stripe/geometry.hpp"
#include "asn/stripe/parity.hpp"
#include "device/device.hpp"
#include "state/desired_state.hpp"
#include "state/reconciler.hpp"

namespace asn {

// When a write is acknowledged (issue 27 item 3): once on the members, or once on their
// stable storage. The values are stripe.group_table.durability's (and the state file's).
enum class StripeDurability : uint32_t { kNone = 0, kFsync = 1 };

// A group as an operator gives it; ports in any order.
struct StripeGroupSpec {
  uint32_t group = 0;
  unsigned raid = 0;  // 4, 5 or 6
  std::vector<uint32_t> data_ports;
  std::vector<uint32_t> parity_ports;
  uint32_t unit_bytes = 0;
  // Not given: none for a new group; an update keeps the group's.
  std::optional<StripeDurability> durability;
};

// A group as asnd keeps it, with what the board and the storage servers say.
struct StripeGroupView {
  uint32_t group = 0;
  state::v1::StripeGroupState state;  // ports ascending
  int64_t file_size = -1;             // -1: asnd cannot know (no data path)
  std::string board;                  // "in force", or what the board's entry differs in
  std::vector<uint32_t> members() const;
  uint64_t stripe_bytes() const;
};

struct StripeChange {
  StripeGroupView group;
  uint64_t revision = 0;
  bool changed = false;
};

struct StripeMemberStats {
  uint32_t port = 0;
  bool parity = false;
  bool failed = false;
  uint64_t units = 0;
  uint64_t bytes = 0;
};

struct StripeStats {
  StripeGroupView group;
  std::vector<StripeMemberStats> members;  // member order
  uint64_t data_units = 0, parity_units = 0, bytes_striped = 0;
  uint64_t errors = 0, bytes_read = 0, units_rebuilt = 0;
  // What the group's checks and repairs (scrub()) found since asnd started: the board counts
  // none of it, the scrub runs in asnd.
  uint64_t scrubbed_stripes = 0, scrub_mismatches = 0, scrub_repaired = 0;
};

// A scrub's outcome: the report's findings name members by index into group.members().
struct StripeScrub {
  StripeGroupView group;
  stripe::ScrubReport report;
};

// The most bytes a group's file may hold (issue 27): a write that would end past it is refused
// up front with OUT_OF_RANGE, naming the limit. The emulated board's storage servers keep
// each member's units in one host file of up to this / data members bytes: 64 GiB keeps those
// well inside every Linux filesystem's file size (ext4: 16 TiB) and the disk of a test or
// demo host, where an unbounded offset (2^62 passed the board's own check) made TiB-long
// sparse files or failed INTERNAL at the filesystem's limit. A real board has no data path
// through asnd, so the limit only bounds the emulation.
inline constexpr uint64_t kStripeMaxFileBytes = uint64_t{64} << 30;

// Why Write, Read and RebuildMember are refused on a real board.
inline constexpr const char* kNoDataPath =
    "this board has no data path through asnd: on a real board file data arrives on the "
    "switch's ports from the clients, not through asnd";

class StripeManager final : public Reconcilable {
 public:
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  StripeManager(Device& device, const StateStore& store);

  std::string_view kind() const override { return "stripe"; }
  std::string reconcile(ReconcileCause cause) override;
  ManagerSummary summary() const override;
  std::string drift() override;

  // ---- groups ------------------------------------------------------------------------------
  // Each checks everything first (kInvalidArgument, kNotFound, kAlreadyExists,
  // kFailedPrecondition); with validate_only nothing is changed.
  StripeChange create(const StripeGroupSpec& spec, bool validate_only);
  // A group whose file is not empty keeps its layout unless discard_file drops the file.
  StripeChange update(const StripeGroupSpec& spec, bool validate_only, bool discard_file);
  StripeChange remove(uint32_t group, bool validate_only);
  std::vector<StripeGroupView> list();
  StripeStats stats(uint32_t group);
  uint32_t capacity() const;
  uint64_t revision() const;
  bool has_data_path() const { return device_.stripe_data_port() != nullptr; }

  // ---- members -----------------------------------------------------------------------------
  StripeChange fail_member(uint32_t group, uint32_t port);
  StripeChange rebuild_member(uint32_t group, uint32_t port, const Progress& progress);
  // Verifies every stripe's parity (md's check) or, with repair, rewrites what is wrong
  // (md's repair; dry_run: reports, writes nothing). kFailedPrecondition: a check with no
  // redundancy left, a repair with any member failed.
  StripeScrub scrub(uint32_t group, bool repair, bool dry_run, const Progress& progress);

  // ---- file data (the emulated board's data path; kFailedPrecondition without one) ---------
  // Writes bytes at offset; returns the file size after.
  uint64_t write(uint32_t group, uint64_t offset, std::span<const uint8_t> bytes);
  size_t read(uint32_t group, uint64_t offset, std::span<uint8_t> out);
  uint64_t file_size(uint32_t group);
  uint64_t stripe_bytes(uint32_t group);

 private:
  StripeGroupView view(uint32_t group, const state::v1::StripeGroupState& state,
                       const std::vector<uint32_t>& board_words);
  // The group table entry's words for a group (all zero for nullptr: no group).
  static std::vector<uint32_t> entry_words(const state::v1::StripeGroupState* group);
  state::v1::StripeGroupState checked(const StripeGroupSpec& spec) const;
  const state::v1::StripeGroupState& existing(uint32_t group) const;
  StripeChange commit_group(uint32_t group, const state::v1::StripeGroupState* next);
  std::string apply(const state::v1::StripeState& doc);
  // What of the board differs from the document: the group table entries (with the words the
  // document wants), and stripe.config.enable when it is not `enable`.
  struct Differences {
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> entries;
    std::optional<uint32_t> enable;
  };
  Differences differing(const state::v1::StripeState& doc);
  void program(uint32_t group, const std::vector<uint32_t>& words);
  StripeDataPort& data_port();
  std::mutex& group_lock(uint32_t group);
  // Marks `port` failed, the one mechanism of fail-member and of a member's I/O error (issue
  // 27 item 5): the desired state and the board's entry first (with `why`), then the data
  // path drops the member's store. Called with the group's lock held. `io`: the member's
  // I/O error that asks for it; a failure the level does not tolerate is then UNAVAILABLE
  // and leaves the member as it is, instead of FAILED_PRECONDITION.
  StripeChange mark_failed(uint32_t group, uint32_t port, const std::string& why,
                           const StripeMemberError* io);
  // Runs a data call of the group (its lock held); while a member's I/O error leaves the
  // group within what its level tolerates, marks that member failed and runs it again,
  // degraded: the call is acknowledged only once it completed.
  template <typename F>
  auto tolerating_member_errors(uint32_t group, const char* operation, F&& call);

  Device& device_;
  mutable std::mutex mutex_;  // the document; taken after a group lock, never before
  DesiredState<state::v1::StripeState> state_;
  std::array<std::mutex, 256> group_locks_;  // the table's most entries (regmap max_entries)
  struct ScrubTotals {
    uint64_t stripes = 0, mismatches = 0, repaired = 0;
  };
  std::map<uint32_t, ScrubTotals> scrub_totals_;  // by group (mutex_)
};

// A client's stream of file bytes cut into writes of whole stripes: a chunk boundary inside a
// stripe would otherwise make the parity path read the stripe back twice to complete it
// (a reconstruct-write). What is acknowledged is on the members with its parity.
class StripeStreamWriter {
 public:
  StripeStreamWriter(StripeManager& manager, uint32_t group, uint64_t offset);
  // Takes bytes; writes every stripe they complete. Returns the bytes acknowledged so far.
  uint64_t add(std::span<const uint8_t> bytes);
  // Writes what is left (a partial stripe at the end). Returns the bytes acknowledged.
  uint64_t finish();
  uint64_t acked() const { return position_ - start_; }
  uint64_t file_size() const { return file_size_; }

 private:
  void flush(std::span<const uint8_t> bytes);

  StripeManager& manager_;
  uint32_t group_;
  uint64_t stripe_;
  uint64_t start_;
  uint64_t position_;  // the file offset of buffer_[0]: everything before it is written
  uint64_t file_size_ = 0;
  std::vector<uint8_t> buffer_;  // never holds a whole stripe boundary
};

}  // namespace asn

// Internal: the switch's parity data path (issue 10, 004 L1131: the client sends a file
// unsplit; the switch splits it into stripe units for the storage servers and computes
// parity on the fly), behind STRIPE block version 2.
//
// A client's write to a group is cut into stripes (asn::stripe::map_stripe: md's layouts),
// P (and Q) computed per stripe (asn::stripe::compute_parity), and each stripe sent to every
// live member before the next one starts, so a process killed between stripes leaves every
// stripe it completed whole. A stripe the write covers only partly is completed from what the
// members hold ("reconstruct-write": the rest of its data units are read back, those of
// failed members rebuilt from parity; what lies past the file's end is zeros), so the client
// need not pad its file and parity stays right for degraded reads of the last stripe. Failed
// members are skipped on writes: parity still covers their data. A read gathers the units,
// rebuilding those of failed members (asn::stripe::reconstruct). What lies past the file's
// length is never shown: a write that starts past the end zeroes the gap first
// (clear_past_end, issue 27).
//
// The RAID write hole (a stripe torn by a crash mid-stripe holds parity that matches neither
// its old nor its new data) is closed as Linux md closes it with a write-intent bitmap
// (parity_intent.cc, issue 27 item 2): before a write sends a unit, the regions of stripes it
// changes are marked on every live member; at a group's first request after the engine
// starts, the parity of every marked region is recomputed from its data (resync) before any
// of it is read. A group's durability (group_table.durability) says whether a write is
// acknowledged once on the members or once on their stable storage (fdatasync).
//
// The engine reads only the STRIPE block's registers (a group's entry; it updates the
// counters and member_counters) and, behind the member ports, the storage servers. It takes
// the board's lock only for those register accesses (through `Registers`), never across file
// I/O, so register traffic and the clock go on while a large file streams. Groups are served
// in parallel (issue 27 item 7): each has its own lane (a lock, stripe buffers, pending
// counts, its write-intent state), so a request of one group takes turns only with the
// other requests of that group, in the order they take its lock; a long rebuild or scrub of
// group A never stalls a data call of group B. Within a group nothing changes: one request
// at a time, held across its I/O, which is what the write-intent bitmap's rules (mark before
// sending, clear lazily, resync before the first read) rest on. A group entry is re-read
// between batches of stripes: one whose shape changed (or that was cleared) under a request
// ends it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../block_model.hpp"
#include "asn/model/storage_servers.hpp"
#include "asn/stripe/geometry.hpp"
#include "asn/stripe/parity.hpp"

namespace asn::model::detail::engines {

class ParityPath {
 public:
  // Runs `fn` on the STRIPE block's registers under the board's lock.
  using Registers = std::function<void(const std::function<void(RegisterView&)>& fn)>;
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  // `storage` may be null (no storage servers attached): every request is then refused.
  ParityPath(Registers registers, std::unique_ptr<StorageServers> storage);
  ~ParityPath();

  // The client side (EmulatedBoard::stripe_*). Throw StripeError; each refused request is
  // counted in stripe.errors.
  void write(uint16_t group, uint64_t offset, std::span<const uint8_t> bytes);
  size_t read(uint16_t group, uint64_t offset, std::span<uint8_t> out);
  uint64_t file_size(uint16_t group);
  void fail_member(uint16_t group, unsigned port);
  void rebuild_member(uint16_t group, unsigned port, const Progress& progress);
  // Reads every stripe of the group's file and verifies its parity (parity_scrub.cc, issue
  // 27 item 4);
  // with `repair` (and not `dry_run`) writes back what repair_stripe changed. `progress` is
  // told stripes done of all.
  stripe::ScrubReport scrub(uint16_t group, bool repair, bool dry_run, const Progress& progress);
  void discard(uint16_t group);
  // Test hook: StorageServers::inject_fault (EmulatedBoard::stripe_inject_member_fault).
  void inject_fault(uint16_t group, unsigned port, int err, uint64_t after);

 private:
  struct Lane;
  // A valid group entry, decoded.
  struct Group {
    uint16_t index = 0;
    Lane* lane = nullptr;  // the group's: its buffers and pending counts
    stripe::Geometry geometry;
    std::vector<unsigned> ports;  // member -> port: data ports ascending, then parity ports
    uint64_t failed = 0;          // port mask
    bool sync = false;            // durability fsync: acknowledged once on stable storage
    bool lost(unsigned member) const { return (failed >> ports[member]) & 1; }
    bool same_shape(const Group& other) const;
  };
  // Counted locally and added to the registers once per batch of stripes.
  struct Counts {
    uint64_t data_units = 0, parity_units = 0, bytes_striped = 0, bytes_read = 0;
    uint64_t units_rebuilt = 0;
    std::array<uint64_t, stripe::kMaxMembers> port_units{}, port_bytes{};  // sent, per port
  };
  // One stripe's units, reused from request to request: data units back to back (so a
  // stripe's data is one contiguous range of the file), then P and Q, then two scratch
  // units; aligned for the parity code's vector loads.
  class Buffers {
   public:
    explicit Buffers(const stripe::Geometry& g);
    ~Buffers();
    Buffers(const Buffers&) = delete;
    Buffers& operator=(const Buffers&) = delete;

    uint8_t* unit(unsigned role) { return memory_ + size_t{role} * geometry.unit_bytes; }
    uint8_t* data() { return memory_; }

    const stripe::Geometry geometry;
    std::vector<uint8_t*> units;
    std::array<uint8_t*, 2> scratch{};

   private:
    uint8_t* memory_;
  };

  static std::string name(uint16_t group);
  // The member holding role r of a stripe: data unit r < data_members, then P, then Q (the
  // unit order of asn::stripe::reconstruct).
  static unsigned member_of(const stripe::StripeMap& map, unsigned data_members, unsigned role);

  // Runs `request` in the group's lane (under its lock).
  template <typename F>
  auto counted(uint16_t group, F&& request);
  // The group's lane, made on its first request; lanes live as long as the engine.
  Lane& lane(uint16_t group);
  StorageServers& storage();
  Group load(uint16_t group);
  // Throws kTooManyFailed when more members failed than parity covers.
  static void require_tolerated(const Group& group);
  // The member index of `port`; throws kBadRequest when it is none.
  static unsigned member(const Group& group, unsigned port);
  // Adds the pending counts to the registers and re-reads the group, which must keep its
  // shape; its failed members may change (`also_failed`: a member being rebuilt).
  void checkpoint(Group& group, uint64_t also_failed = 0);
  void flush(Lane& lane);
  uint64_t stripes_per_batch(const Group& group) const;

  void write_stripes(Group& group, uint64_t offset, std::span<const uint8_t> bytes);
  void merge_stripe(const Group& group, uint64_t s, uint64_t size, uint64_t lo, uint64_t hi,
                    const uint8_t* src);
  // Makes what lies past the file's length `size` read as zeros with matching parity, up to
  // stripe `first` (the first a write that starts past the end sends).
  void clear_past_end(const Group& group, uint64_t size, uint64_t first);
  void read_stripes(Group& group, uint64_t offset, std::span<uint8_t> out);
  // Fills the stripe buffer with stripe `s` as the members hold it: the data units in
  // `needed` (a mask of data roles) or, with `all`, every unit; lost units are rebuilt.
  // Returns the data units rebuilt.
  unsigned load_stripe(const Group& group, uint64_t s, uint64_t needed, bool all);
  // Computes the parity of the stripe whose data units are `data` and sends the data units
  // in `dirty` (a mask of data roles) and the parity to the live members.
  void send_stripe(const Group& group, uint64_t s, std::span<const uint8_t* const> data,
                   uint64_t dirty);
  void send_unit(const Group& group, unsigned member, uint64_t s, const uint8_t* unit);
  // A scrub refuses a group it cannot verify (check) or whose wrong units it cannot tell
  // (repair: every member must be there).
  static void require_redundancy(const Group& group, bool repair);
  stripe::ScrubReport scrub_stripes(Group& group, bool write, const Progress& progress);
  // Checks stripe `s` (and repairs it with `write`), adding to `report`.
  void scrub_stripe(const Group& group, uint64_t s, bool write, stripe::ScrubReport& report);
  // Records the file length the storage side keeps once stripes are acknowledged.
  void publish_size(uint16_t group, uint64_t bytes, uint64_t& recorded, bool sync = false);
  // Durability fsync: what the write sent reaches every live member's stable storage.
  void sync_members(const Group& group);

  // ---- the write-intent bitmap (parity_intent.cc) ----------------------------------------
  // What the engine knows of a group's bitmap since it started.
  struct Intent {
    bool resynced = false;         // the marked regions were resynced: the members' bitmaps
                                   // hold exactly `marked`
    std::vector<uint64_t> marked;  // regions marked on the members, ascending
  };
  // A valid group entry whose marked regions are resynced: every request that reads or
  // changes the group's stripes starts here.
  Group open(uint16_t group);
  // Stripes per region: a region is about kRegionBytes of the file.
  static uint64_t region_stripes(const stripe::Geometry& g);
  // Marks the regions of the stripes in `ranges` ([first, last] each) on every live member
  // before a unit of them is sent (synced first with durability fsync); regions of earlier
  // writes, whole by now, are cleared in the same write of the bitmap (md clears lazily).
  void mark(const Group& group, std::span<const std::pair<uint64_t, uint64_t>> ranges);
  void write_bitmaps(const Group& group, const std::vector<uint64_t>& regions, bool sync);
  // Recomputes the parity of every stripe the members' bitmaps mark (every stripe of the
  // file when one cannot be read), then clears them.
  void resync(Group& group);
  // The parity of stripe `s` from its data, sent to the live parity members. A stripe with
  // a data unit on a failed member is left as it is: its data cannot be known.
  void resync_stripe(const Group& group, uint64_t s);

  // What one group's requests share, and nothing another group's do.
  struct Lane {
    std::mutex mu;  // one request of the group at a time; held across its I/O
    std::unique_ptr<Buffers> buffers;
    Counts pending;
    Intent intent;
  };

  Registers registers_;
  std::unique_ptr<StorageServers> storage_;
  std::mutex lanes_mu_;  // guards lanes_ (the map, not a lane)
  std::map<uint16_t, std::unique_ptr<Lane>> lanes_;
};

}  // namespace asn::model::detail::engines

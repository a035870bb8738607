// The emulated asn board: a behavioural model of the register space a real board exposes
// through its PCIe BAR, kept in a memory file so that it outlives the process that drives it
// (asnd restarts, the board keeps its configuration, as real hardware does).
//
// Everything the model knows about registers comes from the generated register map
// (asn/regmap/types.hpp): the board decodes addresses and applies access types itself; the
// behaviour the map cannot express (bank swaps, link state, the TDM sequencer, board reset)
// belongs to one model per block type (src/blocks/) and the engines they drive
// (src/engines/). See fpga/model/README.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "asn/model/engines/routing_engine.hpp"
#include "asn/regmap/types.hpp"
#include "asn/stripe/parity.hpp"

namespace asn::model {

namespace detail::engines {
class ParityPath;
}

// One placed block of the register space.
struct BlockInstance {
  const regmap::BlockDesc* desc;
  uint32_t base;     // byte offset from the start of the register space
  unsigned index;    // port number for per-port blocks, else 0
  uint16_t version;  // the layout version this board implements (the profile may pin one)
};

class BoardError : public std::runtime_error {
 public:
  enum class Kind {
    kBadName,          // board name is not 1-64 characters of [A-Za-z0-9_-]
    kBusy,             // another EmulatedBoard (in any process) holds the board
    kProfileMismatch,  // the board memory belongs to another profile
    kSystem,           // the memory file could not be created, locked or mapped
    kBadProfile,       // the profile does not fit the register map (too many ports, ...)
  };

  BoardError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

std::string_view to_string(BoardError::Kind kind);

// A client request the parity data path refused (EmulatedBoard::stripe_*); the board counts
// each one in stripe.errors.
class StripeError : public std::runtime_error {
 public:
  enum class Kind {
    kNoGroup,        // the group table entry is not valid (or past the board's groups)
    kBadGroup,       // the entry is valid but describes no group (masks, level, unit)
    kBadRequest,     // an offset past what a file may hold, a port that is not a member
    kTooManyFailed,  // more members failed than the layout tolerates
    kNoStorage,      // no storage servers are attached (OpenOptions::storage_dir)
    kStorageIo,      // a storage server's file could not be read or written
  };

  StripeError(Kind kind, const std::string& what, std::optional<unsigned> port = std::nullopt)
      : std::runtime_error(what), kind_(kind), port_(port) {}
  Kind kind() const { return kind_; }
  // kStorageIo from a member's storage server (its store or its bitmap; not the group's
  // length, which the storage side keeps apart): the member's port. asnd marks that member
  // failed (issue 27 item 5).
  std::optional<unsigned> port() const { return port_; }

 private:
  Kind kind_;
  std::optional<unsigned> port_;
};

std::string_view to_string(StripeError::Kind kind);

struct OpenOptions {
  // Discard whatever the memory holds and start as a new board (asnd --reset-board).
  bool power_on_reset = false;
  // Where the board memory file lives: a directory only asnd's user (or root) may change,
  // created 0700 when missing; tests pass a temporary directory.
  std::string shm_dir = "/dev/shm/asn";
  // The register map the board implements; nullptr for the generated one. Tests open
  // boards of other maps (block versions, rings the real map does not use yet).
  const regmap::RegisterMap* map = nullptr;
  // Where the storage servers behind the member ports keep what the parity data path sends
  // them (storage_servers.hpp): a directory of asnd's own, created 0700 when missing, that
  // outlives the board memory. Empty: no storage servers are attached, and every stripe_*
  // call fails with StripeError kNoStorage.
  std::string storage_dir;
};

struct OpenReport {
  bool created = false;        // the memory file was new (or empty)
  bool reinitialised = false;  // existing memory was discarded; `reason` says why
  std::string reason;          // also set when created; empty on a warm restart
};

// The fixed header at the start of the board memory file, followed by the BAR image (one
// uint32_t per 4 bytes of address space, at kMemoryHeaderBytes). Public so that tools and
// tests can inspect the file; fixed-width fields only, native byte order.
inline constexpr char kMemoryMagic[8] = {'A', 'S', 'N', 'B', 'O', 'A', 'R', 'D'};
// 2: the TDM phase moved into the block models' private state.
inline constexpr uint32_t kMemoryLayoutVersion = 2;
inline constexpr size_t kMemoryHeaderBytes = 4096;
inline constexpr size_t kProfileNameBytes = 64;
inline constexpr size_t kModelStateWords = 480;
inline constexpr uint32_t kMemoryStateInitialising = 0;
inline constexpr uint32_t kMemoryStateReady = 0x52454459;  // "REDY"

struct MemoryHeader {
  char magic[8];                    // kMemoryMagic, no terminator
  uint32_t layout_version;          // kMemoryLayoutVersion
  uint32_t header_bytes;            // kMemoryHeaderBytes
  uint64_t regmap_digest;           // regmap::register_map().digest the image was laid out by
  char profile[kProfileNameBytes];  // NUL-terminated profile name
  uint32_t address_space_bytes;     // size of the BAR image that follows the header
  uint32_t generation;              // id.generation: bumped by power-on and board reset
  // kMemoryStateReady once the image is fully initialised; a process that dies while
  // (re)initialising leaves kMemoryStateInitialising and the next open starts afresh.
  uint32_t state;
  // The board's external reset input (a PCIe reset, the reset button): another process may
  // set it to non-zero in the file; the board resets at its next clock tick and clears it.
  uint32_t reset_request;
  uint64_t reserved1;
  // State the hardware keeps but the bus cannot see (the TDM sequencer's phase within its
  // frame, ...), in slices the block models declare.
  uint64_t model_state[kModelStateWords];
};
static_assert(sizeof(MemoryHeader) <= kMemoryHeaderBytes);

// "Never": no event is pending (EmulatedBoard::cycles_to_next_event).
inline constexpr uint64_t kNoEvent = UINT64_MAX;

// Path of a board's memory file: <shm_dir>/asn-board-<name>. Throws kBadName.
std::string memory_path(std::string_view name, const OpenOptions& options = {});

class EmulatedBoard {
 public:
  // Opens (creating or reinitialising as needed) the board memory and holds it exclusively
  // until the object is destroyed. Throws BoardError.
  static std::unique_ptr<EmulatedBoard> open(std::string_view name,
                                             const regmap::BoardProfile& profile,
                                             const OpenOptions& options = {});
  // Removes the memory file (tests, tooling). No-op when it does not exist; throws kBusy
  // while an EmulatedBoard holds it.
  static void destroy(std::string_view name, const OpenOptions& options = {});
  // A profile of regmap::register_map().boards by name, or nullptr.
  static const regmap::BoardProfile* find_profile(std::string_view name);

  ~EmulatedBoard();
  EmulatedBoard(const EmulatedBoard&) = delete;
  EmulatedBoard& operator=(const EmulatedBoard&) = delete;

  const OpenReport& open_report() const;
  // The board's own copy of the profile it was opened with.
  const regmap::BoardProfile& profile() const;
  const std::string& name() const;
  const std::string& path() const;  // the memory file

  // Bus access, as the PCIe BAR would see it. Return false on a bus error (the read value
  // is then 0xffffffff).
  bool read32(uint32_t offset, uint32_t& value);
  bool write32(uint32_t offset, uint32_t value);

  struct Op {
    bool write;
    uint32_t offset;
    uint32_t value;
    bool ok;
  };
  // A batch under one lock: reads fill value, each op sets ok.
  void execute(std::span<Op> ops);

  void board_reset();             // same effect as writing 1 to id.control.board_reset
  void advance(uint64_t cycles);  // the core clock: runs the TDM sequencer
  // Runs the core clock up to `time` on the board's time base (tdm.time); no-op if the board
  // is there already. asnd's clock thread feeds it the host's monotonic clock, so the boards
  // of one host share a time base as boards synchronised by PTP do.
  void advance_to(uint64_t time);
  // Lets the board's clock run by itself on `time` (the time base now, in core cycles; never
  // decreasing), as a real board's clock runs whether or not anyone looks: before an access
  // to a block whose registers follow the clock (the TDM block's registers and tables, the
  // traffic-pending input), the board runs its clock up to time(), once per access or batch,
  // so they read as they would on hardware at that instant. A driver then only needs to run
  // the clock itself (advance_to) for what the board does on its own that raises an
  // interrupt: see cycles_to_next_event() and events(). asnd's emulated backend passes the
  // host's monotonic clock; without it (tests, asnsim) the clock moves only by advance() and
  // advance_to(). Call before the board is shared between threads.
  void run_clock(std::function<uint64_t()> time);
  // Core cycles from the board's time (tdm.time) until the clock must next run for the board
  // to act on its own, in a way software learns of by an interrupt: the minimum over the
  // blocks' next events (an armed TDM swap's frame boundary); 0 while the external reset
  // input is set (it is sampled on the clock); kNoEvent when nothing will happen until
  // software or an input acts. Exact as long as the inputs stay as they are: anything that
  // may move it sooner counts in events().
  uint64_t cycles_to_next_event();
  // Counts what may need a driver's attention sooner than cycles_to_next_event() said: an
  // interrupt newly raised (a cause set in irq_status that irq_mask enables and that was not
  // pending), a board reset (the generation changes), a write to a block whose registers
  // follow the clock (an arm, a new configuration) and a change of the traffic-pending input.
  // A driver that sleeps until the next event reads it before it looks at the board, and
  // after each access of its own: a change means look again. No lock is taken.
  uint64_t events() const;
  uint32_t generation() const;
  uint32_t address_space_bytes() const;
  // Bytes of board DRAM after the BAR image in the memory file (the lock engine's table):
  // the file is kMemoryHeaderBytes + address_space_bytes() + dram_bytes() long, sparse.
  uint64_t dram_bytes() const;
  std::span<const BlockInstance> blocks() const;  // the layout, in address order
  // The instance of a block type (regs::<block>::kType); nullptr when the board has none.
  const BlockInstance* find_block(uint16_t type, unsigned index = 0) const;
  bool irq_pending() const;  // (irq_status & irq_mask) != 0
  // The data path's routing decision for a packet arriving now (engines/routing_engine.hpp):
  // by the ROUTE block's active tables, the ports' thresholds and their queues.
  engines::RouteDecision route_packet(const engines::PacketHeader& header, uint32_t random);
  // The data path's input that software cannot write: packets waiting in the output queue of
  // a port's virtual channel (port.vc_occupancy). Tests and the simulator drive it.
  void set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets);
  // The NICs' "predictable traffic pending" input of a slot (tdm.traffic_pending, R_valid of
  // 000 L826-828), which policy PREEMPT reads. Throws std::out_of_range past the table.
  void set_traffic_pending(uint32_t slot, bool pending);

  // What makes the board unusable now, or "": its memory file was truncated, extended,
  // removed or replaced while in use (accesses past a shrunk file's end are caught: they
  // never crash the process).
  std::string problem() const;

  // ---- the parity data path (issue 10, 004 L1131; README "Parity data path") -----------
  // A client's traffic for stripe group `group` (an entry of stripe.group_table), injected
  // as if it had arrived on a port: the board splits it into units for the storage servers
  // behind the member ports (OpenOptions::storage_dir) and computes parity on the way. Each
  // call throws StripeError (and counts it in stripe.errors) when it is refused. Calls may
  // come from any thread; they take turns with each other, and hold the board's lock only
  // to read the group entry and add to the counters, never across their file I/O.
  //
  // Writes `bytes` at `offset` of the group's file; returns once every stripe they touch is
  // on all its live members with its parity. The file grows to offset + bytes.size().
  void stripe_write(uint16_t group, uint64_t offset, std::span<const uint8_t> bytes);
  // Reads up to out.size() bytes at `offset`; returns how many (fewer at the end of the
  // file). Units of failed members (the entry's failed mask) are rebuilt from the others.
  size_t stripe_read(uint16_t group, uint64_t offset, std::span<uint8_t> out);
  // The group's file length, as its storage servers keep it.
  uint64_t stripe_file_size(uint16_t group);
  // The storage server behind `port` (a member) loses what it held for the group.
  void stripe_fail_member(uint16_t group, unsigned port);
  // Rebuilds every unit of the member at `port` from the others onto its (emptied) store;
  // `progress` (may be empty) is told stripes done out of the file's stripes.
  using StripeProgress = std::function<void(uint64_t done, uint64_t total)>;
  void stripe_rebuild_member(uint16_t group, unsigned port, const StripeProgress& progress = {});
  // Scrub (issue 27 item 4): reads every stripe of the group's file and verifies P (and Q)
  // against the data; with `repair` rewrites what is wrong (parity from the data, or with
  // RAID 6 a data unit located from P and Q), unless `dry_run`. A check needs redundancy
  // left (fewer failed members than parity members), a repair every member (kTooManyFailed).
  stripe::ScrubReport stripe_scrub(uint16_t group, bool repair, bool dry_run,
                                   const StripeProgress& progress = {});
  // The group was deleted: every storage server drops its file. Needs no valid entry.
  void stripe_discard(uint16_t group);
  // Test hook (issue 27 item 5): the storage server at `port` answers the group's reads and
  // writes (of its store and its bitmap) with errno `err` (EIO, ENOSPC, ...) once `after`
  // more of them have succeeded, as a dying disk would; `err` 0 clears it (the disk was
  // replaced). StorageServers::inject_fault.
  void stripe_inject_member_fault(uint16_t group, unsigned port, int err, uint64_t after = 0);

 private:
  class Impl;
  explicit EmulatedBoard(std::unique_ptr<Impl> impl);
  detail::engines::ParityPath& parity_path();

  std::unique_ptr<Impl> impl_;
  // The parity data path; null on a board without a STRIPE block of version 2. Declared
  // after impl_: it reaches the registers through impl_ and is destroyed first.
  std::unique_ptr<detail::engines::ParityPath> parity_;
};

}  // namespace asn::model

// The emulated storage servers behind the switch's member ports (issue 10, 004 L1131): one
// server per port, each keeping the stripe units it receives in files under a directory the
// board is given, so the data outlives asnd and the board memory as a storage server's disks
// outlive the switch. The parity path (src/engines/parity_path) is their only client.
//
// Files, all under `dir` (created 0700; files 0600):
//   port-<P>/group-<G>.data  the store of the member at port P for group G, md-style: the
//                            member's unit of stripe s at byte offset s * unit_bytes, so
//                            standard tools (mdadm --build over loop devices) read it back.
//                            Sparse: what the server never received reads as zeros.
//   port-<P>/group-<G>.bitmap  the write-intent bitmap of group G as the member at port P
//                            keeps it (issue 27; md keeps its bitmap in every member's
//                            superblock): the regions of stripes a write may be changing,
//                            written by the parity path before it sends their units
//                            (engines/parity_intent.cc has the format).
//   lock                     flocked while a board has the servers attached.
//   group-<G>.size           the group's file length (the client's file size), in decimal.
//                            The length is metadata the storage side keeps, as a metadata
//                            server would; the switch holds no state of the file. It is
//                            replaced atomically (write, then rename) after stripes are
//                            acknowledged, so it never names bytes no stripe holds.
//
// An I/O error of a member's store or bitmap is a StripeError kStorageIo with the member's
// port (StripeError::port), so that the member can be marked failed (issue 27 item 5);
// one of the group's length has none.
//
// Thread-safe for calls on different groups (the parity path serves groups in parallel,
// issue 27 item 7); calls on one group are serialized by the parity path.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace asn::model {

class StorageServers {
 public:
  // Creates `dir` (0700) when missing and locks it (flock on <dir>/lock) for this object's
  // lifetime. Throws StripeError kNoStorage when it cannot, or another holds the lock.
  explicit StorageServers(std::string dir);
  ~StorageServers();
  StorageServers(const StorageServers&) = delete;
  StorageServers& operator=(const StorageServers&) = delete;

  const std::string& dir() const { return dir_; }
  std::string store_path(unsigned port, uint16_t group) const;
  std::string size_path(uint16_t group) const;
  std::string bitmap_path(unsigned port, uint16_t group) const;

  // Bytes [offset, offset + out.size()) of the store of (port, group); bytes the server
  // never received (past its end, or no store at all) read as zeros. Throws StripeError
  // kStorageIo naming the file.
  void read(unsigned port, uint16_t group, uint64_t offset, std::span<uint8_t> out);
  void write(unsigned port, uint16_t group, uint64_t offset, std::span<const uint8_t> bytes);
  // Opens (creating when missing) the store of (port, group), so that a write can learn that
  // a server cannot take it before it sends the first unit. Throws StripeError kStorageIo.
  void open(unsigned port, uint16_t group);
  // The store of (port, group) keeps its first `bytes` bytes; what lay past them is gone and
  // reads as zeros again (sparse). No store: nothing to do. Throws StripeError kStorageIo.
  void truncate(unsigned port, uint16_t group, uint64_t bytes);

  // What the store of (port, group) holds reaches stable storage (fdatasync). No store:
  // nothing to do. Throws StripeError kStorageIo.
  void sync(unsigned port, uint16_t group);

  // The write-intent bitmap of (port, group) as the server keeps it; empty when it keeps
  // none. Throws StripeError kStorageIo.
  std::string read_bitmap(unsigned port, uint16_t group);
  // Replaces it in place (one write; a bitmap is a few hundred bytes), on stable storage
  // before it returns with `sync`.
  void write_bitmap(unsigned port, uint16_t group, std::string_view bytes, bool sync);

  // The group's file length; 0 when none is kept.
  uint64_t file_size(uint16_t group) const;
  // With `sync`, on stable storage (the file and the directory's rename) before it returns.
  void set_file_size(uint16_t group, uint64_t bytes, bool sync = false);

  // Test hook (issue 27 item 5): the server at `port` answers the group's reads, writes,
  // opens, cuts and syncs of its store and its bitmap with errno `err` once `after` more of
  // them have succeeded, as a dying disk or a full filesystem would; `err` 0 clears it (the
  // disk was replaced). fail() keeps it: dropping a store is not I/O on the failed disk.
  void inject_fault(unsigned port, uint16_t group, int err, uint64_t after = 0);

  // The server at `port` loses what it held for the group, bitmap included (its disk is
  // replaced by an empty one).
  void fail(unsigned port, uint16_t group);
  // The group is gone: every server drops its store, and its length is forgotten.
  void discard(uint16_t group);

 private:
  // An open store; closed when the last holder lets it go, so a store dropped from the
  // cache (its bound reached, or failed) stays open for a call of another group using it.
  struct Fd {
    int fd;
    explicit Fd(int f) : fd(f) {}
    ~Fd();
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
  };
  struct Fault {
    int err = 0;
    uint64_t after = 0;  // operations that still succeed
  };
  // Runs `io`, a call on the store or bitmap of (port, group): an injected fault answers it
  // first, and a kStorageIo it throws gets the member's port.
  template <typename F>
  auto on_member(unsigned port, uint16_t group, const char* what, F&& io);

  // The open store of (port, group); null when it does not exist and !create.
  std::shared_ptr<Fd> store(unsigned port, uint16_t group, bool create);
  void close_store(unsigned port, uint16_t group);

  std::string dir_;
  int lock_fd_ = -1;   // an exclusive flock on <dir>/lock while the servers are attached
  std::mutex fds_mu_;  // guards fds_ (the map; not the I/O on its stores)
  std::map<std::pair<unsigned, uint16_t>, std::shared_ptr<Fd>> fds_;
  std::mutex faults_mu_;  // guards faults_
  std::map<std::pair<unsigned, uint16_t>, Fault> faults_;
};

}  // namespace asn::model

// What a session holds, as the library knows it from its own calls (grants, unlocks,
// downgrades): the locks it takes again when a board reset emptied the switch's lock table
// (asnd's loss grace: KeepAliveResponse.locks_lost, LockRequest.reclaim), and the tokens it
// names after an asnd restart (KeepAliveResponse.confirm_held, KeepAliveRequest.held).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "asn/client/locks.hpp"

namespace asn::client {

class HeldLocks {
 public:
  // One reclaim: the bytes of one file held in one mode.
  struct Reclaim {
    std::string file;
    Mode mode = Mode::kExclusive;
    std::vector<ByteRange> ranges;  // in offset order, disjoint
  };

  void granted(std::string_view file, Mode mode, const Grant& grant);
  void released(std::string_view file, const Ranges& ranges);
  void downgraded(std::string_view file, const Ranges& ranges);
  // The locks held in the switch, one reclaim per file and mode (an exclusive lock covers
  // a shared one on the same bytes), and forgets them: a reclaim that is granted adds its
  // grant back.
  std::vector<Reclaim> take_switch_locks();
  // The fencing tokens of the grants held (of which some bytes are held), in increasing order.
  std::vector<std::uint64_t> tokens() const;
  std::size_t pieces() const;

 private:
  struct Piece {
    std::uint64_t offset = 0;
    std::uint64_t end = 0;  // past the last byte; a range up to 2^64 is kept one byte short
    Mode mode = Mode::kShared;
    bool in_switch = false;
    std::uint64_t token = 0;  // of the grant; a downgrade or a split keeps it
  };
  // Splits the file's pieces at the edges of `ranges` and calls `f` on each piece inside them.
  template <class F>
  void for_each_inside(std::string_view file, const Ranges& ranges, F&& f);

  std::map<std::string, std::vector<Piece>, std::less<>> files_;
};

}  // namespace asn::client

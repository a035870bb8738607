// A lock domain: one lock table that asnd grants from (issue 9). The switch domain is the
// lock engine of the board, driven through the LOCK block's request and completion rings
// (switch_domain.cc); the software domain is a table in asnd kept in its state directory
// (software_domain.cc), for files that do not fit in the switch's table. Both have the
// semantics of asn::locks::LockTable (lib/locks/include/asn/locks/lock_table.hpp), so one
// conformance suite runs against both, and the LockManager places each file wholly in one.
//
// Calls are serialised by the caller (the LockManager's mutex). Every call is synchronous:
// grants of waiting requests that a release, downgrade, cancel or expiry lets through come
// back in that call's Change. A domain throws asn::Error when its medium fails (the board
// does not answer, a ring stalls, the disk is full); a refused request is an Outcome or a
// Change with an error, as LockTable's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asn/locks/lock_table.hpp"

namespace asn {

// A session of a domain, as the domain keeps it (restored after an asnd restart).
struct DomainSession {
  locks::SessionId id = 0;
  std::string label;  // what the LockManager stored at open_session()
  size_t held_entries = 0;
  size_t waiting_requests = 0;
};

class LockDomain {
 public:
  virtual ~LockDomain() = default;

  // "switch" or "software".
  virtual std::string_view name() const = 0;

  // The board was reset: a table in board memory is gone. The domain makes itself usable
  // again (an empty table); the LockManager ends the sessions that held locks in it.
  virtual void board_reset() {}

  virtual locks::SessionId open_session(std::string_view label) = 0;
  virtual locks::Outcome request(const locks::Request& request) = 0;
  virtual locks::Change release(locks::SessionId session, std::string_view file,
                                const locks::RangeSpec& ranges) = 0;
  virtual locks::Change downgrade(locks::SessionId session, std::string_view file,
                                  const locks::RangeSpec& ranges) = 0;
  virtual locks::Change cancel(locks::RequestId request) = 0;
  // Withdraws many waiting requests at once, as LockTable::withdraw(). This default cancels
  // them one by one, latest first (so that no cancel grants another of them), for a domain
  // with no bulk operation (the switch's engine, whose table holds 16,384 entries at most):
  // one that fails does not stop the others, and the first error is the change's.
  virtual locks::Change withdraw(std::span<const locks::RequestId> requests) {
    std::vector<locks::RequestId> ids(requests.begin(), requests.end());
    std::sort(ids.rbegin(), ids.rend());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    locks::Change out;
    for (locks::RequestId id : ids) {
      locks::Change one = cancel(id);
      if (one.error && !out.error) out.error = std::move(one.error);
      std::move(one.granted.begin(), one.granted.end(), std::back_inserter(out.granted));
      out.cancelled.insert(out.cancelled.end(), one.cancelled.begin(), one.cancelled.end());
    }
    return out;
  }
  virtual locks::Change expire(locks::SessionId session) = 0;
  // Makes every later grant's fencing token at least `floor` (kept with the table, so it
  // survives as the table does); returns the token the next grant gets.
  virtual locks::Token raise_token_floor(locks::Token floor) = 0;

  // Why the domain cannot be used now (the switch's table in board DRAM is damaged), or
  // nullopt. An unusable domain answers no operation; a board reset may make it usable.
  virtual std::optional<std::string> unusable() { return std::nullopt; }

  // The open sessions, by id.
  virtual std::vector<DomainSession> sessions() = 0;
  // The entries `session` holds now (0: not open), without listing the others: what the
  // LockManager's quotas read when its own count is only a bound.
  virtual size_t held_entries(locks::SessionId session) = 0;
  // Files with a held or waiting entry, in byte order, after `after`, at most `limit`.
  virtual std::vector<std::string> files(std::string_view after, size_t limit) = 0;
  virtual locks::FileLocks list(std::string_view file) = 0;
  virtual locks::Stats stats() = 0;
};

}  // namespace asn

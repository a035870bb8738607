// Internal to the LockManager's files (lock_manager.cc: locks and time;
// lock_manager_sessions.cc: sessions; lock_manager_quotas.cc: quotas; lock_manager_start.cc:
// start, stop and board resets; lock_manager_reads.cc: list and stats;
// lock_manager_release.cc: releases no unlock asked for): its session and waiter records and
// the helpers they share.
#pragma once

#include <google/protobuf/message_lite.h>

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "asn/locks/lock_table.hpp"
#include "error.hpp"
#include "locks/lock_manager.hpp"

namespace asn {

struct LockManager::Session {
  uint64_t id = 0;         // the software domain's
  uint64_t public_id = 0;  // the clients'
  std::string owner;
  std::string owner_key;      // SessionCaller::owner_key of who opened it
  std::string secret_sha256;  // of the secret OpenSession returned
  std::string quota_key;      // whose quotas it counts against (state.proto LockSessionLabel)
  std::string name;
  uint32_t ttl = 0;
  locks::SessionId switch_session = 0;
  LockClock::time_point expires{};
  bool reattached = true;
  std::set<WaitKey> waiters;
  // Lock entries per domain (lock_manager_quotas.cc): an upper bound on what it holds, exact
  // while `held_exact`, and what its waiting requests take.
  std::array<size_t, kMaxDomains> held_bound{};
  std::array<size_t, kMaxDomains> waiting_entries{};
  bool held_exact = true;
  // The grants it held when asnd started (by token: the files, in the switch or not), until
  // it says which it holds (LockManager::keep_alive's `held`); it may not lock till then.
  std::map<locks::Token, std::vector<std::pair<bool, std::string>>> restored;
  bool confirm_held = false;
  // Ended for its owner (a file it held a lock on moved to another switch, lock_manager_
  // fabric.cc): every call is told how, and renews nothing; its locks on the files this switch
  // kept stay held until its lease runs out, as its client may hold them until it hears.
  std::optional<std::string> ended;
};

struct LockManager::Waiter {
  uint64_t session = 0;
  std::string quota_key;  // its session's
  uint64_t call = 0;
  std::string file;
  std::optional<LockClock::time_point> deadline;
  LockClock::time_point since{};  // queued
  LockDone done;
  size_t entries = 0;  // the request's ranges: table entries while it waits
};

namespace lock_manager_detail {

Error error_of(const locks::LockError& e);
// `text` (a lock table's message) with each "session N" outside a quoted file name rewritten
// as "session P", P = public_id(N); "another session" where public_id() has none.
std::string with_public_sessions(std::string_view text,
                                 const std::function<std::optional<uint64_t>(uint64_t)>& public_id);
// An unlock or downgrade refused in the table's state names bytes the session does not hold.
Error with_not_held(Error e);
std::string printable(std::string_view file);
// Nanoseconds since the Unix epoch: a floor for fencing tokens above every token granted
// before now (no table grants more than one token a nanosecond).
locks::Token wall_clock_ns();
// The bytes of `from` that no range of `minus` covers.
std::vector<locks::ByteRange> subtract(std::vector<locks::ByteRange> from,
                                       const std::vector<locks::ByteRange>& minus);
double seconds_until(LockClock::time_point when, LockClock::time_point now);
// The prefixes of a "software-prefix:P1,P2" placement (none for first-fit).
std::vector<std::string> software_prefixes(const std::string& placement);
// The entries a valid spec takes in a table (one per range or block); 0 for an invalid one
// (the domain refuses it and says why).
size_t entries_of(const locks::RangeSpec& ranges);
// Replaces the file at `path` with `message` (a temporary file renamed over it: a crash leaves
// the old file or the new, whole). Not fsynced: lock state is void after the host's reboot,
// and the page cache outlives asnd. False when it could not be written.
bool write_whole(const std::string& path, const google::protobuf::MessageLite& message);

}  // namespace lock_manager_detail
}  // namespace asn

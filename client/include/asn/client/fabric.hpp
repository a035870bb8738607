// libasnclient on a fabric whose lock map (the fabric file's `locks:`) gives each file's locks
// to one switch (issue 25; docs/client-library.md, "A fabric").
//
//   asn::client::FabricLockClient fabric({"10.0.0.1:7411", "10.0.0.2:7411"});
//   asn::client::FabricSession session = fabric.open_session(std::chrono::seconds(15), "io-7");
//   asn::client::Grant grant = session.lock("inode:4711", {0, 4096},
//                                           asn::client::Mode::kExclusive,
//                                           std::chrono::seconds(5));
//
// Each file goes to the switch that owns its slot (asn::fabric::lock_slot, the switches'
// own): a slot's first call goes to one of the endpoints given, a redirect (Moved) names its
// owner, and the owner is remembered per slot until the next redirect. A session is opened
// at each switch on first use, with the same lease and name. A blocking lock that meets a
// switch waiting out a takeover, or one that cannot confirm the map with etcd (UNAVAILABLE),
// tries again within its deadline, as it would wait for a holder.
//
// Lost: a switch ends a session that held locks on files whose slot moved away (and any it
// expired). Then the whole FabricSession is lost: lost() is true, every call throws
// SessionLost; open a new one and take the locks again (from their new owner).
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "asn/client/locks.hpp"

namespace asn::client {

class ASN_CLIENT_API FabricSession {
 public:
  struct Impl;  // opaque

  FabricSession(FabricSession&&) noexcept;
  FabricSession& operator=(FabricSession&&) noexcept;
  // Closes the session at every switch.
  ~FabricSession();

  Grant lock(std::string_view file, const Ranges& ranges, Mode mode,
             Deadline deadline = Deadline::never(), std::stop_token stop = {});
  Grant try_lock(std::string_view file, const Ranges& ranges, Mode mode);
  UnlockResult unlock(std::string_view file, const Ranges& ranges);
  UnlockResult downgrade(std::string_view file, const Ranges& ranges);
  // Closes the session at every switch it was opened at. Idempotent.
  void close();
  bool lost() const;
  // The endpoint calls on `file` go to now.
  std::string owner_of(std::string_view file) const;

 private:
  friend class FabricLockClient;
  explicit FabricSession(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class ASN_CLIENT_API FabricLockClient {
 public:
  // `endpoints`: asnd endpoints of switches of the fabric (one is enough: the others are
  // learnt from redirects), as LockClient takes them.
  explicit FabricLockClient(std::vector<std::string> endpoints, ClientOptions options = {});

  // Checks nothing yet: sessions are opened at each switch on first use.
  FabricSession open_session(std::chrono::seconds ttl = std::chrono::seconds(0),
                             std::string name = {});

 private:
  std::vector<std::string> endpoints_;
  ClientOptions options_;
};

}  // namespace asn::client

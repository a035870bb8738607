// Locks across the switches of a fabric (issue 25, item 6): a private 3-member etcd, three real
// asnd processes on emulated boards, the lock map applied with the real asnctl. What a PFS
// client depends on, tried through each switch's own socket: a switch grants only on the
// files its slots hold and redirects the rest to their owner; a switch that gets slots grants
// nothing on them until every grant of their earlier owner has run out, and then with higher
// fencing tokens; an owner killed or stopped past its lease loses its slots to the next
// switch, and when it comes back it grants nothing at its stale epoch.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>
#include <string>

#include "asn/client/fabric.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "asn/v1/locks.grpc.pb.h"
#include "etcd_client.hpp"
#include "fabric_fixture.hpp"
#include "grpc_trailer.hpp"
#include "lock_slots.hpp"

namespace asn::test {
namespace {

// Session leases of at most 4 s, status leases of 3 s: a slot taken over waits 3 + 4 + 1 s.
constexpr char kLocksConfig[] = "locks:\n  max_ttl: 4s\n";
constexpr auto kTakeoverGrace = 8s;

struct Outcome {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  std::string reason;  // "asn-lock-reason"
  std::string owner;   // "asn-lock-owner"
  uint64_t token = 0;
  bool ok() const { return code == grpc::StatusCode::OK; }
};

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  return out << o.code << " " << o.reason << " " << o.owner << ": " << o.message;
}

// One client session at one switch, over its Unix socket.
class Peer {
 public:
  explicit Peer(const std::string& socket)
      : stub_(v1::Locks::NewStub(
            grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()))) {}

  grpc::Status open(uint32_t ttl_seconds = 4) {
    grpc::ClientContext c;
    c.set_deadline(deadline_in(30s));
    v1::OpenSessionRequest r;
    r.set_ttl_seconds(ttl_seconds);
    r.set_name("fabric-locks-test");
    v1::OpenSessionResponse response;
    const grpc::Status status = stub_->OpenSession(&c, r, &response);
    session_ = response.session();
    secret_ = response.secret();
    return status;
  }

  // TryLock of bytes [0, 4096), exclusive.
  Outcome try_lock(const std::string& file) {
    grpc::ClientContext c;
    c.set_deadline(deadline_in(30s));
    v1::LockRequest r;
    r.set_session(session_);
    r.set_secret(secret_);
    r.set_file(file);
    r.set_mode(v1::LOCK_MODE_EXCLUSIVE);
    auto* range = r.add_ranges();
    range->set_length(4096);
    v1::LockResponse response;
    const grpc::Status status = stub_->TryLock(&c, r, &response);
    return {status.error_code(), status.error_message(), trailer(c, "asn-lock-reason"),
            trailer(c, "asn-lock-owner"), response.token()};
  }

  grpc::Status keep_alive() {
    grpc::ClientContext c;
    c.set_deadline(deadline_in(30s));
    v1::KeepAliveRequest r;
    r.set_session(session_);
    r.set_secret(secret_);
    v1::KeepAliveResponse response;
    return stub_->KeepAlive(&c, r, &response);
  }

 private:
  std::unique_ptr<v1::Locks::Stub> stub_;
  uint64_t session_ = 0;
  std::string secret_;
};

// Tries `file` at `peer` until its switch redirects it ("moved"), the last answer in `o`; a
// grant meanwhile fails the test: a switch back from a kill or a stop, at its stale epoch,
// grants nothing until it has learnt the move. `each`, when given, runs before every try (a
// check that must hold all along). False when no redirect came within 60 s.
bool grants_nothing_until_moved(Peer& peer, const std::string& file, Outcome& o,
                                const std::function<void()>& each = nullptr) {
  return wait_until(
      [&] {
        if (each) each();
        o = peer.try_lock(file);
        EXPECT_FALSE(o.ok()) << "the switch granted a lock at its stale epoch";
        return o.reason == "moved";
      },
      60s);
}

class FabricLocksTest : public FabricFixture {
 protected:
  // Three switches; s00 owns slots 0-2047, s01 2048-4000, and 4001-4095 have no owner.
  void SetUp() override {
    FabricFixture::SetUp();
    if (HasFatalFailure()) return;
    start_switches(3, kLocksConfig);
    applied_at_ = std::chrono::steady_clock::now();
    ASSERT_EQ(wait_in_force(apply(with_owners("{switch: s01, slots: 2048-4000}"))).exit_code, 0);
  }

  std::string with_owners(const std::string& second) const {
    return fabric_file() + "locks:\n  owners:\n    - {switch: s00, slots: 0-2047}\n    - " +
           second + "\n";
  }

  std::string endpoint(int i) const { return "unix:" + switches_[i]->socket(); }

  // The first grant of `file` at switch `i` (retrying while it waits out a takeover); a
  // refusal other than "takeover" fails the test.
  Outcome lock_when_served(Peer& peer, const std::string& file) {
    Outcome out;
    EXPECT_TRUE(wait_until(
        [&] {
          out = peer.try_lock(file);
          return out.ok() || out.reason != "takeover";
        },
        60s));
    EXPECT_TRUE(out.ok()) << out;
    return out;
  }

  // Whether switch `i` lists a lock on `file` (the JSON shows file ids as bytes: base64).
  bool lists_lock(int i, const std::string& file) const {
    const CommandResult r = switches_[i]->asnctl({"-o", "json", "locks", "list", "--file", file});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    return json_number(r.out, "session").has_value();
  }

  // The owner switch `i` names for `file` once it redirects there.
  bool redirects_to(int i, const std::string& file, int owner) {
    Peer peer(switches_[i]->socket());
    if (!peer.open().ok()) return false;
    const Outcome o = peer.try_lock(file);
    return o.code == grpc::StatusCode::FAILED_PRECONDITION && o.reason == "moved" &&
           o.owner == endpoint(owner);
  }

  std::chrono::steady_clock::time_point applied_at_;
  const std::string in_s01_ = file_in_slots(2048, 4000);
};

TEST_F(FabricLocksTest, EachFileIsLockedOnlyAtItsOwnerAndTheOthersRedirect) {
  for (int i : {0, 2}) {
    Peer peer(switches_[i]->socket());
    ASSERT_TRUE(peer.open().ok());
    const Outcome o = peer.try_lock(in_s01_);
    EXPECT_EQ(o.code, grpc::StatusCode::FAILED_PRECONDITION) << o;
    EXPECT_EQ(o.reason, "moved");
    EXPECT_EQ(o.owner, endpoint(1));
    EXPECT_NE(o.message.find("belong to switch s01"), std::string::npos) << o;
  }
  // A slot without an owner is locked nowhere.
  const std::string orphan = file_in_slots(4001, 4095);
  Peer at_s00(switches_[0]->socket());
  ASSERT_TRUE(at_s00.open().ok());
  const Outcome none = at_s00.try_lock(orphan);
  EXPECT_EQ(none.code, grpc::StatusCode::FAILED_PRECONDITION) << none;
  EXPECT_EQ(none.reason, "no-owner");

  // The owner: the slots were everyone's before the map, so it first waits out any grant
  // another switch may have made (when the call comes early enough to tell).
  Peer at_s01(switches_[1]->socket());
  ASSERT_TRUE(at_s01.open().ok());
  const Outcome early = at_s01.try_lock(in_s01_);
  if (std::chrono::steady_clock::now() < applied_at_ + kTakeoverGrace) {
    EXPECT_EQ(early.code, grpc::StatusCode::UNAVAILABLE) << early;
    EXPECT_EQ(early.reason, "takeover");
  }
  lock_when_served(at_s01, in_s01_);
  // s01 now holds it: a second client of s01 conflicts, as on one switch.
  Peer other(switches_[1]->socket());
  ASSERT_TRUE(other.open().ok());
  EXPECT_EQ(other.try_lock(in_s01_).reason, "conflict");
}

TEST_F(FabricLocksTest, AMoveEndsTheOldHoldersAndTheNewOwnerWaitsThenFencesHigher) {
  Peer holder(switches_[1]->socket());
  ASSERT_TRUE(holder.open().ok());
  const Outcome first = lock_when_served(holder, in_s01_);

  const auto moved_at = std::chrono::steady_clock::now();
  ASSERT_EQ(wait_in_force(apply(with_owners("{switch: s02, slots: 2048-4000}"))).exit_code, 0);
  // s01 dropped the lock and ended the session that held it: its client learns it.
  ASSERT_TRUE(wait_until([&] { return !holder.keep_alive().ok(); }, 30s));
  EXPECT_EQ(holder.keep_alive().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_FALSE(lists_lock(1, in_s01_));
  EXPECT_TRUE(wait_until([&] { return redirects_to(1, in_s01_, 2); }, 30s));

  Peer next(switches_[2]->socket());
  ASSERT_TRUE(next.open().ok());
  const Outcome early = next.try_lock(in_s01_);
  if (std::chrono::steady_clock::now() < moved_at + kTakeoverGrace) {
    EXPECT_EQ(early.reason, "takeover") << early;
  }
  const Outcome second = lock_when_served(next, in_s01_);
  EXPECT_GT(second.token, first.token);
  // Fabric tokens (bit 63 set, an etcd revision above the counter): not the wall clock.
  EXPECT_GE(first.token, uint64_t{1} << 63);
  EXPECT_GE(second.token >> 23, (first.token >> 23) + 1);
  // Not before the grace: the grant of s01 could have lived until then.
  EXPECT_GE(std::chrono::steady_clock::now() - moved_at, kTakeoverGrace);
}

TEST_F(FabricLocksTest, AKilledOwnersSlotsMoveToTheNextSwitchAndItComesBackWithNone) {
  Peer holder(switches_[1]->socket());
  ASSERT_TRUE(holder.open().ok());
  const Outcome first = lock_when_served(holder, in_s01_);

  switches_[1]->signal(SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  // Its lease (3 s) runs out, then a lease more: s02, the next switch after s01, takes over.
  ASSERT_TRUE(wait_until([&] { return redirects_to(0, in_s01_, 2); }, 60s)) << switches_[2]->log();
  Peer next(switches_[2]->socket());
  ASSERT_TRUE(next.open().ok());
  const Outcome second = lock_when_served(next, in_s01_);
  EXPECT_GT(second.token, first.token);
  const auto served_after = std::chrono::steady_clock::now() - killed_at;
  EXPECT_GE(served_after, kTakeoverGrace);
  // The failover's figure (lease, a lease gone, the takeover grace), for the note, not a limit.
  RecordProperty(
      "killed_to_served_ms",
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(served_after).count()));

  // Back (as systemd restarts it), s01 grants nothing on the slots it lost: it redirects.
  ASSERT_TRUE(start_switch(1)) << switches_[1]->log();
  Peer again(switches_[1]->socket());
  ASSERT_TRUE(again.open().ok());
  Outcome o;
  ASSERT_TRUE(grants_nothing_until_moved(again, in_s01_, o)) << o;
  EXPECT_EQ(o.owner, endpoint(2));
  EXPECT_FALSE(lists_lock(1, in_s01_));
  EXPECT_TRUE(lists_lock(2, in_s01_));
}

TEST_F(FabricLocksTest, AnOwnerStoppedPastItsLeaseGrantsNothingWhenItWakes) {
  Peer holder(switches_[1]->socket());
  ASSERT_TRUE(holder.open().ok());
  lock_when_served(holder, in_s01_);

  switches_[1]->signal(SIGSTOP);
  ASSERT_TRUE(wait_until([&] { return redirects_to(0, in_s01_, 2); }, 60s));
  Peer next(switches_[2]->socket());
  ASSERT_TRUE(next.open().ok());
  lock_when_served(next, in_s01_);

  // Woken (a partition healed), s01 neither renews its old session nor grants, at any
  // moment, until it has learnt the move; then it redirects.
  switches_[1]->signal(SIGCONT);
  Peer woken(switches_[1]->socket());
  ASSERT_TRUE(woken.open().ok());
  Outcome o;
  ASSERT_TRUE(grants_nothing_until_moved(woken, in_s01_, o, [&] {
    EXPECT_FALSE(holder.keep_alive().ok()) << "s01 renewed a session at its stale epoch";
  })) << o;
  EXPECT_EQ(o.owner, endpoint(2));
}

// A lock map damaged in etcd (written by hand, or by a newer asnctl): every member keeps the
// map it had, unconfirmed, and grants nothing rather than guess who owns what; the status
// says why; a good map brings them back.
TEST_F(FabricLocksTest, ADamagedLockMapFencesTheSwitchesAndTheStatusSaysWhy) {
  const std::string in_s00 = file_in_slots(0, 2047);
  Peer peer(switches_[0]->socket());
  ASSERT_TRUE(peer.open().ok());
  lock_when_served(peer, in_s00);

  etcd::Options options;
  options.endpoints = etcd_.endpoint_list();
  etcd::Client client(options);
  client.put({fabric::lock_map_key("/asn", "lab"),
              R"({"fabric": "lab", "epoch": 9, "assignments": [{"first_slot": 9, "last_slot": 3,)"
              R"( "owner": "s00"}]})"});
  Outcome o;
  ASSERT_TRUE(wait_until(
      [&] {
        Peer fresh(switches_[0]->socket());
        o = fresh.open().ok() ? fresh.try_lock(in_s00) : Outcome{};
        return o.reason == "fenced";
      },
      60s))
      << o;
  EXPECT_EQ(o.code, grpc::StatusCode::UNAVAILABLE);
  const CommandResult status = fabric({"status", "lab"});
  EXPECT_NE(status.out.find("is refused"), std::string::npos) << status.out;

  // Applied again, the map continues from the damaged one's epoch 9, never below it.
  ASSERT_EQ(wait_in_force(apply(with_owners("{switch: s01, slots: 2048-4000}"))).exit_code, 0);
  Peer again(switches_[0]->socket());
  ASSERT_TRUE(again.open().ok());
  lock_when_served(again, file_in_slots(0, 2047, "/pfs/again-"));
  const Outcome moved = again.try_lock(in_s01_);
  EXPECT_EQ(moved.reason, "moved");
  EXPECT_NE(moved.message.find("epoch 10"), std::string::npos) << moved;

  // Deleted by hand: s01 does not start granting s00's files at once (s00 may still hold
  // them); every member keeps its map, unconfirmed, and is fenced, saying why.
  client.txn({}, {etcd::Delete{fabric::lock_map_key("/asn", "lab")}});
  ASSERT_TRUE(wait_until(
      [&] {
        Peer fresh(switches_[1]->socket());
        o = fresh.open().ok() ? fresh.try_lock(in_s00) : Outcome{};
        return o.reason == "fenced";
      },
      60s))
      << o;
  const CommandResult deleted = fabric({"status", "lab"});
  EXPECT_NE(deleted.out.find("was deleted from etcd"), std::string::npos) << deleted.out;
}

// libasnclient given one switch of the fabric: each file's calls reach its owner.
TEST_F(FabricLocksTest, LibasnclientFollowsRedirectsToEachFilesOwner) {
  client::FabricLockClient fabric({endpoint(0)});
  client::FabricSession session = fabric.open_session(4s, "fabric-client");
  const std::string in_s00 = file_in_slots(0, 2047);
  const client::Ranges bytes(0, 4096);
  const client::Grant a = session.lock(in_s01_, bytes, client::Mode::kExclusive, scaled(60s));
  EXPECT_EQ(session.owner_of(in_s01_), endpoint(1));
  session.lock(in_s00, bytes, client::Mode::kShared, scaled(60s));
  EXPECT_EQ(session.owner_of(in_s00), endpoint(0));
  // Held where the map says, and nowhere else.
  EXPECT_TRUE(lists_lock(1, in_s01_));
  EXPECT_FALSE(lists_lock(0, in_s01_));
  EXPECT_EQ(session.unlock(in_s01_, bytes).released, 1u);
  // A file no switch owns: refused, naming why.
  try {
    session.try_lock(file_in_slots(4001, 4095), bytes, client::Mode::kExclusive);
    ADD_FAILURE() << "a file without an owner was granted";
  } catch (const client::Error& e) {
    EXPECT_EQ(e.code(), client::StatusCode::kFailedPrecondition);
    EXPECT_NE(e.message().find("no switch of fabric 'lab' owns"), std::string::npos) << e.what();
  }
  EXPECT_GT(a.token, 0u);
  EXPECT_FALSE(session.lost());
}

}  // namespace
}  // namespace asn::test

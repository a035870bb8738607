// The Locks service on a fabric member (issue 25): the LockManager given a lock map, as the
// fabric agent gives it (set_lock_map, confirm_lock_map, await_lock_map), driven over gRPC.
// A file of another switch is redirected with its owner's endpoint, a file of no switch is
// refused, a slot gained grants nothing during the takeover grace and then with higher
// tokens, a slot lost (to another switch, or at a new epoch) ends its holders and its waits,
// and an unconfirmed map grants and renews nothing.
#include <filesystem>
#include <fstream>
#include <functional>

#include "asn/fabric_spec/lock_map.hpp"
#include "lock_service_fixture.hpp"
#include "lock_slots.hpp"

namespace asn {
namespace {

using namespace std::chrono_literals;
using test::LockStack;

// A file id whose lock slot is `slot`.
std::string file_in_slot(uint32_t slot) { return test::file_in_slots(slot, slot, "/pfs/f"); }

struct Refused {
  grpc::Status status;
  std::string reason;
  std::string owner;
  uint64_t token = 0;
};

class LockFabricTest : public LockServiceTest {
 protected:
  // The map: this switch ("a") owns slots [0, 99] at `own_epoch`, switch "b" (unix:/b.sock)
  // owns [100, 199], and the rest has no owner.
  static LockOwnership map(int64_t revision, uint64_t own_epoch = 1, std::string first = "a") {
    LockOwnership m;
    m.fabric = "lab";
    m.self = "a";
    m.revision = revision;
    m.ranges.push_back({0, 99, std::move(first), "unix:/a.sock", own_epoch});
    m.ranges.push_back({100, 199, "b", "unix:/b.sock", 1});
    return m;
  }

  LockManager& manager() { return stack_->manager(); }

  // asnd stops (its tables and state directory kept; `while_down` runs then), starts again,
  // and reads `m` as its first map, as the fabric agent gives it after a start.
  void restart_into(LockOwnership m, const std::function<void()>& while_down = nullptr) {
    stub_.reset();
    stack_.reset();
    if (while_down) while_down();
    start(15);
    manager().await_lock_map("lab", "a");
    serve(std::move(m), 1h);
  }

  void serve(LockOwnership m, std::chrono::milliseconds grace = 0ms) {
    const int64_t revision = m.revision;
    manager().set_lock_map(std::move(m), grace);
    manager().confirm_lock_map(revision, revision, LockClock::now() + 1h);
  }

  Refused try_lock_at(uint64_t session, const std::string& file) {
    grpc::ClientContext context;
    v1::LockResponse response;
    Refused out;
    out.status = stub_->TryLock(&context, request(session, file, 0, 10), &response);
    out.reason = reason_of(context);
    out.owner = test::trailer(context, "asn-lock-owner");
    out.token = response.token();
    return out;
  }

  grpc::Status renew(uint64_t session) {
    grpc::ClientContext context;
    v1::KeepAliveRequest r;
    r.set_session(session);
    v1::KeepAliveResponse response;
    return stub_->KeepAlive(&context, r, &response);
  }

  const std::string mine_ = file_in_slot(7);
  const std::string also_mine_ = file_in_slot(8);
  const std::string theirs_ = file_in_slot(150);
  const std::string nobodys_ = file_in_slot(3000);
};

TEST_P(LockFabricTest, OtherSwitchesFilesAreRedirectedAndOrphansRefused) {
  serve(map(1));
  const uint64_t s = open();
  const Refused moved = try_lock_at(s, theirs_);
  EXPECT_EQ(moved.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(moved.reason, "moved");
  EXPECT_EQ(moved.owner, "unix:/b.sock");
  EXPECT_THAT(moved.status.error_message(), ::testing::HasSubstr("belong to switch b"));
  const Refused orphan = try_lock_at(s, nobodys_);
  EXPECT_EQ(orphan.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(orphan.reason, "no-owner");
  EXPECT_TRUE(orphan.owner.empty());
  ASSERT_OK(try_lock_at(s, mine_).status);
}

TEST_P(LockFabricTest, AGainedSlotWaitsOutItsGraceThenGrantsAboveEveryEarlierToken) {
  // Alone (no map), the switch granted a token; the first map is a takeover of every slot.
  const uint64_t s = open();
  const Refused before = try_lock_at(s, also_mine_);
  ASSERT_OK(before.status);
  const auto grace = test::scaled(1s);
  const auto start = std::chrono::steady_clock::now();
  serve(map(1), grace);
  const uint64_t other = open();
  const Refused early = try_lock_at(other, mine_);
  if (std::chrono::steady_clock::now() < start + grace) {
    EXPECT_EQ(early.status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(early.reason, "takeover");
  }
  Refused granted;
  ASSERT_TRUE(test::wait_until([&] {
    granted = try_lock_at(other, mine_);
    return granted.status.ok();
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, grace);
  EXPECT_GT(granted.token, before.token);
  // The lock taken alone survives (this switch owns its slot), but it was taken before the
  // map: its holder keeps it, and keeps renewing.
  ASSERT_OK(renew(s));
}

TEST_P(LockFabricTest, ALostSlotEndsItsHoldersAndItsWaitsAndNothingElse) {
  serve(map(1));
  const uint64_t holder = open(), waiter = open(), bystander = open();
  ASSERT_OK(try_lock_at(holder, mine_).status);
  ASSERT_OK(try_lock_at(bystander, also_mine_).status);
  auto waiting = lock_async(request(waiter, mine_, 0, 10));
  wait_for_waiting(1);

  // Slots 0-99 go to switch "c"... but also_mine_ is in them too: keep 8 by splitting.
  LockOwnership next = map(2);
  next.ranges[0] = {0, 7, "c", "unix:/c.sock", 2};
  next.ranges.insert(next.ranges.begin() + 1, {8, 99, "a", "unix:/a.sock", 1});
  serve(std::move(next));

  ASSERT_TRUE(finishes(*waiting, 30s));
  EXPECT_EQ(waiting->done.get().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(reason_of(waiting->context), "moved");
  const auto& trailers = waiting->context.GetServerTrailingMetadata();
  const auto owner = trailers.find("asn-lock-owner");
  ASSERT_NE(owner, trailers.end());  // the wait is sent on to the new owner, as a Lock is
  EXPECT_EQ(std::string(owner->second.data(), owner->second.size()), "unix:/c.sock");
  EXPECT_EQ(renew(holder).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(list(mine_).held_size(), 0);
  // The bystander's slot kept its owner and epoch: untouched.
  ASSERT_OK(renew(bystander));
  EXPECT_EQ(list(also_mine_).held_size(), 1);
  ASSERT_OK(renew(waiter));  // it held nothing there: its session lives
  const Refused moved = try_lock_at(waiter, mine_);
  EXPECT_EQ(moved.reason, "moved");
  EXPECT_EQ(moved.owner, "unix:/c.sock");
}

// A session ended because a file it held moved away may still be believed to hold its other
// locks by its client (it hears at its next call): those on files this switch keeps are
// granted to no one else before its lease, as last renewed, has run out (a lease is never
// cut short). Found by the cross-switch torture: they were granted at once.
TEST_P(LockFabricTest, ALostSlotsHolderKeepsItsOtherLocksUntilItsLeaseRunsOut) {
  serve(map(1));
  const uint64_t holder = open(/*ttl=*/2);
  ASSERT_OK(try_lock_at(holder, mine_).status);
  const auto renewed = std::chrono::steady_clock::now();  // the lease runs from at most here
  ASSERT_OK(try_lock_at(holder, also_mine_).status);
  const uint64_t other = open();
  auto waiting = lock_async(request(other, also_mine_, 0, 10));
  wait_for_waiting(1);

  LockOwnership next = map(2);  // slot 7 (mine_) to "c"; slot 8 (also_mine_) stays
  next.ranges[0] = {0, 7, "c", "unix:/c.sock", 2};
  next.ranges.insert(next.ranges.begin() + 1, {8, 99, "a", "unix:/a.sock", 1});
  serve(std::move(next));
  const grpc::Status told = renew(holder);  // told at once, and renews nothing
  EXPECT_EQ(told.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(told.error_message(), ::testing::HasSubstr("moved to another switch"));
  EXPECT_EQ(list(mine_).held_size(), 0);

  ASSERT_TRUE(finishes(*waiting, 30s));
  ASSERT_OK(waiting->done.get());
  EXPECT_GE(std::chrono::steady_clock::now() - renewed, 2s);
}

TEST_P(LockFabricTest, TheSameOwnerAtANewEpochDropsItsStaleTable) {
  serve(map(1, 1));
  const uint64_t holder = open();
  ASSERT_OK(try_lock_at(holder, mine_).status);
  // The slots went to another switch and back while this one did not look: epoch 3.
  serve(map(5, 3), 1h);
  EXPECT_EQ(renew(holder).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(list(mine_).held_size(), 0);
  const uint64_t other = open();
  EXPECT_EQ(try_lock_at(other, mine_).reason, "takeover");
}

// asnd restarts after its slots went to another switch and came back (epoch 1 -> 3): the
// grants its table kept are of epoch 1, made beside the other switch's, and are dropped.
TEST_P(LockFabricTest, ARestartDropsTheGrantsOfASlotThatMovedAwayAndBackWhileItWasDown) {
  serve(map(1, 1));
  const uint64_t holder = open();
  ASSERT_OK(try_lock_at(holder, mine_).status);
  restart_into(map(9, 3));
  EXPECT_EQ(renew(holder).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(list(mine_).held_size(), 0);
  EXPECT_EQ(try_lock_at(open(), mine_).reason, "takeover");
}

// The same restart with the slots still at the epoch it served: the table's grants stand, and
// their session comes back to them.
TEST_P(LockFabricTest, ARestartKeepsTheGrantsOfASlotStillAtTheEpochItServed) {
  serve(map(1, 2));
  const uint64_t holder = open();
  ASSERT_OK(try_lock_at(holder, mine_).status);
  restart_into(map(9, 2));
  ASSERT_OK(renew(holder));
  EXPECT_EQ(list(mine_).held_size(), 1);
}

// A record it cannot read tells nothing: every slot may have moved, and its grants go.
TEST_P(LockFabricTest, ARestartWithADamagedSlotRecordDropsEveryGrant) {
  serve(map(1, 2));
  const uint64_t holder = open();
  ASSERT_OK(try_lock_at(holder, mine_).status);
  restart_into(map(9, 2), [&] {
    std::ofstream damaged(dir_.path() + "/locks/lock_slots", std::ios::trunc);
    damaged << "not a record";
  });
  EXPECT_EQ(renew(holder).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(list(mine_).held_size(), 0);
}

TEST_P(LockFabricTest, NothingIsGrantedOrRenewedWithoutAConfirmedMap) {
  const uint64_t s = open();
  manager().await_lock_map("lab", "a");
  Refused r = try_lock_at(s, mine_);
  EXPECT_EQ(r.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(r.reason, "fenced");
  EXPECT_THAT(r.status.error_message(), ::testing::HasSubstr("has not read"));
  EXPECT_EQ(renew(s).error_code(), grpc::StatusCode::UNAVAILABLE);

  manager().set_lock_map(map(1), 0ms);
  EXPECT_EQ(try_lock_at(s, mine_).reason, "fenced");
  manager().confirm_lock_map(2, 2, LockClock::now() + 1h);  // another revision confirms nothing
  EXPECT_EQ(try_lock_at(s, mine_).reason, "fenced");
  manager().confirm_lock_map(1, 1, LockClock::now());  // a confirmation that has run out
  EXPECT_EQ(try_lock_at(s, mine_).reason, "fenced");
  EXPECT_EQ(renew(s).error_code(), grpc::StatusCode::UNAVAILABLE);
  manager().confirm_lock_map(1, 1, LockClock::now() + 1h);
  ASSERT_OK(renew(s));
  ASSERT_OK(try_lock_at(s, mine_).status);
}

TEST_P(LockFabricTest, WithoutAMapAnyMoreEveryFileIsServedAgain) {
  serve(map(1));
  const uint64_t s = open();
  EXPECT_EQ(try_lock_at(s, theirs_).reason, "moved");
  manager().set_lock_map(std::nullopt, 0ms);
  ASSERT_OK(try_lock_at(s, theirs_).status);
  ASSERT_OK(try_lock_at(s, nobodys_).status);
}

// Fencing tokens in a fabric embed the etcd revision (lock_manager_fabric.cc): above every
// standalone token, ordered by the revision whatever the switches' clocks say.

locks::Token clock_a_day_ahead() {
  return static_cast<locks::Token>(
      std::chrono::nanoseconds((std::chrono::system_clock::now() + 24h).time_since_epoch())
          .count());
}

locks::Token clock_a_day_behind() {
  return static_cast<locks::Token>(
      std::chrono::nanoseconds((std::chrono::system_clock::now() - 24h).time_since_epoch())
          .count());
}

// Puts the switches' wall clock (what standalone tokens are floored to) off for a test.
struct WallClockOff {
  ~WallClockOff() { set_token_wall_clock(nullptr); }
};

TEST_P(LockFabricTest, ASuccessorWhoseClockIsADayBehindGrantsAboveItsPredecessor) {
  WallClockOff restore;
  // The predecessor, switch "p", its clock a day ahead, owns slots 0-99 at revision 10.
  set_token_wall_clock(&clock_a_day_ahead);
  std::filesystem::create_directories(dir_.path() + "/p");
  uint64_t before = 0;
  {
    test::LockStack p(GetParam(), dir_.path() + "/p", config_, profile_);
    LockOwnership at_p = map(10, 1, "p");
    at_p.self = "p";
    p.manager().set_lock_map(at_p, 0ms);
    p.manager().confirm_lock_map(10, 10, LockClock::now() + 1h);
    auto stub = v1::Locks::NewStub(p.channel());
    std::swap(stub, stub_);
    const uint64_t s = open();
    for (uint64_t i = 0; i < 3; ++i) {
      v1::LockResponse granted;
      ASSERT_OK(try_lock(request(s, mine_, i * 10, 10), &granted));
      before = std::max(before, granted.token());
    }
    std::swap(stub, stub_);
  }
  EXPECT_EQ(token_revision(before), 10);
  // Switch "a", its clock a day behind, restarts and takes the slots over at revision 12.
  set_token_wall_clock(&clock_a_day_behind);
  stub_.reset();
  stack_.reset();
  start();
  manager().await_lock_map("lab", "a");
  serve(map(12, 2), 0ms);
  const Refused after = try_lock_at(open(), mine_);
  ASSERT_OK(after.status);
  EXPECT_GT(after.token, before);
  EXPECT_EQ(token_revision(after.token), 12);
  EXPECT_NE(after.token & kFabricTokenFlag, 0u);
}

TEST_P(LockFabricTest, TokensEmbedTheNewestRevisionAtWhichTheMapWasKnown) {
  serve(map(10));
  const uint64_t s = open();
  v1::LockResponse first, second, third;
  ASSERT_OK(try_lock(request(s, mine_, 0, 10), &first));
  EXPECT_EQ(token_revision(first.token()), 10);
  EXPECT_GE(first.token(), fabric_token_floor(10));
  // Read back at store revision 13 (other keys were written): the map was current then.
  manager().confirm_lock_map(10, 13, LockClock::now() + 1h);
  ASSERT_OK(try_lock(request(s, mine_, 10, 10), &second));
  EXPECT_EQ(token_revision(second.token()), 13);
  // A new map (the same slots, the same epoch: kept) through the watch.
  manager().set_lock_map(map(20), 0ms);
  ASSERT_OK(try_lock(request(s, also_mine_, 0, 10), &third));
  EXPECT_EQ(token_revision(third.token()), 20);
  EXPECT_GT(third.token(), second.token());
  EXPECT_GT(second.token(), first.token());
}

TEST_P(LockFabricTest, TheCounterFencesBeforeItReachesTheNextRevision) {
  // The margin kept for waiting requests (locks.max_waiting + 1) leaves room for 3 grants.
  config_.max_waiting = (1u << kTokenCounterBits) - 4;
  restart(15);
  serve(map(10));
  EXPECT_FALSE(manager().tokens_need_revision());
  const uint64_t s = open();
  for (uint64_t i = 0; i < 3; ++i) ASSERT_OK(try_lock(request(s, mine_, i * 10, 10)));
  // Half of the 3 used: the fabric agent would write to etcd before its next read.
  EXPECT_TRUE(manager().tokens_need_revision());
  grpc::ClientContext context;
  v1::LockResponse response;
  const grpc::Status fenced = stub_->TryLock(&context, request(s, mine_, 30, 10), &response);
  EXPECT_EQ(fenced.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(reason_of(context), "fenced");
  EXPECT_THAT(fenced.error_message(),
              ::testing::HasSubstr("fencing tokens since etcd revision 10"));
  // A read at a newer revision lifts it.
  manager().confirm_lock_map(10, 11, LockClock::now() + 1h);
  EXPECT_FALSE(manager().tokens_need_revision());
  v1::LockResponse granted;
  ASSERT_OK(try_lock(request(s, mine_, 30, 10), &granted));
  EXPECT_EQ(token_revision(granted.token()), 11);
}

TEST_P(LockFabricTest, AMapDeletedAndCreatedAgainKeepsTokensGrowing) {
  serve(map(10, 3));
  const uint64_t s = open();
  v1::LockResponse first;
  ASSERT_OK(try_lock(request(s, mine_, 0, 10), &first));
  // Deleted at revision 11 (the agent keeps the map in force, unconfirmed), created again at
  // 12 by a new `fabric apply`, its epochs from 1 again.
  serve(map(12, 1));
  const Refused again = try_lock_at(open(), also_mine_);
  ASSERT_OK(again.status);
  EXPECT_GT(again.token, first.token());
  EXPECT_EQ(token_revision(again.token), 12);
}

TEST_P(LockFabricTest, ARevisionTokensCannotEmbedIsRefusedAndTheMapInForceStays) {
  serve(map(10));
  try {
    manager().set_lock_map(map(int64_t{1} << 40, 1, "b"), 0ms);
    ADD_FAILURE() << "a map at revision 2^40 was applied";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("40 bits"));
  }
  const uint64_t s = open();
  ASSERT_OK(try_lock_at(s, mine_).status);
  EXPECT_EQ(try_lock_at(s, theirs_).reason, "moved");
}

INSTANTIATE_TEST_SUITE_P(Domains, LockFabricTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

}  // namespace
}  // namespace asn

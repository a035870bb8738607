// The library's record of what a session holds (client/src/held_locks.hpp): what it takes
// again after a board reset lost the switch's lock table must be exactly what the session
// still holds there, after splits, downgrades and strided unlocks.
#include "held_locks.hpp"

#include <gtest/gtest.h>

namespace asn::client {
namespace {

Grant grant(std::vector<ByteRange> ranges, std::string domain = "switch") {
  Grant g;
  g.ranges = std::move(ranges);
  g.domain = std::move(domain);
  return g;
}

TEST(HeldLocks, ReclaimsWhatIsStillHeldInTheSwitchMergedPerMode) {
  HeldLocks held;
  held.granted("f", Mode::kExclusive, grant({{0, 100}}));
  held.granted("f", Mode::kExclusive, grant({{100, 50}}));  // adjacent: one range
  held.granted("g", Mode::kShared, grant({{10, 10}, {40, 10}}));
  held.granted("s", Mode::kExclusive, grant({{0, 10}}, "software"));
  held.released("f", Ranges(20, 10));                // a split
  held.downgraded("f", Ranges(120, 30));             // [120, 150) shared now
  held.released("g", Ranges(Strided{40, 5, 5, 2}));  // all of [40, 50)
  const auto reclaims = held.take_switch_locks();
  ASSERT_EQ(reclaims.size(), 3u);
  EXPECT_EQ(reclaims[0].file, "f");
  EXPECT_EQ(reclaims[0].mode, Mode::kExclusive);
  EXPECT_EQ(reclaims[0].ranges, (std::vector<ByteRange>{{0, 20}, {30, 90}}));
  EXPECT_EQ(reclaims[1].file, "f");
  EXPECT_EQ(reclaims[1].mode, Mode::kShared);
  EXPECT_EQ(reclaims[1].ranges, (std::vector<ByteRange>{{120, 30}}));
  EXPECT_EQ(reclaims[2].file, "g");
  EXPECT_EQ(reclaims[2].ranges, (std::vector<ByteRange>{{10, 10}}));
  // The switch locks are forgotten (a granted reclaim adds itself back); software stays.
  EXPECT_EQ(held.pieces(), 1u);
  EXPECT_TRUE(held.take_switch_locks().empty());
}

// After an asnd restart the session names its grants by token: a grant is named while any
// byte of it is held (a split or a downgrade keeps its token), and not once all are unlocked.
TEST(HeldLocks, TokensAreThoseOfTheGrantsWithBytesStillHeld) {
  HeldLocks held;
  Grant a = grant({{0, 100}});
  a.token = 7;
  Grant b = grant({{200, 10}}, "software");
  b.token = 3;
  Grant c = grant({{300, 10}});
  c.token = 9;
  held.granted("f", Mode::kExclusive, a);
  held.granted("f", Mode::kExclusive, b);
  held.granted("g", Mode::kShared, c);
  EXPECT_EQ(held.tokens(), (std::vector<std::uint64_t>{3, 7, 9}));
  held.released("f", Ranges(10, 80));   // a split: [0, 10) and [90, 100) left
  held.downgraded("f", Ranges(0, 10));  // shared now, the same grant
  held.released("g", Ranges(300, 10));  // c gone
  EXPECT_EQ(held.tokens(), (std::vector<std::uint64_t>{3, 7}));
  held.released("f", Ranges(0, 1000));
  EXPECT_TRUE(held.tokens().empty());
}

TEST(HeldLocks, OverlappingLocksOfTheSessionAreOneReclaim) {
  HeldLocks held;
  held.granted("f", Mode::kShared, grant({{0, 10}}));
  held.granted("f", Mode::kShared, grant({{5, 10}}));  // the session's own locks overlap
  held.released("f", Ranges(0, 3));
  const auto reclaims = held.take_switch_locks();
  ASSERT_EQ(reclaims.size(), 1u);
  EXPECT_EQ(reclaims[0].ranges, (std::vector<ByteRange>{{3, 12}}));
}

TEST(HeldLocks, AFullUnlockForgetsTheFile) {
  HeldLocks held;
  held.granted("f", Mode::kExclusive, grant({{0, 10}}));
  held.released("f", Ranges(0, 10));
  held.released("unknown", Ranges(0, 10));
  EXPECT_EQ(held.pieces(), 0u);
  EXPECT_TRUE(held.take_switch_locks().empty());
}

}  // namespace
}  // namespace asn::client

// The ranges of a lock request (lib/locks range.hpp): list locking (004 L1194) and datatype
// locking as a strided pattern (004 L1198), and the rules both follow: no empty range, none
// past 2^64, no overlap within one request, stride >= block length, a bounded count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "asn/locks/range.hpp"

namespace asn::locks {
namespace {

using ::testing::HasSubstr;
using Ranges = std::vector<ByteRange>;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(LocksRange, EndNeedsSixtyFiveBits) {
  ByteRange top{kMax, 1};  // the last byte of the space
  EXPECT_EQ(top.end(), kSpaceEnd);
  EXPECT_EQ(top.last(), kMax);
  EXPECT_EQ(to_string(top), "[18446744073709551615, 2^64)");
  EXPECT_EQ(to_string(ByteRange{100, 100}), "[100, 200)");
}

TEST(LocksRange, OverlapIsSharingAByte) {
  EXPECT_TRUE(overlaps({0, 10}, {9, 1}));
  EXPECT_FALSE(overlaps({0, 10}, {10, 5}));  // touching
  EXPECT_TRUE(overlaps({0, 100}, {40, 10}));
  EXPECT_TRUE(overlaps({kMax, 1}, {kMax - 5, 6}));
  EXPECT_FALSE(compatible(Mode::kShared, Mode::kExclusive));
  EXPECT_TRUE(compatible(Mode::kShared, Mode::kShared));
  EXPECT_FALSE(compatible(Mode::kExclusive, Mode::kExclusive));
}

TEST(LocksRange, ValidListInAnyOrder) {
  Ranges ranges{{100, 10}, {0, 10}, {10, 5}, {kMax - 9, 10}};  // touching, unsorted, to 2^64
  EXPECT_EQ(validate(ranges), std::nullopt);
  Ranges sorted = sorted_ranges(ranges);
  EXPECT_EQ(sorted, (Ranges{{0, 10}, {10, 5}, {100, 10}, {kMax - 9, 10}}));
}

TEST(LocksRange, NoRangesIsRefused) {
  auto error = validate(Ranges{});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(error->what(), HasSubstr("at least one range"));
}

TEST(LocksRange, EmptyRangeIsNamedByIndex) {
  auto error = validate(Ranges{{0, 10}, {50, 0}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(error->index(), 1u);
  EXPECT_THAT(error->what(), HasSubstr("range 1 at offset 50 is empty"));
  EXPECT_THAT(error->what(), HasSubstr("at least one byte"));
}

TEST(LocksRange, RangePastTwoToTheSixtyFourIsRefused) {
  auto error = validate(Ranges{{0, 1}, {kMax, 2}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->index(), 1u);
  EXPECT_THAT(error->what(), HasSubstr("ends at 18446744073709551617, past 2^64"));
  EXPECT_THAT(error->what(), HasSubstr("at most 1 bytes fit"));
  EXPECT_EQ(validate(Ranges{{kMax, 1}}), std::nullopt);  // ending exactly at 2^64 is fine
  EXPECT_EQ(validate(Ranges{{1, kMax}}), std::nullopt);
}

TEST(LocksRange, OverlapNamesBothRanges) {
  auto error = validate(Ranges{{0, 10}, {100, 50}, {20, 5}, {120, 1}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->index(), 3u);
  EXPECT_THAT(error->what(),
              HasSubstr("range 3 [120, 121) overlaps range 1 [100, 150): the ranges of one "
                        "request must not overlap"));
  // A range inside another, listed first, is still found.
  error = validate(Ranges{{40, 5}, {0, 100}, {60, 5}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->index(), 1u);
}

TEST(LocksRange, AMillionRangesAreRefusedClearly) {
  Ranges million(1'000'000);
  for (size_t i = 0; i < million.size(); ++i) million[i] = {i * 2, 1};
  auto error = validate(million);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(error->what(), HasSubstr("1000000 ranges in one request; at most 65536"));
  EXPECT_EQ(validate(million, 1'000'000), std::nullopt);  // a table may allow more
  Ranges at_limit(million.begin(), million.begin() + 65536);
  EXPECT_EQ(validate(at_limit), std::nullopt);
}

TEST(LocksRange, StridedExpandsToBlocksInOffsetOrder) {
  Strided s{1000, 10, 100, 4};
  EXPECT_EQ(validate(s), std::nullopt);
  EXPECT_EQ(expand(s), (Ranges{{1000, 10}, {1100, 10}, {1200, 10}, {1300, 10}}));
  // stride == block length: contiguous blocks, which touch but do not overlap
  EXPECT_EQ(expand(Strided{0, 8, 8, 3}), (Ranges{{0, 8}, {8, 8}, {16, 8}}));
  // one block: the stride does not matter
  EXPECT_EQ(expand(Strided{5, 10, 0, 1}), (Ranges{{5, 10}}));
  EXPECT_EQ(sorted_ranges(RangeSpec{s}), expand(s));
}

TEST(LocksRange, StrideShorterThanBlockIsRefused) {
  auto error = validate(Strided{0, 100, 50, 3});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(error->what(), HasSubstr("stride 50 is less than the block length 100"));
  EXPECT_THAT(error->what(), HasSubstr("at least the block length"));
}

TEST(LocksRange, StridedCountAndBlockBounds) {
  auto error = validate(Strided{0, 1, 1, 0});
  ASSERT_TRUE(error);
  EXPECT_THAT(error->what(), HasSubstr("count is 0"));
  error = validate(Strided{0, 0, 1, 5});
  ASSERT_TRUE(error);
  EXPECT_THAT(error->what(), HasSubstr("block length is 0"));
  error = validate(Strided{0, 1, 2, 1'000'000});
  ASSERT_TRUE(error);
  EXPECT_THAT(error->what(), HasSubstr("count 1000000: at most 65536 blocks"));
  EXPECT_EQ(validate(Strided{0, 1, 2, 65536}), std::nullopt);
}

TEST(LocksRange, StridedPastTwoToTheSixtyFourNamesTheFirstBadBlock) {
  // Blocks at kMax - 299, -199, -99 fit (the last ends at 2^64 - 89); block 3 does not.
  Strided s{kMax - 299, 10, 100, 5};
  auto error = validate(s);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->index(), 3u);
  EXPECT_THAT(error->what(), HasSubstr("block 3 at offset 18446744073709551616"));
  EXPECT_THAT(error->what(), HasSubstr("past 2^64: 3 blocks fit"));
  EXPECT_EQ(validate(Strided{kMax - 299, 10, 100, 3}), std::nullopt);
  // The last block may end exactly at 2^64.
  EXPECT_EQ(validate(Strided{kMax - 209, 10, 100, 3}), std::nullopt);
  error = validate(Strided{kMax, 2, 4, 1});  // block 0 itself
  ASSERT_TRUE(error);
  EXPECT_EQ(error->index(), 0u);
}

TEST(LocksRange, ExpandThrowsWhatValidateReturns) {
  try {
    expand(Strided{0, 4, 2, 2});
    FAIL() << "expected a LockError";
  } catch (const LockError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("stride 2"));
  }
  EXPECT_THROW(sorted_ranges(RangeSpec{Ranges{{0, 2}, {1, 2}}}), LockError);
}

TEST(LocksRange, KindNames) {
  EXPECT_EQ(name(ErrorKind::kInvalidArgument), "invalid argument");
  EXPECT_EQ(name(ErrorKind::kResourceExhausted), "resource exhausted");
  EXPECT_EQ(name(ErrorKind::kNotFound), "not found");
  EXPECT_EQ(name(ErrorKind::kFailedPrecondition), "failed precondition");
  EXPECT_EQ(name(Mode::kShared), "shared");
  EXPECT_EQ(name(Mode::kExclusive), "exclusive");
}

}  // namespace
}  // namespace asn::locks

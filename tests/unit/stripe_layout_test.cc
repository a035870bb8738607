// Stripe geometry (lib/stripe, issue 10, 004 L1131): validation, and Linux md's layouts
// (drivers/md/raid5.c raid5_compute_sector) checked against hand-computed tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "asn/stripe/geometry.hpp"

namespace asn::stripe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Geometry geo(Raid raid, unsigned data, unsigned parity, uint32_t unit = 65536) {
  return Geometry{raid, data, parity, unit};
}

TEST(StripeValidateTest, AcceptsGoodGeometries) {
  EXPECT_EQ(validate(geo(Raid::k4, 3, 1)), std::nullopt);
  EXPECT_EQ(validate(geo(Raid::k5, 2, 1, kMinUnitBytes)), std::nullopt);
  EXPECT_EQ(validate(geo(Raid::k6, 8, 2, kMaxUnitBytes)), std::nullopt);
  EXPECT_EQ(validate(geo(Raid::k6, 62, 2)), std::nullopt);
  EXPECT_EQ(validate(geo(Raid::k5, 63, 1)), std::nullopt);
}

TEST(StripeValidateTest, TooFewDataMembers) {
  const auto e = validate(geo(Raid::k5, 1, 1));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("1 data members"));
  EXPECT_THAT(*e, HasSubstr("at least 2"));
  EXPECT_TRUE(validate(geo(Raid::k6, 0, 2)).has_value());
}

TEST(StripeValidateTest, WrongParityCount) {
  auto e = validate(geo(Raid::k6, 4, 1));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("exactly 2 for RAID 6"));
  e = validate(geo(Raid::k5, 4, 2));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("exactly 1 for RAID 5"));
  e = validate(geo(Raid::k4, 4, 0));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("exactly 1 for RAID 4"));
}

TEST(StripeValidateTest, TooManyMembers) {
  const auto e = validate(geo(Raid::k6, 63, 2));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("65 members"));
  EXPECT_THAT(*e, HasSubstr("at most 64"));
}

TEST(StripeValidateTest, UnitSize) {
  auto e = validate(geo(Raid::k5, 3, 1, 3000));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("unit 3000 is not a power of two"));
  EXPECT_THAT(*e, HasSubstr("accepted: 4096 .. 1048576, powers of two"));
  e = validate(geo(Raid::k5, 3, 1, 2048));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("too small"));
  e = validate(geo(Raid::k5, 3, 1, 2u << 20));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("too large"));
  EXPECT_TRUE(validate(geo(Raid::k5, 3, 1, 0)).has_value());
  EXPECT_TRUE(validate(geo(Raid::k5, 3, 1, 65536 + 4096)).has_value());
}

TEST(StripeValidateTest, UnknownRaidLevel) {
  const auto e = validate(geo(static_cast<Raid>(3), 3, 1));
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("accepted: 4, 5, 6"));
}

TEST(StripeLayoutTest, Raid4DedicatedParity) {
  const Geometry g = geo(Raid::k4, 3, 1);
  for (uint64_t s : {0ULL, 1ULL, 7ULL, 1ULL << 40}) {
    const StripeMap m = map_stripe(g, s);
    EXPECT_THAT(m.data_member, ElementsAre(0u, 1u, 2u));
    EXPECT_EQ(m.p_member, 3u);
    EXPECT_FALSE(m.q_member.has_value());
  }
}

// md's left-symmetric RAID 5 over 4 disks, by member (the picture in md's docs):
//   stripe 0:  D0  D1  D2  P
//   stripe 1:  D4  D5  P   D3
//   stripe 2:  D8  P   D6  D7
//   stripe 3:  P   D9  D10 D11
TEST(StripeLayoutTest, Raid5LeftSymmetricFourMembers) {
  const Geometry g = geo(Raid::k5, 3, 1);
  struct Row {
    std::vector<unsigned> data;
    unsigned p;
  };
  const std::vector<Row> table = {{{0, 1, 2}, 3}, {{3, 0, 1}, 2}, {{2, 3, 0}, 1}, {{1, 2, 3}, 0}};
  for (uint64_t s = 0; s < 12; ++s) {
    const StripeMap m = map_stripe(g, s);
    EXPECT_EQ(m.data_member, table[s % 4].data) << "stripe " << s;
    EXPECT_EQ(m.p_member, table[s % 4].p) << "stripe " << s;
    EXPECT_FALSE(m.q_member.has_value());
  }
}

// md's left-symmetric RAID 6 over 5 disks (ALGORITHM_LEFT_SYMMETRIC: Q right after P), by
// member:
//   stripe 0:  Q   D0  D1  D2  P
//   stripe 1:  D3  D4  D5  P   Q
//   stripe 2:  D7  D8  P   Q   D6
//   stripe 3:  D11 P   Q   D9  D10
//   stripe 4:  P   Q   D12 D13 D14
TEST(StripeLayoutTest, Raid6LeftSymmetricFiveMembers) {
  const Geometry g = geo(Raid::k6, 3, 2);
  struct Row {
    std::vector<unsigned> data;
    unsigned p;
    unsigned q;
  };
  const std::vector<Row> table = {{{1, 2, 3}, 4, 0},
                                  {{0, 1, 2}, 3, 4},
                                  {{4, 0, 1}, 2, 3},
                                  {{3, 4, 0}, 1, 2},
                                  {{2, 3, 4}, 0, 1}};
  for (uint64_t s = 0; s < 15; ++s) {
    const StripeMap m = map_stripe(g, s);
    EXPECT_EQ(m.data_member, table[s % 5].data) << "stripe " << s;
    EXPECT_EQ(m.p_member, table[s % 5].p) << "stripe " << s;
    ASSERT_TRUE(m.q_member.has_value());
    EXPECT_EQ(*m.q_member, table[s % 5].q) << "stripe " << s;
  }
}

TEST(StripeLayoutTest, LargeStripeNumbers) {
  const Geometry g = geo(Raid::k5, 3, 1);
  const uint64_t s = (uint64_t{1} << 50) + 1;  // s % 4 == 1
  EXPECT_EQ(map_stripe(g, s).p_member, 2u);
}

TEST(StripeLayoutTest, EveryMemberHoldsOneUnitPerStripe) {
  for (Raid raid : {Raid::k4, Raid::k5, Raid::k6}) {
    const unsigned parity = raid == Raid::k6 ? 2 : 1;
    for (unsigned data = 2; data + parity <= kMaxMembers; ++data) {
      const Geometry g = geo(raid, data, parity);
      for (uint64_t s = 0; s < 2 * g.members() + 1; ++s) {
        const StripeMap m = map_stripe(g, s);
        ASSERT_EQ(m.data_member.size(), data);
        std::vector<int> count(g.members(), 0);
        for (unsigned member : m.data_member) {
          ASSERT_LT(member, g.members());
          ++count[member];
        }
        ASSERT_LT(m.p_member, g.members());
        ++count[m.p_member];
        ASSERT_EQ(m.q_member.has_value(), raid == Raid::k6);
        if (m.q_member) {
          ASSERT_LT(*m.q_member, g.members());
          ++count[*m.q_member];
        }
        for (unsigned i = 0; i < g.members(); ++i) {
          ASSERT_EQ(count[i], 1) << "RAID " << static_cast<int>(raid) << " " << data
                                 << " data, stripe " << s << ", member " << i;
        }
      }
    }
  }
}

// Over members() consecutive stripes of RAID 5 and 6, P (and Q) visit every member once.
TEST(StripeLayoutTest, ParityRotatesOverEveryMember) {
  for (Raid raid : {Raid::k5, Raid::k6}) {
    const Geometry g = geo(raid, 6, raid == Raid::k6 ? 2 : 1);
    std::vector<int> p(g.members(), 0), q(g.members(), 0);
    for (uint64_t s = 0; s < g.members(); ++s) {
      const StripeMap m = map_stripe(g, s);
      ++p[m.p_member];
      if (m.q_member) ++q[*m.q_member];
    }
    for (unsigned i = 0; i < g.members(); ++i) {
      EXPECT_EQ(p[i], 1);
      EXPECT_EQ(q[i], raid == Raid::k6 ? 1 : 0);
    }
  }
}

}  // namespace
}  // namespace asn::stripe

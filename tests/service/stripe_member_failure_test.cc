// Issue 27 item 5: a member whose storage server returns I/O errors is marked failed by
// itself, through the path an operator's fail-member takes (the desired state, the board's
// entry, the data path dropping its store), with why; the call goes on degraded and reads
// back what was written; a failure the level does not tolerate fails the call UNAVAILABLE
// and loses nothing acknowledged; rebuild-member afterwards makes the group whole.
//
// The failing member is the emulated storage server's test hook (EmulatedBoard::
// stripe_inject_member_fault): the tests run as root, where a store made unwritable by
// chmod is still written, and a full filesystem would need a mount.
#include <cerrno>
#include <string>

#include "stripe_service_fixture.hpp"

namespace asn {
namespace {

using test::random_bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace s = regs::stripe;

class StripeMemberFailureTest : public test::StripeServiceTest {
 protected:
  void SetUp() override {
    test::StripeServiceTest::SetUp();
    if (!data_path()) GTEST_SKIP() << "no data path on this board";
  }

  void inject(uint32_t group, unsigned port, int err, uint64_t after = 0) {
    stack_->board().stripe_inject_member_fault(static_cast<uint16_t>(group), port, err, after);
  }

  std::vector<uint32_t> failed(uint32_t group) {
    const v1::ListGroupsResponse groups = list();
    for (const auto& g : groups.groups()) {
      if (g.spec().group() == group) {
        return {g.failed_ports().begin(), g.failed_ports().end()};
      }
    }
    ADD_FAILURE() << "no group " << group;
    return {};
  }

  std::string why(uint32_t group, uint32_t port) {
    const v1::ListGroupsResponse groups = list();
    for (const auto& g : groups.groups()) {
      if (g.spec().group() != group) continue;
      const auto it = g.failed_why().find(port);
      return it == g.failed_why().end() ? "" : it->second;
    }
    return "";
  }

  uint64_t failed_mask(uint32_t group) {
    const auto words = entry(group);
    return (uint64_t{s::kGroupTableFailedMembersHi.get(words)} << 32) |
           s::kGroupTableFailedMembersLo.get(words);
  }

  // Writes into the group's file and the test's copy of it.
  grpc::Status write_model(uint32_t group, std::string& model, uint64_t offset,
                           const std::string& bytes) {
    const grpc::Status status = write(group, offset, bytes);
    if (status.ok()) {
      if (model.size() < offset + bytes.size()) model.resize(offset + bytes.size(), '\0');
      model.replace(offset, bytes.size(), bytes);
    }
    return status;
  }

  void expect_reads(uint32_t group, const std::string& model) {
    std::string back;
    ASSERT_OK(read(group, &back));
    EXPECT_TRUE(back == model) << "read " << back.size() << " bytes, want " << model.size();
  }

  void expect_consistent(uint32_t group) {
    const StripeScrub scrub = stripe_->scrub(group, false, false, {});
    EXPECT_EQ(scrub.report.mismatches, 0u);
    EXPECT_GT(scrub.report.stripes, 0u);
  }
};

class MemberFailsMidWay : public StripeMemberFailureTest,
                          public ::testing::WithParamInterface<v1::RaidLevel> {};

// RAID 5 takes one member failing mid-way through a write, RAID 6 one and then a second;
// each write completes degraded and every read equals what was written.
TEST_P(MemberFailsMidWay, WritesCompleteDegradedAndRebuildRestoresTheGroup) {
  const bool raid6 = GetParam() == v1::RAID_6;
  ASSERT_OK(
      create(raid6 ? spec(1, v1::RAID_6, {0, 1, 2}, {3, 4}) : spec(1, v1::RAID_5, {0, 1, 2}, {3})));
  std::string model;
  ASSERT_OK(write_model(1, model, 0, random_bytes(100'000, 1)));

  // Port 1's disk dies after a few more of its operations: part-way through this write.
  inject(1, 1, EIO, 5);
  ASSERT_OK(write_model(1, model, 50'000, random_bytes(300'000, 2)));
  EXPECT_THAT(failed(1), ElementsAre(1u));
  EXPECT_EQ(failed_mask(1), uint64_t{1} << 1);  // the board's entry, as fail-member sets it
  EXPECT_THAT(why(1, 1), HasSubstr("write: "));
  EXPECT_THAT(why(1, 1), HasSubstr("port-1/group-1.data: Input/output error"));
  const ManagerSummary summary = stripe_->summary();
  EXPECT_TRUE(summary.problem);
  EXPECT_THAT(summary.status, HasSubstr("group 1 degraded: port 1 (write: "));
  expect_reads(1, model);

  if (raid6) {
    // A second member, a parity one, whose filesystem fills part-way.
    inject(1, 3, ENOSPC, 7);
    ASSERT_OK(write_model(1, model, 10'000, random_bytes(200'000, 3)));
    EXPECT_THAT(failed(1), ElementsAre(1u, 3u));
    EXPECT_THAT(why(1, 3), HasSubstr("No space left on device"));
    expect_reads(1, model);
  }

  // The disks replaced: each failed member rebuilt; the group is whole and consistent.
  for (uint32_t port : failed(1)) {
    inject(1, port, 0);
    ASSERT_OK(rebuild(1, port));
  }
  EXPECT_TRUE(failed(1).empty());
  EXPECT_EQ(failed_mask(1), 0u);
  EXPECT_EQ(why(1, 1), "");
  EXPECT_FALSE(stripe_->summary().problem);
  expect_reads(1, model);
  expect_consistent(1);
}

INSTANTIATE_TEST_SUITE_P(Raid, MemberFailsMidWay, ::testing::Values(v1::RAID_5, v1::RAID_6),
                         [](const auto& info) {
                           return info.param == v1::RAID_6 ? "Raid6" : "Raid5";
                         });

// A member whose reads fail is marked failed too; the read is served from parity.
TEST_F(StripeMemberFailureTest, AReadErrorMarksTheMemberFailedAndTheReadReconstructs) {
  ASSERT_OK(create(spec(2, v1::RAID_5, {0, 1, 2}, {3})));
  std::string model;
  ASSERT_OK(write_model(2, model, 0, random_bytes(80'000, 4)));
  inject(2, 0, EIO);
  expect_reads(2, model);
  EXPECT_THAT(failed(2), ElementsAre(0u));
  EXPECT_THAT(why(2, 0), HasSubstr("read: "));
}

// RAID 5 with one member failed already: a second member's I/O error fails the write
// UNAVAILABLE, names the member and its error, does not mark it (the file would be lost),
// and what was acknowledged before reads back once that member answers again.
TEST_F(StripeMemberFailureTest, ASecondFailureOnRaid5FailsCleanly) {
  ASSERT_OK(create(spec(3, v1::RAID_5, {0, 1, 2}, {3})));
  std::string model;
  ASSERT_OK(write_model(3, model, 0, random_bytes(120'000, 5)));
  inject(3, 1, EIO);
  ASSERT_OK(write_model(3, model, 30'000, random_bytes(40'000, 6)));
  ASSERT_THAT(failed(3), ElementsAre(1u));

  inject(3, 2, EIO);
  const grpc::Status refused = write_model(3, model, 0, random_bytes(90'000, 7));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("member port 2 failed"));
  EXPECT_THAT(refused.error_message(), HasSubstr("Input/output error"));
  EXPECT_THAT(refused.error_message(), HasSubstr("was not marked failed"));
  EXPECT_THAT(failed(3), ElementsAre(1u));
  EXPECT_EQ(failed_mask(3), uint64_t{1} << 1);
  std::string back;
  EXPECT_EQ(read(3, &back).error_code(), grpc::StatusCode::UNAVAILABLE);

  inject(3, 2, 0);  // it answers again
  expect_reads(3, model);
  inject(3, 1, 0);
  ASSERT_OK(rebuild(3, 1));
  EXPECT_TRUE(failed(3).empty());
  expect_reads(3, model);
  expect_consistent(3);
}

// An operator's fail-member records why too, and the status warns about it alike.
TEST_F(StripeMemberFailureTest, AnOperatorsFailMemberIsRecordedAndWarned) {
  ASSERT_OK(create(spec(4, v1::RAID_6, {0, 1, 2}, {3, 4})));
  EXPECT_FALSE(stripe_->summary().problem);
  ASSERT_OK(fail(4, 2));
  EXPECT_EQ(why(4, 2), "fail-member");
  EXPECT_THAT(stripe_->summary().status, HasSubstr("group 4 degraded: port 2 (fail-member)"));
  restart();  // kept in the desired state
  EXPECT_EQ(why(4, 2), "fail-member");
}

}  // namespace
}  // namespace asn

// The Stripe gRPC service through a real gRPC server on a Unix socket, over the emulated
// board: groups are created, listed, changed and deleted, each programmed into the STRIPE
// group table whole; bad groups are refused with a clear message and nothing written; groups
// survive a restart and a board reset; a reader may not write. With the emulated board's data
// path: files written and read back byte-exactly, degraded reads, rebuilds, and the refusals
// of the data calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stripe_service_fixture.hpp"

namespace asn {
namespace {

using test::random_bytes;
using test::StripeServiceTest;
using ::testing::HasSubstr;
namespace s = regs::stripe;

TEST_F(StripeServiceTest, CreateProgramsTheEntryAndListShowsMembersInOrder) {
  v1::GroupResponse created;
  // The operator's order does not matter: members are data ascending, then parity.
  ASSERT_OK(create(spec(3, v1::RAID_5, {2, 0, 1}, {5}, 65536), &created));
  EXPECT_TRUE(created.changed());
  EXPECT_THAT(created.group().members(), ::testing::ElementsAre(0, 1, 2, 5));
  EXPECT_EQ(created.group().stripe_bytes(), 3u * 65536);
  EXPECT_EQ(created.group().board(), "in force");

  const auto words = entry(3);
  EXPECT_EQ(s::kGroupTableValid.get(words), 1u);
  EXPECT_EQ(s::kGroupTableRaidLevel.get(words), 5u);
  EXPECT_EQ(s::kGroupTableUnitLog2.get(words), 16u);
  EXPECT_EQ(s::kGroupTableDataMembersLo.get(words), 0b111u);
  EXPECT_EQ(s::kGroupTableParityMembersLo.get(words), 0b100000u);
  EXPECT_EQ(s::kGroupTableFailedMembersLo.get(words), 0u);
  EXPECT_EQ(stack_->device().read(s::kConfigEnable), 1u);

  const auto listed = list();
  ASSERT_EQ(listed.groups_size(), 1);
  EXPECT_EQ(listed.groups(0).spec().group(), 3u);
  EXPECT_THAT(listed.groups(0).spec().data_ports(), ::testing::ElementsAre(0, 1, 2));
  EXPECT_EQ(listed.capacity(), 16u);  // netfpga-1g
  EXPECT_EQ(listed.groups(0).board(), "in force");

  // Again: it exists.
  const grpc::Status again = create(spec(3, v1::RAID_5, {0, 1, 2}, {5}));
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

// Each bad group: a clear message, and the table entry (here an existing group's) unchanged.
TEST_F(StripeServiceTest, BadGroupsAreRefusedAndNothingIsWritten) {
  ASSERT_OK(create(spec(1, v1::RAID_4, {0, 1}, {2})));
  const auto before = entry(1);
  const uint64_t writes = stack_->bus().writes.load();
  struct Bad {
    v1::GroupSpec spec;
    std::string says;
  };
  const Bad bad[] = {
      {spec(1, v1::RAID_5, {0, 0, 1}, {2}), "data port 0 is given twice"},
      {spec(1, v1::RAID_5, {0, 1, 2}, {2}), "port 2 is given as a data port and as a parity"},
      {spec(1, v1::RAID_5, {0}, {2}), "data"},
      {spec(1, v1::RAID_5, {0, 1, 3}, {2}, 3000), "3000"},
      {spec(1, v1::RAID_6, {0, 1, 3}, {2}), "parity"},
      {spec(16, v1::RAID_5, {0, 1, 3}, {2}),
       "group 16: the board's stripe group table has "
       "entries 0 to 15"},
      {spec(1, v1::RAID_LEVEL_UNSPECIFIED, {0, 1, 3}, {2}), "raid"},
  };
  for (const auto& b : bad) {
    const grpc::Status status = update(b.spec);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << b.says;
    EXPECT_THAT(status.error_message(), HasSubstr(b.says));
    const grpc::Status created = create(b.spec);
    EXPECT_FALSE(created.ok()) << b.says;
  }
  EXPECT_EQ(entry(1), before);
  EXPECT_EQ(stack_->bus().writes.load(), writes);
}

TEST_F(StripeServiceTest, DryRunWritesNothing) {
  v1::GroupResponse checked;
  ASSERT_OK(create(spec(2, v1::RAID_6, {0, 1}, {2, 3}), &checked, true));
  EXPECT_FALSE(checked.changed());
  EXPECT_EQ(stack_->bus().writes.load(), 0u);
  EXPECT_EQ(list().groups_size(), 0);

  ASSERT_OK(create(spec(2, v1::RAID_5, {0, 1, 2}, {3})));
  const auto before = entry(2);
  const uint64_t writes = stack_->bus().writes.load();
  ASSERT_OK(update(spec(2, v1::RAID_6, {0, 1}, {2, 3}, 8192), false, true));
  EXPECT_EQ(entry(2), before);
  EXPECT_EQ(stack_->bus().writes.load(), writes);
  v1::DeleteGroupRequest request;
  request.set_group(2);
  request.set_validate_only(true);
  v1::DeleteGroupResponse response;
  grpc::ClientContext context;
  ASSERT_OK(admin_->DeleteGroup(&context, request, &response));
  EXPECT_EQ(entry(2), before);
}

TEST_F(StripeServiceTest, UpdateAndDeleteChangeTheEntry) {
  ASSERT_OK(create(spec(4, v1::RAID_5, {0, 1, 2}, {3})));
  ASSERT_OK(update(spec(4, v1::RAID_6, {0, 1}, {2, 3}, 8192)));
  auto words = entry(4);
  EXPECT_EQ(s::kGroupTableRaidLevel.get(words), 6u);
  EXPECT_EQ(s::kGroupTableUnitLog2.get(words), 13u);
  EXPECT_EQ(s::kGroupTableParityMembersLo.get(words), 0b1100u);
  const grpc::Status missing = update(spec(5, v1::RAID_5, {0, 1, 2}, {3}));
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  // Not there is what matters, not the ports an update of it leaves out.
  EXPECT_EQ(update(spec(5, v1::RAID_5, {}, {}, 8192)).error_code(), grpc::StatusCode::NOT_FOUND);

  ASSERT_OK(remove(4));
  EXPECT_EQ(entry(4), std::vector<uint32_t>(s::kGroupTable.words(), 0));
  EXPECT_EQ(stack_->device().read(s::kConfigEnable), 0u);
  EXPECT_EQ(remove(4).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(StripeServiceTest, GroupsSurviveARestartAndABoardReset) {
  ASSERT_OK(create(spec(0, v1::RAID_5, {0, 1, 2}, {3})));
  ASSERT_OK(create(spec(7, v1::RAID_4, {4, 5}, {0}, 1 << 20)));
  const auto before0 = entry(0);
  const auto before7 = entry(7);
  restart();
  EXPECT_EQ(list().groups_size(), 2);
  EXPECT_EQ(entry(0), before0);
  const uint32_t generation = stack_->device().reset_board();
  EXPECT_EQ(entry(0), std::vector<uint32_t>(s::kGroupTable.words(), 0));  // the reset cleared it
  stack_->reconciler().reset_board("test", [&] { return generation; });   // done above
  EXPECT_EQ(entry(0), before0);
  EXPECT_EQ(entry(7), before7);
  EXPECT_EQ(list().groups(1).board(), "in force");
}

// Issue 27 item 3: the durability is the group's (the entry's durability field, the stored
// state), kept across a restart and a board reset; changing it alone keeps the file; a value
// the API does not know is refused, naming the field and the values it takes, and writes
// nothing.
TEST_F(StripeServiceTest, DurabilityRoundTripsAndAnUnknownValueIsRefused) {
  auto fsync = spec(6, v1::RAID_6, {0, 1, 2}, {3, 4});
  fsync.set_durability(v1::DURABILITY_FSYNC);
  v1::GroupResponse created;
  ASSERT_OK(create(fsync, &created));
  EXPECT_EQ(created.group().spec().durability(), v1::DURABILITY_FSYNC);
  EXPECT_EQ(s::kGroupTableDurability.get(entry(6)), 1u);
  ASSERT_OK(create(spec(1, v1::RAID_5, {0, 1, 2}, {3})));  // none unless asked
  EXPECT_EQ(list().groups(0).spec().durability(), v1::DURABILITY_NONE);
  const std::string data = random_bytes(5 * 3 * 4096 + 11, 6);
  if (data_path()) ASSERT_OK(write(6, 0, data));

  restart();
  EXPECT_EQ(list().groups(1).spec().durability(), v1::DURABILITY_FSYNC);
  const uint32_t generation = stack_->device().reset_board();
  stack_->reconciler().reset_board("test", [&] { return generation; });
  EXPECT_EQ(s::kGroupTableDurability.get(entry(6)), 1u);

  auto none = fsync;
  none.set_durability(v1::DURABILITY_NONE);
  ASSERT_OK(update(none));  // no --discard-file: no data moves
  EXPECT_EQ(s::kGroupTableDurability.get(entry(6)), 0u);
  if (data_path()) {
    std::string back;
    ASSERT_OK(read(6, &back));
    EXPECT_TRUE(back == data);
  }

  const auto before = entry(6);
  const uint64_t writes = stack_->bus().writes.load();
  auto unknown = spec(7, v1::RAID_5, {0, 1, 2}, {3});
  unknown.set_durability(static_cast<v1::Durability>(7));
  const grpc::Status refused = create(unknown);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("durability: 7 is not one of DURABILITY_NONE (1), DURABILITY_FSYNC (2)"));
  unknown.set_group(6);
  EXPECT_EQ(update(unknown).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(list().groups_size(), 2);
  EXPECT_EQ(entry(6), before);
  EXPECT_EQ(stack_->bus().writes.load(), writes);
}

// An UpdateGroup that names no durability (DURABILITY_UNSPECIFIED: asnctl stripe update
// without --durability, or a client that fills only the layout) keeps the group's, as a
// layout change keeps nothing else the caller did not ask for; it used to reset it to none.
TEST_F(StripeServiceTest, UpdateWithoutDurabilityKeepsTheGroups) {
  auto fsync = spec(2, v1::RAID_5, {0, 1, 2}, {3});
  fsync.set_durability(v1::DURABILITY_FSYNC);
  ASSERT_OK(create(fsync));
  auto same = fsync;
  same.clear_durability();  // the same layout, durability not named: nothing to change
  v1::GroupResponse unchanged;
  ASSERT_OK(update(same, false, false, &unchanged));
  EXPECT_FALSE(unchanged.changed());
  EXPECT_EQ(unchanged.group().spec().durability(), v1::DURABILITY_FSYNC);
  EXPECT_EQ(s::kGroupTableDurability.get(entry(2)), 1u);

  auto wider = spec(2, v1::RAID_5, {0, 1, 2, 4}, {3});  // a new layout, durability not named
  v1::GroupResponse changed;
  ASSERT_OK(update(wider, false, false, &changed));
  EXPECT_TRUE(changed.changed());
  EXPECT_EQ(changed.group().spec().durability(), v1::DURABILITY_FSYNC);
  EXPECT_EQ(list().groups(0).spec().durability(), v1::DURABILITY_FSYNC);
  EXPECT_EQ(s::kGroupTableDurability.get(entry(2)), 1u);

  auto none = wider;
  none.set_durability(v1::DURABILITY_NONE);  // named: taken
  ASSERT_OK(update(none));
  EXPECT_EQ(s::kGroupTableDurability.get(entry(2)), 0u);
}

TEST_F(StripeServiceTest, AReaderMayNotChangeGroups) {
  v1::CreateGroupRequest request;
  *request.mutable_spec() = spec(0, v1::RAID_5, {0, 1, 2}, {3});
  v1::GroupResponse response;
  grpc::ClientContext context;
  const grpc::Status status = reader_->CreateGroup(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::ClientContext write_context;
  auto stream = reader_->Write(&write_context);
  stream->WritesDone();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(StripeServiceTest, FailMemberIsBoundedByTheParityMembers) {
  ASSERT_OK(create(spec(2, v1::RAID_5, {0, 1, 2}, {3})));
  EXPECT_EQ(fail(2, 4).error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // not a member
  ASSERT_OK(fail(2, 1));
  EXPECT_EQ(s::kGroupTableFailedMembersLo.get(entry(2)), 0b10u);
  ASSERT_OK(fail(2, 1));  // again: already marked
  const grpc::Status second = fail(2, 3);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(second.error_message(), HasSubstr("tolerates 1"));
  EXPECT_EQ(s::kGroupTableFailedMembersLo.get(entry(2)), 0b10u);
  restart();  // the mark is desired state
  EXPECT_EQ(s::kGroupTableFailedMembersLo.get(entry(2)), 0b10u);
  EXPECT_THAT(list().groups(0).failed_ports(), ::testing::ElementsAre(1));
}

TEST_F(StripeServiceTest, WithoutADataPathTheDataCallsSayWhy) {
  stack_->bus().no_stripe_data_port = true;  // a real board
  ASSERT_OK(create(spec(2, v1::RAID_5, {0, 1, 2}, {3})));
  std::string out;
  const grpc::Status r = read(2, &out);
  EXPECT_EQ(r.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(r.error_message(), HasSubstr("arrives on the switch's ports from the clients"));
  EXPECT_EQ(write(2, 0, "abc").error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_OK(fail(2, 1));
  EXPECT_EQ(rebuild(2, 1).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

// ---- the data path --------------------------------------------------------------------------

TEST_F(StripeServiceTest, FilesRoundTripForEveryLayout) {
  ASSERT_TRUE(data_path());
  ASSERT_OK(create(spec(0, v1::RAID_4, {0, 1, 2}, {3})));
  ASSERT_OK(create(spec(1, v1::RAID_5, {0, 1, 2}, {3}, 8192)));
  ASSERT_OK(create(spec(2, v1::RAID_6, {0, 1}, {2, 3})));
  uint32_t seed = 1;
  for (uint32_t group : {0u, 1u, 2u}) {
    for (size_t size : {size_t{0}, size_t{1}, size_t{4096 * 3}, size_t{100001}}) {
      const std::string data = random_bytes(size, seed++);
      v1::WriteReply last;
      ASSERT_OK(write(group, 0, data, &last, 7777));  // chunks across stripe boundaries
      EXPECT_TRUE(last.done());
      EXPECT_EQ(last.acked(), size);
      std::string back;
      ASSERT_OK(read(group, &back, 0, size));
      EXPECT_EQ(back, data) << "group " << group << ", " << size << " bytes";
    }
  }
  // A part in the middle, rewritten, and read back.
  const std::string patch = random_bytes(5000, 99);
  ASSERT_OK(write(1, 3000, patch));
  std::string back;
  ASSERT_OK(read(1, &back, 3000, 5000));
  EXPECT_EQ(back, patch);
}

TEST_F(StripeServiceTest, DegradedReadsRebuildAndTheLimitOfFailures) {
  ASSERT_TRUE(data_path());
  ASSERT_OK(create(spec(5, v1::RAID_5, {0, 1, 2}, {3})));
  const std::string data = random_bytes(200000, 5);
  ASSERT_OK(write(5, 0, data));
  ASSERT_OK(fail(5, 1));
  std::string back;
  ASSERT_OK(read(5, &back));
  EXPECT_EQ(back, data);
  int messages = 0;
  ASSERT_OK(rebuild(5, 1, &messages));
  EXPECT_GE(messages, 1);
  EXPECT_EQ(s::kGroupTableFailedMembersLo.get(entry(5)), 0u);
  EXPECT_EQ(rebuild(5, 1).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_OK(read(5, &back));
  EXPECT_EQ(back, data);

  // More failed members than RAID 5 tolerates, marked behind asnd's back: the read is
  // refused, not answered with garbage.
  auto words = entry(5);
  s::kGroupTableFailedMembersLo.put(words, 0b11);
  stack_->device().write_entries(s::kGroupTable, 5, words);
  const grpc::Status refused = read(5, &back);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(StripeServiceTest, ALayoutChangeOfAFileIsRefusedAndDeletedGroupsHaveNoFile) {
  ASSERT_TRUE(data_path());
  ASSERT_OK(create(spec(6, v1::RAID_5, {0, 1, 2}, {3})));
  ASSERT_OK(write(6, 0, random_bytes(10000, 6)));
  const auto before = entry(6);
  const grpc::Status refused = update(spec(6, v1::RAID_4, {0, 1, 2}, {3}));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("holds a file of 10000 bytes"));
  EXPECT_EQ(entry(6), before);
  ASSERT_OK(update(spec(6, v1::RAID_4, {0, 1, 2}, {3}), true));
  EXPECT_EQ(list().groups(0).file_size(), 0);

  ASSERT_OK(remove(6));
  const grpc::Status gone = write(6, 0, "late");
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(gone.error_message(), HasSubstr("stripe group 6 does not exist"));
}

}  // namespace
}  // namespace asn

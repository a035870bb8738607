// The fabric's lock map (asn/fabric_spec/lock_map.hpp): the slot of a file id, the map read
// from the fabric file with each check naming its field, epochs numbered against what etcd
// holds (kept for an unchanged owner, one new epoch per apply for a move, never lower), and
// the document etcd holds read back.
#include "asn/fabric_spec/lock_map.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/schedule/error.hpp"

namespace asn::fabric {
namespace {

using schedule::PlanError;
using ::testing::HasSubstr;

std::string fabric_with_locks(const std::string& owners) {
  return "fabric: t\n"
         "topology: {terminals: 64, k: 4}\n"
         "switches:\n"
         "  - {name: a, router: 0, profile: emulated-64port, endpoint: 'unix:/a.sock'}\n"
         "  - {name: b, router: 1, profile: emulated-64port, endpoint: '10.0.0.2:7411'}\n"
         "locks:\n"
         "  owners: " +
         owners + "\n";
}

schedule::Problem problem_of(const std::string& text) {
  try {
    parse_fabric_spec(text, "f.yaml");
  } catch (const PlanError& e) {
    return e.problems().front();
  }
  ADD_FAILURE() << "parsed:\n" << text;
  return {};
}

TEST(LockMap, SlotIsFnv1aOfTheFileIdModuloTheSlots) {
  // FNV-1a 64 of "" is its offset basis, 0xcbf29ce484222325; of "a", 0xaf63dc4c8601ec8c.
  EXPECT_EQ(lock_slot(""), 0xcbf29ce484222325ULL % kLockSlots);
  EXPECT_EQ(lock_slot("a"), 0xaf63dc4c8601ec8cULL % kLockSlots);
  // Bytes, not text: a NUL counts.
  EXPECT_NE(lock_slot(std::string("a\0", 2)), lock_slot("a"));
}

TEST(LockMap, ReadFromTheFabricFileInSlotOrderWithEndpoints) {
  const FabricSpec spec = parse_fabric_spec(
      fabric_with_locks("[{switch: b, slots: 2048-4095}, {switch: a, slots: 0-2047}]"));
  ASSERT_EQ(spec.locks().assignments_size(), 2);
  const LockAssignment& first = spec.locks().assignments(0);
  EXPECT_EQ(first.owner(), "a");
  EXPECT_EQ(first.first_slot(), 0u);
  EXPECT_EQ(first.last_slot(), 2047u);
  EXPECT_EQ(first.endpoint(), "unix:/a.sock");
  EXPECT_EQ(spec.locks().assignments(1).endpoint(), "10.0.0.2:7411");
  EXPECT_EQ(spec.locks().fabric(), "t");
  EXPECT_EQ(lock_owner(spec.locks(), 4095)->owner(), "b");
  EXPECT_EQ(lock_owner(spec.locks(), 7), &first);
}

TEST(LockMap, OneSlotAndGapsAreAllowed) {
  const FabricSpec spec = parse_fabric_spec(fabric_with_locks("[{switch: a, slots: 7}]"));
  EXPECT_EQ(lock_owner(spec.locks(), 7)->owner(), "a");
  EXPECT_EQ(lock_owner(spec.locks(), 8), nullptr);  // no owner: Lock is refused, no-owner
}

TEST(LockMapErrors, OverlappingRangesNameBoth) {
  const schedule::Problem p =
      problem_of(fabric_with_locks("[{switch: a, slots: 0-2047}, {switch: b, slots: 2000-4095}]"));
  EXPECT_EQ(p.field, "locks.owners[1].slots");
  EXPECT_EQ(p.mark.line, 7u);
  EXPECT_THAT(p.message, HasSubstr("slots 2000-4095 (switch 'b') overlap slots 0-2047 (switch "
                                   "'a', locks.owners[0])"));
}

TEST(LockMapErrors, UnknownSwitch) {
  const schedule::Problem p = problem_of(fabric_with_locks("[{switch: c, slots: 0-4095}]"));
  EXPECT_EQ(p.field, "locks.owners[0].switch");
  EXPECT_THAT(p.message, HasSubstr("switch 'c' is not a switch of this fabric"));
}

TEST(LockMapErrors, SlotsOutOfRangeOrNotARange) {
  schedule::Problem p = problem_of(fabric_with_locks("[{switch: a, slots: 0-4096}]"));
  EXPECT_EQ(p.field, "locks.owners[0].slots");
  EXPECT_THAT(p.message, HasSubstr("0 <= FIRST <= LAST <= 4095"));
  p = problem_of(fabric_with_locks("[{switch: a, slots: 9-3}]"));
  EXPECT_EQ(p.field, "locks.owners[0].slots");
  p = problem_of(fabric_with_locks("[{switch: a, slots: all}]"));
  EXPECT_THAT(p.message, HasSubstr("'all' is no slot range"));
  p = problem_of(fabric_with_locks("[{switch: a}]"));
  EXPECT_THAT(p.message, HasSubstr("needs 'slots:'"));
}

LockMap map_of(std::initializer_list<std::tuple<uint32_t, uint32_t, std::string>> owners) {
  LockMap map;
  map.set_fabric("t");
  for (const auto& [first, last, owner] : owners) {
    LockAssignment& a = *map.add_assignments();
    a.set_first_slot(first);
    a.set_last_slot(last);
    a.set_owner(owner);
  }
  return map;
}

TEST(LockMapEpochs, FirstApplyIsEpochOne) {
  LockMap map = map_of({{0, 2047, "a"}, {2048, 4095, "b"}});
  number_lock_map(map, nullptr);
  EXPECT_EQ(map.epoch(), 1u);
  EXPECT_EQ(map.assignments(0).epoch(), 1u);
  EXPECT_EQ(map.assignments(1).epoch(), 1u);
}

TEST(LockMapEpochs, AnUnchangedOwnerKeepsItsEpochAMoveGetsANewOne) {
  LockMap stored = map_of({{0, 2047, "a"}, {2048, 4095, "b"}});
  number_lock_map(stored, nullptr);
  LockMap same = map_of({{0, 2047, "a"}, {2048, 4095, "b"}});
  number_lock_map(same, &stored);
  EXPECT_EQ(same.SerializeAsString(), stored.SerializeAsString());

  // Slots 1024-2047 move from a to b: only b's widened range gets epoch 2.
  LockMap moved = map_of({{0, 1023, "a"}, {1024, 4095, "b"}});
  number_lock_map(moved, &stored);
  EXPECT_EQ(moved.epoch(), 2u);
  EXPECT_EQ(moved.assignments(0).epoch(), 1u);
  EXPECT_EQ(moved.assignments(1).epoch(), 2u);
}

TEST(LockMapEpochs, EpochsNeverGoDown) {
  LockMap stored = map_of({{0, 4095, "a"}});
  stored.set_epoch(9);
  stored.mutable_assignments(0)->set_epoch(9);
  LockMap empty = map_of({});
  number_lock_map(empty, &stored);
  EXPECT_EQ(empty.epoch(), 9u);
  LockMap back = map_of({{0, 4095, "b"}});
  number_lock_map(back, &empty);
  EXPECT_EQ(back.assignments(0).epoch(), 10u);
}

TEST(LockMapDocuments, RoundTripAndDamage) {
  FabricSpec spec = parse_fabric_spec(fabric_with_locks("[{switch: a, slots: 0-4095}]"));
  number_lock_map(*spec.mutable_locks(), nullptr);
  const auto documents = etcd_documents(spec, "/asn");
  ASSERT_TRUE(documents.contains(lock_map_key("/asn", "t")));
  // The fabric document holds no epochs: they are the lock map key's.
  EXPECT_THAT(documents.at(fabric_key("/asn", "t")), ::testing::Not(HasSubstr("epoch")));
  const LockMap back = parse_lock_map_document(documents.at(lock_map_key("/asn", "t")));
  EXPECT_EQ(back.SerializeAsString(), spec.locks().SerializeAsString());

  EXPECT_THROW(parse_lock_map_document("{\"assignments\": [{\"first_slot\": 5, \"last_slot\": "
                                       "4096, \"owner\": \"a\"}]}"),
               std::invalid_argument);
  EXPECT_THROW(parse_lock_map_document("{\"assignments\": [{\"first_slot\": 0, \"last_slot\": 9, "
                                       "\"owner\": \"a\"}, {\"first_slot\": 5, \"last_slot\": "
                                       "20, \"owner\": \"b\"}]}"),
               std::invalid_argument);
  EXPECT_THROW(
      parse_lock_map_document("{\"assignments\": [{\"first_slot\": 0, \"last_slot\": 9}]}"),
      std::invalid_argument);
  EXPECT_THROW(parse_lock_map_document("{\"nonsense\": 1}"), std::invalid_argument);
}

}  // namespace
}  // namespace asn::fabric

// Block versions and descriptor rings, end to end on a register map that uses them
// (make_fixture_map.py): the generator's output, the emulated board that implements a
// pinned older version, and the Device that accepts a range of versions and names what a
// board's version lacks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "bus/emulated_bus.hpp"
#include "device/device.hpp"
#include "error.hpp"
#include "patched_bus.hpp"
#include "support.hpp"

namespace asn::regmap {
const RegisterMap& fixture_register_map();
}  // namespace asn::regmap

namespace asn {
namespace {

using ::testing::HasSubstr;

const regmap::RegisterMap& fixture() { return regmap::fixture_register_map(); }

// The fixture's route block is one version past the real map's, and still drives the real
// one (make_fixture_map.py).
constexpr uint16_t kOld = regs::route::kVersion;
constexpr uint16_t kNew = regs::route::kVersion + 1;

const regmap::RegisterDesc& register_of(uint16_t type, std::string_view name) {
  for (const auto& reg : fixture().block(type)->registers) {
    if (reg.name == name) return reg;
  }
  throw std::runtime_error("no register " + std::string(name));
}

regmap::RegRef ref_of(uint16_t type, std::string_view name) {
  const auto& reg = register_of(type, name);
  return {type, reg.offset, reg.width_bits, reg.count, reg.since};
}

class VersionsTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmulatedBus> open(const std::string& profile) {
    EmulatedBusOptions options;
    options.board_name = test::unique_name("v");
    options.profile = profile;
    options.shm_dir = dir_.path();
    options.run_clock = false;
    options.map = &fixture();
    return std::make_unique<EmulatedBus>(options);
  }
  test::TempDir dir_;
};

TEST_F(VersionsTest, TheGeneratorDescribesVersionsAndRings) {
  const auto* route = fixture().block(regs::route::kType);
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(route->version, kNew);
  EXPECT_EQ(route->min_version, kOld);
  EXPECT_TRUE(route->supports(kOld));
  EXPECT_FALSE(route->supports(kNew + 1));
  EXPECT_EQ(register_of(regs::route::kType, "hop_limit").since, kNew);
  const auto* stripe = fixture().block(regs::stripe::kType);
  ASSERT_EQ(stripe->rings.size(), 1u);
  const auto& ring = stripe->rings[0];
  EXPECT_EQ(ring.name, "completion");
  EXPECT_EQ(ring.direction, regmap::RingDirection::kFromBoard);
  EXPECT_EQ(ring.producer_register, "completion_producer");
  EXPECT_EQ(ring.consumer_register, "completion_consumer");
  EXPECT_EQ(ring.irq_field, "stripe_completion");
  EXPECT_EQ(ring.since, regs::stripe::kVersion + 1);
  const auto* old = fixture().board("netfpga-1g-v1");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->version_of(*route), kOld);
  EXPECT_EQ(fixture().board("netfpga-1g")->version_of(*route), kNew);
  // The C header of the fixture compiles as strict C.
  test::TempDir dir;
  test::write_file(dir.file("c.c"), "#include \"" FIXTURE_C_HEADER
                                    "\"\nint main(void) { return "
                                    "ASN_STRIPE_COMPLETION_ENTRY_BYTES == 16U ? 0 : 1; }\n");
  auto r = test::run_command(
      {"cc", "-std=c99", "-pedantic", "-Wall", "-Werror", "-o", dir.file("c"), dir.file("c.c")});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(test::run_command({dir.file("c")}).exit_code, 0);
  // Its typed references, rings included, compile and say what the YAML says (checked in a
  // program of their own: they share names with the real map's references).
  test::write_file(
      dir.file("r.cc"),
      "#include \"" FIXTURE_CPP_HEADER
      "\"\nnamespace r = asn::regs::stripe;\n"
      "static_assert(r::kCompletion.direction == "
      "asn::regmap::RingDirection::kFromBoard);\n"
      "static_assert(r::kCompletion.window.entry_bytes == 16);\n"
      "static_assert(r::kCompletion.window.since == " +
          std::to_string(regs::stripe::kVersion + 1) +
          ");\n"
          "static_assert(r::kCompletion.producer.reg.offset == " +
          std::to_string(register_of(regs::stripe::kType, "completion_producer").offset) +
          ");\n"
          "static_assert(r::kCompletionTokenHi.word == 3);\n"
          "static_assert(asn::regs::route::kHopLimit.since == " +
          std::to_string(kNew) +
          ");\n"
          "int main() { return 0; }\n");
  auto cpp = test::run_command({"c++", "-std=c++20", "-Wall", "-Werror", "-fsyntax-only",
                                "-I" REGMAP_INCLUDE_DIR, dir.file("r.cc")});
  EXPECT_EQ(cpp.exit_code, 0) << cpp.all();
}

// The newer board has the v2 register and ring; the pinned one reports v1 and has neither
// (a bus error, as on old firmware).
TEST_F(VersionsTest, TheBoardImplementsItsVersion) {
  auto v2 = open("netfpga-1g");
  auto v1 = open("netfpga-1g-v1");
  const auto* route2 = v2->board().find_block(regs::route::kType);
  const auto* route1 = v1->board().find_block(regs::route::kType);
  ASSERT_TRUE(route2 && route1);
  EXPECT_EQ(v2->read32(route2->base + regs::route::kBlockVersion.offset), kNew);
  EXPECT_EQ(v1->read32(route1->base + regs::route::kBlockVersion.offset), kOld);
  const uint32_t hop = register_of(regs::route::kType, "hop_limit").offset;
  EXPECT_EQ(v2->read32(route2->base + hop), 8u);
  EXPECT_THROW(v1->read32(route1->base + hop), Error);

  const auto& ring = fixture().block(regs::stripe::kType)->rings[0];
  const uint32_t entry = v2->board().find_block(regs::stripe::kType)->base + ring.offset + 16 * 3;
  EXPECT_EQ(v2->read32(entry), 0u);
  v2->write32(entry, 0x1234);  // the board fills this ring: software's write is ignored
  EXPECT_EQ(v2->read32(entry), 0u);
  EXPECT_EQ(v2->read32(regs::id::kRoWriteCount.offset), 1u);
  const uint32_t past = v2->board().find_block(regs::stripe::kType)->base + ring.offset + 16 * 256;
  EXPECT_THROW(v2->read32(past), Error);  // stripe_ring_entries: 256
  EXPECT_THROW(v1->read32(v1->board().find_block(regs::stripe::kType)->base + ring.offset), Error);
}

TEST_F(VersionsTest, TheDeviceDrivesEveryVersionItSupports) {
  auto v1_bus = open("netfpga-1g-v1");
  auto v2_bus = open("netfpga-1g");
  Device v1(*v1_bus, fixture());
  Device v2(*v2_bus, fixture());
  EXPECT_EQ(v1.layout()->block(regs::route::kType).version, kOld);
  EXPECT_EQ(v2.layout()->block(regs::route::kType).version, kNew);

  const regmap::RegRef hop = ref_of(regs::route::kType, "hop_limit");
  EXPECT_EQ(v2.read(hop), 8u);
  try {
    v1.read(hop);
    FAIL() << "a v2 register was read on a v1 block";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    EXPECT_THAT(e.what(), HasSubstr("needs route block version " + std::to_string(kNew) +
                                    "; this board's is version " + std::to_string(kOld)));
  }
  EXPECT_EQ(v2.resolve("route.hop_limit.hops").width_bits, 8);
  try {
    v1.resolve("route.hop_limit");
    FAIL() << "a v2 register resolved on a v1 block";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_THAT(e.what(), HasSubstr("it needs route version " + std::to_string(kNew) +
                                    " and this board's is version " + std::to_string(kOld)));
  }

  // Ring entries by name, read-only to software, in the dump of the v2 board only.
  Target token = v2.resolve("stripe.completion[7].token_hi");
  EXPECT_EQ(token.access, regmap::Access::kRO);
  EXPECT_THAT(token.read_only_hint, HasSubstr("a ring the board fills"));
  EXPECT_EQ(v2.read(token), 0u);
  EXPECT_THROW(v2.resolve("stripe.completion[256].status"), Error);
  EXPECT_THROW(v1.resolve("stripe.completion[0].status"), Error);
  auto count_ring = [](const std::vector<Target>& targets) {
    return std::count_if(targets.begin(), targets.end(),
                         [](const Target& t) { return t.name.starts_with("stripe.completion["); });
  };
  EXPECT_EQ(count_ring(v2.enumerate("stripe", true)), 256 * 4);
  EXPECT_EQ(count_ring(v1.enumerate("stripe", true)), 0);

  // A version outside what this map supports is refused by the walk, naming the range.
  test::PatchedBus patched(*v2_bus);
  patched.patches[v2.layout()->block(regs::route::kType).base + regs::route::kBlockVersion.offset] =
      kNew + 1;
  try {
    Device future(patched, fixture());
    FAIL() << "a route version past the map's was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("has version " + std::to_string(kNew + 1) + "; this asnd supports " +
                          "versions " + std::to_string(kOld) + " to " + std::to_string(kNew)));
  }
}

}  // namespace
}  // namespace asn

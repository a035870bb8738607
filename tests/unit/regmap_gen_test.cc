// The register map generator: deterministic output, a C header that is plain C and agrees
// with the C++ descriptors, a committed docs/registers.md that matches, and clear refusals
// of a broken map.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>

#include "asn/regmap/regs.hpp"
#include "regmap_c_check.h"
#include "support.hpp"

namespace {

using asn::test::read_file;
using asn::test::run_command;
using asn::test::TempDir;
using asn::test::write_file;

asn::test::CommandResult generate(const std::string& yaml, const std::string& dir) {
  return run_command({ASN_PYTHON, REGMAP_GEN, yaml, "--c-header", dir + "/asn_regs.h",
                      "--cpp-header", dir + "/regs.hpp", "--cpp-desc", dir + "/desc.cc", "--docs",
                      dir + "/registers.md"});
}

TEST(RegmapGenerator, OutputIsDeterministic) {
  TempDir a, b;
  ASSERT_EQ(generate(REGMAP_YAML, a.path()).exit_code, 0);
  ASSERT_EQ(generate(REGMAP_YAML, b.path()).exit_code, 0);
  for (const char* file : {"asn_regs.h", "regs.hpp", "desc.cc", "registers.md"}) {
    EXPECT_EQ(read_file(a.file(file)), read_file(b.file(file))) << file;
  }
}

TEST(RegmapGenerator, CommittedDocsMatchTheMap) {
  EXPECT_EQ(read_file(REGMAP_DOCS_GENERATED), read_file(REGMAP_DOCS_COMMITTED))
      << "docs/registers.md is stale: run `cmake --build build --target regmap-docs`";
}

TEST(RegmapGenerator, HeaderCompilesAsStrictC) {
  TempDir dir;
  write_file(dir.file("check.c"), "#include \"asn_regs.h\"\nint main(void) { return 0; }\n");
  auto r =
      run_command({"cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                   std::string("-I") + REGMAP_GENERATED_DIR, dir.file("check.c")});
  EXPECT_EQ(r.exit_code, 0) << r.all();
}

TEST(RegmapGenerator, CHeaderAgreesWithCppDescriptors) {
  namespace regs = asn::regs;
  EXPECT_EQ(regmap_c_magic(), regs::kMagic);
  EXPECT_EQ(regmap_c_id_scratch(), regs::id::kScratch.offset);
  EXPECT_EQ(regmap_c_port_vc_occupancy(3), regs::port::kVcOccupancy.at(3).offset);
  EXPECT_EQ(regmap_c_tdm_slot_table_active(), regs::tdm::kSlotTable.active_offset);
  EXPECT_EQ(regmap_c_cap_ports_vcs(0x00400206u), 2u);
  EXPECT_EQ(regmap_c_prep_policy(2), regs::tdm::kConfigPolicy.put(0, 2));
  const auto& blocks = asn::regmap::register_map().blocks;
  ASSERT_EQ(blocks.size(), 6u);
  for (unsigned i = 0; i < blocks.size(); ++i) EXPECT_EQ(regmap_c_block_size(i), blocks[i].size);
}

TEST(RegmapGenerator, DescriptorsFollowTheConventions) {
  for (const auto& block : asn::regmap::register_map().blocks) {
    ASSERT_GE(block.registers.size(), 3u) << block.name;
    EXPECT_EQ(block.registers[0].name, "block_type");
    EXPECT_EQ(block.registers[1].name, "block_version");
    EXPECT_EQ(block.registers[2].name, "block_next");
    EXPECT_EQ(block.size & (block.size - 1), 0u) << block.name;
    for (const auto& table : block.tables) {
      for (const auto& board : asn::regmap::register_map().boards) {
        EXPECT_LE(board.ports.size(), table.max_entries);
      }
    }
  }
}

// A broken map is refused with the place named, and no output is written.
struct BrokenMap {
  const char* what;
  const char* from;
  const char* to;
  const char* message;
};

class RegmapGeneratorRefuses : public ::testing::TestWithParam<BrokenMap> {};

TEST_P(RegmapGeneratorRefuses, NamesTheProblem) {
  const BrokenMap& broken = GetParam();
  std::string yaml = read_file(REGMAP_YAML);
  size_t at = yaml.find(broken.from);
  ASSERT_NE(at, std::string::npos) << broken.from;
  yaml.replace(at, std::string(broken.from).size(), broken.to);
  TempDir dir;
  write_file(dir.file("map.yaml"), yaml);
  auto r = generate(dir.file("map.yaml"), dir.path());
  EXPECT_EQ(r.exit_code, 1) << broken.what;
  EXPECT_NE(r.err.find(broken.message), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("asn_regs.h")));
}

INSTANTIATE_TEST_SUITE_P(
    BrokenMaps, RegmapGeneratorRefuses,
    ::testing::Values(
        BrokenMap{"overlap", "offset: 0x2c\n", "offset: 0x28\n",
                  "block id: register scratch at 0x28 overlaps register cap_lock_entries"},
        BrokenMap{"access", "access: W1C", "access: RWX",
                  "block id register irq_status: access 'RWX' is not one of RO, RW, WO, W1C"},
        BrokenMap{"field overlap", "{name: vcs_per_port, bits: \"11:8\"",
                  "{name: vcs_per_port, bits: \"8:7\"",
                  "block id register cap_ports field vcs_per_port: overlaps another field"},
        BrokenMap{"reset too wide", "{name: packets, bits: \"15:0\", reset: 8}",
                  "{name: packets, bits: \"15:0\", reset: 70000}",
                  "field packets: reset value 70000 does not fit 16 bits"},
        BrokenMap{"unaligned", "offset: 0x4c", "offset: 0x4e",
                  "register clock_hz: offset 0x4e is not 32-bit aligned"},
        BrokenMap{"table too small", "max_entries: 4096\n", "max_entries: 8\n",
                  "table dest_table: board netfpga-1g needs 16 entries; the window holds 8"},
        BrokenMap{"unknown key", "entries_from: route_entries", "entries_form: route_entries",
                  "unknown key 'entries_form'"}),
    [](const auto& info) {
      std::string name = info.param.what;
      for (auto& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

}  // namespace

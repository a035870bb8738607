// The register map generator: deterministic output, a C header that is plain C and agrees
// with the C++ descriptors, a committed docs/registers.md that matches, and clear refusals
// of a broken map.
#include <gtest/gtest.h>

#include <algorithm>
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
  for (const auto& cap : asn::regmap::register_map().capabilities) {
    EXPECT_EQ(regmap_c_cap_offset(cap.index), cap.offset) << cap.name;
  }
  EXPECT_EQ(regmap_c_cap_tdm_slots_index(), asn::regmap::index_of(asn::regmap::Cap::kTdmSlots));
  for (unsigned i : {0u, 3u, 4u, 63u}) {
    EXPECT_EQ(regmap_c_slot_out_word(i), regs::tdm::kSlotTableOut.at(i).word) << i;
    EXPECT_EQ(regmap_c_slot_out_shift(i), regs::tdm::kSlotTableOut.at(i).lsb) << i;
  }
  EXPECT_EQ(regmap_c_prep_threshold(300), regs::port::kAldfbThresholdPackets.put(0, 300));
  const auto& blocks = asn::regmap::register_map().blocks;
  ASSERT_EQ(blocks.size(), 6u);
  for (unsigned i = 0; i < blocks.size(); ++i) EXPECT_EQ(regmap_c_block_size(i), blocks[i].size);
  // Named field values: one definition, both languages.
  EXPECT_EQ(regmap_c_lock_op_raise_token_floor(),
            static_cast<uint32_t>(regs::lock::RequestOp::kRaiseTokenFloor));
  EXPECT_EQ(regmap_c_lock_kind_end(), static_cast<uint32_t>(regs::lock::CompletionKind::kEnd));
}

TEST(RegmapGenerator, DescriptorsFollowTheConventions) {
  const auto& map = asn::regmap::register_map();
  for (const auto& block : map.blocks) {
    ASSERT_GE(block.registers.size(), 3u) << block.name;
    EXPECT_EQ(block.registers[0].name, "block_type");
    EXPECT_EQ(block.registers[1].name, "block_version");
    EXPECT_EQ(block.registers[2].name, "block_next");
    EXPECT_EQ(block.size & (block.size - 1), 0u) << block.name;
    for (const auto& table : block.tables) {
      for (const auto& board : map.boards) {
        EXPECT_LE(table.entries(board.capabilities), table.max_entries) << table.name;
      }
      EXPECT_EQ(table.double_buffered(), !table.bank_field.empty()) << table.name;
    }
  }
  // Every capability is an id.cap_<name> register at its indexed word, one field wide enough.
  const auto& id = map.blocks[0];
  for (const auto& cap : map.capabilities) {
    const auto reg = std::find_if(id.registers.begin(), id.registers.end(),
                                  [&](const auto& r) { return r.capability == cap.index; });
    ASSERT_NE(reg, id.registers.end()) << cap.name;
    EXPECT_EQ(reg->name, "cap_" + std::string(cap.name));
    EXPECT_EQ(reg->offset, cap.offset);
    EXPECT_EQ(reg->fields.size(), 1u);
  }
  for (const auto& board : map.boards) {
    EXPECT_EQ(board.capabilities.size(), map.capabilities.size()) << board.name;
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
        BrokenMap{"overlap", "offset: 0x2c\n", "offset: 0x18\n",
                  "block id: register scratch at 0x18 overlaps register cap_count"},
        BrokenMap{"access", "access: W1C", "access: RWX",
                  "block id register irq_status: access 'RWX' is not one of RO, RW, WO, W1C"},
        BrokenMap{"field overlap", "{name: route_commit, bits: \"2\"",
                  "{name: route_commit, bits: \"1\"",
                  "block id register irq_status field route_commit: overlaps another field"},
        BrokenMap{"reset too wide", "{name: packets, bits: \"15:0\", reset: 8}",
                  "{name: packets, bits: \"15:0\", reset: 70000}",
                  "field packets: reset value 70000 does not fit 16 bits"},
        BrokenMap{"unaligned", "offset: 0x48", "offset: 0x4a",
                  "register ro_write_count: offset 0x4a is not 32-bit aligned"},
        BrokenMap{"table too small", "max_entries: 4096\n", "max_entries: 8\n",
                  "table dest_table: board netfpga-1g needs 16 entries; the window holds 8"},
        BrokenMap{"unknown key", "entries_from: route_entries", "entries_form: route_entries",
                  "unknown key 'entries_form'"},
        BrokenMap{"unknown capability", "entries_from: route_entries", "entries_from: route_entrys",
                  "entries_from 'route_entrys' is not a capability"},
        BrokenMap{"capability without a value", "    tdm_slots: 64\n", "",
                  "board netfpga-1g: missing 'tdm_slots' (capability without a default)"},
        BrokenMap{"capability too large", "    vcs_per_port: 2\n", "    vcs_per_port: 9\n",
                  "board netfpga-1g: vcs_per_port = 9 is outside 0..8"},
        BrokenMap{"bank not named", "        bank: status.active_bank\n        swap: control.arm\n",
                  "        swap: control.arm\n",
                  "table timing: a double-buffered table needs active_offset, swap and bank"},
        BrokenMap{"bank not RO", "        bank: status.active_bank\n        swap: control.arm\n",
                  "        bank: config.enable\n        swap: control.arm\n",
                  "bank field 'config.enable' must be RO"},
        BrokenMap{"since past the version", "      - name: current_slot\n",
                  "      - name: current_slot\n        since: 3\n",
                  "register current_slot: since 3 is past the block's version 2"},
        BrokenMap{"value too wide", "list_file: 9, raise_token_floor: 10}",
                  "list_file: 9, raise_token_floor: 256}",
                  "field op: value raise_token_floor = 256 does not fit 8 bits"},
        BrokenMap{"value used twice", "list_file: 9, raise_token_floor: 10}",
                  "list_file: 9, raise_token_floor: 9}",
                  "field op: value raise_token_floor = 9 is used twice"},
        BrokenMap{"value name", "list_file: 9, raise_token_floor: 10}",
                  "list_file: 9, RaiseTokenFloor: 10}",
                  "field op: value name 'RaiseTokenFloor' is not lower_snake_case"},
        BrokenMap{"unknown pinned block", "    dram_mib: 64\n",
                  "    dram_mib: 64\n    block_versions: {routing: 1}\n",
                  "block_versions names no block 'routing'"}),
    [](const auto& info) {
      std::string name = info.param.what;
      for (auto& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

}  // namespace

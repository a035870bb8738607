// The fixture of the parity data path's tests (parity_path_test.cc,
// parity_path_parallel_test.cc): an emulated board with storage servers in a temporary
// directory, groups programmed through register writes as asnd programs them, and the
// test's own parity (XOR; Q by shift-and-reduce in GF(2^8), poly 0x11D, generator 2) to
// check the member stores against.
#pragma once

#include <gtest/gtest.h>
#include <isa-l/raid.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "asn/stripe/geometry.hpp"
#include "board_access.hpp"
#include "support.hpp"

namespace asn::model {
namespace {

namespace st = regs::stripe;
using namespace asn::test::board_access;
using Bytes = std::vector<uint8_t>;

// ---- the test's own parity ----------------------------------------------------------------

uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b != 0; b >>= 1) {
    if (b & 1) r ^= a;
    a = static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
  }
  return r;
}

uint8_t gf_pow2(unsigned i) {
  uint8_t x = 1;
  while (i-- > 0) x = gf_mul(x, 2);
  return x;
}

Bytes random_bytes(std::mt19937_64& rng, size_t n) {
  Bytes out(n);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t r = rng();
    std::memcpy(out.data() + i, &r, std::min<size_t>(8, n - i));
  }
  return out;
}

// A group as the test programs it.
struct GroupSpec {
  stripe::Raid raid = stripe::Raid::k5;
  unsigned unit_log2 = 12;
  std::vector<unsigned> data_ports;
  std::vector<unsigned> parity_ports;

  stripe::Geometry geometry() const {
    return {raid, static_cast<unsigned>(data_ports.size()),
            static_cast<unsigned>(parity_ports.size()), 1u << unit_log2};
  }
  // Members: data ports ascending, then parity ports ascending (the register map's order).
  std::vector<unsigned> ports() const {
    std::vector<unsigned> d = data_ports, p = parity_ports;
    std::sort(d.begin(), d.end());
    std::sort(p.begin(), p.end());
    d.insert(d.end(), p.begin(), p.end());
    return d;
  }
};

uint64_t mask_of(const std::vector<unsigned>& ports) {
  uint64_t mask = 0;
  for (unsigned p : ports) mask |= uint64_t{1} << p;
  return mask;
}

class ParityPathTest : public ::testing::Test {
 protected:
  ParityPathTest() {
    options_.shm_dir = dir_.path();
    options_.storage_dir = dir_.path() + "/storage";
    open();
  }

  void open() {
    board_.reset();
    board_ =
        EmulatedBoard::open("board0", *EmulatedBoard::find_profile("emulated-64port"), options_);
  }

  void write_entry(uint16_t group, const uint32_t (&words)[8]) {
    for (uint32_t w = 0; w < st::kGroupTable.words(); ++w) {
      ASSERT_TRUE(board_->write32(entry(*board_, st::kGroupTable, group, w), words[w]));
    }
  }

  // As asnd changes an entry: valid cleared, the entry written, valid set.
  void program(uint16_t group, const GroupSpec& spec, const std::vector<unsigned>& failed = {}) {
    uint32_t words[8] = {};
    ASSERT_TRUE(board_->write32(entry(*board_, st::kGroupTable, group, 0), 0));
    st::kGroupTableRaidLevel.put(words, static_cast<uint32_t>(spec.raid));
    st::kGroupTableUnitLog2.put(words, spec.unit_log2);
    const uint64_t data = mask_of(spec.data_ports), parity = mask_of(spec.parity_ports);
    const uint64_t f = mask_of(failed);
    st::kGroupTableDataMembersLo.put(words, static_cast<uint32_t>(data));
    st::kGroupTableDataMembersHi.put(words, static_cast<uint32_t>(data >> 32));
    st::kGroupTableParityMembersLo.put(words, static_cast<uint32_t>(parity));
    st::kGroupTableParityMembersHi.put(words, static_cast<uint32_t>(parity >> 32));
    st::kGroupTableFailedMembersLo.put(words, static_cast<uint32_t>(f));
    st::kGroupTableFailedMembersHi.put(words, static_cast<uint32_t>(f >> 32));
    write_entry(group, words);
    st::kGroupTableValid.put(words, 1);
    ASSERT_TRUE(board_->write32(entry(*board_, st::kGroupTable, group, 0), words[0]));
  }

  Bytes read_all(uint16_t group) {
    Bytes out(board_->stripe_file_size(group) + 17);  // asks for more than there is
    out.resize(board_->stripe_read(group, 0, out));
    return out;
  }

  // Writes into the file and into the test's copy of it.
  void write(uint16_t group, Bytes& file, uint64_t offset, const Bytes& bytes) {
    board_->stripe_write(group, offset, bytes);
    if (file.size() < offset + bytes.size()) file.resize(offset + bytes.size(), 0);
    std::copy(bytes.begin(), bytes.end(), file.begin() + static_cast<ptrdiff_t>(offset));
  }

  Bytes store(unsigned port, uint16_t group) const {
    std::ifstream in(options_.storage_dir + "/port-" + std::to_string(port) + "/group-" +
                         std::to_string(group) + ".data",
                     std::ios::binary | std::ios::ate);
    if (!in) return {};
    Bytes bytes(static_cast<size_t>(in.tellg()));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return bytes;
  }

  // Every stripe of `file` as the member stores hold it: data units are the file's bytes
  // (zeros past its end), P their XOR, Q the sum of g^i * D_i.
  void expect_stores(uint16_t group, const GroupSpec& spec, const Bytes& file) {
    const stripe::Geometry g = spec.geometry();
    const uint32_t u = g.unit_bytes;
    const uint64_t stripes = (file.size() + g.stripe_bytes() - 1) / g.stripe_bytes();
    // Every store read whole, zeros where it ends early (units never sent are zeros).
    std::vector<Bytes> stores;
    for (unsigned p : spec.ports()) {
      stores.push_back(store(p, group));
      stores.back().resize(std::max<size_t>(stores.back().size(), stripes * u), 0);
    }
    Bytes padded = file;
    padded.resize(stripes * g.stripe_bytes(), 0);
    std::vector<std::array<uint8_t, 256>> mul(g.data_members);
    for (unsigned i = 0; i < g.data_members; ++i) {
      for (unsigned x = 0; x < 256; ++x) mul[i][x] = gf_mul(gf_pow2(i), static_cast<uint8_t>(x));
    }
    Bytes p(u), q(u);
    for (uint64_t s = 0; s < stripes; ++s) {
      const stripe::StripeMap map = stripe::map_stripe(g, s);
      std::fill(p.begin(), p.end(), 0);
      std::fill(q.begin(), q.end(), 0);
      for (unsigned i = 0; i < g.data_members; ++i) {
        const uint8_t* unit = stores[map.data_member[i]].data() + s * u;
        const uint8_t* want = padded.data() + s * g.stripe_bytes() + uint64_t{i} * u;
        ASSERT_EQ(std::memcmp(unit, want, u), 0) << "stripe " << s << " data unit " << i;
        const uint8_t* m = mul[i].data();
        for (uint32_t k = 0; k < u; ++k) {
          p[k] ^= unit[k];
          q[k] ^= m[unit[k]];
        }
      }
      ASSERT_EQ(std::memcmp(stores[map.p_member].data() + s * u, p.data(), u), 0)
          << "P of stripe " << s;
      if (map.q_member) {
        ASSERT_EQ(std::memcmp(stores[*map.q_member].data() + s * u, q.data(), u), 0)
            << "Q of stripe " << s;
      }
      if (s < 4) expect_isal_parity(g, map, stores, s);
    }
  }

  // The stores' P and Q are also what ISA-L itself computes over their data units (xor_gen,
  // pq_gen: Linux md's raid6 field), called here directly on aligned copies.
  static void expect_isal_parity(const stripe::Geometry& g, const stripe::StripeMap& map,
                                 const std::vector<Bytes>& stores, uint64_t s) {
    const uint32_t u = g.unit_bytes;
    const unsigned n = g.data_members + (map.q_member ? 2 : 1);
    std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> units;
    std::vector<void*> array;
    for (unsigned i = 0; i < n; ++i) {
      units.emplace_back(static_cast<uint8_t*>(std::aligned_alloc(64, u)), &std::free);
      array.push_back(units.back().get());
      if (i < g.data_members) std::memcpy(array[i], stores[map.data_member[i]].data() + s * u, u);
    }
    if (map.q_member) {
      ASSERT_EQ(pq_gen(static_cast<int>(n), static_cast<int>(u), array.data()), 0);
      EXPECT_EQ(std::memcmp(stores[*map.q_member].data() + s * u, array[n - 1], u), 0)
          << "Q of stripe " << s << " against pq_gen";
      EXPECT_EQ(std::memcmp(stores[map.p_member].data() + s * u, array[n - 2], u), 0)
          << "P of stripe " << s << " against pq_gen";
    } else {
      ASSERT_EQ(xor_gen(static_cast<int>(n), static_cast<int>(u), array.data()), 0);
      EXPECT_EQ(std::memcmp(stores[map.p_member].data() + s * u, array[n - 1], u), 0)
          << "P of stripe " << s << " against xor_gen";
    }
  }

  uint64_t counter(const regmap::RegRef& reg) { return rd64(*board_, reg); }
  uint64_t member_counter(unsigned port, unsigned word) {
    const uint32_t lo = rd_at(*board_, entry(*board_, st::kMemberCounters, port, word));
    const uint32_t hi = rd_at(*board_, entry(*board_, st::kMemberCounters, port, word + 1));
    return (uint64_t{hi} << 32) | lo;
  }

  test::TempDir dir_;
  OpenOptions options_;
  std::unique_ptr<EmulatedBoard> board_;
};

GroupSpec spec(stripe::Raid raid, unsigned unit_log2, unsigned data, unsigned first_port = 0) {
  GroupSpec s;
  s.raid = raid;
  s.unit_log2 = unit_log2;
  // Ports out of order on purpose: the member order is by port number.
  for (unsigned i = 0; i < data; ++i) s.data_ports.push_back(first_port + 2 * (data - i));
  s.parity_ports.push_back(first_port + 1);
  if (raid == stripe::Raid::k6) s.parity_ports.push_back(first_port + 2 * data + 3);
  return s;
}

}  // namespace
}  // namespace asn::model

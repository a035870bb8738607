#include "parity_path.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "asn/regmap/regs.hpp"
#include "asn/stripe/parity.hpp"

namespace asn::model::detail::engines {
namespace {

namespace st = regs::stripe;
using Kind = StripeError::Kind;

// Client bytes a batch of stripes carries before the counters are published and the group
// entry re-read: large enough that the board's lock is taken rarely, small enough that the
// counters move while a large file streams.
constexpr uint64_t kBatchBytes = 16u << 20;
// A file offset the stores' offsets (stripe * unit_bytes) cannot overflow as off_t.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 62;

std::vector<unsigned> ports_of(uint64_t mask) {
  std::vector<unsigned> ports;
  for (; mask != 0; mask &= mask - 1)
    ports.push_back(static_cast<unsigned>(std::countr_zero(mask)));
  return ports;
}

uint64_t mask64(std::span<const uint32_t> entry, const regmap::TableFieldRef& lo,
                const regmap::TableFieldRef& hi) {
  return (uint64_t{hi.get(entry)} << 32) | lo.get(entry);
}

void add64(RegisterView& v, const regmap::RegRef& reg, uint64_t n) {
  if (n != 0) v.set64(reg, v.get64(reg) + n);
}

void add_pair(std::span<uint32_t> entry, unsigned lo, uint64_t n) {
  const uint64_t value = ((uint64_t{entry[lo + 1]} << 32) | entry[lo]) + n;
  entry[lo] = static_cast<uint32_t>(value);
  entry[lo + 1] = static_cast<uint32_t>(value >> 32);
}

bool same_geometry(const stripe::Geometry& a, const stripe::Geometry& b) {
  return a.raid == b.raid && a.data_members == b.data_members &&
         a.parity_members == b.parity_members && a.unit_bytes == b.unit_bytes;
}

}  // namespace

std::string ParityPath::name(uint16_t group) { return "stripe group " + std::to_string(group); }

unsigned ParityPath::member_of(const stripe::StripeMap& map, unsigned data_members, unsigned role) {
  if (role < data_members) return map.data_member[role];
  return role == data_members ? map.p_member : *map.q_member;
}

ParityPath::Buffers::Buffers(const stripe::Geometry& g) : geometry(g) {
  // The stripe's units, then two scratch units for a scrub's recomputed parity.
  const size_t bytes = size_t{g.members() + 2} * g.unit_bytes;
  memory_ = static_cast<uint8_t*>(std::aligned_alloc(4096, bytes));
  if (memory_ == nullptr) throw std::bad_alloc();
  for (unsigned r = 0; r < g.members(); ++r) units.push_back(unit(r));
  scratch = {unit(g.members()), unit(g.members() + 1)};
}

ParityPath::Buffers::~Buffers() { std::free(memory_); }

bool ParityPath::Group::same_shape(const Group& other) const {
  return same_geometry(geometry, other.geometry) && ports == other.ports;
}

ParityPath::ParityPath(Registers registers, std::unique_ptr<StorageServers> storage)
    : registers_(std::move(registers)), storage_(std::move(storage)) {}

ParityPath::~ParityPath() = default;

ParityPath::Lane& ParityPath::lane(uint16_t group) {
  std::lock_guard lock(lanes_mu_);
  std::unique_ptr<Lane>& lane = lanes_[group];
  if (!lane) lane = std::make_unique<Lane>();
  return *lane;
}

// Runs a client request in its group's lane; a refused one is counted in stripe.errors
// (with what it did before it was refused).
template <typename F>
auto ParityPath::counted(uint16_t group, F&& request) {
  Lane& in = lane(group);
  std::lock_guard lock(in.mu);
  try {
    auto result = request();
    flush(in);
    return result;
  } catch (const StripeError&) {
    flush(in);
    registers_([](RegisterView& v) { add64(v, st::kErrors, 1); });
    throw;
  }
}

StorageServers& ParityPath::storage() {
  if (!storage_) {
    throw StripeError(Kind::kNoStorage,
                      "no storage servers are attached to the board's member ports (open "
                      "the board with a storage directory: asnd's "
                      "backend.emulated.storage_dir)");
  }
  return *storage_;
}

ParityPath::Group ParityPath::load(uint16_t index) {
  std::array<uint32_t, 8> entry{};
  uint32_t ports = 0;
  bool exists = false;
  registers_([&](RegisterView& v) {
    ports = v.entries(st::kMemberCounters);
    if (index >= v.entries(st::kGroupTable)) return;
    exists = true;
    const auto words = v.entry(st::kGroupTable, index, Bank::kShadow);
    std::copy_n(words.begin(), std::min(words.size(), entry.size()), entry.begin());
  });
  const std::span<const uint32_t> e(entry);
  if (!exists || st::kGroupTableValid.get(e) == 0) {
    throw StripeError(Kind::kNoGroup, name(index) + " is not valid in the STRIPE group table");
  }
  auto bad = [&](const std::string& why) {
    throw StripeError(Kind::kBadGroup, name(index) + ": " + why);
  };
  Group g;
  g.index = index;
  const uint32_t level = st::kGroupTableRaidLevel.get(e);
  if (level < 4 || level > 6) bad("raid_level " + std::to_string(level) + " is not 4, 5 or 6");
  const uint64_t data = mask64(e, st::kGroupTableDataMembersLo, st::kGroupTableDataMembersHi);
  const uint64_t parity = mask64(e, st::kGroupTableParityMembersLo, st::kGroupTableParityMembersHi);
  g.failed = mask64(e, st::kGroupTableFailedMembersLo, st::kGroupTableFailedMembersHi);
  if ((data & parity) != 0) bad("a port is both a data and a parity member");
  if ((g.failed & ~(data | parity)) != 0) bad("a failed port is not a member");
  g.geometry.raid = static_cast<stripe::Raid>(level);
  g.geometry.data_members = static_cast<unsigned>(std::popcount(data));
  g.geometry.parity_members = static_cast<unsigned>(std::popcount(parity));
  g.geometry.unit_bytes = uint32_t{1} << std::min(st::kGroupTableUnitLog2.get(e), 31u);
  const uint32_t durability = st::kGroupTableDurability.get(e);
  if (durability > 1) bad("durability " + std::to_string(durability) + " is not 0 or 1");
  g.sync = durability == 1;
  if (g.geometry.parity_members != (level == 6 ? 2u : 1u)) {
    bad(std::to_string(g.geometry.parity_members) + " parity members for RAID " +
        std::to_string(level));
  }
  if (auto why = stripe::validate(g.geometry)) bad(*why);
  g.ports = ports_of(data);
  for (unsigned p : ports_of(parity)) g.ports.push_back(p);
  if (*std::max_element(g.ports.begin(), g.ports.end()) >= ports) {
    bad("a member port is past the board's " + std::to_string(ports) + " ports");
  }
  g.lane = &lane(index);
  std::unique_ptr<Buffers>& buffers = g.lane->buffers;
  if (!buffers || !same_geometry(buffers->geometry, g.geometry)) {
    buffers.reset();
    buffers = std::make_unique<Buffers>(g.geometry);
  }
  return g;
}

void ParityPath::flush(Lane& lane) {
  Counts c;
  std::swap(c, lane.pending);
  if (c.data_units + c.parity_units + c.bytes_striped + c.bytes_read + c.units_rebuilt == 0) return;
  registers_([&](RegisterView& v) {
    add64(v, st::kDataUnits, c.data_units);
    add64(v, st::kParityUnits, c.parity_units);
    add64(v, st::kBytesStriped, c.bytes_striped);
    add64(v, st::kBytesRead, c.bytes_read);
    add64(v, st::kUnitsRebuilt, c.units_rebuilt);
    const uint32_t ports = std::min<uint32_t>(v.entries(st::kMemberCounters), stripe::kMaxMembers);
    for (unsigned port = 0; port < ports; ++port) {
      if (c.port_units[port] == 0) continue;
      auto entry = v.entry(st::kMemberCounters, port, Bank::kShadow);
      add_pair(entry, st::kMemberCountersUnitsLo.word, c.port_units[port]);
      add_pair(entry, st::kMemberCountersBytesLo.word, c.port_bytes[port]);
    }
  });
}

void ParityPath::require_tolerated(const Group& group) {
  const auto failed = static_cast<unsigned>(std::popcount(group.failed));
  if (failed <= group.geometry.parity_members) return;
  throw StripeError(Kind::kTooManyFailed,
                    name(group.index) + ": " + std::to_string(failed) + " members failed; RAID " +
                        std::to_string(static_cast<unsigned>(group.geometry.raid)) + " tolerates " +
                        std::to_string(group.geometry.parity_members));
}

unsigned ParityPath::member(const Group& group, unsigned port) {
  const auto it = std::find(group.ports.begin(), group.ports.end(), port);
  if (it == group.ports.end()) {
    throw StripeError(Kind::kBadRequest,
                      "port " + std::to_string(port) + " is not a member of " + name(group.index));
  }
  return static_cast<unsigned>(it - group.ports.begin());
}

void ParityPath::checkpoint(Group& group, uint64_t also_failed) {
  flush(*group.lane);
  Group now = load(group.index);
  if (!now.same_shape(group)) {
    throw StripeError(Kind::kNoGroup, name(group.index) + " was changed during the request");
  }
  now.failed |= also_failed;
  require_tolerated(now);
  group = std::move(now);
}

uint64_t ParityPath::stripes_per_batch(const Group& group) const {
  return std::max<uint64_t>(1, kBatchBytes / group.geometry.stripe_bytes());
}

// ---- stripes ----------------------------------------------------------------------------

unsigned ParityPath::load_stripe(const Group& group, uint64_t s, uint64_t needed, bool all) {
  const stripe::Geometry& g = group.geometry;
  Buffers& b = *group.lane->buffers;
  const stripe::StripeMap map = stripe::map_stripe(g, s);
  const unsigned d = g.data_members;
  std::array<unsigned, 2> lost{};
  unsigned lost_count = 0;
  unsigned lost_data = 0;  // lost data units the caller needs
  for (unsigned r = 0; r < g.members(); ++r) {
    if (!group.lost(member_of(map, d, r))) continue;
    lost[lost_count++] = r;  // require_tolerated: at most parity_members
    if (r < d && (all || ((needed >> r) & 1))) ++lost_data;
  }
  const bool rebuild = all ? lost_count > 0 : lost_data > 0;
  for (unsigned r = 0; r < g.members(); ++r) {
    const unsigned m = member_of(map, d, r);
    if (group.lost(m)) continue;
    if (!rebuild && !all && (r >= d || ((needed >> r) & 1) == 0)) continue;
    storage_->read(group.ports[m], group.index, s * g.unit_bytes, {b.unit(r), g.unit_bytes});
  }
  if (rebuild &&
      !stripe::reconstruct(g, b.units, std::span<const unsigned>(lost.data(), lost_count),
                           g.unit_bytes)) {
    throw StripeError(Kind::kTooManyFailed,
                      name(group.index) + ": stripe " + std::to_string(s) + " cannot be rebuilt");
  }
  return rebuild ? lost_data : 0;
}

void ParityPath::send_unit(const Group& group, unsigned member, uint64_t s, const uint8_t* unit) {
  const unsigned port = group.ports[member];
  const uint32_t u = group.geometry.unit_bytes;
  storage_->write(port, group.index, s * u, {unit, u});
  ++group.lane->pending.port_units[port];
  group.lane->pending.port_bytes[port] += u;
}

void ParityPath::send_stripe(const Group& group, uint64_t s, std::span<const uint8_t* const> data,
                             uint64_t dirty) {
  const stripe::Geometry& g = group.geometry;
  Buffers& b = *group.lane->buffers;
  const unsigned d = g.data_members;
  uint8_t* q = g.parity_members == 2 ? b.unit(d + 1) : nullptr;
  stripe::compute_parity(g, data, b.unit(d), q, g.unit_bytes);
  const stripe::StripeMap map = stripe::map_stripe(g, s);
  for (unsigned r = 0; r < g.members(); ++r) {
    const unsigned m = member_of(map, d, r);
    if (group.lost(m)) continue;  // parity still covers what it would have held
    if (r < d) {
      if (((dirty >> r) & 1) == 0) continue;
      send_unit(group, m, s, data[r]);
      ++group.lane->pending.data_units;
    } else {
      send_unit(group, m, s, b.unit(r));
      ++group.lane->pending.parity_units;
    }
  }
}

void ParityPath::publish_size(uint16_t group, uint64_t bytes, uint64_t& recorded, bool sync) {
  if (bytes <= recorded) return;
  storage_->set_file_size(group, bytes, sync);
  recorded = bytes;
}

void ParityPath::sync_members(const Group& group) {
  for (unsigned m = 0; m < group.ports.size(); ++m) {
    if (!group.lost(m)) storage_->sync(group.ports[m], group.index);
  }
}

// Reconstruct-write of stripe `s`: the file's bytes [lo, hi) (from `src`) laid over what the
// members hold of the stripe below `size` (the file's length before this write; read back,
// or rebuilt where a member failed) and zeros from `size` on; the changed data units and the
// parity are sent. With lo == hi the stripe is rewritten as the length covers it: its data
// below `size`, zeros past it, and parity over exactly that.
void ParityPath::merge_stripe(const Group& group, uint64_t s, uint64_t size, uint64_t lo,
                              uint64_t hi, const uint8_t* src) {
  const stripe::Geometry& g = group.geometry;
  const uint64_t S = g.stripe_bytes();
  const uint32_t u = g.unit_bytes;
  const uint64_t start = s * S;
  Buffers& b = *group.lane->buffers;
  uint64_t dirty = 0;
  uint64_t needed = 0;
  for (unsigned i = 0; i < g.data_members; ++i) {
    const uint64_t ustart = start + uint64_t{i} * u;
    const uint64_t uend = ustart + u;
    if (!(lo <= ustart && hi >= uend) && ustart < size) needed |= uint64_t{1} << i;
    if ((lo < uend && hi > ustart) || uend > size) dirty |= uint64_t{1} << i;
  }
  if (needed != 0) group.lane->pending.units_rebuilt += load_stripe(group, s, needed, false);
  if (size < start + S) {
    const uint64_t zero_from = std::max(size, start) - start;
    std::memset(b.data() + zero_from, 0, S - zero_from);
  }
  if (hi > lo) std::memcpy(b.data() + (lo - start), src, hi - lo);
  std::vector<const uint8_t*> data(b.units.begin(), b.units.begin() + g.data_members);
  send_stripe(group, s, data, dirty);
}

// Issue 27: the members may hold bytes past the file's length that are not the file's:
// leftovers of a write that was refused, or torn by a crash, after some units were sent and
// before its length was published. A write that starts past the end would raise the length
// over them, so first the stripe holding the end is rewritten with zeros past it, and every
// member's store is cut at the end of that stripe: the stripes after it then read as zeros
// on every member, and zeros are their own parity (P and Q alike), so healthy and degraded
// reads of the gap agree. This is the engine's to do, not asnd's: the engine owns the length
// (the storage side's group-<G>.size, published by publish_size) and the stores, and only it
// knows where a stripe's units lie (004 L1150: the switch splits and computes parity, the
// client sends the file unsplit). Cutting costs the same for any gap, unlike writing zeros.
void ParityPath::clear_past_end(const Group& group, uint64_t size, uint64_t first) {
  const uint64_t S = group.geometry.stripe_bytes();
  const uint64_t kept = (size + S - 1) / S;  // stripes holding bytes of the file
  if (size % S != 0 && size / S < first) merge_stripe(group, size / S, size, size, size, nullptr);
  // A failed member's store was dropped (and a rebuild drops it again before writing).
  for (unsigned m = 0; m < group.ports.size(); ++m) {
    if (group.lost(m)) continue;
    storage_->truncate(group.ports[m], group.index, kept * group.geometry.unit_bytes);
  }
}

// Stripe by stripe, each on every live member before the next one starts; the file length
// is published after each batch (a crash loses at most the length of the stripes since).
void ParityPath::write_stripes(Group& group, uint64_t offset, std::span<const uint8_t> bytes) {
  const uint64_t old_size = storage_->file_size(group.index);
  uint64_t recorded = old_size;
  const uint64_t end = offset + bytes.size();
  const uint64_t first = offset / group.geometry.stripe_bytes();
  const uint64_t last = (end - 1) / group.geometry.stripe_bytes();
  const uint64_t batch = stripes_per_batch(group);
  if (offset > old_size) clear_past_end(group, old_size, first);
  std::vector<const uint8_t*> data(group.geometry.data_members);
  for (uint64_t s = first; s <= last; ++s) {
    const stripe::Geometry& g = group.geometry;
    const uint64_t S = g.stripe_bytes();
    const uint32_t u = g.unit_bytes;
    if (s != first && (s - first) % batch == 0) {
      publish_size(group.index, std::min(end, s * S), recorded);
      checkpoint(group);
    }
    const uint64_t start = s * S;
    const uint64_t lo = std::max(offset, start);
    const uint64_t hi = std::min(end, start + S);
    const uint8_t* src = bytes.data() + (lo - offset);
    if (lo == start && hi == start + S) {
      // A whole stripe: parity straight from the client's bytes when they are aligned for
      // the parity code, else from a copy.
      const bool aligned = reinterpret_cast<uintptr_t>(src) % 64 == 0;
      for (unsigned i = 0; i < g.data_members; ++i) {
        if (!aligned) std::memcpy(group.lane->buffers->unit(i), src + size_t{i} * u, u);
        data[i] = aligned ? src + size_t{i} * u : group.lane->buffers->unit(i);
      }
      send_stripe(group, s, data, ~uint64_t{0});
    } else {
      merge_stripe(group, s, old_size, lo, hi, src);
    }
    group.lane->pending.bytes_striped += hi - lo;
  }
  // Durability fsync: the units (and the cut of clear_past_end) on stable storage first,
  // then the length that names them; the caller acknowledges after both.
  if (group.sync) sync_members(group);
  publish_size(group.index, end, recorded, group.sync);
}

// Units of live members go straight from their stores to the client's buffer; a stripe
// with a needed unit on a failed member is loaded whole and the unit rebuilt.
void ParityPath::read_stripes(Group& group, uint64_t offset, std::span<uint8_t> out) {
  const uint64_t end = offset + out.size();
  const uint64_t first = offset / group.geometry.stripe_bytes();
  const uint64_t last = (end - 1) / group.geometry.stripe_bytes();
  const uint64_t batch = stripes_per_batch(group);
  for (uint64_t s = first; s <= last; ++s) {
    if (s != first && (s - first) % batch == 0) checkpoint(group);
    const stripe::Geometry& g = group.geometry;
    const uint32_t u = g.unit_bytes;
    const uint64_t start = s * g.stripe_bytes();
    const uint64_t lo = std::max(offset, start);
    const uint64_t hi = std::min(end, start + g.stripe_bytes());
    const stripe::StripeMap map = stripe::map_stripe(g, s);
    uint64_t needed = 0;
    bool degraded = false;
    for (unsigned i = 0; i < g.data_members; ++i) {
      const uint64_t ustart = start + uint64_t{i} * u;
      if (lo >= ustart + u || hi <= ustart) continue;
      needed |= uint64_t{1} << i;
      degraded |= group.lost(map.data_member[i]);
    }
    if (degraded) {
      group.lane->pending.units_rebuilt += load_stripe(group, s, needed, false);
      std::memcpy(out.data() + (lo - offset), group.lane->buffers->data() + (lo - start), hi - lo);
    } else {
      for (unsigned i = 0; i < g.data_members; ++i) {
        if (((needed >> i) & 1) == 0) continue;
        const uint64_t ustart = start + uint64_t{i} * u;
        const uint64_t a = std::max(lo, ustart);
        const uint64_t z = std::min(hi, ustart + u);
        storage_->read(group.ports[map.data_member[i]], group.index, s * u + (a - ustart),
                       out.subspan(a - offset, z - a));
      }
    }
    group.lane->pending.bytes_read += hi - lo;
  }
}

// ---- requests ---------------------------------------------------------------------------

void ParityPath::write(uint16_t index, uint64_t offset, std::span<const uint8_t> bytes) {
  counted(index, [&] {
    storage();
    if (offset > kMaxFileBytes || bytes.size() > kMaxFileBytes - offset) {
      throw StripeError(Kind::kBadRequest,
                        name(index) + ": a write past " + std::to_string(kMaxFileBytes) + " bytes");
    }
    Group group = open(index);
    require_tolerated(group);
    if (bytes.empty()) return 0;
    // Every live member's store opens before the first unit is sent: a server that cannot
    // take the write refuses it whole instead of tearing its first stripe (issue 27).
    for (unsigned m = 0; m < group.ports.size(); ++m) {
      if (!group.lost(m)) storage_->open(group.ports[m], index);
    }
    // The stripes it changes: its own, and the one holding the old end when it starts past
    // it (clear_past_end rewrites that one; the gap is cut, not written).
    const uint64_t S = group.geometry.stripe_bytes();
    const uint64_t size = storage_->file_size(index);
    std::vector<std::pair<uint64_t, uint64_t>> stripes = {
        {offset / S, (offset + bytes.size() - 1) / S}};
    if (offset > size && size % S != 0) stripes.emplace_back(size / S, size / S);
    mark(group, stripes);
    try {
      write_stripes(group, offset, bytes);
    } catch (...) {
      // Refused half way, it may have torn a stripe: its regions stay marked, and the
      // group's next request resyncs them before it reads or clears any.
      lane(index).intent.resynced = false;
      throw;
    }
    return 0;
  });
}

size_t ParityPath::read(uint16_t index, uint64_t offset, std::span<uint8_t> out) {
  return counted(index, [&]() -> size_t {
    storage();
    Group group = open(index);
    require_tolerated(group);
    const uint64_t size = storage_->file_size(index);
    if (offset >= size || out.empty()) return 0;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), size - offset));
    read_stripes(group, offset, out.first(n));
    return n;
  });
}

uint64_t ParityPath::file_size(uint16_t index) {
  return counted(index, [&] {
    storage();
    load(index);
    return storage_->file_size(index);
  });
}

void ParityPath::fail_member(uint16_t index, unsigned port) {
  counted(index, [&] {
    storage();
    Group group = load(index);
    member(group, port);
    if (!lane(index).intent.resynced) {
      // Resynced first, with the member's units while its store still has them (asnd sets
      // its failed mark before it calls this): after, a stripe torn with a data unit on it
      // could no longer be recomputed. A member whose store cannot be read is left out.
      Group whole = group;
      whole.failed &= ~(uint64_t{1} << port);
      try {
        resync(whole);
      } catch (const StripeError& e) {
        if (e.kind() != Kind::kStorageIo) throw;
        resync(group);
      }
    }
    try {
      storage_->fail(port, index);
    } catch (const StripeError& e) {
      // A dying disk may refuse even that: the member is failed all the same (the entry's
      // mark says so), and a rebuild drops its store on the replacement before it writes.
      if (e.kind() != Kind::kStorageIo) throw;
    }
    return 0;
  });
}

// Every stripe of the file, rebuilt from the other members onto the member's empty store.
// The member counts as lost while it is rebuilt, whether or not its failed bit is set.
void ParityPath::rebuild_member(uint16_t index, unsigned port, const Progress& progress) {
  counted(index, [&] {
    storage();
    Group group = open(index);
    const unsigned target = member(group, port);
    const uint64_t bit = uint64_t{1} << port;
    group.failed |= bit;
    require_tolerated(group);
    storage_->fail(port, index);
    const uint64_t stripes = (storage_->file_size(index) + group.geometry.stripe_bytes() - 1) /
                             group.geometry.stripe_bytes();
    const uint64_t batch = stripes_per_batch(group);
    for (uint64_t s = 0; s < stripes; ++s) {
      if (s != 0 && s % batch == 0) {
        checkpoint(group, bit);
        if (progress) progress(s, stripes);
      }
      load_stripe(group, s, 0, /*all=*/true);
      const stripe::StripeMap map = stripe::map_stripe(group.geometry, s);
      const unsigned d = group.geometry.data_members;
      for (unsigned r = 0; r < group.geometry.members(); ++r) {
        if (member_of(map, d, r) != target) continue;
        send_unit(group, target, s, group.lane->buffers->unit(r));
        ++(r < d ? group.lane->pending.data_units : group.lane->pending.parity_units);
        ++group.lane->pending.units_rebuilt;
      }
    }
    if (progress) progress(stripes, stripes);
    return 0;
  });
}

stripe::ScrubReport ParityPath::scrub(uint16_t index, bool repair, bool dry_run,
                                      const Progress& progress) {
  return counted(index, [&] {
    storage();
    Group group = open(index);
    require_tolerated(group);
    require_redundancy(group, repair);
    return scrub_stripes(group, repair && !dry_run, progress);
  });
}

void ParityPath::inject_fault(uint16_t group, unsigned port, int err, uint64_t after) {
  storage().inject_fault(port, group, err, after);
}

void ParityPath::discard(uint16_t index) {
  counted(index, [&] {
    storage().discard(index);
    lane(index).intent = Intent{};
    return 0;
  });
}

}  // namespace asn::model::detail::engines

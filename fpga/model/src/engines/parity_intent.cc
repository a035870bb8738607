// The parity path's write-intent bitmap (issue 27 item 2): how the RAID write hole is closed.
//
// Linux md offers three ways: a write-intent bitmap with a resync of the dirty regions at
// start, a partial-parity log (PPL, RAID 5 only) and a journal device. The bitmap is taken
// here: it costs a write of a few hundred bytes per member once per region of 64 MiB of the
// file (a journal writes every byte twice, a PPL a partial parity per stripe write), works
// alike for RAID 4, 5 and 6 (PPL is RAID 5's), and needs no extra device. Like md's, it lives
// on the members (port-<P>/group-<G>.bitmap beside each store, as md keeps it in every
// member's superblock), so a real board would keep it the same way: on its storage servers,
// not in the switch's memory, which a power cycle of the switch clears. What it does not
// cover is md's bitmap's limit too: a stripe torn while the group was degraded, with a data
// unit on the failed member, cannot be resynced (that unit's data is only known through the
// parity the crash may have left stale); it is left as it is, and a check or a read of it
// then tells nothing wrong. md's PPL covers that case for RAID 5; this does not.
//
// Format (text, so an operator can read it): "asn write-intent bitmap 1", "region_stripes R",
// "dirty a b c" (regions ascending: region r holds stripes r*R to r*R+R-1), "end". A bitmap
// that does not parse (torn by a power cut) counts as every region dirty.
#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "parity_path.hpp"

namespace asn::model::detail::engines {
namespace {

// About this much of the file per region: a resync after a crash reads at most one or two
// regions' stripes, and a long write marks a new region once per this many bytes.
constexpr uint64_t kRegionBytes = 64u << 20;
constexpr const char* kBitmapMagic = "asn write-intent bitmap 1";

using StripeRange = std::pair<uint64_t, uint64_t>;  // [first, end)

std::string format_bitmap(uint64_t region_stripes, const std::vector<uint64_t>& regions) {
  std::string out =
      std::string(kBitmapMagic) + "\nregion_stripes " + std::to_string(region_stripes) + "\ndirty";
  for (uint64_t r : regions) out += " " + std::to_string(r);
  return out + "\nend\n";
}

// The stripes a bitmap marks; nullopt when it does not parse.
std::optional<std::vector<StripeRange>> parse_bitmap(const std::string& text) {
  std::istringstream in(text);
  std::string line, word;
  uint64_t region_stripes = 0;
  if (!std::getline(in, line) || line != kBitmapMagic) return std::nullopt;
  if (!(in >> word >> region_stripes) || word != "region_stripes" || region_stripes == 0) {
    return std::nullopt;
  }
  if (!(in >> word) || word != "dirty") return std::nullopt;
  std::vector<StripeRange> out;
  while (in >> word && word != "end") {
    uint64_t r = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), r);
    if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
    out.emplace_back(r * region_stripes, (r + 1) * region_stripes);
  }
  if (word != "end") return std::nullopt;  // torn: the list may be cut short
  return out;
}

}  // namespace

uint64_t ParityPath::region_stripes(const stripe::Geometry& g) {
  return std::max<uint64_t>(1, kRegionBytes / g.stripe_bytes());
}

ParityPath::Group ParityPath::open(uint16_t index) {
  Group group = load(index);
  if (!lane(index).intent.resynced) resync(group);
  return group;
}

void ParityPath::write_bitmaps(const Group& group, const std::vector<uint64_t>& regions,
                               bool sync) {
  const std::string text = format_bitmap(region_stripes(group.geometry), regions);
  for (unsigned m = 0; m < group.ports.size(); ++m) {
    if (!group.lost(m)) storage_->write_bitmap(group.ports[m], group.index, text, sync);
  }
}

// Only when the write reaches a region not marked yet: a file streamed in 1 MiB requests
// writes the bitmap once per region, not once per request. A region is cleared when a later
// write no longer touches it: every write before returned with its stripes whole (and, with
// durability fsync, synced), so the only stripes that can be torn are those of the write in
// flight, which are marked.
void ParityPath::mark(const Group& group, std::span<const std::pair<uint64_t, uint64_t>> ranges) {
  const uint64_t per_region = region_stripes(group.geometry);
  std::vector<uint64_t> want;
  for (const auto& [first, last] : ranges) {
    for (uint64_t r = first / per_region; r <= last / per_region; ++r) want.push_back(r);
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  Intent& intent = group.lane->intent;
  if (std::includes(intent.marked.begin(), intent.marked.end(), want.begin(), want.end())) return;
  // Set before any unit of the regions is sent, on stable storage first with durability
  // fsync (md's rule); without it the page cache orders it, which a crash of asnd or the
  // switch keeps.
  write_bitmaps(group, want, group.sync);
  intent.marked = std::move(want);
}

void ParityPath::resync(Group& group) {
  const uint64_t S = group.geometry.stripe_bytes();
  const uint64_t stripes = (storage_->file_size(group.index) + S - 1) / S;
  std::vector<StripeRange> ranges;
  bool any = false;
  for (unsigned m = 0; m < group.ports.size(); ++m) {
    if (group.lost(m)) continue;
    const std::string text = storage_->read_bitmap(group.ports[m], group.index);
    if (text.empty()) continue;
    any = true;
    const auto marked = parse_bitmap(text);
    if (!marked) {
      ranges = {{0, stripes}};
      break;
    }
    ranges.insert(ranges.end(), marked->begin(), marked->end());
  }
  std::sort(ranges.begin(), ranges.end());
  const uint64_t batch = stripes_per_batch(group);
  uint64_t done = 0;  // stripes below it are resynced (ranges may overlap: several members)
  uint64_t count = 0;
  for (const auto& [first, end] : ranges) {
    for (uint64_t s = std::max(first, done); s < std::min(end, stripes); ++s) {
      if (count != 0 && count % batch == 0) checkpoint(group);
      resync_stripe(group, s);
      ++count;
    }
    done = std::max(done, end);
  }
  // The parity written on stable storage before the marks that name it go (durability
  // fsync); cleared without a sync, as md clears bits: a mark that survives costs a resync.
  if (count != 0 && group.sync) sync_members(group);
  if (any) write_bitmaps(group, {}, /*sync=*/false);
  Intent& intent = group.lane->intent;
  intent.marked.clear();
  intent.resynced = true;
}

void ParityPath::resync_stripe(const Group& group, uint64_t s) {
  const stripe::Geometry& g = group.geometry;
  const unsigned d = g.data_members;
  const stripe::StripeMap map = stripe::map_stripe(g, s);
  bool parity_live = false;
  for (unsigned r = 0; r < g.members(); ++r) {
    const bool lost = group.lost(member_of(map, d, r));
    if (r < d && lost) return;  // its data cannot be known (the file's header says why)
    if (r >= d && !lost) parity_live = true;
  }
  if (!parity_live) return;
  load_stripe(group, s, (uint64_t{1} << d) - 1, /*all=*/false);
  const std::vector<const uint8_t*> data(group.lane->buffers->units.begin(),
                                         group.lane->buffers->units.begin() + d);
  send_stripe(group, s, data, /*dirty=*/0);
}

}  // namespace asn::model::detail::engines

#include "managers/stripe_manager.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "error.hpp"

namespace asn {

namespace {

namespace s = regs::stripe;

constexpr uint32_t kStripeSchema = 1;

// The group table's member masks name ports 0-63 (two 32-bit words).
constexpr uint32_t kMaxMemberPort = 63;

uint64_t mask_of(const google::protobuf::RepeatedField<uint32_t>& ports) {
  uint64_t mask = 0;
  for (uint32_t p : ports) mask |= uint64_t{1} << p;
  return mask;
}

bool same_layout(const state::v1::StripeGroupState& a, const state::v1::StripeGroupState& b) {
  return a.raid() == b.raid() && a.unit_bytes() == b.unit_bytes() &&
         std::equal(a.data_ports().begin(), a.data_ports().end(), b.data_ports().begin(),
                    b.data_ports().end()) &&
         std::equal(a.parity_ports().begin(), a.parity_ports().end(), b.parity_ports().begin(),
                    b.parity_ports().end());
}

}  // namespace

std::vector<uint32_t> StripeGroupView::members() const {
  std::vector<uint32_t> out(state.data_ports().begin(), state.data_ports().end());
  out.insert(out.end(), state.parity_ports().begin(), state.parity_ports().end());
  return out;
}

uint64_t StripeGroupView::stripe_bytes() const {
  return uint64_t{static_cast<uint32_t>(state.data_ports_size())} * state.unit_bytes();
}

// The entry's eight words as the board should hold them (all zero: no group).
std::vector<uint32_t> StripeManager::entry_words(const state::v1::StripeGroupState* group) {
  std::vector<uint32_t> words(s::kGroupTable.words(), 0);
  if (group == nullptr) return words;
  const uint64_t data = mask_of(group->data_ports());
  const uint64_t parity = mask_of(group->parity_ports());
  const uint64_t failed = mask_of(group->failed_ports());
  s::kGroupTableValid.put(words, 1);
  s::kGroupTableRaidLevel.put(words, group->raid());
  s::kGroupTableUnitLog2.put(words, static_cast<uint32_t>(std::countr_zero(group->unit_bytes())));
  s::kGroupTableDurability.put(words, group->durability());
  s::kGroupTableDataMembersLo.put(words, static_cast<uint32_t>(data));
  s::kGroupTableDataMembersHi.put(words, static_cast<uint32_t>(data >> 32));
  s::kGroupTableParityMembersLo.put(words, static_cast<uint32_t>(parity));
  s::kGroupTableParityMembersHi.put(words, static_cast<uint32_t>(parity >> 32));
  s::kGroupTableFailedMembersLo.put(words, static_cast<uint32_t>(failed));
  s::kGroupTableFailedMembersHi.put(words, static_cast<uint32_t>(failed >> 32));
  return words;
}

StripeManager::StripeManager(Device& device, const StateStore& store)
    : device_(device), state_(store, "stripe", kStripeSchema) {}

uint32_t StripeManager::capacity() const {
  return std::min<uint32_t>(device_.entries(s::kGroupTable),
                            static_cast<uint32_t>(group_locks_.size()));
}

uint64_t StripeManager::revision() const {
  std::lock_guard lock(mutex_);
  return state_.revision();
}

std::mutex& StripeManager::group_lock(uint32_t group) {
  return group_locks_.at(std::min<size_t>(group, group_locks_.size() - 1));
}

StripeDataPort& StripeManager::data_port() {
  StripeDataPort* port = device_.stripe_data_port();
  if (port == nullptr) throw Error(ErrorCode::kFailedPrecondition, kNoDataPath);
  return *port;
}

// Normalizes (ports ascending) and checks a group against the layout rules and this board.
// A port may be in several groups: a storage server keeps the files of many groups, as a
// PFS server keeps stripes of many files (the seed's clients stripe each file over servers
// the metadata server picks, 004 L1160), so groups are allowed to overlap.
state::v1::StripeGroupState StripeManager::checked(const StripeGroupSpec& spec) const {
  const uint32_t table = capacity();
  if (table == 0) {
    throw Error(ErrorCode::kFailedPrecondition, "this board has no stripe group table");
  }
  if (spec.group >= table) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("group {}: the board's stripe group table has entries 0 to {}",
                            spec.group, table - 1));
  }
  if (spec.raid != 4 && spec.raid != 5 && spec.raid != 6) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("raid level {} is not one of 4, 5, 6", spec.raid));
  }
  const auto layout = device_.layout();
  std::set<uint32_t> seen;
  const auto check = [&](const std::vector<uint32_t>& list, const char* role) {
    for (uint32_t p : list) {
      layout->require_port(p, fmt::format(" ({} port)", role));
      if (p > kMaxMemberPort) {
        throw Error(ErrorCode::kInvalidArgument,
                    fmt::format("{} port {} cannot be a member: members are ports 0 to {}", role, p,
                                kMaxMemberPort));
      }
      if (!seen.insert(p).second) {
        const bool both = std::count(spec.data_ports.begin(), spec.data_ports.end(), p) > 0 &&
                          std::count(spec.parity_ports.begin(), spec.parity_ports.end(), p) > 0;
        throw Error(ErrorCode::kInvalidArgument,
                    both ? fmt::format("port {} is given as a data port and as a parity port", p)
                         : fmt::format("{} port {} is given twice", role, p));
      }
    }
  };
  check(spec.data_ports, "data");
  check(spec.parity_ports, "parity");
  stripe::Geometry geometry;
  geometry.raid = static_cast<stripe::Raid>(spec.raid);
  geometry.data_members = static_cast<unsigned>(spec.data_ports.size());
  geometry.parity_members = static_cast<unsigned>(spec.parity_ports.size());
  geometry.unit_bytes = spec.unit_bytes;
  if (auto why = stripe::validate(geometry)) throw Error(ErrorCode::kInvalidArgument, *why);
  state::v1::StripeGroupState out;
  out.set_raid(spec.raid);
  out.set_unit_bytes(spec.unit_bytes);
  out.set_durability(static_cast<uint32_t>(spec.durability.value_or(StripeDurability::kNone)));
  std::vector<uint32_t> data = spec.data_ports, parity = spec.parity_ports;
  std::sort(data.begin(), data.end());
  std::sort(parity.begin(), parity.end());
  out.mutable_data_ports()->Add(data.begin(), data.end());
  out.mutable_parity_ports()->Add(parity.begin(), parity.end());
  return out;
}

const state::v1::StripeGroupState& StripeManager::existing(uint32_t group) const {
  if (state_.doc()) {
    auto it = state_.doc()->groups().find(group);
    if (it != state_.doc()->groups().end()) return it->second;
  }
  throw Error(
      ErrorCode::kNotFound,
      fmt::format("stripe group {} does not exist (asnctl stripe list shows the groups)", group));
}

// Clears valid, writes the entry with valid clear, then sets valid, and reads it back: the
// parity path never sees a half-written group.
void StripeManager::program(uint32_t group, const std::vector<uint32_t>& words) {
  std::vector<uint32_t> off = device_.read_entries(s::kGroupTable, group, 1);
  s::kGroupTableValid.put(off, 0);
  device_.write_entries(s::kGroupTable, group, off);
  std::vector<uint32_t> staged = words;
  s::kGroupTableValid.put(staged, 0);
  device_.write_entries(s::kGroupTable, group, staged);
  if (s::kGroupTableValid.get(words) != 0) device_.write_entries(s::kGroupTable, group, words);
  const std::vector<uint32_t> back = device_.read_entries(s::kGroupTable, group, 1);
  for (size_t w = 0; w < words.size(); ++w) {
    if (back[w] == words[w]) continue;
    throw Error(ErrorCode::kHardware,
                fmt::format("stripe.group_table[{}] word {} reads back 0x{:x}, not the 0x{:x} "
                            "written",
                            group, w, back[w], words[w]));
  }
}

// Makes the group table hold the document: entries that differ are reprogrammed, entries of
// no group cleared (asnd owns the table); the engine is enabled while any group exists.
StripeManager::Differences StripeManager::differing(const state::v1::StripeState& doc) {
  const uint32_t table = capacity();
  const std::vector<uint32_t> board = device_.read_entries(s::kGroupTable, 0, table);
  const size_t words = s::kGroupTable.words();
  Differences out;
  for (uint32_t g = 0; g < table; ++g) {
    auto it = doc.groups().find(g);
    auto want = entry_words(it == doc.groups().end() ? nullptr : &it->second);
    if (!std::equal(want.begin(), want.end(), board.begin() + static_cast<long>(g * words))) {
      out.entries.emplace_back(g, std::move(want));
    }
  }
  const uint32_t enable = doc.groups().empty() ? 0 : 1;
  if (device_.read(s::kConfigEnable) != enable) out.enable = enable;
  return out;
}

std::string StripeManager::apply(const state::v1::StripeState& doc) {
  const Differences differences = differing(doc);
  std::vector<std::string> did;
  for (const auto& [g, want] : differences.entries) {
    program(g, want);
    did.push_back(
        fmt::format("{} group {}", doc.groups().contains(g) ? "programmed" : "cleared", g));
  }
  for (const auto& [g, group] : doc.groups()) {
    if (g >= capacity()) did.push_back(fmt::format("group {} does not fit the board's table", g));
  }
  if (differences.enable) {
    device_.write(s::kConfigEnable, *differences.enable);
    did.push_back(*differences.enable ? "enabled striping" : "disabled striping");
  }
  if (did.empty()) return "the board already holds it";
  return fmt::format("{}", fmt::join(did, ", "));
}

std::string StripeManager::drift() {
  std::lock_guard lock(mutex_);
  if (!state_.doc()) return "";
  const Differences differences = differing(*state_.doc());
  std::vector<std::string> what;
  for (const auto& [g, want] : differences.entries) {
    what.push_back(state_.doc()->groups().contains(g)
                       ? fmt::format("stripe.group_table[{}] is not group {}'s entry", g, g)
                       : fmt::format("stripe.group_table[{}] holds an entry of no group", g));
  }
  if (differences.enable) {
    what.push_back(fmt::format("stripe.config.enable is {}, not {}", 1 - *differences.enable,
                               *differences.enable));
  }
  return fmt::format("{}", fmt::join(what, "; "));
}

std::string StripeManager::reconcile(ReconcileCause cause) {
  std::lock_guard lock(mutex_);
  return state_.reconcile(cause, [this](const state::v1::StripeState& doc) { return apply(doc); });
}

// A group with failed members is a problem an operator should act on (`asnctl status`
// warns): it has less redundancy than asked for, or none (issue 27 item 5).
ManagerSummary StripeManager::summary() const {
  std::lock_guard lock(mutex_);
  ManagerSummary out = state_.summary("stripe");
  if (!state_.doc()) return out;
  std::vector<std::string> degraded;
  for (const auto& [group, st] : state_.doc()->groups()) {
    std::vector<std::string> ports;
    for (uint32_t port : st.failed_ports()) {
      const auto why = st.failed_why().find(port);
      ports.push_back(fmt::format("port {} ({})", port,
                                  why == st.failed_why().end() ? "fail-member" : why->second));
    }
    if (ports.empty()) continue;
    degraded.push_back(
        fmt::format("group {} degraded: {} failed; asnctl stripe rebuild-member "
                    "{} PORT once replaced",
                    group, fmt::join(ports, ", "), group));
  }
  if (degraded.empty()) return out;
  std::sort(degraded.begin(), degraded.end());
  out.status += "; " + fmt::format("{}", fmt::join(degraded, "; "));
  out.problem = true;
  return out;
}

// Stores the document with `group` set to `next` (or removed, for nullptr), programs the
// board, commits. Called with mutex_ held.
StripeChange StripeManager::commit_group(uint32_t group, const state::v1::StripeGroupState* next) {
  state::v1::StripeState doc = state_.doc().value_or(state::v1::StripeState());
  if (next != nullptr) {
    (*doc.mutable_groups())[group] = *next;
  } else {
    doc.mutable_groups()->erase(group);
  }
  state_.begin(doc);
  try {
    apply(doc);
  } catch (const Error&) {
    state_.rollback();
    throw;
  }
  state_.commit();
  StripeChange out;
  out.revision = state_.revision();
  out.changed = true;
  return out;
}

StripeGroupView StripeManager::view(uint32_t group, const state::v1::StripeGroupState& state,
                                    const std::vector<uint32_t>& board_words) {
  StripeGroupView out;
  out.group = group;
  out.state = state;
  const auto want = entry_words(&state);
  if (board_words == want) {
    out.board = "in force";
  } else if (board_words.size() != want.size() || s::kGroupTableValid.get(board_words) == 0) {
    out.board = "not on the board (a restore is due)";
  } else {
    out.board = "the board's entry differs (a restore is due)";
  }
  // Only of a group the board holds: the parity path counts a request for any other one as
  // a client error (stripe.errors), and looking is not one.
  StripeDataPort* port = device_.stripe_data_port();
  if (port != nullptr && board_words.size() == want.size() &&
      s::kGroupTableValid.get(board_words) != 0) {
    try {
      out.file_size = static_cast<int64_t>(port->file_size(static_cast<uint16_t>(group)));
    } catch (const Error&) {
      out.file_size = -1;  // the entry is not on the board yet: the board says so above
    }
  }
  return out;
}

std::vector<StripeGroupView> StripeManager::list() {
  // The document is copied and the lock let go before the data path is asked for file
  // sizes: a rebuild holds the data path for as long as it runs, and changes of other
  // groups must not wait for it.
  std::map<uint32_t, state::v1::StripeGroupState> groups;
  {
    std::lock_guard lock(mutex_);
    if (state_.doc()) groups.insert(state_.doc()->groups().begin(), state_.doc()->groups().end());
  }
  std::vector<StripeGroupView> out;
  for (const auto& [g, group] : groups) {
    std::vector<uint32_t> words(s::kGroupTable.words(), 0);
    if (g < capacity()) words = device_.read_entries(s::kGroupTable, g, 1);
    out.push_back(view(g, group, words));
  }
  return out;
}

StripeChange StripeManager::create(const StripeGroupSpec& spec, bool validate_only) {
  const state::v1::StripeGroupState next = checked(spec);
  std::lock_guard group_guard(group_lock(spec.group));
  std::lock_guard lock(mutex_);
  state_.require_usable();
  if (state_.doc() && state_.doc()->groups().contains(spec.group)) {
    throw Error(ErrorCode::kAlreadyExists,
                fmt::format("stripe group {} exists already (asnctl stripe update changes it, "
                            "asnctl stripe delete removes it)",
                            spec.group));
  }
  StripeChange out;
  if (validate_only) {
    out.revision = state_.revision();
  } else {
    out = commit_group(spec.group, &next);
  }
  out.group = view(spec.group, next, entry_words(validate_only ? nullptr : &next));
  if (validate_only) out.group.board = "dry run: not written";
  return out;
}

StripeChange StripeManager::update(const StripeGroupSpec& spec, bool validate_only,
                                   bool discard_file) {
  if (spec.group >= capacity()) checked(spec);  // says which entries the table has
  std::lock_guard group_guard(group_lock(spec.group));
  std::lock_guard lock(mutex_);
  state_.require_usable();
  // A group that does not exist is that, whatever else the request says.
  const state::v1::StripeGroupState current = existing(spec.group);
  state::v1::StripeGroupState next = checked(spec);
  // What the caller did not name is kept, as a layout change keeps nothing else it did not
  // ask for.
  if (!spec.durability) next.set_durability(current.durability());
  StripeChange out;
  out.revision = state_.revision();
  if (same_layout(current, next)) {
    if (current.durability() == next.durability()) {
      out.group = view(spec.group, current, device_.read_entries(s::kGroupTable, spec.group, 1));
      return out;  // nothing asked for that is not in force
    }
    // The durability alone moves no data: the file and the failed marks stay.
    state::v1::StripeGroupState kept = current;
    kept.set_durability(next.durability());
    if (validate_only) {
      out.group = view(spec.group, kept, entry_words(nullptr));
      out.group.board = "dry run: not written";
      return out;
    }
    out = commit_group(spec.group, &kept);
    out.group = view(spec.group, kept, entry_words(&kept));
    return out;
  }
  // The file's units are where the old layout put them; a new layout would read garbage.
  StripeDataPort* port = device_.stripe_data_port();
  const uint64_t size = port ? port->file_size(static_cast<uint16_t>(spec.group)) : 0;
  if (size > 0 && !discard_file) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("stripe group {} holds a file of {} bytes laid out for its current "
                            "raid level, unit and ports; its layout changes only while it is "
                            "empty: give --discard-file to drop the file, or delete the group and "
                            "create it again; nothing was changed",
                            spec.group, size));
  }
  if (validate_only) {
    out.group = view(spec.group, next, entry_words(nullptr));
    out.group.board = "dry run: not written";
    return out;
  }
  if (size > 0) port->discard(static_cast<uint16_t>(spec.group));
  // A new layout starts whole: the failed marks were about the old members' data.
  out = commit_group(spec.group, &next);
  out.group = view(spec.group, next, entry_words(&next));
  return out;
}

StripeChange StripeManager::remove(uint32_t group, bool validate_only) {
  std::lock_guard group_guard(group_lock(group));
  std::lock_guard lock(mutex_);
  state_.require_usable();
  const state::v1::StripeGroupState current = existing(group);
  StripeChange out;
  out.group = view(group, current, device_.read_entries(s::kGroupTable, group, 1));
  out.revision = state_.revision();
  if (validate_only) return out;
  // The storage servers drop the file while the entry is still valid (the data port knows
  // only valid groups), then the entry goes. A crash in between leaves the group with an
  // empty file, which a repeated delete removes; never a file no group names.
  if (StripeDataPort* port = device_.stripe_data_port()) {
    try {
      port->discard(static_cast<uint16_t>(group));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound) throw;  // not on the board: nothing to drop
    }
  }
  const StripeChange done = commit_group(group, nullptr);
  out.revision = done.revision;
  out.changed = true;
  return out;
}

StripeStats StripeManager::stats(uint32_t group) {
  state::v1::StripeGroupState st;
  StripeStats out;
  {
    std::lock_guard lock(mutex_);  // not across the data path: see list()
    st = existing(group);
    if (auto it = scrub_totals_.find(group); it != scrub_totals_.end()) {
      out.scrubbed_stripes = it->second.stripes;
      out.scrub_mismatches = it->second.mismatches;
      out.scrub_repaired = it->second.repaired;
    }
  }
  out.group = view(group, st, device_.read_entries(s::kGroupTable, group, 1));
  Device::ReadBatch batch;
  const size_t first = batch.add64(s::kDataUnits);
  batch.add64(s::kParityUnits);
  batch.add64(s::kBytesStriped);
  batch.add64(s::kErrors);
  batch.add64(s::kBytesRead);
  batch.add64(s::kUnitsRebuilt);
  device_.read(batch);
  out.data_units = batch[first];
  out.parity_units = batch[first + 1];
  out.bytes_striped = batch[first + 2];
  out.errors = batch[first + 3];
  out.bytes_read = batch[first + 4];
  out.units_rebuilt = batch[first + 5];
  const std::set<uint32_t> failed(st.failed_ports().begin(), st.failed_ports().end());
  for (uint32_t port : out.group.members()) {
    const auto words = device_.read_entries(s::kMemberCounters, port, 1);
    StripeMemberStats m;
    m.port = port;
    m.parity = std::count(st.parity_ports().begin(), st.parity_ports().end(), port) > 0;
    m.failed = failed.contains(port);
    m.units = (uint64_t{s::kMemberCountersUnitsHi.get(words)} << 32) |
              s::kMemberCountersUnitsLo.get(words);
    m.bytes = (uint64_t{s::kMemberCountersBytesHi.get(words)} << 32) |
              s::kMemberCountersBytesLo.get(words);
    out.members.push_back(m);
  }
  return out;
}

}  // namespace asn

#include "fabric/lock_map_agent.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "error.hpp"

namespace asn {

LockMapAgent::LockMapAgent(const FabricConfig& config, etcd::Client& client, LockManager& locks,
                           std::chrono::milliseconds takeover_grace, OnStatus on_status)
    : config_(config),
      client_(client),
      locks_(locks),
      takeover_grace_(takeover_grace),
      on_status_(std::move(on_status)),
      key_(fabric::lock_map_key(config.etcd.prefix, config.name)),
      token_key_(fabric::lock_tokens_key(config.etcd.prefix, config.name, config.switch_name)) {}

void LockMapAgent::on_value(const std::string& value, int64_t revision) {
  std::lock_guard lock(mutex_);
  // The watch and check() both report: never go back to an older map.
  if (revision < seen_) return;
  seen_ = revision;
  if (value.empty() && revision_ > 0) {
    // Deleted by hand (asnctl never deletes it: a fabric that had a map keeps one, if need be
    // without owners). Every switch serving every file at once would grant bytes another
    // still holds: as with a damaged map, the one in force stays, unconfirmed, and the switch
    // stops granting once its last confirmation runs out.
    const std::string why = fmt::format(
        "the lock map was deleted from etcd ({}, revision {}): apply the fabric file again "
        "(without owners, 'locks: {{owners: []}}', to grant on no file), or restart every asnd "
        "of the fabric to lock each alone",
        key_, revision);
    if (refused_ != revision) spdlog::error("fabric: {}", why);
    refused_ = revision;
    on_status_(revision_, 0, why);
    return;
  }
  if (value.empty()) {
    if (revision_ != 0) locks_.set_lock_map(std::nullopt, takeover_grace_);  // none: known now
    revision_ = 0;
    on_status_(0, fabric::kLockSlots, "");
    return;
  }
  if (revision == revision_ || revision == refused_) return;
  fabric::LockMap map;
  try {
    map = fabric::parse_lock_map_document(value);
  } catch (const std::invalid_argument& e) {
    // The map in force stays, unconfirmed: the switch stops granting once its last
    // confirmation runs out, rather than guess at who owns what.
    const std::string why = fmt::format("the lock map at etcd revision {} ({}) is refused: {}",
                                        revision, key_, e.what());
    spdlog::error("fabric: {}", why);
    refused_ = revision;
    on_status_(std::max<int64_t>(revision_, 0), 0, why);
    return;
  }
  LockOwnership ownership;
  ownership.fabric = config_.name;
  ownership.self = config_.switch_name;
  ownership.revision = revision;
  uint32_t slots = 0;
  for (const fabric::LockAssignment& a : map.assignments()) {
    ownership.ranges.push_back({a.first_slot(), a.last_slot(), a.owner(), a.endpoint(), a.epoch()});
    if (a.owner() == config_.switch_name) slots += a.last_slot() - a.first_slot() + 1;
  }
  try {
    locks_.set_lock_map(std::move(ownership), takeover_grace_);
  } catch (const Error& e) {
    // A revision tokens cannot embed: as a damaged map, the one in force stays, unconfirmed.
    spdlog::error("fabric: {}", e.what());
    refused_ = revision;
    on_status_(std::max<int64_t>(revision_, 0), 0, e.what());
    return;
  }
  revision_ = revision;
  on_status_(revision, slots, "");
}

void LockMapAgent::check() {
  const auto sent = LockClock::now();
  // Half the tokens the revision allows are used: a write, so that the read below sees a
  // newer revision and the next tokens embed it (lock_manager_fabric.cc, "the counter").
  if (locks_.tokens_need_revision()) {
    const int64_t at = client_.put({token_key_, config_.switch_name});
    spdlog::info("fabric: fencing tokens moved on to etcd revision {} ({} written)", at,
                 token_key_);
  }
  const etcd::Range range = client_.get(key_);
  if (range.kvs.empty()) {
    on_value("", range.revision);
    return;
  }
  const etcd::KeyValue& kv = range.kvs[0];
  on_value(kv.value, kv.mod_revision);
  // Read at or after `sent`, the map said what the LockManager holds: it may grant on it for
  // one status lease from then (lock_manager_fabric.cc).
  // The read's header revision: the map was current then, and a move is written after it.
  locks_.confirm_lock_map(kv.mod_revision, range.revision,
                          sent + std::chrono::seconds(config_.status_ttl_s));
  fabric::LockMap map;
  try {
    map = fabric::parse_lock_map_document(kv.value);
  } catch (const std::invalid_argument&) {
    return;  // on_value said so
  }
  take_over(map, kv.mod_revision);
}

// Failover (the class comment): the owner of `map` whose slots this switch is to take now,
// or "" (none is gone long enough, or another switch is its successor).
std::string LockMapAgent::dead_owner(const fabric::v1::LockMap& map) {
  std::set<std::string> owners;
  for (const auto& a : map.assignments()) {
    if (a.owner() != config_.switch_name) owners.insert(a.owner());
  }
  std::erase_if(gone_since_, [&](const auto& kv) { return !owners.contains(kv.first); });
  if (owners.empty()) return "";
  const std::string base =
      fmt::format("{}/fabrics/{}/switches/", config_.etcd.prefix, config_.name);
  std::set<std::string> alive;     // status under its lease
  std::set<std::string> reported;  // reported once (last-status)
  // Which keys exist is all this needs: every renewal of every member reads them.
  for (const etcd::KeyValue& kv : client_.get_prefix(base, 0, /*keys_only=*/true).kvs) {
    const std::string rest = kv.key.substr(base.size());
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    const std::string leaf = rest.substr(slash + 1);
    if (leaf == "status") alive.insert(rest.substr(0, slash));
    if (leaf == "last-status") reported.insert(rest.substr(0, slash));
  }
  const auto now = std::chrono::steady_clock::now();
  for (const std::string& owner : owners) {
    // A switch that never reported has not started yet: it is not dead.
    if (alive.contains(owner) || !reported.contains(owner)) {
      gone_since_.erase(owner);
      continue;
    }
    const auto since = gone_since_.emplace(owner, now).first->second;
    if (now - since < std::chrono::seconds(config_.status_ttl_s)) continue;
    // The next live switch after it in name order (wrapping) takes its slots: every switch
    // reading the same keys picks the same one.
    auto next = alive.upper_bound(owner);
    if (next == alive.end()) next = alive.begin();
    if (next != alive.end() && *next == config_.switch_name) return owner;
  }
  return "";
}

void LockMapAgent::take_over(const fabric::v1::LockMap& map, int64_t revision) {
  const std::string owner = dead_owner(map);
  if (owner.empty()) return;
  std::string endpoint;
  const etcd::Range fabric_doc = client_.get(fabric::fabric_key(config_.etcd.prefix, config_.name));
  try {
    if (!fabric_doc.kvs.empty()) {
      const fabric::FabricSpec spec = fabric::parse_fabric_document(fabric_doc.kvs[0].value);
      if (const auto* sw = fabric::find_switch(spec, config_.switch_name))
        endpoint = sw->endpoint();
    }
  } catch (const std::invalid_argument& e) {
    spdlog::warn("fabric: cannot take over the lock slots of switch {}: {}", owner, e.what());
    return;
  }
  fabric::v1::LockMap moved = map;
  moved.set_epoch(map.epoch() + 1);
  uint32_t slots = 0;
  for (auto& a : *moved.mutable_assignments()) {
    if (a.owner() != owner) continue;
    a.set_owner(config_.switch_name);
    a.set_endpoint(endpoint);
    a.set_epoch(moved.epoch());
    slots += a.last_slot() - a.first_slot() + 1;
  }
  // Written only if the map is still the one read and the owner's status still gone: of all
  // the switches that see it, one move, and none of an owner that came back meanwhile.
  const std::string status = fabric::status_key(config_.etcd.prefix, config_.name, owner);
  const etcd::TxnResult txn =
      client_.txn({{key_, revision}, {status, 0}}, {etcd::Put{key_, fabric::to_json(moved)}});
  if (txn.succeeded) {
    spdlog::warn(
        "fabric: switch {} has not reported for {} s: this switch takes over its {} lock slots "
        "at epoch {} (etcd revision {}), granting on them after {} s",
        owner, config_.status_ttl_s, slots, moved.epoch(), txn.revision,
        std::chrono::duration_cast<std::chrono::seconds>(takeover_grace_).count());
  }
}

}  // namespace asn

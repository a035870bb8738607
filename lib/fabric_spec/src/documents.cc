// etcd_documents and their readers: the fabric as etcd stores it, canonical JSON per
// document.
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "asn/text/text.hpp"
#include "check.hpp"

namespace asn::fabric {
namespace {

using text::cat;
namespace util = google::protobuf::util;

constexpr std::string_view kTypeUrlPrefix = "type.googleapis.com";

util::TypeResolver& type_resolver() {
  static const std::unique_ptr<util::TypeResolver> resolver(util::NewTypeResolverForDescriptorPool(
      std::string(kTypeUrlPrefix), google::protobuf::DescriptorPool::generated_pool()));
  return *resolver;
}

template <typename Message>
Message parse_json(std::string_view json, std::string_view what) {
  Message message;
  util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a field we do not know is damage or a newer writer
  const auto status = util::JsonStringToMessage(std::string(json), &message, options);
  if (!status.ok()) {
    throw std::invalid_argument(cat(what, " is not a ", Message::descriptor()->full_name(),
                                    " document: ", std::string(status.message())));
  }
  return message;
}

void check_switch_document(const SwitchSpec& sw, std::string_view what) {
  if (!detail::is_key_segment(sw.fabric())) {
    throw std::invalid_argument(
        cat(what, ": fabric ", text::quoted(sw.fabric(), 40), " is not a fabric name"));
  }
  if (!detail::is_key_segment(sw.name())) {
    throw std::invalid_argument(
        cat(what, ": name ", text::quoted(sw.name(), 40), " is not a switch name"));
  }
}

// The checks of the fabric file over a document read back: one written by hand, or by an
// asnctl with other profiles, must not reach a board unchecked.
void check_document(const FabricSpec& spec, std::string_view what) {
  const std::vector<detail::Finding> findings = detail::check_spec(spec);
  if (findings.empty()) return;
  const detail::Finding& first = findings.front();
  throw std::invalid_argument(cat(
      what, " fails its checks: ",
      first.switch_name.empty() ? "" : cat("switch '", first.switch_name, "': "), first.key, ": ",
      first.message, findings.size() > 1 ? cat(" (and ", findings.size() - 1, " more)") : ""));
}

}  // namespace

int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string to_json(const google::protobuf::Message& document) {
  // Deterministic binary (map entries by key) turned into JSON: the same message always gives
  // the same bytes, which MessageToJsonString does not promise for maps.
  std::string binary;
  {
    google::protobuf::io::StringOutputStream stream(&binary);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    document.SerializeToCodedStream(&coded);
  }
  util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = util::BinaryToJsonString(
      &type_resolver(), cat(kTypeUrlPrefix, "/", document.GetDescriptor()->full_name()), binary,
      &json, options);
  if (!status.ok()) {
    throw std::logic_error(cat("cannot print ", document.GetDescriptor()->full_name(),
                               " as JSON: ", std::string(status.message())));
  }
  return json;
}

std::string fabric_key(std::string_view prefix, std::string_view fabric) {
  return cat(prefix, "/fabrics/", fabric, "/fabric");
}

std::string switch_key(std::string_view prefix, std::string_view fabric, std::string_view name) {
  return cat(prefix, "/fabrics/", fabric, "/switches/", name, "/desired");
}

std::string status_key(std::string_view prefix, std::string_view fabric, std::string_view name) {
  return cat(prefix, "/fabrics/", fabric, "/switches/", name, "/status");
}

std::string last_status_key(std::string_view prefix, std::string_view fabric,
                            std::string_view name) {
  return cat(prefix, "/fabrics/", fabric, "/switches/", name, "/last-status");
}

std::string activation_key(std::string_view prefix, std::string_view fabric) {
  return cat(prefix, "/fabrics/", fabric, "/activation");
}

std::string activation_report_key(std::string_view prefix, std::string_view fabric,
                                  std::string_view name) {
  return cat(prefix, "/fabrics/", fabric, "/switches/", name, "/activation");
}

std::map<std::string, std::string> etcd_documents(const FabricSpec& spec, std::string_view prefix) {
  std::map<std::string, std::string> documents;
  // The lock map is a key of its own: the switches watch it, and its epochs are etcd's.
  FabricSpec fabric = spec;
  fabric.clear_locks();
  documents.emplace(fabric_key(prefix, spec.name()), to_json(fabric));
  if (spec.has_locks()) documents.emplace(lock_map_key(prefix, spec.name()), to_json(spec.locks()));
  for (const SwitchSpec& sw : spec.switches()) {
    documents.emplace(switch_key(prefix, spec.name(), sw.name()), to_json(sw));
  }
  return documents;
}

SwitchSpec parse_switch_document(std::string_view json) {
  SwitchSpec sw = parse_json<SwitchSpec>(json, "the switch document");
  check_switch_document(sw, "the switch document");
  // As the one switch of its fabric: its router, profile and thresholds.
  FabricSpec alone;
  alone.set_name(sw.fabric());
  alone.set_terminals(sw.terminals());
  alone.set_k(sw.k());
  alone.set_double_rate(sw.double_rate());
  *alone.mutable_routing() = sw.routing();
  *alone.add_switches() = sw;
  check_document(alone, "the switch document");
  return sw;
}

FabricSpec parse_fabric_document(std::string_view json) {
  FabricSpec spec = parse_json<FabricSpec>(json, "the fabric document");
  std::string previous;
  for (const SwitchSpec& sw : spec.switches()) {
    const std::string what = cat("the fabric document, switch ", text::quoted(sw.name(), 40));
    check_switch_document(sw, what);
    if (sw.fabric() != spec.name()) {
      throw std::invalid_argument(cat(what, ": it names fabric ", text::quoted(sw.fabric(), 40),
                                      ", not '", spec.name(), "'"));
    }
    if (sw.name() <= previous) {
      throw std::invalid_argument(cat(what, ": switches are not in ascending name order"));
    }
    previous = sw.name();
  }
  check_document(spec, "the fabric document");
  return spec;
}

LockMap parse_lock_map_document(std::string_view json) {
  LockMap map = parse_json<LockMap>(json, "the lock map document");
  std::vector<detail::Finding> findings;
  detail::check_lock_map(map, nullptr, findings);
  for (int i = 1; findings.empty() && i < map.assignments_size(); ++i) {
    if (map.assignments(i).first_slot() <= map.assignments(i - 1).first_slot()) {
      findings.push_back({"", "assignments", "not in ascending slot order"});
    }
  }
  if (!findings.empty()) {
    throw std::invalid_argument(cat("the lock map document fails its checks: ",
                                    findings.front().key, ": ", findings.front().message));
  }
  return map;
}

}  // namespace asn::fabric

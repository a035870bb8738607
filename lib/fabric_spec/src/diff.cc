// diff and render_diff: what an apply would change, per document and per field.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "asn/fabric_spec/fabric_spec.hpp"
#include "asn/text/text.hpp"

namespace asn::fabric {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::util::MessageDifferencer;
using text::cat;

// "routing.mode" -> "minimal", in the message's field order.
using Fields = std::vector<std::pair<std::string, std::string>>;

std::string scalar_text(const Message& message, const FieldDescriptor& field) {
  const auto* reflection = message.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t value = reflection->GetUInt32(message, &field);
      // Routing.mode by the words asnctl uses.
      if (field.containing_type() == Routing::descriptor() && field.name() == "mode") {
        return routing_mode_name(value);
      }
      return cat(value);
    }
    case FieldDescriptor::CPPTYPE_UINT64:
      return cat(reflection->GetUInt64(message, &field));
    case FieldDescriptor::CPPTYPE_BOOL:
      return reflection->GetBool(message, &field) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_STRING:
      return text::quoted(reflection->GetString(message, &field), 80);
    default:
      throw std::logic_error(cat("no rendering for field ", field.full_name()));
  }
}

// Map fields as "<path>.<key>", the FabricSpec's switches left out (each has its document).
void flatten(const Message& message, const std::string& prefix, Fields& out) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    const std::string path = prefix + field.name();
    if (field.is_map()) {
      std::vector<std::pair<uint64_t, std::string>> entries;
      for (int e = 0; e < reflection->FieldSize(message, &field); ++e) {
        const Message& entry = reflection->GetRepeatedMessage(message, &field, e);
        const auto* key = entry.GetDescriptor()->map_key();
        entries.emplace_back(entry.GetReflection()->GetUInt32(entry, key),
                             scalar_text(entry, *entry.GetDescriptor()->map_value()));
      }
      std::sort(entries.begin(), entries.end());
      for (const auto& [key, value] : entries) out.emplace_back(cat(path, ".", key), value);
    } else if (field.is_repeated()) {
      continue;  // FabricSpec.switches: summarised by name in describe_fabric
    } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      flatten(reflection->GetMessage(message, &field), path + ".", out);
    } else if (!field.has_presence() || reflection->HasField(message, &field)) {
      out.emplace_back(path, scalar_text(message, field));
    }
  }
}

std::vector<std::string> field_changes(const Fields& before, const Fields& after) {
  std::map<std::string, std::string> old_values(before.begin(), before.end());
  std::map<std::string, std::string> new_values(after.begin(), after.end());
  std::vector<std::string> lines;
  for (const auto& [path, value] : after) {
    auto old = old_values.find(path);
    if (old == old_values.end()) {
      lines.push_back(cat(path, ": (unset) -> ", value));
    } else if (old->second != value) {
      lines.push_back(cat(path, ": ", old->second, " -> ", value));
    }
  }
  for (const auto& [path, value] : before) {
    if (!new_values.contains(path)) lines.push_back(cat(path, ": ", value, " -> (unset)"));
  }
  return lines;
}

// "a, b, c", or the first few and how many more: a fabric of 100 switches whose routing
// changed lists them in their own documents' diffs.
std::string name_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return text::join(names);
  return cat(text::join(std::vector(names.begin(), names.begin() + kShown)), " and ",
             names.size() - kShown, " more");
}

std::map<std::string, const SwitchSpec*> switches_by_name(const FabricSpec& spec) {
  std::map<std::string, const SwitchSpec*> switches;
  for (const SwitchSpec& sw : spec.switches()) switches.emplace(sw.name(), &sw);
  return switches;
}

std::vector<std::string> describe_fabric(std::string_view stored, std::string_view wanted) {
  const FabricSpec before = parse_fabric_document(stored);
  const FabricSpec after = parse_fabric_document(wanted);
  Fields old_fields, new_fields;
  flatten(before, "", old_fields);
  flatten(after, "", new_fields);
  std::vector<std::string> lines = field_changes(old_fields, new_fields);
  // The switches by name only: their fields are in their own documents' diffs.
  const auto old_switches = switches_by_name(before);
  const auto new_switches = switches_by_name(after);
  std::vector<std::string> changed, added, removed;
  for (const auto& [name, sw] : new_switches) {
    auto old = old_switches.find(name);
    if (old == old_switches.end()) {
      added.push_back(name);
    } else if (!MessageDifferencer::Equals(*old->second, *sw)) {
      changed.push_back(name);
    }
  }
  for (const auto& [name, sw] : old_switches) {
    if (!new_switches.contains(name)) removed.push_back(name);
  }
  for (const auto& [sign, names] : {std::pair{"~", &changed}, {"+", &added}, {"-", &removed}}) {
    if (!names->empty()) lines.push_back(cat("switches: ", sign, " ", name_list(*names)));
  }
  return lines;
}

std::vector<std::string> describe_switch(std::string_view stored, std::string_view wanted) {
  Fields old_fields, new_fields;
  flatten(parse_switch_document(stored), "", old_fields);
  flatten(parse_switch_document(wanted), "", new_fields);
  return field_changes(old_fields, new_fields);
}

// The changed fields of one document, by the kind its key names; a stored document that
// cannot be read is said to be replaced, with why.
std::vector<std::string> describe_change(const std::string& key, std::string_view stored,
                                         std::string_view wanted) {
  try {
    if (key.ends_with("/desired")) return describe_switch(stored, wanted);
    if (key.ends_with("/fabric")) return describe_fabric(stored, wanted);
  } catch (const std::invalid_argument& e) {
    return {cat("(replaced: ", e.what(), ")")};
  }
  return {"(replaced)"};
}

}  // namespace

FabricDiff diff(const std::map<std::string, std::string>& stored,
                const std::map<std::string, std::string>& wanted) {
  FabricDiff result;
  for (const auto& [key, value] : wanted) {
    auto old = stored.find(key);
    if (old == stored.end()) {
      result.added.push_back(key);
    } else if (old->second == value) {
      ++result.unchanged;
    } else {
      std::vector<std::string> fields = describe_change(key, old->second, value);
      // Equal in content, written differently (by hand, by another printer): nothing that
      // an apply must rewrite.
      if (fields.empty()) {
        ++result.unchanged;
      } else {
        result.changed.push_back({key, std::move(fields)});
      }
    }
  }
  for (const auto& [key, value] : stored) {
    if (!wanted.contains(key)) result.removed.push_back(key);
  }
  return result;
}

std::string render_diff(const FabricDiff& diff) {
  if (diff.empty()) return cat("no changes (", diff.unchanged, " documents)\n");
  std::string out;
  for (const std::string& key : diff.added) out += cat("+ ", key, "\n");
  for (const FabricDiff::Change& change : diff.changed) {
    out += cat("~ ", change.key, "\n");
    for (const std::string& line : change.fields) out += cat("    ", line, "\n");
  }
  for (const std::string& key : diff.removed) out += cat("- ", key, "\n");
  out += cat(diff.added.size(), " to add, ", diff.changed.size(), " to change, ",
             diff.removed.size(), " to remove, ", diff.unchanged, " unchanged.\n");
  return out;
}

}  // namespace asn::fabric

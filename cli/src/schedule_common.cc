#include "schedule_common.hpp"

#include <cstdio>

#include "asn/schedule/plan_file.hpp"
#include "errors.hpp"
#include "output.hpp"

namespace asnctl {

void add_algorithm_option(CLI::App* sub, std::string& algorithm) {
  sub->add_option("--algorithm", algorithm,
                  "How patterns become slots: optimal (default: the fewest slots) or greedy "
                  "(the 000 baseline)")
      ->check(CLI::IsMember({"optimal", "greedy"}).description(""))
      ->type_name("ALGORITHM");
}

asn::v1::CompileAlgorithm to_algorithm(const std::string& name) {
  return name == "greedy" ? asn::v1::GREEDY : asn::v1::OPTIMAL;
}

std::string read_plan_file(const std::string& path) {
  const size_t limit = asn::schedule::ParseLimits{}.max_file_bytes;
  std::string text;
  try {
    text = asn::schedule::read_limited(path, limit, "file");
  } catch (const asn::schedule::PlanError& e) {
    // "cannot read the file: REASON" -> "cannot read PATH: REASON"
    const std::string& message = e.problem().message;
    const size_t reason = message.find(": ");
    throw UsageError("cannot read " + path +
                     (reason == std::string::npos ? "" : message.substr(reason)));
  }
  if (text.size() > limit) {
    throw UsageError(path + " is larger than a plan file may be (" + std::to_string(limit) +
                     " bytes); write large phases with patterns or generators");
  }
  return text;
}

std::string ms(uint64_t micros) { return strprintf("%.1f ms", static_cast<double>(micros) / 1e3); }

std::string format_ns(double ns) {
  if (ns < 1e3) return strprintf("%.4g ns", ns);
  if (ns < 1e6) return strprintf("%.4g us", ns / 1e3);
  if (ns < 1e9) return strprintf("%.4g ms", ns / 1e6);
  return strprintf("%.3f s", ns / 1e9);
}

std::string cycles_and_time(uint64_t cycles, uint64_t clock_hz) {
  std::string out = std::to_string(cycles) + (cycles == 1 ? " cycle" : " cycles");
  if (clock_hz == 0) return out;
  const double ns = static_cast<double>(cycles) * 1e9 / static_cast<double>(clock_hz);
  return out + " (" + format_ns(ns) + ")";
}

void print_warnings(const google::protobuf::RepeatedPtrField<asn::v1::PlanProblem>& warnings) {
  for (const auto& w : warnings) {
    std::string text = w.text().empty() ? w.message() : w.text();
    // The text says "file:line:col: warning: ..." already; the line starts with it instead.
    if (const size_t at = text.find("warning: "); at != std::string::npos) {
      text.erase(at, std::strlen("warning: "));
    }
    std::fprintf(stderr, "warning: %s\n", text.c_str());
  }
}

void print_phases(const google::protobuf::RepeatedPtrField<asn::v1::PhaseSummary>& phases,
                  const std::string& marked) {
  Table table({"PHASE", "CONNECTIONS", "SLOTS", "LOWER BOUND", "UTILISATION", "METHOD", "POLICY"});
  for (const auto& p : phases) {
    table.add_row({p.phase() + (p.phase() == marked ? "*" : ""), std::to_string(p.connections()),
                   std::to_string(p.slots()), std::to_string(p.lower_bound()),
                   strprintf("%.1f%%", p.utilisation() * 100), p.method(),
                   p.policy() + (p.wormhole() ? " + wormhole" : "")});
  }
  table.print(stdout);
}

int print_load(const asn::v1::LoadScheduleResponse& r, bool dry_run, bool json) {
  print_warnings(r.warnings());
  if (json) {
    print_json(r);
    return kExitOk;
  }
  print_phases(r.phases(), r.phase());
  const std::string what = "plan '" + r.plan() + "' phase '" + r.phase() + "'";
  if (dry_run) {
    std::printf("%s: checked, nothing written\n", what.c_str());
  } else if (!r.changed()) {
    std::printf("%s: already active (program %s), nothing written\n", what.c_str(),
                hex(r.program_id(), 16).c_str());
  } else {
    const auto& t = r.times();
    std::printf(
        "loaded %s: active from frame %llu (parse %s, compile %s, validate %s, write %s, read "
        "back %s, arm %s, wait %s)\n",
        what.c_str(), static_cast<unsigned long long>(r.active_from_frame()),
        ms(t.parse_us()).c_str(), ms(t.compile_us()).c_str(), ms(t.validate_us()).c_str(),
        ms(t.write_us()).c_str(), ms(t.readback_us()).c_str(), ms(t.arm_us()).c_str(),
        ms(t.wait_us()).c_str());
  }
  return kExitOk;
}

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += strprintf("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  fields_.push_back({key, quoted(value), {}, false});
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, double value) {
  fields_.push_back({key, strprintf("%.15g", value), {}, false});
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, bool value) {
  fields_.push_back({key, value ? "true" : "false", {}, false});
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<JsonObject>& objects) {
  fields_.push_back({key, "", objects, true});
  return *this;
}

std::string JsonObject::text(int indent) const {
  if (fields_.empty()) return "{}";
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  std::string out = "{\n";
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    out += pad + quoted(f.key) + ": ";
    if (!f.list) {
      out += f.scalar;
    } else if (f.objects.empty()) {
      out += "[]";
    } else {
      out += "[\n";
      for (size_t j = 0; j < f.objects.size(); ++j) {
        out += pad + "  " + f.objects[j].text(indent + 4);
        out += j + 1 < f.objects.size() ? ",\n" : "\n";
      }
      out += pad + "]";
    }
    out += i + 1 < fields_.size() ? ",\n" : "\n";
  }
  return out + std::string(static_cast<size_t>(indent), ' ') + "}";
}

}  // namespace asnctl

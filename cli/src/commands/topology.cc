// asnctl topology: the figures of a 2DFB fabric (004 Eq 4-23), and with --compare the
// folded-Clos, DBHC and hypercube built from routers of the same radix, as the seed's
// Table 1 and Table 3 compare them. Computed here, by the same library asnd uses; asnd is
// not contacted.
#include <google/protobuf/struct.pb.h>

#include <cstdio>
#include <string>

#include "asn/topology/compare.hpp"
#include "asn/topology/error.hpp"
#include "asn/topology/fabric.hpp"
#include "asn/topology/schedule.hpp"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

using asn::topology::ChannelMode;
using google::protobuf::Struct;
using google::protobuf::Value;

void set(Struct& s, const std::string& key, double value) {
  (*s.mutable_fields())[key].set_number_value(value);
}
void set(Struct& s, const std::string& key, const std::string& value) {
  (*s.mutable_fields())[key].set_string_value(value);
}

std::string dilation(const asn::topology::Fabric& fabric) {
  return strprintf("%g", fabric.last_dilation());
}

class Topology final : public Command {
 public:
  explicit Topology(CLI::App* sub) {
    sub->add_option("--terminals,-N", terminals_, "Terminals N of the fabric")->required();
    sub->add_option("--k,-k", k_, "Terminals per router (the ary)")->required();
    add_channels_option(sub, channels_);
    sub->add_flag("--compare", compare_,
                  "Compare with folded-Clos, DBHC and hypercube of the same radix (004 Table 1, "
                  "Table 3)");
  }
  void check() override {
    try {
      fabric_.emplace(terminals_, static_cast<uint32_t>(k_));
    } catch (const asn::topology::TopologyError& e) {
      throw UsageError(std::string("--") + e.what());
    }
  }
  int run(Session& s) override {
    const auto& f = *fabric_;
    const ChannelMode mode =
        channels_ == "double-rate" ? ChannelMode::kDoubleRate : ChannelMode::kDilated;
    if (compare_) return print_compare(s.format);
    const auto schedule = asn::topology::StaticSchedule::unsupported(f);
    if (s.format == OutputFormat::kJson) {
      Struct out;
      set(out, "terminals", f.terminals());
      set(out, "k", f.k());
      set(out, "dimensions", f.dimensions());
      set(out, "routers", f.routers());
      set(out, "radix", f.radix(mode));
      set(out, "radix_dilated", f.radix(ChannelMode::kDilated));
      set(out, "radix_double_rate", f.radix(ChannelMode::kDoubleRate));
      set(out, "last_dimension_dilation", f.last_dilation());
      set(out, "diameter", f.diameter());
      set(out, "switching_elements", static_cast<double>(f.switching_elements()));
      set(out, "links", static_cast<double>(f.links()));
      set(out, "double_rate_links", static_cast<double>(f.double_rate_links()));
      set(out, "worst_case_hops", f.worst_case_hops());
      set(out, "static_schedule", schedule ? "none: " + *schedule : std::string("yes"));
      print_json(out);
      return kExitOk;
    }
    std::printf("2DFB of %u terminals, %u per router (%s channels)\n", f.terminals(), f.k(),
                channels_.c_str());
    KeyValues kv;
    kv.add("dimensions", std::to_string(f.dimensions()));
    kv.add("routers", std::to_string(f.routers()));
    kv.add("radix", std::to_string(f.radix(mode)) + " ports per router (dilated " +
                        std::to_string(f.radix(ChannelMode::kDilated)) + ", double-rate " +
                        std::to_string(f.radix(ChannelMode::kDoubleRate)) + ")");
    if (!f.power_of_k()) {
      kv.add("last dimension", std::to_string(f.subsystems()) + " routers, dilation " +
                                   dilation(f) + " (004 Eq 4-9)");
    }
    kv.add("diameter", std::to_string(f.diameter()));
    kv.add("worst-case hops", std::to_string(f.worst_case_hops()));
    kv.add("switching elements", std::to_string(f.switching_elements()));
    kv.add("links", std::to_string(f.links()) + " of terminal bandwidth, " +
                        std::to_string(f.double_rate_links()) + " double-rate");
    kv.add("static schedule", schedule ? "none (" + *schedule + ")" : "yes (004 L376-431)");
    kv.print(stdout);
    return kExitOk;
  }

 private:
  int print_compare(OutputFormat format) {
    const auto rows = asn::topology::compare(*fabric_);
    if (format == OutputFormat::kJson) {
      Struct out;
      auto* list = (*out.mutable_fields())["topologies"].mutable_list_value();
      for (const auto& row : rows) {
        Struct r;
        set(r, "name", std::string(row.name));
        set(r, "radix", row.radix);
        set(r, "k", row.ary);
        set(r, "diameter", row.diameter);
        set(r, "switching_elements", static_cast<double>(row.switching_elements));
        set(r, "links", static_cast<double>(row.links));
        if (row.double_rate_links) set(r, "double_rate_links", *row.double_rate_links);
        set(r, "worst_case_hops", row.worst_case_hops);
        *list->add_values()->mutable_struct_value() = r;
      }
      print_json(out);
      return kExitOk;
    }
    std::printf("N = %u terminals, routers of radix %u (004 Table 1: r, k, d; Table 3: l, n)\n",
                fabric_->terminals(), rows[0].radix);
    Table table(
        {"TOPOLOGY", "RADIX", "K", "DIAMETER", "ROUTERS", "LINKS", "2B LINKS", "WORST HOPS"});
    for (const auto& row : rows) {
      table.add_row({std::string(row.name), std::to_string(row.radix), std::to_string(row.ary),
                     std::to_string(row.diameter), std::to_string(row.switching_elements),
                     std::to_string(row.links),
                     row.double_rate_links ? std::to_string(*row.double_rate_links) : "-",
                     std::to_string(row.worst_case_hops)});
    }
    table.print(stdout);
    return kExitOk;
  }

  uint64_t terminals_ = 0;
  uint64_t k_ = 0;
  std::string channels_ = "dilated";
  bool compare_ = false;
  std::optional<asn::topology::Fabric> fabric_;
};

const Registrar kTopology(50, [](CLI::App& app, CommandSet& commands) {
  auto* sub = app.add_subcommand("topology",
                                 "Figures of a 2DFB fabric (computed here; asnd is not contacted)");
  commands.add<Topology>(sub, sub);
});

}  // namespace

}  // namespace asnctl

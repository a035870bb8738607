// The fixture of the fabric tests (issue 25): a private 3-member etcd cluster on loopback and
// real asnd processes on emulated boards as members of fabric "lab", driven by the real asnctl.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "asnd_harness.hpp"
#include "etcd_cluster.hpp"

namespace asn::test {

using namespace std::chrono_literals;

// A 64-terminal 2DFB with k = 4: 16 routers, one asnd each.
constexpr int kRouters = 16;

class FabricFixture : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(etcd_.start()) << etcd_.logs(); }

  // Starts asnd for switches 0..count-1 (named s00, s01, ...), members of fabric "lab";
  // `config` is added to each asnd.yaml.
  void start_switches(int count, const std::string& config = "") {
    config_ = config;
    for (int i = 0; i < count; ++i) {
      dirs_.push_back(std::make_unique<TempDir>());
      switches_.push_back(std::make_unique<AsndProcess>(*dirs_.back(), unique_name("fab")));
      ASSERT_TRUE(start_switch(i)) << switches_.back()->log();
    }
  }

  bool start_switch(int i) {
    return switches_[i]->start({"--profile", "emulated-64port"},
                               member_config(switch_name(i)) + config_);
  }

  std::string member_config(const std::string& name) const {
    return fmt::format(
        "fabric:\n  name: lab\n  switch: {}\n  status_ttl: 3s\n"
        "  etcd: {{endpoints: '{}', timeout: 2s}}\n",
        name, etcd_.endpoints());
  }

  static std::string switch_name(int i) { return fmt::format("s{:02}", i); }

  // The fabric file: every started switch, `extra` appended to switch `special`'s entry.
  std::string fabric_file(const std::string& routing = "{mode: aldfb, enable: true}",
                          int special = -1, const std::string& extra = "") const {
    std::string text = fmt::format(
        "fabric: lab\ntopology: {{terminals: 64, k: 4, channels: dilated}}\nrouting: {}\n"
        "switches:\n",
        routing);
    for (size_t i = 0; i < switches_.size(); ++i) {
      text += fmt::format(
          "  - {{name: {}, router: {}, profile: emulated-64port, endpoint: "
          "'unix:{}'{}}}\n",
          switch_name(static_cast<int>(i)), i, switches_[i]->socket(),
          static_cast<int>(i) == special ? ", " + extra : "");
    }
    return text;
  }

  CommandResult fabric(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ASNCTL_PATH, "fabric"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--etcd", etcd_.endpoints()});
    return run_command(argv);
  }

  // Writes `text` as a fabric file and applies it; returns the revision it was written at.
  int64_t apply(const std::string& text) {
    const std::string path = dir_.file(unique_name("fabric") + ".yaml");
    write_file(path, text);
    const CommandResult r = fabric({"apply", path, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    return static_cast<int64_t>(json_number(r.out, "revision").value_or(0));
  }

  // `asnctl fabric status --wait`: every switch in force at `revision`.
  CommandResult wait_in_force(int64_t revision) const {
    return fabric({"status", "lab", "--wait", std::to_string(revision), "--wait-timeout",
                   std::to_string(scaled(60s).count() / 1000)});
  }

  uint64_t fabric_revision_of(int i) const {
    const CommandResult r = switches_[i]->asnctl({"fabric", "show", "-o", "json"});
    return json_number(r.out, "revision").value_or(0);
  }

  std::string config_;
  TempDir dir_;
  EtcdCluster etcd_{dir_, 3};
  std::vector<std::unique_ptr<TempDir>> dirs_;
  std::vector<std::unique_ptr<AsndProcess>> switches_;
};

}  // namespace asn::test

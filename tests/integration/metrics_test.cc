// listen.metrics (issue 28 item 1): the real asnd serves GET /metrics; the test scrapes it with
// a plain socket client, parses every line of the Prometheus text format, checks the naming
// conventions, then changes things through asnctl and sees the matching values move.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

struct HttpReply {
  int status = 0;
  std::string headers;
  std::string body;
};

// One HTTP/1.0 request on a connection of its own; the server closes it after the reply.
HttpReply http_get(int port, const std::string& path, const std::string& method = "GET") {
  HttpReply reply;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return reply;
  }
  const std::string request = method + " " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return reply;
  }
  std::string all;
  char buf[8192];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (end == std::string::npos || all.size() < 12) return reply;
  reply.status = std::stoi(all.substr(9, 3));
  reply.headers = all.substr(0, end);
  reply.body = all.substr(end + 4);
  return reply;
}

// One scrape, parsed: every sample by its name and labels as written
// (`asn_port_enabled{port="2"}`). Each line must be a HELP or TYPE comment or a sample of a
// family whose TYPE came before it; a counter's name ends in _total; every name is asn_'s.
struct Scrape {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  // family -> counter|gauge
  std::vector<std::string> problems;

  double at(const std::string& key) const {
    auto it = samples.find(key);
    return it == samples.end() ? -1 : it->second;
  }
  // The sum of a family's samples whose labels contain `part`.
  double sum(const std::string& family, const std::string& part = "") const {
    double total = 0;
    for (const auto& [key, v] : samples) {
      const std::string name = key.substr(0, key.find('{'));
      if (name == family && key.find(part) != std::string::npos) total += v;
    }
    return total;
  }
};

Scrape parse(const std::string& text) {
  static const std::regex kHelp(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*)");
  static const std::regex kType(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge))");
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")"
      R"((?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*\})? (-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?))");
  Scrape out;
  std::istringstream lines(text);
  std::string line;
  std::string family;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kHelp)) {
      family = m[1];
    } else if (std::regex_match(line, m, kType)) {
      if (m[1] != family) out.problems.push_back("TYPE not after its HELP: " + line);
      out.types[m[1]] = m[2];
      if (!family.starts_with("asn_")) out.problems.push_back("not asn_: " + family);
      if ((m[2] == "counter") != family.ends_with("_total")) {
        out.problems.push_back("counter iff _total: " + line);
      }
    } else if (std::regex_match(line, m, kSample)) {
      if (m[1] != family || !out.types.count(family)) {
        out.problems.push_back("sample outside its family: " + line);
      }
      const std::string key = std::string(m[1]) + std::string(m[2]);
      if (!out.samples.emplace(key, std::stod(m[3])).second) {
        out.problems.push_back("sample twice: " + line);
      }
    } else {
      out.problems.push_back("not the text format: " + line);
    }
  }
  return out;
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = free_tcp_port();
    ASSERT_TRUE(asnd_.start({}, "listen:\n  metrics: 127.0.0.1:" + std::to_string(port_) + "\n"))
        << asnd_.log();
  }
  Scrape scrape() {
    const HttpReply reply = http_get(port_, "/metrics");
    EXPECT_EQ(reply.status, 200) << reply.headers << reply.body;
    EXPECT_THAT(reply.headers, HasSubstr("text/plain; version=0.0.4"));
    Scrape s = parse(reply.body);
    EXPECT_THAT(s.problems, ::testing::IsEmpty()) << reply.body;
    return s;
  }

  TempDir dir_;
  AsndProcess asnd_{dir_, "mt"};
  int port_ = 0;
};

TEST_F(MetricsTest, AScrapeFollowsTheFormatAndItsValuesMoveWithTheBoard) {
  const Scrape before = scrape();
  for (const char* family :
       {"asn_board_generation", "asn_board_bus_errors_total", "asn_port_rx_packets_total",
        "asn_port_vc_queue_occupancy", "asn_manager_desired_revision", "asn_tdm_frames_total",
        "asn_lock_grants_total", "asn_lock_session_ends_total", "asn_stripe_bytes_total",
        "asn_listener_connections", "asn_grpc_calls_total"}) {
    EXPECT_TRUE(before.types.count(family)) << family;
  }
  EXPECT_EQ(before.at(R"(asn_port_enabled{port="2"})"), 1);

  // A port set down through its manager: the board and the desired revision follow.
  ASSERT_EQ(asnd_.asnctl({"port", "set", "2", "down"}).exit_code, 0);
  Scrape after = scrape();
  EXPECT_EQ(after.at(R"(asn_port_enabled{port="2"})"), 0);
  EXPECT_GT(after.at(R"(asn_manager_desired_revision{manager="ports"})"),
            before.at(R"(asn_manager_desired_revision{manager="ports"})"));
  EXPECT_EQ(after.at(R"(asn_manager_problem{manager="ports"})"), 0);

  // A register written behind the port manager's back: the board differs, a problem.
  ASSERT_EQ(asnd_.asnctl({"regs", "write", "port[2].control.enable=1"}).exit_code, 0);
  // A refused write (read-only): counted by code.
  EXPECT_EQ(asnd_.asnctl({"regs", "write", "id.magic=0x1"}).exit_code, 1);
  // A lock granted and released.
  ASSERT_EQ(
      asnd_.asnctl({"lock", "acquire", "metrics-file", "0:1", "--try", "--hold", "0"}).exit_code,
      0);
  after = scrape();
  EXPECT_EQ(after.at(R"(asn_port_enabled{port="2"})"), 1);
  EXPECT_EQ(after.at(R"(asn_manager_problem{manager="ports"})"), 1);
  EXPECT_EQ(after.sum("asn_lock_grants_total"), before.sum("asn_lock_grants_total") + 1);
  EXPECT_GE(after.sum("asn_lock_session_ends_total", R"(event="opened")"), 1);
  EXPECT_EQ(after.sum("asn_grpc_calls_total", R"(method="/asn.v1.Ports/SetPorts",code="OK")"), 1);
  EXPECT_EQ(after.sum("asn_grpc_calls_total", R"(code="FAILED_PRECONDITION")"), 1);
  EXPECT_GE(after.sum("asn_listener_accepted_total", "listener=\"unix:"),
            before.sum("asn_listener_accepted_total", "listener=\"unix:") + 4);
}

TEST_F(MetricsTest, StripeCountersMoveWithAWriteAndAScrub) {
  EXPECT_EQ(scrape().at("asn_stripe_bytes_total"), -1) << "no group: the block is not read";
  ASSERT_EQ(asnd_
                .asnctl({"stripe", "create", "1", "--raid", "5", "--data", "0,1,2", "--parity", "3",
                         "--unit", "4K"})
                .exit_code,
            0);
  const Scrape before = scrape();
  EXPECT_EQ(before.at("asn_stripe_bytes_total"), 0);
  EXPECT_EQ(before.at(R"(asn_manager_in_force{manager="stripe"})"), 1);
  const std::string file = dir_.file("in");
  write_file(file, std::string(48 * 1024, 'x'));  // four full stripes of 3 x 4 KiB
  ASSERT_EQ(asnd_.asnctl({"stripe", "write", "1", file}).exit_code, 0);
  ASSERT_EQ(asnd_.asnctl({"stripe", "check", "1"}).exit_code, 0);
  Scrape after = scrape();
  EXPECT_EQ(after.at("asn_stripe_bytes_total"), 48 * 1024);
  EXPECT_EQ(after.at("asn_stripe_data_units_total"), 12);
  EXPECT_EQ(after.at("asn_stripe_parity_units_total"), 4);
  EXPECT_EQ(after.at(R"(asn_stripe_member_units_total{port="3"})"), 4);
  EXPECT_EQ(after.at(R"(asn_stripe_scrubbed_stripes_total{group="1"})"), 4);
  EXPECT_EQ(after.at(R"(asn_stripe_mismatches_total{group="1"})"), 0);

  // A unit rots on a storage server's disk: the next check counts the stripe.
  const std::string store = dir_.file("state/storage/port-2/group-1.data");
  const int fd = ::open(store.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << store;
  ASSERT_EQ(::pwrite(fd, "rot", 3, 4096 + 5), 3);
  ::close(fd);
  EXPECT_EQ(asnd_.asnctl({"stripe", "check", "1"}).exit_code, 1);
  after = scrape();
  EXPECT_EQ(after.at(R"(asn_stripe_scrubbed_stripes_total{group="1"})"), 8);
  EXPECT_EQ(after.at(R"(asn_stripe_mismatches_total{group="1"})"), 1);
}

TEST_F(MetricsTest, OnlyGetOfMetricsIsServed) {
  EXPECT_EQ(http_get(port_, "/").status, 404);
  EXPECT_EQ(http_get(port_, "/metrics", "POST").status, 405);
  EXPECT_EQ(http_get(port_, "/metrics", "HEAD").status, 200);
}

TEST(MetricsStartTest, ATakenOrBadAddressIsRefusedNamingTheKey) {
  // Someone else listens on the port: asnd refuses to start, as for a taken listen.tcp.
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  ASSERT_EQ(::getsockname(taken, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  {
    TempDir dir;
    AsndProcess asnd(dir, "mtaken");
    EXPECT_FALSE(asnd.start({}, "listen:\n  metrics: " + address + "\n"));
    EXPECT_NE(asnd.exit_code(), 0);
    EXPECT_THAT(asnd.log(), HasSubstr("cannot listen on " + address +
                                      " (listen.metrics): "
                                      "Address already in use"));
  }
  ::close(taken);
  TempDir dir;
  AsndProcess asnd(dir, "mbad");
  EXPECT_FALSE(asnd.start({}, "listen:\n  metrics: unix:/tmp/m.sock\n"));
  EXPECT_THAT(asnd.log(), HasSubstr(":2: listen.metrics: port '/tmp/m.sock' of "
                                    "'unix:/tmp/m.sock' is not 1-65535"));
  TempDir dir2;
  AsndProcess port0(dir2, "mport");
  EXPECT_FALSE(port0.start({}, "listen:\n  metrics: 127.0.0.1:0\n"));
  EXPECT_THAT(port0.log(), HasSubstr(":2: listen.metrics: port '0' of '127.0.0.1:0' is not "
                                     "1-65535"));
  // A host that is not a name or an address.
  TempDir dir3;
  AsndProcess slash(dir3, "mslash");
  EXPECT_FALSE(slash.start({}, "listen:\n  metrics: a/b:9000\n"));
  EXPECT_THAT(slash.log(), HasSubstr(":2: listen.metrics: 'a/b:9000' is not host:port: the host "
                                     "must be a name"));
}

}  // namespace
}  // namespace asn::test

// The etcd client (etcd/src) against a real 3-member etcd cluster on loopback: KV, the
// revision-guarded Txn, leases, Watch, and what it does when members die (issue 25).
#include "etcd_client.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "etcd_cluster.hpp"
#include "etcd_watch.hpp"

namespace asn::test {
namespace {

using namespace std::chrono_literals;

class EtcdClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(cluster_.start()) << cluster_.logs(); }

  etcd::Options options() const {
    etcd::Options o;
    o.endpoints = cluster_.endpoint_list();
    o.timeout = scaled(2s);
    return o;
  }

  TempDir dir_;
  EtcdCluster cluster_{dir_, 3};
};

TEST_F(EtcdClientTest, PutGetPrefixAndTxnGuardedByTheRevisionRead) {
  etcd::Client client(options());
  client.put({"/asn/t/a", "1"});
  client.put({"/asn/t/b", "2"});
  client.put({"/asn/u", "x"});
  etcd::Range all = client.get_prefix("/asn/t/");
  ASSERT_EQ(all.kvs.size(), 2u);
  EXPECT_EQ(all.kvs[0].key, "/asn/t/a");
  EXPECT_EQ(all.kvs[1].value, "2");
  // keys_only: the same keys, no values.
  etcd::Range keys = client.get_prefix("/asn/t/", 0, /*keys_only=*/true);
  ASSERT_EQ(keys.kvs.size(), 2u);
  EXPECT_EQ(keys.kvs[1].key, "/asn/t/b");
  EXPECT_EQ(keys.kvs[1].value, "");

  // Two writers read the same revision of the guard key; only the first one's Txn applies.
  const etcd::Range guard = client.get("/asn/t/a");
  const int64_t read_at = guard.kvs.at(0).mod_revision;
  etcd::TxnResult first = client.txn({{"/asn/t/a", read_at}}, {etcd::Put{"/asn/t/a", "first"}});
  etcd::TxnResult second = client.txn({{"/asn/t/a", read_at}}, {etcd::Put{"/asn/t/a", "second"}});
  EXPECT_TRUE(first.succeeded);
  EXPECT_FALSE(second.succeeded);
  EXPECT_EQ(client.get("/asn/t/a").kvs.at(0).value, "first");

  // A guard on an absent key (mod_revision 0) holds only while it is absent.
  EXPECT_TRUE(client.txn({{"/asn/t/new", 0}}, {etcd::Put{"/asn/t/new", "1"}}).succeeded);
  EXPECT_FALSE(client.txn({{"/asn/t/new", 0}}, {etcd::Put{"/asn/t/new", "2"}}).succeeded);
  EXPECT_TRUE(client.txn({}, {etcd::Delete{"/asn/t/", true}}).succeeded);
  EXPECT_TRUE(client.get_prefix("/asn/t/").kvs.empty());
  EXPECT_EQ(client.get_prefix("/asn/u").kvs.size(), 1u);
}

TEST_F(EtcdClientTest, KeysUnderALeaseGoWhenItIsRevokedAndStayWhileKeptAlive) {
  etcd::Client client(options());
  const int64_t lease = client.grant_lease(5s);
  ASSERT_NE(lease, 0);
  client.put({"/asn/status/s0", "up", lease});
  EXPECT_GT(client.keep_alive(lease), 0);
  EXPECT_EQ(client.get("/asn/status/s0").kvs.at(0).lease, lease);
  client.revoke_lease(lease);
  EXPECT_TRUE(client.get("/asn/status/s0").kvs.empty());
  EXPECT_EQ(client.keep_alive(lease), 0) << "a revoked lease cannot be renewed";
  client.revoke_lease(lease);  // twice: not an error
}

TEST_F(EtcdClientTest, WatchSeesPutsAndDeletesFromTheStartRevisionAndCancels) {
  etcd::Client client(options());
  const int64_t before = client.put({"/asn/w/a", "1"});
  client.put({"/asn/w/b", "2"});
  client.txn({}, {etcd::Delete{"/asn/w/a"}});

  etcd::Watcher watcher(client, "/asn/w/");
  std::mutex mutex;
  std::vector<std::string> seen;
  std::thread thread([&] {
    etcd::WatchEnd end =
        watcher.run(before, [&](const std::vector<etcd::WatchEvent>& events, int64_t) {
          std::lock_guard lock(mutex);
          for (const auto& e : events) seen.push_back((e.deleted ? "-" : "+") + e.kv.key);
        });
    EXPECT_TRUE(end.cancelled) << end.error;
  });
  client.put({"/asn/w/c", "3"});
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lock(mutex);
        return seen.size() >= 4;
      },
      30s));
  watcher.cancel();
  thread.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"+/asn/w/a", "+/asn/w/b", "-/asn/w/a", "+/asn/w/c"}));
}

TEST_F(EtcdClientTest, AWatchFromACompactedRevisionSaysSo) {
  etcd::Client client(options());
  const int64_t old = client.put({"/asn/c/a", "1"});
  const int64_t now = client.put({"/asn/c/a", "2"});
  const CommandResult compact = run_command(
      {"/usr/bin/etcdctl", "--endpoints", cluster_.endpoints(), "compact", std::to_string(now)});
  ASSERT_EQ(compact.exit_code, 0) << compact.all();
  etcd::Watcher watcher(client, "/asn/c/");
  etcd::WatchEnd end = watcher.run(old, [](const auto&, int64_t) {});
  EXPECT_GE(end.compacted_to, now);
  EXPECT_FALSE(end.cancelled);
}

TEST_F(EtcdClientTest, OneDeadMemberChangesNothingAndNoMemberIsAClearUnreachableError) {
  etcd::Client client(options());
  client.put({"/asn/k", "1"});
  cluster_.kill_member(0);  // the member the client used
  EXPECT_EQ(client.get("/asn/k").kvs.at(0).value, "1");
  EXPECT_NE(client.put({"/asn/k", "2"}), 0);

  cluster_.stop_all();
  try {
    client.get("/asn/k");
    FAIL() << "a get with every member dead succeeded";
  } catch (const etcd::Error& e) {
    EXPECT_TRUE(e.unreachable());
    EXPECT_NE(std::string(e.what()).find("etcd cannot be reached"), std::string::npos) << e.what();
    for (const std::string& endpoint : cluster_.endpoint_list()) {
      EXPECT_NE(std::string(e.what()).find(endpoint), std::string::npos) << e.what();
    }
  }
  // The members come back on their data: the client uses them again, and nothing was lost.
  for (int i = 0; i < cluster_.size(); ++i) ASSERT_TRUE(cluster_.start_member(i));
  ASSERT_TRUE(cluster_.wait_serving()) << cluster_.logs();
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return client.get("/asn/k").kvs.at(0).value == "2";
        } catch (const etcd::Error&) {
          return false;
        }
      },
      30s));
}

TEST_F(EtcdClientTest, WithEtcdAuthenticationTheUserIsNeededAndItsTokenRenewed) {
  const std::string e = cluster_.endpoints();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"user", "add", "root:rootpw"},
        std::vector<std::string>{"user", "add", "asnd:asndpw"},
        std::vector<std::string>{"role", "add", "fabric"},
        std::vector<std::string>{"role", "grant-permission", "fabric", "--prefix=true", "readwrite",
                                 "/asn/"},
        std::vector<std::string>{"user", "grant-role", "asnd", "fabric"},
        std::vector<std::string>{"auth", "enable"}}) {
    // Before `auth enable` nothing needs a user.
    std::vector<std::string> argv = {"/usr/bin/etcdctl", "--endpoints", e};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv);
    ASSERT_EQ(r.exit_code, 0) << r.all();
  }
  etcd::Options options = this->options();
  options.user = "asnd";
  options.password = "asndpw";
  etcd::Client client(options);
  client.put({"/asn/auth", "1"});
  EXPECT_EQ(client.get("/asn/auth").kvs.at(0).value, "1");
  try {
    client.put({"/elsewhere", "1"});
    FAIL() << "a write outside the user's role succeeded";
  } catch (const etcd::Error& e) {
    EXPECT_FALSE(e.unreachable());
    EXPECT_NE(std::string(e.what()).find("permission denied"), std::string::npos) << e.what();
  }
  options.password = "wrong";
  try {
    etcd::Client(options).get("/asn/auth");
    FAIL() << "a wrong password was taken";
  } catch (const etcd::Error& e) {
    EXPECT_NE(std::string(e.what()).find("refused user 'asnd'"), std::string::npos) << e.what();
  }
}

TEST(EtcdClientOptions, BadOptionsNameTheField) {
  EXPECT_THROW(etcd::Client(etcd::Options{}), std::invalid_argument);
  etcd::Options half;
  half.endpoints = {"127.0.0.1:1"};
  half.cert_file = "/x.pem";
  try {
    etcd::Client client(half);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("key_file"), std::string::npos) << e.what();
  }
  etcd::Options missing_ca;
  missing_ca.endpoints = {"https://127.0.0.1:1"};
  missing_ca.ca_file = "/nonexistent/ca.pem";
  try {
    etcd::Client client(missing_ca);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ca_file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace asn::test

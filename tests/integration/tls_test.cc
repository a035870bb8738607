// Remote clients over mutual TLS (listen.tls): certificates made with the openssl command at
// test time, the real asnd serving TCP with them, the real asnctl connecting with and
// without a good client certificate; and the TCP listener's role (lock client).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "asn/v1/locks.grpc.pb.h"
#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs openssl; fails the test with its output when it fails.
void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult r = run_command(argv);
  ASSERT_EQ(r.exit_code, 0) << "openssl failed:\n" << r.all();
}

// A CA, asnd's certificate (signed by it, for 127.0.0.1 and localhost), a client
// certificate it signed, and a self-signed client certificate with the same name.
class Pki {
 public:
  explicit Pki(const TempDir& dir) : dir_(dir) {}

  void make() {
    const std::vector<std::string> ec = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                         "-nodes"};
    auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
      a.insert(a.end(), b.begin(), b.end());
      return a;
    };
    openssl(with({"req", "-x509"}, with(ec, {"-keyout", file("ca.key"), "-out", file("ca.crt"),
                                             "-subj", "/CN=asn test CA", "-days", "2", "-addext",
                                             "basicConstraints=critical,CA:TRUE", "-addext",
                                             "keyUsage=critical,keyCertSign,cRLSign"})));
    sign("server", "/CN=asnd test server", "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    sign("client", "/O=asn test/CN=pfs-client-1", "extendedKeyUsage=clientAuth\n");
    sign("client2", "/O=asn test/CN=pfs-client-2", "extendedKeyUsage=clientAuth\n");
    // Same subject, no CA's signature.
    openssl(
        with({"req", "-x509"}, with(ec, {"-keyout", file("rogue.key"), "-out", file("rogue.crt"),
                                         "-subj", "/O=asn test/CN=pfs-client-1", "-days", "2"})));
  }

  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  void sign(const std::string& name, const std::string& subject, const std::string& ext) {
    write_file(file(name + ".ext"), ext);
    openssl({"req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", file(name + ".key"), "-out", file(name + ".csr"), "-subj", subject});
    openssl({"x509", "-req", "-in", file(name + ".csr"), "-CA", file("ca.crt"), "-CAkey",
             file("ca.key"), "-set_serial", std::to_string(++serial_), "-days", "2", "-extfile",
             file(name + ".ext"), "-out", file(name + ".crt")});
  }

  const TempDir& dir_;
  int serial_ = 1;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_.make();
    if (HasFatalFailure()) return;
    address_ = "127.0.0.1:" + std::to_string(free_port());
    const std::string config = "listen:\n  tls:\n    cert: " + pki_.file("server.crt") +
                               "\n    key: " + pki_.file("server.key") +
                               "\n    client_ca: " + pki_.file("ca.crt") + "\n";
    ASSERT_TRUE(asnd_.start({"--tcp", address_}, config))
        << "asnd did not start (exit " << asnd_.exit_code() << "):\n"
        << asnd_.log();
  }

  // asnctl over TCP with these options before the command.
  CommandResult remote(const std::vector<std::string>& options,
                       const std::vector<std::string>& command) const {
    std::vector<std::string> argv = {ASNCTL_PATH, "--address", address_, "--timeout", "5"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return run_command(argv);
  }
  std::vector<std::string> good() const {
    return {"--tls-ca",  pki_.file("ca.crt"),    "--tls-cert", pki_.file("client.crt"),
            "--tls-key", pki_.file("client.key")};
  }

  TempDir dir_;
  Pki pki_{dir_};
  AsndProcess asnd_{dir_, unique_name("tls")};
  std::string address_;
};

TEST_F(TlsTest, AClientWithACertificateOfTheCaReads) {
  const auto status = remote(good(), {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.all();
  const auto read = remote(good(), {"regs", "read", "id.magic"});
  EXPECT_EQ(read.exit_code, 0) << read.all();
  EXPECT_THAT(read.out, HasSubstr("0x41534e31"));
  // The same through the environment.
  const auto env = run_command({"/usr/bin/env", "ASNCTL_TLS_CA=" + pki_.file("ca.crt"),
                                "ASNCTL_TLS_CERT=" + pki_.file("client.crt"),
                                "ASNCTL_TLS_KEY=" + pki_.file("client.key"), ASNCTL_PATH,
                                "--address", address_, "regs", "read", "id.magic"});
  EXPECT_EQ(env.exit_code, 0) << env.all();
  // The Unix socket is unaffected by them.
  const auto local = run_command({"/usr/bin/env", "ASNCTL_TLS_CA=/nonexistent", ASNCTL_PATH,
                                  "--socket", asnd_.socket(), "status"});
  EXPECT_EQ(local.exit_code, 0) << local.all();
}

TEST_F(TlsTest, WithoutAGoodClientCertificateTheConnectionIsRefused) {
  // TLS, but no client certificate.
  const auto none = remote({"--tls-ca", pki_.file("ca.crt")}, {"status"});
  EXPECT_EQ(none.exit_code, 3) << none.all();
  EXPECT_THAT(none.all(), HasSubstr("cannot reach asnd"));
  EXPECT_THAT(none.all(), HasSubstr("hint: over TLS"));
  // A certificate with the right name that the CA did not sign.
  const auto rogue = remote({"--tls-ca", pki_.file("ca.crt"), "--tls-cert", pki_.file("rogue.crt"),
                             "--tls-key", pki_.file("rogue.key")},
                            {"status"});
  EXPECT_EQ(rogue.exit_code, 3) << rogue.all();
  // Plaintext to the TLS listener.
  const auto plain = remote({}, {"status"});
  EXPECT_EQ(plain.exit_code, 3) << plain.all();
  EXPECT_THAT(plain.all(), HasSubstr("--tls-ca, --tls-cert and --tls-key"));
  // asnd's certificate not trusted: the client refuses the server.
  const auto untrusted = remote({"--tls-ca", pki_.file("rogue.crt"), "--tls-cert",
                                 pki_.file("client.crt"), "--tls-key", pki_.file("client.key")},
                                {"status"});
  EXPECT_EQ(untrusted.exit_code, 3) << untrusted.all();
  // None of it stopped asnd serving the good client.
  const auto ok = remote(good(), {"status"});
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
}

TEST_F(TlsTest, RegisterWritesStayAdminOnlyAndTheRefusalNamesTheCertificate) {
  const auto write = remote(good(), {"regs", "write", "id.scratch=7"});
  EXPECT_EQ(write.exit_code, 1) << write.all();
  EXPECT_THAT(write.all(), HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(write.all(), HasSubstr("lock client role that tls " + address_ + " grants"));
  const auto scratch = asnd_.asnctl({"regs", "read", "id.scratch"});
  EXPECT_EQ(scratch.exit_code, 0) << scratch.all();
  EXPECT_THAT(scratch.out, Not(HasSubstr("0x7")));
  // The log names the certificate's subject as the caller.
  const std::string log = asnd_.log();
  const size_t refused = log.find("refused writing registers to ");
  ASSERT_NE(refused, std::string::npos) << log;
  const std::string line = log.substr(refused, log.find('\n', refused) - refused);
  EXPECT_THAT(line, HasSubstr("CN=pfs-client-1"));
  EXPECT_THAT(line, HasSubstr("O=asn test"));
  EXPECT_THAT(line, HasSubstr("(lock client role)"));
}

TEST_F(TlsTest, BadUsageIsRefusedBeforeConnecting) {
  const auto half = remote({"--tls-cert", pki_.file("client.crt")}, {"status"});
  EXPECT_EQ(half.exit_code, 2) << half.all();
  EXPECT_THAT(half.all(), HasSubstr("--tls-cert without --tls-key"));
  const auto missing = remote({"--tls-ca", pki_.file("nope.crt")}, {"status"});
  EXPECT_EQ(missing.exit_code, 2) << missing.all();
  EXPECT_THAT(missing.all(), HasSubstr("--tls-ca: cannot read"));
  const auto unix_tls = run_command(
      {ASNCTL_PATH, "--socket", asnd_.socket(), "--tls-ca", pki_.file("ca.crt"), "status"});
  EXPECT_EQ(unix_tls.exit_code, 2) << unix_tls.all();
  EXPECT_THAT(unix_tls.all(), HasSubstr("are for TCP"));
}

// Without listen.tls the TCP listener stays plaintext, and grants the lock client role too;
// the refusal names the caller's address.
TEST(PlainTcp, GrantsTheLockClientRole) {
  TempDir dir;
  AsndProcess asnd(dir, unique_name("tcp"));
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  ASSERT_TRUE(asnd.start({"--tcp", address})) << asnd.log();
  const auto read = run_command({ASNCTL_PATH, "--address", address, "regs", "read", "id.magic"});
  EXPECT_EQ(read.exit_code, 0) << read.all();
  const auto write =
      run_command({ASNCTL_PATH, "--address", address, "regs", "write", "id.scratch=1"});
  EXPECT_EQ(write.exit_code, 1) << write.all();
  EXPECT_THAT(write.all(), HasSubstr("lock client role that tcp " + address + " grants"));
  const std::string log = asnd.log();
  const size_t refused = log.find("refused writing registers to 127.0.0.1:");
  EXPECT_NE(refused, std::string::npos) << log;
}

// Lock sessions over mutual TLS belong to the certificate that opened them: the owner is its
// subject, and another client (another certificate of the same CA) can neither unlock, renew
// nor close them.
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(TlsTest, ALockSessionBelongsToTheCertificateThatOpenedIt) {
  auto channel_for = [&](const std::string& client) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = slurp(pki_.file("ca.crt"));
    tls.pem_cert_chain = slurp(pki_.file(client + ".crt"));
    tls.pem_private_key = slurp(pki_.file(client + ".key"));
    return v1::Locks::NewStub(grpc::CreateChannel(address_, grpc::SslCredentials(tls)));
  };
  auto one = channel_for("client");
  auto two = channel_for("client2");
  auto deadline = [](grpc::ClientContext& c) {
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  };

  v1::OpenSessionResponse session;
  {
    grpc::ClientContext c;
    deadline(c);
    v1::OpenSessionRequest r;
    r.set_name("writer");
    ASSERT_TRUE(one->OpenSession(&c, r, &session).ok());
  }
  v1::LockRequest lock;
  lock.set_session(session.session());
  lock.set_file("/data/shared");
  lock.set_mode(v1::LOCK_MODE_EXCLUSIVE);
  lock.add_ranges()->set_length(4096);
  {
    grpc::ClientContext c;
    deadline(c);
    v1::LockResponse granted;
    ASSERT_TRUE(one->TryLock(&c, lock, &granted).ok());
  }
  // The other certificate cannot use the session.
  v1::UnlockRequest unlock;
  unlock.set_session(session.session());
  unlock.set_file("/data/shared");
  unlock.add_ranges()->set_length(4096);
  {
    grpc::ClientContext c;
    deadline(c);
    v1::UnlockResponse response;
    const grpc::Status status = two->Unlock(&c, unlock, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), HasSubstr("CN=pfs-client-1"));
  }
  {
    grpc::ClientContext c;
    deadline(c);
    v1::LockResponse granted;
    EXPECT_EQ(two->TryLock(&c, lock, &granted).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  // The owner is the subject, in the listing through the admin socket too.
  const auto list = asnd_.asnctl({"locks", "list"});
  EXPECT_THAT(list.out, HasSubstr("CN=pfs-client-1"));
  EXPECT_THAT(list.out, HasSubstr("/data/shared"));
  // Its owner unlocks.
  grpc::ClientContext c;
  deadline(c);
  v1::UnlockResponse response;
  EXPECT_TRUE(one->Unlock(&c, unlock, &response).ok());
}

}  // namespace
}  // namespace asn::test

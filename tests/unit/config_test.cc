// asnd's configuration file and flags: defaults, every key, and refusals that name the file,
// the line and the key.
#include "config.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <chrono>
#include <utility>
#include <vector>

#include "error.hpp"
#include "services/grpc_status.hpp"
#include "support.hpp"

namespace asn {
namespace {

std::string load_error(const std::string& text) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), text);
  try {
    load_config(dir.file("asnd.yaml"), true);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "(accepted)";
}

TEST(Config, MissingDefaultFileMeansDefaults) {
  Config c = load_config("/nonexistent/asnd.yaml", false);
  EXPECT_EQ(c.listen.socket, "/run/asn/asnd.sock");
  EXPECT_EQ(c.listen.socket_mode, 0660u);
  EXPECT_EQ(c.backend.kind, "emulated");
  EXPECT_EQ(c.state_dir, "/var/lib/asn");
  EXPECT_FALSE(c.from_file);  // --check-config says so rather than "valid"
  EXPECT_THROW(load_config("/nonexistent/asnd.yaml", true), Error);
}

TEST(Config, ReadsEveryKey) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), R"(
log_level: debug
state_dir: /srv/asn
listen:
  socket: /tmp/x.sock
  socket_mode: "0600"
  tcp: 127.0.0.1:50051
  tcp_admin: true
  metrics: "[::1]:9464"
backend:
  kind: emulated
  emulated:
    board: lab-1
    profile: emulated-64port
    shm_dir: /tmp
    storage_dir: /srv/asn-storage
)");
  Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.state_dir, "/srv/asn");
  EXPECT_EQ(c.listen.socket, "/tmp/x.sock");
  EXPECT_EQ(c.listen.socket_mode, 0600u);
  EXPECT_EQ(c.listen.tcp, "127.0.0.1:50051");
  EXPECT_TRUE(c.listen.tcp_admin);
  EXPECT_EQ(c.listen.metrics, "[::1]:9464");
  EXPECT_EQ(c.backend.emulated.board, "lab-1");
  EXPECT_EQ(c.backend.emulated.profile, "emulated-64port");
  EXPECT_EQ(c.backend.emulated.shm_dir, "/tmp");
  EXPECT_EQ(c.backend.emulated.storage_dir, "/srv/asn-storage");
  EXPECT_EQ(emulated_storage_dir(c), "/srv/asn-storage");
  EXPECT_TRUE(c.deprecations.empty());
}

// The emulated backend's keys moved under backend.emulated; the old ones still work, with a
// note that names the line and the new key.
TEST(Config, OldBackendKeysAreReadWithADeprecation) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"),
                   "backend:\n  kind: emulated\n  board: old-1\n  profile: emulated-64port\n");
  Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_EQ(c.backend.emulated.board, "old-1");
  EXPECT_EQ(c.backend.emulated.profile, "emulated-64port");
  ASSERT_EQ(c.deprecations.size(), 2u);
  EXPECT_NE(c.deprecations[0].find("asnd.yaml:3: backend.board is deprecated: write "
                                   "backend.emulated.board"),
            std::string::npos)
      << c.deprecations[0];
}

// The configuration the package installs is valid as shipped.
TEST(Config, ShippedFileIsValid) {
  Config c = load_config(ASN_DEPLOY_CONFIG, true);
  EXPECT_NO_THROW(apply_overrides(c, {}));
  EXPECT_EQ(c.backend.kind, "emulated");
  EXPECT_TRUE(c.listen.metrics.empty());  // off until the operator sets it
  EXPECT_TRUE(c.deprecations.empty());
}

TEST(Config, EmptyFileMeansDefaults) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), "# nothing set\n");
  EXPECT_EQ(load_config(dir.file("asnd.yaml"), true).backend.emulated.board, "asn0");
}

// The emulated storage servers' directory follows state_dir unless it is set.
TEST(Config, StorageDirDefaultsUnderTheStateDir) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), "state_dir: /srv/asn\n");
  Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_EQ(c.backend.emulated.storage_dir, "");
  EXPECT_EQ(emulated_storage_dir(c), "/srv/asn/storage");
  ConfigOverrides o;
  o.state_dir = "/other";
  apply_overrides(c, o);
  EXPECT_EQ(emulated_storage_dir(c), "/other/storage");
  EXPECT_NE(load_error("backend:\n  emulated:\n    storage_dir: relative/dir\n")
                .find("backend.emulated.storage_dir"),
            std::string::npos);
}

TEST(Config, UnknownKeyNamesFileLineAndSuggestion) {
  std::string what = load_error("log_level: info\nlisten:\n  sokcet: /tmp/a.sock\n");
  EXPECT_NE(what.find("asnd.yaml:3: listen.sokcet: unknown key"), std::string::npos) << what;
  EXPECT_NE(what.find("did you mean 'listen.socket'?"), std::string::npos) << what;
}

TEST(Config, BadValuesNameTheKey) {
  EXPECT_NE(load_error("log_level: loud\n")
                .find("asnd.yaml:1: log_level: unknown log level "
                      "'loud'"),
            std::string::npos);
  EXPECT_NE(load_error("listen:\n  socket_mode: \"0999\"\n").find("listen.socket_mode"),
            std::string::npos);
  EXPECT_NE(load_error("listen:\n  tcp: localhost\n").find("is not host:port"), std::string::npos);
  EXPECT_NE(load_error("listen:\n  tcp: localhost:99999\n").find("is not 1-65535"),
            std::string::npos);
  EXPECT_NE(load_error("listen:\n  metrics: localhost\n")
                .find("asnd.yaml:2: listen.metrics: 'localhost' is not host:port"),
            std::string::npos);
  EXPECT_NE(load_error("backend:\n  kind: fpga\n")
                .find("backend.kind: unknown backend 'fpga' (backends: emulated, kernel)"),
            std::string::npos);
  EXPECT_NE(
      load_error("backend:\n  emulated:\n    profile: netfpga-10g\n").find("profiles: netfpga-1g"),
      std::string::npos);
  EXPECT_NE(
      load_error("backend:\n  emulated:\n    board: \"a b\"\n").find("backend.emulated.board"),
      std::string::npos);
  EXPECT_NE(load_error("state_dir: relative/path\n").find("not an absolute path"),
            std::string::npos);
  EXPECT_NE(load_error("listen: /tmp/a.sock\n").find("expected a section"), std::string::npos);
  EXPECT_NE(load_error("listen:\n  tcp_admin: maybe\n").find("is not true or false"),
            std::string::npos);
  EXPECT_NE(load_error("- a\n- b\n").find("expected keys"), std::string::npos);
  EXPECT_NE(load_error("log_level: [info\n").find("not valid YAML"), std::string::npos);
}

// The lock quotas (issue 24): each a key with a sane default; 0 or a negative number is
// refused naming the key and what would be accepted.
TEST(Config, LockQuotas) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"),
                   "locks:\n  max_sessions_per_principal: 10\n  max_waiting_per_principal: 20\n"
                   "  max_waiting_per_session: 5\n  max_entries_per_session: 100\n"
                   "  max_entries_per_principal: 200\n  max_switch_entries_per_principal: 50\n");
  const Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_EQ(c.locks.max_sessions_per_principal, 10u);
  EXPECT_EQ(c.locks.max_waiting_per_principal, 20u);
  EXPECT_EQ(c.locks.max_waiting_per_session, 5u);
  EXPECT_EQ(c.locks.max_entries_per_session, 100u);
  EXPECT_EQ(c.locks.max_entries_per_principal, 200u);
  EXPECT_EQ(c.locks.max_switch_entries_per_principal, 50u);
  const LocksConfig defaults;
  EXPECT_GT(defaults.max_waiting_per_principal, 1000u);
  EXPECT_LT(defaults.max_waiting_per_principal, defaults.max_waiting);
  // One principal cannot take the whole software table, nor the largest switch table.
  EXPECT_LT(defaults.max_entries_per_principal, defaults.software_entries);
  EXPECT_LT(defaults.max_switch_entries_per_principal, 16384u);
  const std::vector<std::pair<const char*, const char*>> keys = {
      {"max_sessions_per_principal", "1000000"},
      {"max_waiting_per_principal", "1000000"},
      {"max_waiting_per_session", "1000000"},
      {"max_entries_per_session", "100000000"},
      {"max_entries_per_principal", "100000000"},
      {"max_switch_entries_per_principal", "100000000"}};
  for (const auto& [key, most] : keys) {
    for (const char* value : {"0", "-1"}) {
      const std::string error = load_error(std::string("locks:\n  ") + key + ": " + value + "\n");
      EXPECT_NE(error.find(std::string("locks.") + key), std::string::npos) << error;
      EXPECT_NE(error.find(std::string("is not a whole number from 1 to ") + most),
                std::string::npos)
          << error;
    }
  }
}

// A Batch stream's queue of results not yet written (locks.batch_reply_queue_bytes): 8 MiB
// unless set; a value outside 64 KiB to 1 GiB, or not a plain number of bytes, is refused
// naming the key, the line and the range.
TEST(Config, BatchReplyQueueBytes) {
  EXPECT_EQ(LocksConfig{}.batch_reply_queue_bytes, 8u << 20);
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), "locks:\n  batch_reply_queue_bytes: 262144\n");
  EXPECT_EQ(load_config(dir.file("asnd.yaml"), true).locks.batch_reply_queue_bytes, 262144u);
  for (const char* bounds : {"65536", "1073741824"}) {
    EXPECT_EQ(load_error(std::string("locks:\n  batch_reply_queue_bytes: ") + bounds + "\n"),
              "(accepted)")
        << bounds;
  }
  for (const char* value : {"0", "-1", "65535", "1073741825", "8M", "8 MiB"}) {
    const std::string error =
        load_error(std::string("locks:\n  batch_reply_queue_bytes: ") + value + "\n");
    EXPECT_NE(error.find("asnd.yaml:2: locks.batch_reply_queue_bytes: '" + std::string(value) +
                         "' is not a whole number from 65536 to 1073741824"),
              std::string::npos)
        << error;
  }
}

// The kernel backend: its board by PCI address, or the only board asn.ko drives.
TEST(Config, ReadsTheKernelBackendKeys) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"),
                   "backend:\n  kind: kernel\n  kernel:\n    device: 0000:3b:1f.7\n");
  Config c = load_config(dir.file("asnd.yaml"), true);
  apply_overrides(c, {});
  EXPECT_EQ(c.backend.kind, "kernel");
  EXPECT_EQ(c.backend.kernel.device, "0000:3b:1f.7");
  test::write_file(dir.file("only.yaml"), "backend:\n  kind: kernel\n");
  EXPECT_EQ(load_config(dir.file("only.yaml"), true).backend.kernel.device, "");
}

TEST(Config, KernelDeviceMustBeAPciAddress) {
  for (const std::string bad : {"03:00.0", "0000:03:00", "0000:03:00.8", "0000:03:20.0",
                                "0000:0G:00.0", "0000:03:00.0 ", "0000:3B:00.0", "asn0"}) {
    const std::string what =
        load_error("backend:\n  kind: kernel\n  kernel:\n    device: \"" + bad + "\"\n");
    EXPECT_NE(what.find("asnd.yaml:4: backend.kernel.device: '" + bad + "' is not a PCI address"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("e.g. 0000:03:00.0"), std::string::npos) << what;
  }
}

// A key or flag of one backend under the other is refused naming it, not silently ignored;
// the file's backend.emulated section may stay when the kind is kernel.
TEST(Config, BackendKeysBelongToTheirBackend) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"),
                   "backend:\n  kind: kernel\n  emulated:\n    board: lab-1\n");
  Config kernel = load_config(dir.file("asnd.yaml"), true);
  EXPECT_NO_THROW(apply_overrides(kernel, {}));
  auto refused = [](Config config, const ConfigOverrides& o) -> std::string {
    try {
      apply_overrides(config, o);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return e.what();
    }
    return "(accepted)";
  };
  ConfigOverrides board;
  board.board_name = "b2";
  EXPECT_NE(refused(kernel, board).find("--board: only for the emulated backend"),
            std::string::npos);
  ConfigOverrides reset;
  reset.reset_board = true;
  EXPECT_NE(refused(kernel, reset).find("--reset-board: only for the emulated backend"),
            std::string::npos);
  ConfigOverrides device;
  device.device = "0000:03:00.0";
  EXPECT_NE(refused(Config(), device).find("--device: only for the kernel backend"),
            std::string::npos);
  test::write_file(dir.file("emulated.yaml"), "backend:\n  kernel:\n    device: 0000:03:00.0\n");
  Config emulated = load_config(dir.file("emulated.yaml"), true);
  EXPECT_NE(refused(emulated, {})
                .find("backend.kernel.device: only for the kernel backend, and "
                      "the backend is emulated"),
            std::string::npos);
}

TEST(Config, KernelBackendFromTheFlags) {
  Config c;
  ConfigOverrides o;
  o.backend = "kernel";
  o.device = "0000:00:05.0";
  apply_overrides(c, o);
  EXPECT_EQ(c.backend.kind, "kernel");
  EXPECT_EQ(c.backend.kernel.device, "0000:00:05.0");
  ConfigOverrides bad;
  bad.backend = "kernel";
  bad.device = "5";
  try {
    apply_overrides(c, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device: '5' is not a PCI address"), std::string::npos)
        << e.what();
  }
}

TEST(Config, FlagsOverrideAndAreValidated) {
  Config c;
  ConfigOverrides o;
  o.board_name = "b2";
  o.log_level = "warn";
  o.reset_board = true;
  apply_overrides(c, o);
  EXPECT_EQ(c.backend.emulated.board, "b2");
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_TRUE(c.backend.reset_board);
  ConfigOverrides bad;
  bad.board_profile = "nope";
  try {
    apply_overrides(c, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--profile: unknown board profile 'nope'"),
              std::string::npos)
        << e.what();
  }
}

// Only a regular file of at most 1 MiB is read: a FIFO would block, /dev/zero never ends,
// a directory or /proc/self/mem is not a configuration.
TEST(Config, OnlyASmallRegularFileIsRead) {
  test::TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path :
       {fifo, std::string("/dev/zero"), dir.path(), std::string("/proc/self/mem")}) {
    const auto start = std::chrono::steady_clock::now();
    try {
      load_config(path, true);
      ADD_FAILURE() << path << " was read as a configuration";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << path;
      EXPECT_NE(std::string(e.what()).find("cannot read the configuration file"), std::string::npos)
          << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << path;
  }
  test::write_file(dir.file("big.yaml"), "log_level: info\n" + std::string(2 << 20, '#'));
  try {
    load_config(dir.file("big.yaml"), true);
    FAIL() << "a 2 MiB file was parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 1024 KiB"), std::string::npos) << e.what();
  }
}

// A huge bad value is named, not echoed whole; control characters come out escaped.
TEST(Config, BadValuesAreEchoedShortAndEscaped) {
  const std::string what = load_error("log_level: \"" + std::string(100000, 'x') + "\"\n");
  EXPECT_LT(what.size(), 400u);
  EXPECT_NE(what.find("(100000 bytes)"), std::string::npos) << what;
  const std::string nul = load_error("log_level: \"lo\\0ud\"\n");
  EXPECT_NE(nul.find("'lo\\x00ud'"), std::string::npos) << nul;
}

// listen.tcp takes host:port only: gRPC would also take a Unix address there, and give it
// the TCP listener's rules (a world-writable socket, admin with tcp_admin).
TEST(Config, TcpTakesHostAndPortOnly) {
  for (const char* address :
       {"unix-abstract:name:1", "unix:/tmp/x.sock:1", "vsock:2:3", "a b:1", "[::1:50051"}) {
    const std::string what = load_error(std::string("listen:\n  tcp: \"") + address + "\"\n");
    EXPECT_NE(what.find("is not host:port"), std::string::npos) << address << ": " << what;
  }
  test::TempDir dir;
  for (const char* address : {"127.0.0.1:50051", "localhost:1", "[::1]:50051", "switch-7:9"}) {
    test::write_file(dir.file("ok.yaml"), std::string("listen:\n  tcp: \"") + address + "\"\n");
    EXPECT_EQ(load_config(dir.file("ok.yaml"), true).listen.tcp, address);
  }
  ConfigOverrides flag;
  flag.tcp_listen = "unix:/tmp/y";
  Config c;
  EXPECT_THROW(apply_overrides(c, flag), Error);
}

TEST(Config, ListenerLimits) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), R"(
listen:
  max_connections: 100
  max_connections_per_peer: 4
  max_streams_per_connection: 8
  max_threads: 6
  max_streams: 3
  stream_write_timeout: 2m
)");
  Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_EQ(c.listen.max_connections, 100u);
  EXPECT_EQ(c.listen.max_connections_per_peer, 4u);
  EXPECT_EQ(c.listen.max_streams_per_connection, 8u);
  EXPECT_EQ(c.listen.max_threads, 6u);
  EXPECT_EQ(c.listen.max_streams, 3u);
  EXPECT_EQ(c.listen.stream_write_timeout_s, 120u);
  EXPECT_NE(load_error("listen:\n  max_connections: 0\n").find("from 1 to 65536"),
            std::string::npos);
  EXPECT_NE(load_error("listen:\n  stream_write_timeout: forever\n").find("a duration"),
            std::string::npos);
}

TEST(ErrorMapping, EveryCodeMapsToTheGrpcCodeOfTheSameName) {
  const std::pair<ErrorCode, grpc::StatusCode> cases[] = {
      {ErrorCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {ErrorCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {ErrorCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {ErrorCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {ErrorCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {ErrorCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {ErrorCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {ErrorCode::kAborted, grpc::StatusCode::ABORTED},
      {ErrorCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {ErrorCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {ErrorCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {ErrorCode::kHardware, grpc::StatusCode::INTERNAL},
      {ErrorCode::kInternal, grpc::StatusCode::INTERNAL},
  };
  for (auto [code, grpc_code] : cases) {
    EXPECT_EQ(to_grpc_code(code), grpc_code) << code_name(code);
    EXPECT_EQ(code_name(code), status::name(static_cast<int>(grpc_code)));
    grpc::Status status = to_grpc_status(Error(code, "message"));
    EXPECT_EQ(status.error_code(), grpc_code);
    EXPECT_EQ(status.error_message(), "message");
  }
}

// listen.tls: PEM files made here with OpenSSL (a key and a self-signed certificate each).
struct Pem {
  std::string key;
  std::string cert;
};

Pem make_pem(const char* common_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  auto to_text = [](auto write) {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<size_t>(size));
    BIO_free(bio);
    return text;
  };
  Pem pem{to_text([&](BIO* b) {
            PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
          }),
          to_text([&](BIO* b) { PEM_write_bio_X509(b, cert); })};
  X509_free(cert);
  EVP_PKEY_free(key);
  return pem;
}

class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = make_pem("asnd");
    ca_ = make_pem("asn client CA");
    test::write_file(dir_.file("server.key"), server_.key);
    test::write_file(dir_.file("server.crt"), server_.cert);
    test::write_file(dir_.file("ca.crt"), ca_.cert);
    test::write_file(dir_.file("ca.key"), ca_.key);
  }

  // A configuration with listen.tls naming these files (relative names are in dir_).
  std::string tls(const std::string& cert, const std::string& key, const std::string& ca) {
    auto path = [&](const std::string& f) { return f.empty() || f[0] == '/' ? f : dir_.file(f); };
    std::string text = "listen:\n  tcp: 127.0.0.1:50051\n  tls:\n";
    if (!cert.empty()) text += "    cert: " + path(cert) + "\n";
    if (!key.empty()) text += "    key: " + path(key) + "\n";
    if (!ca.empty()) text += "    client_ca: " + path(ca) + "\n";
    return text;
  }
  std::string error(const std::string& text) {
    test::write_file(dir_.file("asnd.yaml"), text);
    try {
      Config c = load_config(dir_.file("asnd.yaml"), true);
      apply_overrides(c, {});
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return e.what();
    }
    return "(accepted)";
  }

  test::TempDir dir_;
  Pem server_;
  Pem ca_;
};

TEST_F(TlsConfigTest, ReadsTheThreeFiles) {
  test::write_file(dir_.file("asnd.yaml"), tls("server.crt", "server.key", "ca.crt"));
  Config c = load_config(dir_.file("asnd.yaml"), true);
  EXPECT_TRUE(c.listen.tls.enabled());
  EXPECT_EQ(c.listen.tls.cert, dir_.file("server.crt"));
  EXPECT_EQ(c.listen.tls.key, dir_.file("server.key"));
  EXPECT_EQ(c.listen.tls.client_ca, dir_.file("ca.crt"));
  const TlsMaterial pem = load_tls(c.listen.tls);
  EXPECT_EQ(pem.cert_chain, server_.cert);
  EXPECT_EQ(pem.private_key, server_.key);
  EXPECT_EQ(pem.client_ca, ca_.cert);
  EXPECT_FALSE(Config().listen.tls.enabled());
}

TEST_F(TlsConfigTest, BadPathsNameTheKeyAndTheFile) {
  std::string what = error(tls("missing.crt", "server.key", "ca.crt"));
  EXPECT_NE(what.find("asnd.yaml:4: listen.tls.cert: cannot read '" + dir_.file("missing.crt") +
                      "': No such file or directory"),
            std::string::npos)
      << what;
  what = error(tls("server.crt", "server.key", "/"));
  EXPECT_NE(what.find("listen.tls.client_ca: cannot read '/': not a regular file"),
            std::string::npos)
      << what;
  what = error("listen:\n  tcp: 127.0.0.1:1\n  tls:\n    key: server.key\n");
  EXPECT_NE(what.find("listen.tls.key: 'server.key' is not an absolute path"), std::string::npos)
      << what;
  test::write_file(dir_.file("big.crt"), std::string(2 << 20, 'A'));
  what = error(tls("big.crt", "server.key", "ca.crt"));
  EXPECT_NE(what.find("listen.tls.cert: cannot read"), std::string::npos) << what;
  EXPECT_NE(what.find("larger than 1024 KiB"), std::string::npos) << what;
}

TEST_F(TlsConfigTest, BadPemSaysWhatIsAccepted) {
  test::write_file(dir_.file("garbage.pem"), "not a certificate\n");
  std::string what = error(tls("garbage.pem", "server.key", "ca.crt"));
  EXPECT_NE(what.find("listen.tls.cert: '" + dir_.file("garbage.pem") +
                      "' holds no certificate: expected PEM certificates "
                      "('-----BEGIN CERTIFICATE-----' blocks)"),
            std::string::npos)
      << what;
  // The key where the certificate belongs, and the other way round.
  what = error(tls("server.key", "server.key", "ca.crt"));
  EXPECT_NE(what.find("it holds a private key, which belongs in listen.tls.key"), std::string::npos)
      << what;
  what = error(tls("server.crt", "server.crt", "ca.crt"));
  EXPECT_NE(what.find("listen.tls.key: '" + dir_.file("server.crt") +
                      "' holds a certificate, not a private key"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("expected a PEM private key ('-----BEGIN PRIVATE KEY-----'"),
            std::string::npos)
      << what;
  // A certificate cut in the middle.
  std::string cut = ca_.cert;
  cut.erase(cut.size() / 2, 40);
  test::write_file(dir_.file("cut.crt"), cut);
  what = error(tls("server.crt", "server.key", "cut.crt"));
  EXPECT_NE(what.find("listen.tls.client_ca:"), std::string::npos) << what;
  EXPECT_NE(what.find("holds a damaged certificate"), std::string::npos) << what;
  // An encrypted key: asnd cannot ask for its passphrase.
  test::write_file(dir_.file("encrypted.key"),
                   "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE "
                   "KEY-----\n");
  what = error(tls("server.crt", "encrypted.key", "ca.crt"));
  EXPECT_NE(what.find("holds an encrypted private key"), std::string::npos) << what;
}

TEST_F(TlsConfigTest, TheThreeGoTogetherAndWithTcp) {
  std::string what = error(tls("server.crt", "server.key", ""));
  EXPECT_NE(what.find("listen.tls: client_ca is missing: mutual TLS needs cert"), std::string::npos)
      << what;
  // The CA's key is not the key of the server's certificate.
  what = error(tls("server.crt", "ca.key", "ca.crt"));
  EXPECT_NE(
      what.find("listen.tls.key: '" + dir_.file("ca.key") +
                "' is not the private key of the certificate in '" + dir_.file("server.crt") + "'"),
      std::string::npos)
      << what;
  std::string no_tcp = tls("server.crt", "server.key", "ca.crt");
  no_tcp.replace(no_tcp.find("  tcp: 127.0.0.1:50051\n"), 23, "");
  what = error(no_tcp);
  EXPECT_NE(what.find("listen.tls: mutual TLS is for the TCP listener, and there is none"),
            std::string::npos)
      << what;
  // --tcp gives it one.
  test::write_file(dir_.file("asnd.yaml"), no_tcp);
  Config c = load_config(dir_.file("asnd.yaml"), true);
  ConfigOverrides flags;
  flags.tcp_listen = "127.0.0.1:50051";
  EXPECT_NO_THROW(apply_overrides(c, flags));
}

}  // namespace
}  // namespace asn

namespace asn {
namespace {

// The fabric section (issue 25): all of it or none, every key checked.
TEST(ConfigFabric, ReadsTheSectionAndNoSectionMeansNoFabric) {
  test::TempDir dir;
  test::write_file(dir.file("asnd.yaml"), R"(
fabric:
  name: rack7
  switch: r3
  status_ttl: 20s
  etcd:
    endpoints: [10.0.0.1:2379, "https://etcd-b.example:2379"]
    prefix: /lab/asn
    timeout: 5s
)");
  const Config c = load_config(dir.file("asnd.yaml"), true);
  EXPECT_TRUE(c.fabric.enabled());
  EXPECT_EQ(c.fabric.name, "rack7");
  EXPECT_EQ(c.fabric.switch_name, "r3");
  EXPECT_EQ(c.fabric.status_ttl_s, 20u);
  EXPECT_EQ(c.fabric.etcd.endpoints,
            (std::vector<std::string>{"10.0.0.1:2379", "https://etcd-b.example:2379"}));
  EXPECT_EQ(c.fabric.etcd.prefix, "/lab/asn");
  EXPECT_EQ(c.fabric.etcd.timeout_ms, 5000u);

  test::write_file(dir.file("list.yaml"),
                   "fabric: {name: f, switch: s, etcd: {endpoints: 'a:1,b:2'}}\n");
  EXPECT_EQ(load_config(dir.file("list.yaml"), true).fabric.etcd.endpoints,
            (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_FALSE(load_config("/nonexistent/asnd.yaml", false).fabric.enabled());
}

TEST(ConfigFabric, RefusalsNameTheKeyAndWhatWouldBeAccepted) {
  EXPECT_NE(
      load_error("fabric: {name: f, etcd: {endpoints: [a:1]}}\n").find("fabric.switch: is missing"),
      std::string::npos);
  EXPECT_NE(load_error("fabric: {name: f, switch: s}\n").find("fabric.etcd.endpoints: is missing"),
            std::string::npos);
  const std::string name =
      load_error("fabric: {name: Rack/7, switch: s, etcd: {endpoints: [a:1]}}\n");
  EXPECT_NE(name.find(":1: fabric.name: 'Rack/7' is not a name"), std::string::npos) << name;
  const std::string endpoint =
      load_error("fabric: {name: f, switch: s, etcd: {endpoints: [a:99999]}}\n");
  EXPECT_NE(endpoint.find("fabric.etcd.endpoints: port '99999'"), std::string::npos) << endpoint;
  const std::string prefix =
      load_error("fabric: {name: f, switch: s, etcd: {endpoints: [a:1], prefix: asn/}}\n");
  EXPECT_NE(prefix.find("fabric.etcd.prefix: 'asn/' is not a key prefix"), std::string::npos)
      << prefix;
  const std::string cert =
      load_error("fabric: {name: f, switch: s, etcd: {endpoints: [a:1], cert_file: /c.pem}}\n");
  EXPECT_NE(cert.find("cert_file and key_file go together"), std::string::npos) << cert;
  const std::string typo = load_error("fabric: {name: f, switch: s, etcd: {endpoint: [a:1]}}\n");
  EXPECT_NE(typo.find("fabric.etcd.endpoint: unknown key (did you mean 'fabric.etcd.endpoints'?)"),
            std::string::npos)
      << typo;
}

}  // namespace
}  // namespace asn

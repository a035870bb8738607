// What asnd offers besides its own API: the standard gRPC health and reflection services
// (so grpcurl and load balancers work), and the systemd notify protocol with watchdog pings.
// The services are called with raw protobuf bytes through grpc::GenericStub: Debian ships no
// generated code for them, and the wire format is what a foreign client sees anyway.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>

#include "asnd_harness.hpp"

namespace asn::test {
namespace {

using ::testing::HasSubstr;

grpc::ByteBuffer to_buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string to_string(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

bool wait(grpc::CompletionQueue& cq, void* expected) {
  void* tag = nullptr;
  bool ok = false;
  return cq.Next(&tag, &ok) && ok && tag == expected;
}

std::shared_ptr<grpc::Channel> channel(const AsndProcess& asnd) {
  return grpc::CreateChannel("unix:" + asnd.socket(), grpc::InsecureChannelCredentials());
}

class AsndServicesTest : public ::testing::Test {
 protected:
  TempDir dir_;
  AsndProcess asnd_{dir_, unique_name("svc")};
};

TEST_F(AsndServicesTest, HealthServiceSaysServing) {
  ASSERT_TRUE(asnd_.start()) << asnd_.log();
  grpc::GenericStub stub(channel(asnd_));
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(deadline_in(std::chrono::seconds(60)));
  // HealthCheckRequest{service: ""} is the empty message.
  auto call = stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", to_buffer(""), &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status status;
  call->Finish(&response, &status, call.get());
  ASSERT_TRUE(wait(cq, call.get()));
  ASSERT_TRUE(status.ok()) << status.error_message();
  // HealthCheckResponse{status: SERVING (1)}: field 1, varint 1.
  EXPECT_EQ(to_string(response), std::string("\x08\x01", 2));
}

TEST_F(AsndServicesTest, ReflectionListsTheDeviceService) {
  ASSERT_TRUE(asnd_.start()) << asnd_.log();
  grpc::GenericStub stub(channel(asnd_));
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(deadline_in(std::chrono::seconds(60)));
  auto stream = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  int start = 1, write = 2, read = 3, done = 4, finish = 5;
  stream->StartCall(&start);
  ASSERT_TRUE(wait(cq, &start));
  // ServerReflectionRequest{list_services: ""}: field 7, length-delimited, empty.
  stream->Write(to_buffer(std::string("\x3a\x00", 2)), &write);
  ASSERT_TRUE(wait(cq, &write));
  grpc::ByteBuffer response;
  stream->Read(&response, &read);
  ASSERT_TRUE(wait(cq, &read));
  stream->WritesDone(&done);
  ASSERT_TRUE(wait(cq, &done));
  grpc::Status status;
  stream->Finish(&status, &finish);
  ASSERT_TRUE(wait(cq, &finish));
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::string bytes = to_string(response);
  EXPECT_THAT(bytes, HasSubstr("asn.v1.Device"));
  EXPECT_THAT(bytes, HasSubstr("grpc.health.v1.Health"));
}

// A stand-in for systemd's notification socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fd_ = -1;
    timeval timeout{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~NotifySocket() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // Collects messages until one contains `what` or the deadline passes.
  bool wait_for(const std::string& what, std::chrono::seconds limit = std::chrono::seconds(30)) {
    auto deadline = std::chrono::steady_clock::now() + scaled(limit);
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n > 0) {
        received_.append(buf, static_cast<size_t>(n)).append("\n");
        if (received_.find(what) != std::string::npos) return true;
      }
    }
    return false;
  }
  const std::string& received() const { return received_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::string received_;
};

TEST_F(AsndServicesTest, NotifiesSystemdAndPingsTheWatchdog) {
  NotifySocket notify(dir_.file("notify"));
  ASSERT_TRUE(notify.ok());
  asnd_.set_env("NOTIFY_SOCKET", dir_.file("notify"));
  asnd_.set_env("WATCHDOG_USEC", "200000");  // pings every 100 ms
  ASSERT_TRUE(asnd_.start()) << asnd_.log();
  EXPECT_TRUE(notify.wait_for("READY=1")) << notify.received();
  EXPECT_THAT(notify.received(), HasSubstr("STATUS=serving emulated board"));
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1")) << notify.received();
  EXPECT_EQ(asnd_.stop(), 0);
  EXPECT_TRUE(notify.wait_for("STOPPING=1")) << notify.received();
}

// Issue 24: a start that replays a long lock journal asks systemd to wait for it
// (EXTEND_TIMEOUT_USEC), before READY, so that TimeoutStartSec does not kill it.
TEST_F(AsndServicesTest, AsksSystemdToExtendTheStartTimeoutBeforeItIsReady) {
  NotifySocket notify(dir_.file("notify"));
  ASSERT_TRUE(notify.ok());
  asnd_.set_env("NOTIFY_SOCKET", dir_.file("notify"));
  ASSERT_TRUE(asnd_.start()) << asnd_.log();
  EXPECT_TRUE(notify.wait_for("READY=1")) << notify.received();
  const std::string& got = notify.received();
  const size_t extend = got.find("EXTEND_TIMEOUT_USEC=");
  ASSERT_NE(extend, std::string::npos) << got;
  EXPECT_LT(extend, got.find("READY=1")) << got;
  EXPECT_THAT(got, HasSubstr("EXTEND_TIMEOUT_USEC=30000000")) << got;
  EXPECT_EQ(asnd_.stop(), 0);
}

}  // namespace
}  // namespace asn::test

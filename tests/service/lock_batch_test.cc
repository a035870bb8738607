// The Locks service's Batch stream through a real gRPC server on a Unix socket (issue 9,
// locks.proto): many ops in one message, each answered with its id and the result its unary
// call would give; a waiting lock answered later, after another stream's unlock, or at its
// timeout_ms; one op's error leaving the others alone; the stream's end withdrawing its
// waiting locks. Run against each domain configuration (LockStack::Kind).
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lock_stack.hpp"
#include "status_assert.hpp"
#include "support.hpp"

namespace asn {
namespace {

using test::LockStack;
using ::testing::HasSubstr;

// One Batch stream, read synchronously; the deadline keeps a broken server from hanging a
// test.
class Stream {
 public:
  explicit Stream(v1::Locks::Stub& stub) {
    context_.set_deadline(test::deadline_in(std::chrono::seconds(60)));
    stream_ = stub.Batch(&context_);
  }

  void send(const std::vector<v1::LockOp>& ops) {
    v1::LockBatch batch;
    for (const auto& op : ops) *batch.add_ops() = op;
    ASSERT_TRUE(stream_->Write(batch));
  }

  // Reads until the result of op `id` has come.
  v1::LockOpResult await(uint64_t id) {
    while (results_.find(id) == results_.end()) {
      v1::LockBatchReply reply;
      if (!stream_->Read(&reply)) {
        ADD_FAILURE() << "the stream ended before the result of op " << id;
        return {};
      }
      ++messages_;
      for (const auto& r : reply.results()) results_[r.id()] = r;
    }
    return results_[id];
  }

  grpc::Status close() {
    stream_->WritesDone();
    v1::LockBatchReply reply;
    while (stream_->Read(&reply)) {
      for (const auto& r : reply.results()) results_[r.id()] = r;
    }
    return stream_->Finish();
  }

  void cancel() { context_.TryCancel(); }
  int messages() const { return messages_; }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::LockBatch, v1::LockBatchReply>> stream_;
  std::map<uint64_t, v1::LockOpResult> results_;
  int messages_ = 0;
};

template <typename Request>
void add_range(Request* r, uint64_t session, const std::string& file, uint64_t offset,
               uint64_t length) {
  r->set_session(session);
  r->set_file(file);
  auto* range = r->add_ranges();
  range->set_offset(offset);
  range->set_length(length);
}

v1::LockOp lock_op(uint64_t id, uint64_t session, const std::string& file, uint64_t offset,
                   uint64_t length, uint32_t timeout_ms = 0, bool try_lock = false) {
  v1::LockOp op;
  op.set_id(id);
  auto* r = try_lock ? op.mutable_try_lock() : op.mutable_lock();
  add_range(r, session, file, offset, length);
  r->set_mode(v1::LOCK_MODE_EXCLUSIVE);
  op.set_timeout_ms(timeout_ms);
  return op;
}

v1::LockOp unlock_op(uint64_t id, uint64_t session, const std::string& file, uint64_t offset,
                     uint64_t length, bool downgrade = false) {
  v1::LockOp op;
  op.set_id(id);
  add_range(downgrade ? op.mutable_downgrade() : op.mutable_unlock(), session, file, offset,
            length);
  return op;
}

class LockBatchTest : public ::testing::TestWithParam<LockStack::Kind> {
 protected:
  // locks.batch_reply_queue_bytes, far under asnd's 8 MiB: a client that does not read is
  // held back after a few hundred KB of results, where 8 MiB took 30 MB of grants to show
  // (two minutes under ASan, issue 30).
  static constexpr unsigned kReplyQueueBytes = 256u << 10;

  void SetUp() override {
    LocksConfig config;
    config.batch_reply_queue_bytes = kReplyQueueBytes;
    stack_ = std::make_unique<LockStack>(GetParam(), dir_.path(), config);
    stub_ = v1::Locks::NewStub(stack_->channel());
  }

  uint64_t open() {
    grpc::ClientContext context;
    v1::OpenSessionRequest request;
    request.set_ttl_seconds(30);
    v1::OpenSessionResponse response;
    EXPECT_TRUE(stub_->OpenSession(&context, request, &response).ok());
    return response.session();
  }

  uint64_t waiting_calls() {
    grpc::ClientContext context;
    v1::GetLockStatsResponse response;
    EXPECT_TRUE(stub_->GetLockStats(&context, {}, &response).ok());
    return response.waiting_calls();
  }

  void wait_for_waiting(uint64_t n) {
    test::wait_until([&] { return waiting_calls() == n; });
    ASSERT_EQ(waiting_calls(), n);
  }

  v1::ListLocksResponse list(const std::string& file) {
    grpc::ClientContext context;
    v1::ListLocksRequest r;
    r.set_file(file);
    v1::ListLocksResponse response;
    EXPECT_TRUE(stub_->ListLocks(&context, r, &response).ok());
    return response;
  }

  test::TempDir dir_;
  std::unique_ptr<LockStack> stack_;
  std::unique_ptr<v1::Locks::Stub> stub_;
};

TEST_P(LockBatchTest, MixedOpsInOneMessageAreAnsweredByIdInOneReply) {
  const uint64_t s = open();
  Stream stream(*stub_);
  v1::LockOp keep_alive;
  keep_alive.set_id(4);
  keep_alive.mutable_keep_alive()->set_session(s);
  stream.send({lock_op(1, s, "a", 0, 10), lock_op(2, s, "b", 0, 10, 0, true),
               lock_op(3, s, "c", 0, 10), keep_alive});
  for (uint64_t id : {1, 2, 3}) {
    const auto r = stream.await(id);
    ASSERT_EQ(r.code(), 0) << r.message();
    ASSERT_TRUE(r.has_lock());
    EXPECT_GT(r.lock().token(), 0u);
    ASSERT_EQ(r.lock().ranges_size(), 1);
  }
  const auto alive = stream.await(4);
  ASSERT_EQ(alive.code(), 0) << alive.message();
  EXPECT_EQ(alive.keep_alive().ttl_seconds(), 30u);
  // Every op of the message was answered at once: one reply carried them all.
  EXPECT_EQ(stream.messages(), 1);

  stream.send(
      {unlock_op(5, s, "a", 0, 10), unlock_op(6, s, "b", 0, 10, true), unlock_op(7, s, "c", 0, 5)});
  for (uint64_t id : {5, 6, 7}) {
    const auto r = stream.await(id);
    ASSERT_EQ(r.code(), 0) << r.message();
    ASSERT_TRUE(r.has_unlock());
  }
  EXPECT_EQ(stream.await(5).unlock().released(), 1u);
  EXPECT_EQ(list("a").held_size(), 0);
  ASSERT_EQ(list("b").held_size(), 1);
  EXPECT_EQ(list("b").held(0).mode(), v1::LOCK_MODE_SHARED);
  ASSERT_EQ(list("c").held_size(), 1);
  EXPECT_EQ(list("c").held(0).range().offset(), 5u);
  ASSERT_OK(stream.close());
}

TEST_P(LockBatchTest, ABadOpGetsItsErrorAndTheOthersSucceed) {
  const uint64_t s = open();
  Stream stream(*stub_);
  v1::LockOp empty;
  empty.set_id(3);
  stream.send({lock_op(1, s, "f", 0, 10), lock_op(2, s, "f", 20, 0), empty,
               unlock_op(4, s, "g", 0, 1), lock_op(5, 424242, "f", 30, 1),
               lock_op(6, s, "f", 40, 10)});
  EXPECT_EQ(stream.await(1).code(), 0);
  const auto empty_range = stream.await(2);
  EXPECT_EQ(empty_range.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(empty_range.has_lock());
  const auto no_op = stream.await(3);
  EXPECT_EQ(no_op.code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(no_op.message(), HasSubstr("op: none given"));
  const auto not_held = stream.await(4);
  EXPECT_EQ(not_held.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(not_held.reason(), "not-held");
  const auto gone = stream.await(5);
  EXPECT_EQ(gone.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(gone.reason(), "session-gone");
  EXPECT_EQ(stream.await(6).code(), 0);
  EXPECT_EQ(list("f").held_size(), 2);
  ASSERT_OK(stream.close());
}

TEST_P(LockBatchTest, AWaitingLockIsAnsweredAfterAnotherStreamsUnlock) {
  const uint64_t a = open(), b = open();
  Stream holder(*stub_), waiter(*stub_);
  holder.send({lock_op(1, a, "f", 0, 10)});
  const auto first = holder.await(1);
  ASSERT_EQ(first.code(), 0);
  waiter.send({lock_op(1, b, "f", 5, 10)});
  wait_for_waiting(1);
  holder.send({unlock_op(2, a, "f", 0, 10)});
  ASSERT_EQ(holder.await(2).code(), 0);
  const auto granted = waiter.await(1);
  ASSERT_EQ(granted.code(), 0) << granted.message();
  EXPECT_TRUE(granted.lock().waited());
  EXPECT_GT(granted.lock().token(), first.lock().token());
  // A half-closed stream is finished once its ops are answered.
  ASSERT_OK(holder.close());
  ASSERT_OK(waiter.close());
}

// Grants list their ranges: six grants of 40,000 ranges (about 0.5 MB each) from one
// message go back in replies of at most 2 MiB, which a client that takes 2.5 MiB (gRPC's
// default is 4 MiB) receives; uncut, the 3 MB reply would end its stream.
TEST_P(LockBatchTest, RepliesAreCutToWhatAClientTakes) {
  if (GetParam() == LockStack::Kind::kSwitch) {
    GTEST_SKIP() << "the cut is the stream's, whatever the domain (and the engine is slower)";
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(5 << 19);
  auto stub = v1::Locks::NewStub(grpc::CreateCustomChannel(
      "unix:" + dir_.path() + "/locks.sock", grpc::InsecureChannelCredentials(), args));
  constexpr int kRanges = 40'000;
  std::vector<v1::LockOp> ops;
  for (uint64_t i = 1; i <= 6; ++i) {
    // A session each: 240,000 entries are more than one session may use
    // (locks.max_entries_per_session), not more than one principal.
    v1::LockOp op = lock_op(i, open(), "big-" + std::to_string(i), 0, 1);
    for (uint64_t r = 1; r < kRanges; ++r) {
      auto* range = op.mutable_lock()->add_ranges();
      range->set_offset(r * 1'000'000'000);
      range->set_length(999'999);
    }
    ops.push_back(std::move(op));
  }
  Stream stream(*stub);
  stream.send(ops);
  for (uint64_t i = 1; i <= 6; ++i) {
    const auto result = stream.await(i);
    ASSERT_EQ(result.code(), 0) << result.message();
    EXPECT_EQ(result.lock().ranges_size(), kRanges);
  }
  EXPECT_GE(stream.messages(), 2);
  ASSERT_OK(stream.close());
}

// A client that sends ops and does not read their results: asnd stops reading its stream once
// more than locks.batch_reply_queue_bytes (kReplyQueueBytes here) of results wait, instead of
// queueing results without end; once the client reads, the stream goes on and every op is
// answered. Each message is a strided TryLock of kBlocks blocks (a request of a few dozen
// bytes, a grant of about 57 KB listing them) and its Unlock; what asnd ran shows in the
// domain's grant counter.
TEST_P(LockBatchTest, AClientThatDoesNotReadItsRepliesIsHeldBack) {
  if (GetParam() == LockStack::Kind::kSwitch) {
    GTEST_SKIP() << "the stream's, whatever the domain (and the engine is slower)";
  }
  const uint64_t session = open();
  constexpr uint64_t kBlocks = 8192;
  constexpr uint64_t kMessages = 40;  // about 2.3 MB of results
  auto strided_op = [&](uint64_t id, bool lock, const std::string& file) {
    v1::LockOp op;
    op.set_id(id);
    v1::StridedRanges* strided =
        lock ? op.mutable_try_lock()->mutable_strided() : op.mutable_unlock()->mutable_strided();
    strided->set_offset(0);
    strided->set_block_length(1);
    strided->set_stride(2);
    strided->set_count(kBlocks);
    if (lock) {
      op.mutable_try_lock()->set_session(session);
      op.mutable_try_lock()->set_file(file);
      op.mutable_try_lock()->set_mode(v1::LOCK_MODE_EXCLUSIVE);
    } else {
      op.mutable_unlock()->set_session(session);
      op.mutable_unlock()->set_file(file);
    }
    return op;
  };
  auto grants = [&] {
    grpc::ClientContext c;
    v1::GetLockStatsResponse response;
    EXPECT_TRUE(stub_->GetLockStats(&c, {}, &response).ok());
    return response.domains(0).grants();
  };
  // The size of one message's results, from the same ops on a stream that reads them.
  size_t result_bytes = 0;
  {
    Stream probe(*stub_);
    probe.send({strided_op(1, true, "probe"), strided_op(2, false, "probe")});
    const auto granted = probe.await(1);
    ASSERT_EQ(granted.code(), 0) << granted.message();
    result_bytes = granted.ByteSizeLong() + probe.await(2).ByteSizeLong();
    ASSERT_OK(probe.close());
  }
  const uint64_t probed = grants();

  // The client's HTTP/2 window stays at 64 KiB (no bandwidth probing, which grows it to
  // megabytes while it receives fast: then its transport takes in all 40 messages' results
  // before it reads any): what asnd runs is then what its queue and its write in flight hold.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 64 << 10);
  auto stub = v1::Locks::NewStub(grpc::CreateCustomChannel(
      "unix:" + dir_.path() + "/locks.sock", grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  context.set_deadline(test::deadline_in(std::chrono::seconds(120)));
  auto stream = stub->Batch(&context);
  for (uint64_t m = 0; m < kMessages; ++m) {
    v1::LockBatch batch;
    *batch.add_ops() = strided_op(2 * m + 1, true, "f");
    *batch.add_ops() = strided_op(2 * m + 2, false, "f");
    ASSERT_TRUE(stream->Write(batch));  // small: the transport's window takes them all
  }
  auto ran = [&] { return grants() - probed; };
  // asnd reads on until more than the bound waits, with a reply in flight besides: at least
  // this many messages, however slowly it runs them.
  const uint64_t least = kReplyQueueBytes / result_bytes + 2;
  ASSERT_TRUE(test::wait_until([&] { return ran() >= least; }))
      << "asnd stopped reading after " << ran() << " messages, before " << least
      << " filled its queue of results to the bound";
  // Then it waits: the grant counter stops (sampled over an interval, scaled: a slow server
  // is slower, not stopped).
  uint64_t before = 0;
  for (;;) {
    std::this_thread::sleep_for(test::scaled(std::chrono::milliseconds(500)));
    const uint64_t now = ran();
    if (now == before || now == kMessages) break;
    before = now;
  }
  // 256 KiB is 4-5 messages' results; with the reply in flight and what the client's window
  // took, 7 here. Without the pause asnd runs all 40.
  EXPECT_LE(ran(), kMessages / 2)
      << "asnd ran the ops of a client that reads none of their results";
  stream->WritesDone();
  uint64_t results = 0;
  v1::LockBatchReply reply;
  while (stream->Read(&reply)) {
    for (const auto& r : reply.results()) {
      EXPECT_EQ(r.code(), 0) << r.message();
      if (r.has_lock()) {
        EXPECT_EQ(r.lock().ranges_size(), static_cast<int>(kBlocks));
      }
      ++results;
    }
  }
  ASSERT_OK(stream->Finish());
  EXPECT_EQ(results, 2 * kMessages);
  EXPECT_EQ(ran(), kMessages);
}

TEST_P(LockBatchTest, ATimeoutEndsAWaitWithDeadlineExceededAndTheStreamGoesOn) {
  const uint64_t a = open(), b = open();
  Stream stream(*stub_);
  stream.send({lock_op(1, a, "f", 0, 10), lock_op(2, b, "f", 0, 10, 100)});
  ASSERT_EQ(stream.await(1).code(), 0);
  const auto expired = stream.await(2);
  EXPECT_EQ(expired.code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(list("f").waiting_size(), 0);
  stream.send({lock_op(3, b, "f", 10, 10, 100)});
  EXPECT_EQ(stream.await(3).code(), 0);
  ASSERT_OK(stream.close());
}

TEST_P(LockBatchTest, TheStreamsEndWithdrawsItsWaitersButNotItsLocks) {
  const uint64_t a = open(), b = open(), c = open();
  Stream holder(*stub_);
  holder.send({lock_op(1, a, "f", 0, 10)});
  ASSERT_EQ(holder.await(1).code(), 0);
  {
    Stream waiter(*stub_);
    waiter.send({lock_op(1, b, "f", 0, 10), lock_op(2, b, "g", 0, 10)});
    ASSERT_EQ(waiter.await(2).code(), 0);
    wait_for_waiting(1);
    waiter.cancel();
    EXPECT_EQ(waiter.close().error_code(), grpc::StatusCode::CANCELLED);
  }
  wait_for_waiting(0);
  // b's waiter is gone: after a's unlock, c gets the bytes at once; b's granted lock stays.
  holder.send({unlock_op(2, a, "f", 0, 10), lock_op(3, c, "f", 0, 10, 0, true)});
  ASSERT_EQ(holder.await(2).code(), 0);
  EXPECT_EQ(holder.await(3).code(), 0);
  const auto held = list("f");
  ASSERT_EQ(held.held_size(), 1);
  EXPECT_EQ(held.held(0).session(), c);
  ASSERT_EQ(list("g").held_size(), 1);
  EXPECT_EQ(list("g").held(0).session(), b);
  ASSERT_OK(holder.close());
}

INSTANTIATE_TEST_SUITE_P(Domains, LockBatchTest, ::testing::ValuesIn(LockStack::kinds()),
                         [](const auto& info) { return std::string(LockStack::name(info.param)); });

}  // namespace
}  // namespace asn

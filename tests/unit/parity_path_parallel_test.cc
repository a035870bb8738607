// The parity data path serves stripe groups in parallel (issue 27 item 7): a rebuild or a
// scrub of one group holds only that group's lane, so a data call of another group is not
// stalled behind it, while the requests of one group still take turns. Measured by order
// and progress (where the long call stands when the other one ends), never by wall time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <random>
#include <thread>

#include "parity_path_fixture.hpp"

namespace asn::model {
namespace {

// A long call of group 0 pauses in its first progress report (it holds its lane there,
// part-way through the file) until the test releases it; the report records what the
// test had seen by then. The wait is bounded only so that an engine that serializes every
// group fails the test instead of hanging it.
class LongCallGate {
 public:
  EmulatedBoard::StripeProgress progress() {
    return [this](uint64_t done, uint64_t total) {
      if (done == 0 || done == total) return;
      std::unique_lock lock(mu_);
      if (paused_) return;
      paused_ = true;
      paused_at_ = done;
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(20), [&] { return released_; });
      other_done_when_released_ = other_done_;
    };
  }
  // Waits until the long call is paused part-way.
  uint64_t wait_paused() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return paused_; });
    return paused_at_;
  }
  void other_done() {
    std::lock_guard lock(mu_);
    other_done_ = true;
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  bool released() {
    std::lock_guard lock(mu_);
    return released_;
  }
  bool other_done_when_released() {
    std::lock_guard lock(mu_);
    return other_done_when_released_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false, released_ = false, other_done_ = false, other_done_when_released_ = false;
  uint64_t paused_at_ = 0;
};

class ParallelGroups : public ParityPathTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // Group 0 holds a file of more than one batch of stripes (a long call reports progress
  // part-way), with the member at `failed` failed for a rebuild.
  void SetUp() override {
    program(0, a_);
    std::mt19937_64 rng(27);
    fa_ = random_bytes(rng, (17u << 20) + 4321);
    board_->stripe_write(0, 0, fa_);
    program(1, b_);
  }
  bool rebuild() const { return std::string(GetParam()) == "rebuild"; }
  // The long call of group 0 this instance runs. A rebuild's member is marked failed before
  // and healthy again by the test's own thread once every call of group 0 has ended:
  // programming the entry clears its valid bit for a moment, and a call of group 0 waiting
  // behind the rebuild would find the group missing.
  void run_long(LongCallGate& gate) {
    if (rebuild()) {
      board_->stripe_rebuild_member(0, failed_, gate.progress());
    } else {
      const auto report = board_->stripe_scrub(0, false, false, gate.progress());
      EXPECT_EQ(report.mismatches, 0u);
    }
  }

  const GroupSpec a_ = spec(stripe::Raid::k5, 16, 3);      // ports 0..6
  const GroupSpec b_ = spec(stripe::Raid::k6, 12, 3, 20);  // ports 21..29
  const unsigned failed_ = a_.data_ports[0];
  Bytes fa_;
};

TEST_P(ParallelGroups, ADataCallOfGroupBEndsWhileGroupAIsPartWay) {
  LongCallGate gate;
  if (rebuild()) program(0, a_, {failed_});
  std::thread long_call([&] { run_long(gate); });
  const uint64_t paused_at = gate.wait_paused();
  EXPECT_GT(paused_at, 0u);

  // Group 1 writes and reads back while group 0's call is paused holding its lane.
  std::mt19937_64 rng(28);
  const Bytes fb = random_bytes(rng, 3 * 3 * 4096 + 99);
  board_->stripe_write(1, 0, fb);
  EXPECT_EQ(read_all(1), fb);
  gate.other_done();

  // A call of group 0 itself waits its turn behind the long one (one request per group):
  // it returns only after the test released the long call. The sleep only gives the call
  // time to reach the group's lock; an engine without one returns before the release.
  std::atomic<bool> same_group_after_release{false};
  uint64_t size = 0;
  std::thread same_group([&] {
    size = board_->stripe_file_size(0);
    same_group_after_release = gate.released();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate.release();
  long_call.join();
  same_group.join();
  if (rebuild()) program(0, a_);
  EXPECT_TRUE(same_group_after_release) << "a call of group 0 overtook its " << GetParam();
  EXPECT_EQ(size, fa_.size());

  EXPECT_TRUE(gate.other_done_when_released())
      << "group 1's write and read did not end while group 0's " << GetParam()
      << " was part-way (stripe " << paused_at << "): the engine serializes groups";
  EXPECT_EQ(read_all(0), fa_);
  expect_stores(0, a_, fa_);
  expect_stores(1, b_, fb);
}

INSTANTIATE_TEST_SUITE_P(LongCalls, ParallelGroups, ::testing::Values("rebuild", "scrub"),
                         [](const auto& info) { return std::string(info.param); });

// Many clients of several groups at once (each group's writes from one client, in order):
// every file reads back as written and every stripe's parity is right.
TEST_F(ParityPathTest, ClientsOfManyGroupsAtOnceKeepEveryGroupWhole) {
  constexpr unsigned kGroups = 4;
  std::vector<GroupSpec> specs;
  std::vector<Bytes> files(kGroups);
  for (unsigned g = 0; g < kGroups; ++g) {
    specs.push_back(spec(g % 2 ? stripe::Raid::k6 : stripe::Raid::k5, 12, 3, 12 * g));
    program(static_cast<uint16_t>(g), specs.back());
  }
  std::vector<std::thread> clients;
  for (unsigned g = 0; g < kGroups; ++g) {
    clients.emplace_back([&, g] {
      std::mt19937_64 rng(100 + g);
      for (int i = 0; i < 40; ++i) {
        const uint64_t offset = rng() % (300 << 10);
        write(static_cast<uint16_t>(g), files[g], offset, random_bytes(rng, 1 + rng() % 70000));
      }
    });
  }
  for (auto& t : clients) t.join();
  for (unsigned g = 0; g < kGroups; ++g) {
    EXPECT_EQ(read_all(static_cast<uint16_t>(g)), files[g]) << "group " << g;
    expect_stores(static_cast<uint16_t>(g), specs[g], files[g]);
  }
}

}  // namespace
}  // namespace asn::model

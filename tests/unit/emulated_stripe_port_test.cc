// asnd's side of the parity data path: the emulated backend's StripeDataPort carries a
// client's file to the board's parity path and back, and turns the board's refusals into
// the asn::Error codes the seam documents (bus/stripe_data_port.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "asn/model/board.hpp"
#include "asn/regmap/regs.hpp"
#include "board_access.hpp"
#include "bus/emulated_bus.hpp"
#include "error.hpp"
#include "support.hpp"

namespace asn {
namespace {

namespace st = regs::stripe;
using namespace asn::test::board_access;
using Bytes = std::vector<uint8_t>;

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no asn::Error";
  return ErrorCode::kInternal;
}

TEST(EmulatedStripePort, CarriesAFileAndMapsRefusalsToErrorCodes) {
  test::TempDir dir;
  EmulatedBusOptions options;
  options.board_name = "stripe0";
  options.profile = "emulated-64port";
  options.shm_dir = dir.path();
  options.storage_dir = dir.path() + "/storage";
  options.run_clock = false;
  auto bus = std::make_unique<EmulatedBus>(options);
  StripeDataPort* port = bus->stripe_data_port();
  ASSERT_NE(port, nullptr);
  Bytes out(10);
  EXPECT_EQ(code_of([&] { port->read(2, 0, out); }), ErrorCode::kNotFound);

  EmulatedBoard& board = bus->board();
  const uint32_t valid_raid5_4k = st::kGroupTableValid.mask() | (5u << 4) | (12u << 8);
  ASSERT_TRUE(board.write32(entry(board, st::kGroupTable, 2, 1), 0b1110));  // data 1-3
  ASSERT_TRUE(board.write32(entry(board, st::kGroupTable, 2, 3), 0b1));     // parity 0
  ASSERT_TRUE(board.write32(entry(board, st::kGroupTable, 2, 0), valid_raid5_4k));
  Bytes file(50000);
  for (size_t i = 0; i < file.size(); ++i) file[i] = static_cast<uint8_t>(i * 131 + i / 7);
  port->write(2, 0, file);
  EXPECT_EQ(port->file_size(2), file.size());
  Bytes back(file.size());
  EXPECT_EQ(port->read(2, 0, back), file.size());
  EXPECT_EQ(back, file);
  EXPECT_EQ(code_of([&] { port->fail_member(2, 9); }), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(board.write32(entry(board, st::kGroupTable, 2, 5), 0b11));  // 2 of 4 failed
  EXPECT_EQ(code_of([&] { port->read(2, 0, back); }), ErrorCode::kFailedPrecondition);
  port->discard(2);

  bus.reset();
  options.storage_dir.clear();
  bus = std::make_unique<EmulatedBus>(options);
  EXPECT_EQ(code_of([&] { bus->stripe_data_port()->file_size(2); }),
            ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace asn

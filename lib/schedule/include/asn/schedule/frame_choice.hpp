// The frame of a fabric-wide schedule load (issue 8 part 7): from what each switch said
// about its sequencer when it staged its part, the frame each switch is armed for, so that
// they swap at one instant. Pure arithmetic, 128-bit inside (cycles x 10^9 passes 64 bits
// after a few hours of a 250 MHz time base); asnctl load-schedule --fabric uses it.
//
// A TDM program runs on the time grid of its frame length (frame n starts at time
// n x frame length on the boards' common time base), so switches that run one program
// number its frames alike, and the instant is the start of one frame F on all of them.
// Switches that run different programs (a load interrupted, one switch loaded on its own)
// share a frame boundary every lcm of their frame lengths: each is armed for its own frame
// starting there. When none comes soon, each swaps at its own first boundary after the
// instant, within one frame of the others; after the swap they run the new program on its
// one grid.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace asn::schedule {

// What a switch said about its sequencer when it staged (StagePlanResponse), and how long
// ago it said it.
struct SwitchClock {
  std::string name;
  bool running = false;
  uint64_t frame = 0;
  uint64_t time = 0;  // cycles of clock_hz
  uint64_t frame_start = 0;
  uint64_t frame_cycles = 0;
  uint64_t clock_hz = 0;
  std::chrono::nanoseconds age{0};  // since the answer arrived
};

struct FrameChoice {
  // For each switch (in the order given), the frame at whose start it swaps; 0 for one that
  // does not run (it swaps at once, and starts on the time grid of the new program).
  std::vector<uint64_t> frames;
  uint64_t start = 0;     // the instant, in cycles of clock_hz (0: none runs)
  uint64_t clock_hz = 0;  // of the first running switch
  // How long from now (as estimated from the latest time a switch reported) the instant is.
  std::chrono::nanoseconds until{0};
  // Every running switch swaps at `start`; false: their frame grids share no boundary
  // soon, and each swaps at its first boundary from `start` (within one frame of the others).
  bool aligned = true;
  std::string error;  // "" : the frames are good; else why no frame fits
};

// The first instant at least `margin` after the latest time any switch reported (plus the
// age of that report) at which a frame starts on every running switch: on a switch, frame F
// starts at frame_start + (F - frame) x frame_cycles. Switches that run one program start
// the same frame there; others each their own. When their frames share no boundary within
// 10 s, each switch swaps at its own first boundary from that instant (`aligned` false). All
// frames 0 when none runs.
FrameChoice choose_frame(const std::vector<SwitchClock>& clocks, std::chrono::nanoseconds margin);

}  // namespace asn::schedule

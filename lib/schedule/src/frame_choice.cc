#include "asn/schedule/frame_choice.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace asn::schedule {

namespace {

using i128 = __int128;
constexpr i128 kNsPerSecond = 1'000'000'000;
// Past these a common boundary is not looked for (asnd arms at most 60 s ahead).
constexpr i128 kHorizonNs = 10 * kNsPerSecond;
constexpr int kMaxSteps = 100000;

i128 to_ns(i128 cycles, uint64_t clock_hz) { return cycles * kNsPerSecond / clock_hz; }

// a / b rounded up, for b > 0.
i128 ceil_div(i128 a, i128 b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); }

// When frame F starts on a switch, in its cycles: frame_start + (F - frame) x frame_cycles.
i128 start_of(const SwitchClock& c, i128 frame) {
  return static_cast<i128>(c.frame_start) + (frame - static_cast<i128>(c.frame)) * c.frame_cycles;
}

// The first frame of `c` that starts at or after `t` (c's cycles), past its current one.
i128 first_frame_from(const SwitchClock& c, i128 t) {
  const i128 ahead = ceil_div(t - static_cast<i128>(c.frame_start), c.frame_cycles);
  return static_cast<i128>(c.frame) + std::max<i128>(ahead, 1);
}

// The frame of `c` that starts at `t` (in ref's cycles): exactly on one clock, within a
// cycle when the clocks differ.
std::optional<i128> frame_at(const SwitchClock& c, const SwitchClock& ref, i128 t) {
  const i128 scaled = t * c.clock_hz;
  const i128 mine = scaled / ref.clock_hz;
  const i128 offset = mine - static_cast<i128>(c.frame_start);
  if (offset <= 0) return std::nullopt;
  const i128 rest = offset % c.frame_cycles;
  if (rest == 0) return c.frame + offset / c.frame_cycles;
  const bool exact = scaled % ref.clock_hz == 0;
  if (!exact && rest == c.frame_cycles - 1) return c.frame + offset / c.frame_cycles + 1;
  return std::nullopt;
}

std::string describe_grid(const SwitchClock& c) {
  return c.name + " is at frame " + std::to_string(c.frame) + ", begun at " +
         std::to_string(c.frame_start) + ", " + std::to_string(c.frame_cycles) +
         " cycles a frame at " + std::to_string(c.clock_hz) + " Hz";
}

// The first instant at or after `from` (ref's cycles) at which a frame starts on every
// running switch; nullopt when none comes within the horizon.
std::optional<i128> common_boundary(const std::vector<const SwitchClock*>& running, i128 from,
                                    i128 limit) {
  const SwitchClock& ref = *running.front();
  i128 t = start_of(ref, first_frame_from(ref, from));
  for (int step = 0; step < kMaxSteps && t <= limit; ++step) {
    bool all = true;
    for (const SwitchClock* c : running) {
      if (frame_at(*c, ref, t)) continue;
      // Jump to c's next frame start, then to ref's first one at or after it.
      const i128 mine = ceil_div(t * c->clock_hz, ref.clock_hz);
      const i128 next = start_of(*c, first_frame_from(*c, mine));
      t = start_of(ref, first_frame_from(ref, std::max(t + 1, next * ref.clock_hz / c->clock_hz)));
      all = false;
      break;
    }
    if (all) return t;
  }
  return std::nullopt;
}

}  // namespace

FrameChoice choose_frame(const std::vector<SwitchClock>& clocks, std::chrono::nanoseconds margin) {
  FrameChoice choice;
  choice.frames.assign(clocks.size(), 0);
  // Now, as the latest report has it: the time a switch reported, aged since.
  i128 now_ns = 0;
  std::vector<const SwitchClock*> running;
  for (const auto& c : clocks) {
    if (c.clock_hz == 0) continue;
    now_ns = std::max(now_ns, to_ns(c.time, c.clock_hz) + c.age.count());
    if (c.running && c.frame_cycles > 0) running.push_back(&c);
  }
  if (running.empty()) return choice;  // frame 0: every swap at once

  const SwitchClock& ref = *running.front();
  const i128 from = ceil_div((now_ns + margin.count()) * ref.clock_hz, kNsPerSecond);
  const i128 limit = from + kHorizonNs * ref.clock_hz / kNsPerSecond;
  const std::optional<i128> common = common_boundary(running, from, limit);
  // No boundary common to all within the horizon: each switch swaps at its first boundary
  // from `from`, all within one (old) frame of each other; from then on they run the new
  // program on its one time grid.
  const i128 t = common ? *common : from;
  choice.aligned = common.has_value();
  for (size_t i = 0; i < clocks.size(); ++i) {
    const auto& c = clocks[i];
    if (c.clock_hz == 0 || !c.running || c.frame_cycles == 0) continue;
    const i128 frame =
        common ? *frame_at(c, ref, t) : first_frame_from(c, ceil_div(t * c.clock_hz, ref.clock_hz));
    if (frame > static_cast<i128>(UINT64_MAX)) {
      choice.error = "no frame number fits: " + describe_grid(c);
      return choice;
    }
    choice.frames[i] = static_cast<uint64_t>(frame);
  }
  choice.start = static_cast<uint64_t>(t);
  choice.clock_hz = ref.clock_hz;
  const i128 until = to_ns(t, ref.clock_hz) - now_ns;
  choice.until = std::chrono::nanoseconds(static_cast<int64_t>(std::max<i128>(until, 0)));
  return choice;
}

}  // namespace asn::schedule

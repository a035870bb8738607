// A sweep: every (mode, load) point of the settings, run in parallel on `threads` threads.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "asn/sim/network.hpp"
#include "asn/sim/settings.hpp"

namespace asn::sim {

// The seed of the point at load index `load_index`: every mode sees the same traffic at one
// load (common random numbers make the modes' curves comparable point by point).
uint64_t point_seed(uint64_t seed, size_t load_index);

// Results in the order modes x loads; a point not run (cancelled) is nullopt. `progress`, if
// given, is called from the worker threads (serialised) after each point with (done, total).
std::vector<std::optional<PointResult>> run_sweep(
    const Settings& settings, const std::atomic<bool>* cancel = nullptr,
    const std::function<void(size_t, size_t)>& progress = {});

}  // namespace asn::sim

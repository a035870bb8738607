// Heap accounting for benchmarks that report peak memory: heap_peak.cc replaces every
// operator new and delete of the program it is linked into, counting the bytes live.
#pragma once

#include <cstddef>
#include <utility>

namespace asn::bench {

size_t heap_live_bytes();
// Starts a new peak at what is live now.
void reset_heap_peak();
size_t heap_peak_bytes();

// Peak heap held while f runs beyond what was live before it, in MiB.
template <typename F>
double peak_mb(F&& f) {
  const size_t before = heap_live_bytes();
  reset_heap_peak();
  std::forward<F>(f)();
  return static_cast<double>(heap_peak_bytes() - before) / (1 << 20);
}

}  // namespace asn::bench

// Every operator new and delete of the program, counted (heap_peak.hpp).
#include "heap_peak.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void* counted(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  size_t live = g_live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}
void uncounted(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(malloc_usable_size(p));
  std::free(p);
}
}  // namespace

namespace asn::bench {
size_t heap_live_bytes() { return g_live.load(); }
void reset_heap_peak() { g_peak.store(g_live.load()); }
size_t heap_peak_bytes() { return g_peak.load(); }
}  // namespace asn::bench

void* operator new(size_t n) { return counted(std::malloc(n == 0 ? 1 : n)); }
void* operator new[](size_t n) { return counted(std::malloc(n == 0 ? 1 : n)); }
void* operator new(size_t n, std::align_val_t a) {
  return counted(std::aligned_alloc(
      static_cast<size_t>(a), (n + static_cast<size_t>(a) - 1) & ~(static_cast<size_t>(a) - 1)));
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, size_t) noexcept { uncounted(p); }
void operator delete[](void* p, size_t) noexcept { uncounted(p); }
void operator delete(void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { uncounted(p); }

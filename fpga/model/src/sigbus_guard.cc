#include "sigbus_guard.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>

namespace asn::model::detail {
namespace {

// Boards one process may hold at once (the fabric simulator holds many models, but not in
// memory files).
constexpr int kSlots = 64;

struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
};

Slot g_slots[kSlots];
std::mutex g_register;  // serialises guard/unguard (the handler only reads)
struct sigaction g_previous {};

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    const uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= end) continue;
    // mmap is async-signal-safe in practice (a system call): the faulting access restarts
    // on the anonymous pages.
    ::mmap(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_WRITE,
           MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    slot.faulted.store(true, std::memory_order_release);
    return;
  }
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous);
  });
}

}  // namespace

int guard_mapping(void* base, size_t bytes) {
  install_once();
  std::lock_guard lock(g_register);
  for (int i = 0; i < kSlots; ++i) {
    if (g_slots[i].begin.load() != 0) continue;
    g_slots[i].faulted.store(false);
    g_slots[i].end.store(reinterpret_cast<uintptr_t>(base) + bytes, std::memory_order_release);
    g_slots[i].begin.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    return i;
  }
  throw std::runtime_error("more than 64 board memories mapped at once");
}

void unguard_mapping(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  std::lock_guard lock(g_register);
  g_slots[slot].begin.store(0, std::memory_order_release);
  g_slots[slot].end.store(0, std::memory_order_release);
}

bool mapping_faulted(int slot) {
  return slot >= 0 && slot < kSlots && g_slots[slot].faulted.load(std::memory_order_acquire);
}

}  // namespace asn::model::detail

#include "asn/sim/sweep.hpp"

#include <algorithm>
#include <mutex>
#include <thread>

#include "asn/sim/traffic.hpp"

namespace asn::sim {

uint64_t point_seed(uint64_t seed, size_t load_index) {
  Random mix(seed ^ (0xa0761d6478bd642full * (load_index + 1)));
  return mix.next();
}

std::vector<std::optional<PointResult>> run_sweep(
    const Settings& settings, const std::atomic<bool>* cancel,
    const std::function<void(size_t, size_t)>& progress) {
  const size_t loads = settings.loads.size();
  const size_t total = settings.modes.size() * loads;
  std::vector<std::optional<PointResult>> results(total);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < total;) {
      if (cancel && cancel->load()) return;
      try {
        PointResult r = simulate(settings, settings.modes[i / loads], settings.loads[i % loads],
                                 point_seed(settings.seed, i % loads), cancel);
        std::lock_guard lock(mutex);
        if (!r.cancelled) results[i] = std::move(r);
        ++done;
        if (progress) progress(done, total);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        next = total;
      }
    }
  };
  unsigned threads =
      settings.threads != 0 ? settings.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, total));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return results;
}

}  // namespace asn::sim

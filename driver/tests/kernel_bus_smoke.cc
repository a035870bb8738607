// The guest half of the kernel backend's check: asnd's KernelBus (daemon/src/bus/kernel_bus.cc,
// libnl-genl-3) against asn.ko on the test's ivshmem board, and its throughput, single and
// batched (64 per message). Linked statically into the QEMU test's initramfs. Prints "ok" and
// "FAIL" lines like asn_guest_test and "KERNEL-BUS PASS" or "KERNEL-BUS FAIL" last.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "asn_regs.h"
#include "bus/kernel_bus.hpp"
#include "error.hpp"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

double rate(size_t ops, std::chrono::steady_clock::duration d) {
  return static_cast<double>(ops) / std::chrono::duration<double>(d).count();
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    asn::KernelBus bus({});
    check(true, "KernelBus opened: " + bus.describe());
    check(bus.read32(ASN_ID_MAGIC) == ASN_REGMAP_MAGIC, "read32 id.magic");
    bus.write32(ASN_ID_SCRATCH, 0x600dcafe);
    check(bus.read32(ASN_ID_SCRATCH) == 0x600dcafe, "write32 + read32 id.scratch");

    // A mixed batch: split into runs of one kind, in order.
    std::vector<asn::BusOp> ops = {
        asn::BusOp::write(ASN_ID_SCRATCH, 1), asn::BusOp::read(ASN_ID_SCRATCH),
        asn::BusOp::write(ASN_ID_SCRATCH, 0x5ca1ab1e), asn::BusOp::read(ASN_ID_SCRATCH)};
    bus.execute(ops);
    check(ops[1].value == 1 && ops[3].value == 0x5ca1ab1e, "mixed batch keeps its order");

    try {
      bus.write32(ASN_ID_MAGIC, 0);
      check(false, "write to id.magic refused");
    } catch (const asn::Error& e) {
      std::string what = e.what();
      check(what.find("read-only") != std::string::npos, std::string("refusal: ") + what);
    }

    // Events: the driver polls id.irq_status every 100 ms and reports causes newly set.
    {
      std::mutex mu;
      std::condition_variable cv;
      bool got = false;
      asn::BusEvent seen{};
      bus.set_event_handler([&](const asn::BusEvent& event) {
        std::lock_guard lock(mu);
        std::printf("     event %d block 0x%x generation %u\n", static_cast<int>(event.kind),
                    event.block_type, event.generation);
        if (event.kind == asn::BusEvent::Kind::kBankSwapped && event.block_type == ASN_ROUTE_TYPE) {
          seen = event;
          got = true;
          cv.notify_all();
        }
      });
      bus.write32(ASN_ID_IRQ_STATUS, 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      bus.write32(ASN_ID_IRQ_STATUS, ASN_ID_IRQ_STATUS_ROUTE_COMMIT_MASK);
      std::unique_lock lock(mu);
      cv.wait_for(lock, std::chrono::seconds(3), [&] { return got; });
      check(got, "event handler: route bank swapped (generation " +
                     std::to_string(seen.generation) + ")");
      lock.unlock();
      bus.set_event_handler({});
    }

    using clock = std::chrono::steady_clock;
    const size_t n = 2000;
    auto t0 = clock::now();
    for (size_t i = 0; i < n; ++i) bus.read32(ASN_ID_SCRATCH);
    auto t1 = clock::now();
    for (size_t i = 0; i < n; ++i) bus.write32(ASN_ID_SCRATCH, 0x5ca1ab1e);
    auto t2 = clock::now();
    std::vector<asn::BusOp> reads(64, asn::BusOp::read(ASN_ID_SCRATCH));
    std::vector<asn::BusOp> writes(64, asn::BusOp::write(ASN_ID_SCRATCH, 0x5ca1ab1e));
    for (size_t i = 0; i < n / 4; ++i) bus.execute(reads);
    auto t3 = clock::now();
    for (size_t i = 0; i < n / 4; ++i) bus.execute(writes);
    auto t4 = clock::now();
    std::printf("bench single reads   %10.0f/s\n", rate(n, t1 - t0));
    std::printf("bench single writes  %10.0f/s\n", rate(n, t2 - t1));
    std::printf("bench batched reads  %10.0f/s (64 per message)\n", rate(n / 4 * 64, t3 - t2));
    std::printf("bench batched writes %10.0f/s (64 per message)\n", rate(n / 4 * 64, t4 - t3));
  } catch (const std::exception& e) {
    check(false, std::string("unexpected error: ") + e.what());
  }
  std::printf("KERNEL-BUS %s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}

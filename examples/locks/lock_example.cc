// The first program a PFS developer reads: take an exclusive byte-range lock from asnd, write
// under it with the fencing token, release it.
//
//   asn_lock_example [ENDPOINT] [FILE_ID]
//     ENDPOINT: a socket path, unix:PATH or host:port; default: $ASN_SOCKET when set, else
//     unix:/run/asn/asnd.sock (LockClient::default_endpoint())
//
// Build it alone:  c++ -std=c++20 lock_example.cc $(pkg-config --cflags --libs asnclient)
#include <asn/client/locks.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

namespace lk = asn::client;
using namespace std::chrono_literals;

// A storage server keeps, per stripe, the highest token it has seen and refuses lower ones:
// a client that lost its lock (its session expired while it was paused) cannot overwrite
// what the next holder wrote. Here we only print what would be sent.
static void write_stripe(const std::string& file, lk::ByteRange range, std::uint64_t token) {
  std::printf("write %s [%llu, +%llu) with fencing token %llu\n", file.c_str(),
              static_cast<unsigned long long>(range.offset),
              static_cast<unsigned long long>(range.length),
              static_cast<unsigned long long>(token));
}

static void report(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asn_lock_example: %s\n", e.what());
  }
}

int main(int argc, char** argv) {
  std::string endpoint = argc > 1 ? argv[1] : "";  // "": the default endpoint
  std::string file = argc > 2 ? argv[2] : "example:inode-4711";
  try {
    lk::LockClient client(endpoint);  // over TCP: lk::ClientOptions{.tls = {ca, cert, key}}
    // The lease: the session keeps itself alive (KeepAlive every ttl/3) and survives an asnd
    // restart; if asnd forgets it anyway, on_lost runs and calls throw SessionLost.
    lk::Session session = client.open_session(15s, "asn_lock_example");
    session.on_lost([](const lk::Error& e) {
      std::fprintf(stderr, "session lost, stop writing: %s\n", e.what());
    });
    std::printf("session %llu (lease %llds)\n", static_cast<unsigned long long>(session.id()),
                static_cast<long long>(session.ttl().count()));

    lk::ByteRange stripe{0, 1 << 20};
    {
      // Exclusive lock on the first MiB, waiting at most 5 s; unlocked at the end of scope.
      lk::LockGuard lock(session, file, stripe, lk::Mode::kExclusive, 5s);
      std::printf("locked, token %llu, domain %s\n", static_cast<unsigned long long>(lock.token()),
                  lock.grant().domain.c_str());
      write_stripe(file, stripe, lock.token());
    }
    std::printf("unlocked\n");

    // Many locks at once without a thread each: the asynchronous calls return at once and run
    // a callback (on a library thread) with the result; the ops ready together share one
    // message to asnd. A callback must not block; it may make the next call.
    constexpr int kStripes = 8;
    std::mutex mutex;
    std::condition_variable all_done;
    int left = kStripes;
    const auto finished = [&] {
      std::lock_guard lock(mutex);
      if (--left == 0) all_done.notify_one();
    };
    for (int i = 1; i <= kStripes; ++i) {
      lk::ByteRange range{static_cast<std::uint64_t>(i) << 20, 1 << 20};
      session.lock_async(
          file, range, lk::Mode::kExclusive, 5s, [&, range](lk::Result<lk::Grant> grant) {
            if (!grant.ok()) {
              report(grant.error());
              return finished();
            }
            write_stripe(file, range, grant.value().token);
            session.unlock_async(file, range, [&](const lk::Result<lk::UnlockResult>& done) {
              if (!done.ok()) report(done.error());
              finished();
            });
          });
    }
    {
      std::unique_lock lock(mutex);
      all_done.wait(lock, [&] { return left == 0; });
    }
    std::printf("%d stripes locked, written and unlocked asynchronously\n", kStripes);
    session.close();  // releases anything left; the destructor would too
    return 0;
  } catch (const lk::Error& e) {
    // e.code(): DEADLINE_EXCEEDED (not granted in time), UNAVAILABLE (no asnd), ...
    std::fprintf(stderr, "asn_lock_example: %s\n", e.what());
    return 1;
  }
}

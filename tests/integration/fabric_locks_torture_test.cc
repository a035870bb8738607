// A cross-switch lock torture run (issue 25): four real asnd processes, members of fabric
// "lab" with a lock map that splits the slots between them, and client threads each attached
// first to a different switch through libasnclient's FabricSession (which follows the
// `moved` redirects to each file's owner), locking, trying, unlocking and downgrading byte
// ranges of a few files whose slots are spread over the owners. Under the traffic: a slot
// range moved to another switch by applying a changed lock map, an owner killed with SIGKILL
// (its slots fail over to the next switch once its status lease is gone) and restarted (and,
// in the part-move scenario, its slots given back to it by applying the map again). Every
// client records what it saw, and the independent checker of
// the single-switch torture (HistoryChecker, locks_history.hpp, used unchanged) replays it: no
// two conflicting grants alive at once, no fencing token that went backwards.
//
// Soundness: locks_torture_test.cc says why a checker interval lies inside the interval the
// lock was really held. What differs here, and why it keeps the intervals inside:
// - A FabricSession is one asnd session per switch it used, each with its own lease. Each is
//   its own session in the history (an id made of client, generation and switch): grants at
//   two switches are grants of two sessions, as asnd sees them.
// - The library renews the leases from its own thread and does not say when; the lease bound
//   here counts only the calls this test saw answered OK at that switch (sent at T: the
//   lease lasts at least until T + ttl). Fewer renewals only shorten the intervals.
// - A session is learned gone when FabricSession::lost() turns true. Its end is recorded at
//   the last moment lost() was seen false (a watcher looks every few ms), before the
//   library learned it: shorter again.
// - Restarts: only the killed owner restarts; the checker's grace is the sessions' lease,
//   below asnd's locks.grace_period (15 s), so a kill only shortens the intervals it touches.
// Fencing tokens: a switch that takes slots over grants on them with tokens that embed an etcd
// revision at or past the move, its predecessor's all embed earlier ones (lock_manager_
// fabric.cc), so the checker's per-file order holds across owners (a file lives in one table
// at a time).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "asn/client/fabric.hpp"
#include "asn/fabric_spec/lock_map.hpp"
#include "fabric_fixture.hpp"
#include "locks_history.hpp"

namespace asn::test {
namespace {

// Session leases of 3 s and locks.max_ttl 3 s, status leases of 3 s (the fixture's): a slot
// taken over is served 3 + 3 + 1 s after its new owner learns the move, and a failover
// comes a status lease or two after the kill.
constexpr char kLocksConfig[] = "locks:\n  max_ttl: 3s\n";
constexpr auto kTtl = std::chrono::seconds(3);
constexpr int kSwitches = 4;
constexpr int kClients = 8;
constexpr uint64_t kSpace = 256;  // bytes of each file the clients lock

// The slot ranges and who owns them (the last two change during the run).
// s00's slots; the move gives s03 all of them (kWholeOwner) or the first half (kPartMove).
constexpr uint32_t kMovedFirst = 0, kPartLast = 511, kWholeLast = 1023;
constexpr uint32_t kKilledFirst = 1024, kKilledLast = 2047;  // s01; s02 after the failover

using Clock = std::chrono::steady_clock;

class Timeline {
 public:
  double now() const { return std::chrono::duration<double>(Clock::now() - origin_).count(); }

 private:
  Clock::time_point origin_ = Clock::now();
};

// A file id whose lock slot is within [first, last], named "<prefix><n>".
std::string file_in_slots(uint32_t first, uint32_t last, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string file = prefix + std::to_string(i);
    const uint32_t slot = fabric::lock_slot(file);
    if (first <= slot && slot <= last) return file;
  }
}

struct TortureFile {
  std::string name;
  uint32_t slot;
};

// Two files in the moved range, one that stays with s00 beside them (its holders share
// sessions with the moved ones), two of the killed owner's, one of s02's, two of s03's.
std::vector<TortureFile> torture_files() {
  const std::vector<std::pair<uint32_t, uint32_t>> ranges = {{kMovedFirst, kPartLast},
                                                             {kMovedFirst, kPartLast},
                                                             {512, 1023},
                                                             {kKilledFirst, kKilledLast},
                                                             {kKilledFirst, kKilledLast},
                                                             {2048, 3071},
                                                             {3072, 4095},
                                                             {3072, 4095}};
  std::vector<TortureFile> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string name =
        file_in_slots(ranges[i].first, ranges[i].second, "/pfs/torture-" + std::to_string(i) + "-");
    out.push_back({name, fabric::lock_slot(name)});
  }
  return out;
}

struct Counters {
  std::atomic<uint64_t> grants{0}, waited{0}, conflicts{0}, deadlines{0}, unavailable{0},
      unlocks{0}, downgrades{0}, lost{0}, sessions{0}, redirects{0}, other{0}, calls{0};
  std::atomic<uint64_t> at_switch[kSwitches] = {};
};

// What the run must have done at the moved and failed-over slots: grants there at their new
// owners after the change (the clients count them against times the injector sets).
struct Phases {
  uint32_t moved_last = kWholeLast;  // the last slot the move gives s03
  std::atomic<double> moved_at{1e18}, failover_at{1e18}, given_back_at{1e18};
  std::atomic<uint64_t> moved_grants{0}, failover_grants{0}, given_back_grants{0};
};

class FabricClient {
 public:
  FabricClient(int id, std::vector<std::string> endpoints, int attached,
               const std::vector<TortureFile>& files, const Timeline& clock, Counters& counters,
               Phases& phases, uint64_t seed)
      : id_(id),
        endpoints_(std::move(endpoints)),
        files_(files),
        clock_(clock),
        counters_(counters),
        phases_(phases),
        random_(seed),
        fabric_({endpoints_[static_cast<size_t>(attached)]}, options()) {
    for (size_t f = 0; f < files_.size(); ++f) {
      held_.emplace_back(kSpace, 0);
      held_at_.push_back(-1);
    }
  }

  static client::ClientOptions options() {
    client::ClientOptions o;
    // A killed switch is refused at once; a call never hangs the run for long.
    o.call_timeout = std::chrono::milliseconds(2000);
    o.initial_backoff = std::chrono::milliseconds(50);
    o.max_backoff = std::chrono::milliseconds(400);
    return o;
  }

  void run(const std::atomic<bool>& stop) {
    while (!stop) {
      if (!session_) open();
      step();
    }
    close();
  }

  // The watcher: the last moment the session was seen not lost (see the soundness note).
  void watch() {
    std::lock_guard lock(mu_);
    if (!session_) return;
    const double t = clock_.now();
    if (!session_->lost()) last_alive_ = t;
  }

  std::vector<Record> history;

 private:
  void open() {
    std::lock_guard lock(mu_);
    ++generation_;
    session_ = std::make_unique<client::FabricSession>(
        fabric_.open_session(kTtl, "fabric-torture-" + std::to_string(id_)));
    last_alive_ = clock_.now();
    touched_.clear();
    for (auto& h : held_) std::fill(h.begin(), h.end(), 0);
    std::fill(held_at_.begin(), held_at_.end(), -1);
    counters_.sessions++;
  }

  uint64_t session_id(int sw) const {
    return (static_cast<uint64_t>(id_ + 1) << 32) | (generation_ << 4) | static_cast<uint64_t>(sw);
  }

  int switch_of(const std::string& endpoint) const {
    for (size_t i = 0; i < endpoints_.size(); ++i) {
      if (endpoints_[i] == endpoint) return static_cast<int>(i);
    }
    ADD_FAILURE() << "client " << id_ << ": unknown endpoint " << endpoint;
    return 0;
  }

  // Ends every per-switch session of this FabricSession at `at` in the history, and closes it.
  void end_session(double at) {
    for (const auto& [sw, last] : touched_) {
      Record r;
      r.kind = Kind::kSessionEnd;
      r.client = id_;
      r.session = session_id(sw);
      r.at = at;
      r.last_touch = last;
      r.ttl = static_cast<double>(kTtl.count());
      history.push_back(r);
    }
    std::unique_ptr<client::FabricSession> old;
    {
      std::lock_guard lock(mu_);
      old = std::move(session_);
    }
    try {
      old->close();
    } catch (const client::Error&) {
      // A switch that is down: its session ends with its lease.
    }
  }

  void close() {
    if (session_) end_session(clock_.now());
  }

  // FabricSession says it is lost: its end is the last moment it was seen alive.
  void lost() {
    double at = 0;
    {
      std::lock_guard lock(mu_);
      at = last_alive_;
    }
    counters_.lost++;
    end_session(at);
  }

  bool is_lost() {
    const double t = clock_.now();
    if (session_->lost()) return true;
    std::lock_guard lock(mu_);
    last_alive_ = std::max(last_alive_, t);
    return false;
  }

  void touch(int sw, double sent) {
    double& last = touched_[sw];
    last = std::max(last, sent);
  }

  uint64_t pick(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(random_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(random_) < p; }

  client::Ranges some_ranges() {
    std::vector<client::ByteRange> list;
    const int n = chance(0.3) ? static_cast<int>(pick(2, 3)) : 1;
    uint64_t at = pick(0, kSpace / 2);
    for (int i = 0; i < n && at < kSpace; ++i) {
      const uint64_t length = std::min<uint64_t>(pick(1, 48), kSpace - at);
      list.push_back({at, length});
      at += length + pick(1, 40);
    }
    return client::Ranges(list);
  }

  // An exception of a call: counted; a lost session ends.
  void failed(const client::Error& e, bool trying) {
    using client::StatusCode;
    if (dynamic_cast<const client::SessionLost*>(&e) != nullptr) return;  // is_lost() says it
    if (trying && dynamic_cast<const client::Conflict*>(&e) != nullptr) {
      counters_.conflicts++;
    } else if (e.code() == StatusCode::kUnavailable) {
      counters_.unavailable++;  // a takeover's grace, a fenced or killed switch
    } else if (e.code() == StatusCode::kDeadlineExceeded) {
      counters_.deadlines++;
    } else if (counters_.other++ < 20) {
      std::printf("client %d: %s\n", id_, e.what());
    }
  }

  void lock(bool wait) {
    const size_t f = static_cast<size_t>(pick(0, files_.size() - 1));
    const std::string& file = files_[f].name;
    const bool exclusive = chance(0.6);
    const client::Ranges ranges = some_ranges();
    const auto mode = exclusive ? client::Mode::kExclusive : client::Mode::kShared;
    const std::string before = session_->owner_of(file);
    const double sent = clock_.now();
    counters_.calls++;
    try {
      const client::Grant grant =
          wait ? session_->lock(file, ranges, mode, std::chrono::milliseconds(pick(20, 200)))
               : session_->try_lock(file, ranges, mode);
      const double received = clock_.now();
      const std::string owner = session_->owner_of(file);
      if (owner != before) counters_.redirects++;
      const int sw = switch_of(owner);
      touch(sw, sent);
      Record r;
      r.kind = Kind::kGrant;
      r.client = id_;
      r.session = session_id(sw);
      r.file = file;
      r.exclusive = exclusive;
      r.token = grant.token;
      r.sent = sent;
      r.at = received;
      // The session that holds the file's bytes: all at one switch, since a move that took
      // any of them ended the session.
      held_at_[f] = sw;
      for (const auto& b : grant.ranges) {
        r.ranges.push_back({b.offset, b.offset + b.length});
        for (uint64_t x = b.offset; x < b.offset + b.length && x < kSpace; ++x) {
          held_[f][x] = std::max<uint8_t>(held_[f][x], exclusive ? 2 : 1);
        }
      }
      history.push_back(std::move(r));
      counters_.grants++;
      counters_.at_switch[sw]++;
      if (grant.waited) counters_.waited++;
      count_phase(f, sw, sent);
    } catch (const client::Error& e) {
      if (session_->owner_of(file) != before) counters_.redirects++;
      failed(e, !wait);
    }
  }

  // A grant at a moved or failed-over slot's new owner, asked for after the change.
  void count_phase(size_t f, int sw, double sent) {
    const uint32_t slot = files_[f].slot;
    auto within = [slot](uint32_t first, uint32_t last) { return first <= slot && slot <= last; };
    if (within(kMovedFirst, phases_.moved_last) && sw == 3 && sent > phases_.moved_at) {
      phases_.moved_grants++;
    }
    if (within(kKilledFirst, kKilledLast)) {
      if (sw == 2 && sent > phases_.failover_at) phases_.failover_grants++;
      if (sw == 1 && sent > phases_.given_back_at) phases_.given_back_grants++;
    }
  }

  // A run of bytes of one file this session holds (at least `mode`), or none.
  bool held_run(size_t& f, uint64_t& first, uint64_t& end, uint8_t mode) {
    for (int tries = 0; tries < 8; ++tries) {
      f = static_cast<size_t>(pick(0, files_.size() - 1));
      std::vector<uint64_t> held;
      for (uint64_t x = 0; x < kSpace; ++x) {
        if (held_[f][x] >= mode) held.push_back(x);
      }
      if (held.empty()) continue;
      first = held[pick(0, held.size() - 1)];
      end = first + 1;
      while (end < kSpace && held_[f][end] >= mode) ++end;
      if (chance(0.5) && end - first > 2) {  // sometimes the middle of a lock (a split)
        first = pick(first, end - 2);
        end = pick(first + 1, end);
      }
      return true;
    }
    return false;
  }

  // Unlock or Downgrade of bytes held: they may be gone from the first attempt on.
  void release(bool downgrade) {
    size_t f = 0;
    uint64_t first = 0, end = 0;
    if (!held_run(f, first, end, downgrade ? 2 : 1)) return;
    const int sw = held_at_[f];
    Record r;
    r.kind = downgrade ? Kind::kDowngrade : Kind::kRelease;
    r.client = id_;
    r.session = session_id(sw);
    r.file = files_[f].name;
    r.ranges = {{first, end}};
    r.sent = clock_.now();
    history.push_back(r);
    for (uint64_t x = first; x < end; ++x) held_[f][x] = downgrade ? 1 : 0;
    counters_.calls++;
    try {
      const client::Ranges bytes(first, end - first);
      if (downgrade) {
        session_->downgrade(files_[f].name, bytes);
        counters_.downgrades++;
      } else {
        session_->unlock(files_[f].name, bytes);
        counters_.unlocks++;
      }
      touch(sw, r.sent);
    } catch (const client::Error& e) {
      failed(e, false);
    }
  }

  void step() {
    if (is_lost()) return lost();
    size_t held = 0;
    for (const auto& h : held_) {
      held += static_cast<size_t>(std::count_if(h.begin(), h.end(), [](uint8_t m) { return m; }));
    }
    const double u = std::uniform_real_distribution<double>(0, 1)(random_);
    // Holding much of the small space would stall everyone: let go first.
    if (held > 160 && u < 0.8) return release(u < 0.7 ? false : true);
    if (u < 0.30) return lock(true);
    if (u < 0.55) return lock(false);
    if (u < 0.90) return release(false);
    release(true);
  }

  int id_;
  std::vector<std::string> endpoints_;
  const std::vector<TortureFile>& files_;
  const Timeline& clock_;
  Counters& counters_;
  Phases& phases_;
  std::mt19937_64 random_;
  client::FabricLockClient fabric_;
  std::mutex mu_;  // session_ and last_alive_, between the client and the watcher
  std::unique_ptr<client::FabricSession> session_;
  double last_alive_ = 0;
  uint64_t generation_ = 0;
  std::map<int, double> touched_;  // switch -> send time of the last call answered OK there
  std::vector<std::vector<uint8_t>> held_;  // per file and byte: 0 none, 1 shared, 2 exclusive
  std::vector<int> held_at_;                // per file: the switch whose session holds it
};

// ASN_TORTURE_HISTORY=<file>: every record of the run, a line each, to read a violation by.
void write_history(const std::string& path, const std::vector<std::vector<Record>>& histories) {
  static const char* const kinds[] = {"grant", "release", "downgrade", "session-end", "locks-lost"};
  std::ostringstream out;
  out << std::fixed << std::setprecision(4);
  for (const auto& history : histories) {
    for (const Record& r : history) {
      out << "client " << r.client << " session " << r.session << " "
          << kinds[static_cast<int>(r.kind)];
      if (r.kind == Kind::kSessionEnd) {
        out << " at " << r.at << " last_touch " << r.last_touch << " ttl " << r.ttl << "\n";
        continue;
      }
      out << " " << r.file;
      if (r.kind == Kind::kGrant) out << (r.exclusive ? " exclusive" : " shared");
      for (const Bytes& b : r.ranges) out << " [" << b.first << ", " << b.end << ")";
      if (r.kind == Kind::kGrant) out << " token " << r.token << " at " << r.at;
      out << " sent " << r.sent << "\n";
    }
  }
  write_file(path, out.str());
}

// kWholeOwner: every ownership change takes all the slots a switch has (s00's to s03; the
// killed s01's to s02, and s01 comes back owning none). kPartMove: a switch loses some of
// its slots and keeps others (half of s00's to s03; s01's given back to it from s02 after its
// restart).
enum class Scenario { kWholeOwner, kPartMove };

class FabricLocksTorture : public FabricFixture {
 protected:
  std::string endpoint(int i) const { return "unix:" + switches_[i]->socket(); }

  // The lock map: slots 0-1023 to s00 (to s03 once `moved`, or only 0-511 in kPartMove),
  // 1024-2047 to s01, 2048-3071 to s02, 3072-4095 to s03.
  std::string with_map(Scenario scenario, bool moved) const {
    std::string owners = "    - {switch: s00, slots: 0-1023}\n";
    if (moved) {
      owners = scenario == Scenario::kWholeOwner ? "    - {switch: s03, slots: 0-1023}\n"
                                                 : "    - {switch: s03, slots: 0-511}\n"
                                                   "    - {switch: s00, slots: 512-1023}\n";
    }
    owners += "    - {switch: s01, slots: 1024-2047}\n";
    owners += "    - {switch: s02, slots: 2048-3071}\n    - {switch: s03, slots: 3072-4095}\n";
    return fabric_file() + "locks:\n  owners:\n" + owners;
  }

  void torture(Scenario scenario);
};

void FabricLocksTorture::torture(Scenario scenario) {
  const bool part = scenario == Scenario::kPartMove;
  const uint64_t seed = std::random_device{}();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  start_switches(kSwitches, kLocksConfig);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(wait_in_force(apply(with_map(scenario, false))).exit_code, 0);

  const std::vector<TortureFile> files = torture_files();
  std::vector<std::string> endpoints;
  for (int i = 0; i < kSwitches; ++i) endpoints.push_back(endpoint(i));
  Timeline clock;
  Counters counters;
  Phases phases;
  phases.moved_last = part ? kPartLast : kWholeLast;
  std::vector<std::unique_ptr<FabricClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    // Each attached first to another switch: every file's first call there, then redirects.
    clients.push_back(std::make_unique<FabricClient>(i, endpoints, i % kSwitches, files, clock,
                                                     counters, phases, seed + i));
  }
  std::atomic<bool> stop{false};
  std::atomic<bool> watching{true};
  std::vector<std::thread> threads;
  for (auto& c : clients) threads.emplace_back([&c, &stop] { c->run(stop); });
  std::thread watcher([&] {
    while (watching) {
      for (auto& c : clients) c->watch();
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });

  auto sleep_until = [&](double t) {
    while (clock.now() < t) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  // The first map is a takeover everywhere (3 + 3 + 1 s): grants from about 7 s on. Then
  // the move, and the kill while the moved slots' new owner waits out their grace.
  sleep_until(10.0 * time_scale());
  phases.moved_at = clock.now();
  apply(with_map(scenario, true));
  sleep_until(phases.moved_at + 3.0 * time_scale());

  std::vector<Restart> restarts;
  Restart kill;
  kill.killed = clock.now();
  switches_[1]->signal(SIGKILL);
  while (switches_[1]->running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  // s02, the next switch, takes the slots once s01's status has been gone a lease.
  const bool failed_over = wait_until(
      [&] { return switches_[2]->log().find("this switch takes over") != std::string::npos; },
      std::chrono::seconds(60));
  phases.failover_at = clock.now();
  // Back (as systemd restarts it), s01 owns nothing: it drops what it held and redirects.
  const bool restarted = failed_over && start_switch(1);
  kill.ready = clock.now();
  restarts.push_back(kill);
  // s02 grants on the failed-over slots once their takeover grace is over (7 s).
  sleep_until(phases.failover_at + 10.0 * time_scale());
  double run_until = phases.failover_at + 12.0 * time_scale();
  if (part && restarted) {
    // The map applied again gives s01 its slots back: s02 loses them and keeps its own.
    phases.given_back_at = clock.now();
    apply(with_map(scenario, true));
    run_until = phases.given_back_at + 10.0 * time_scale();
  }
  sleep_until(run_until);
  stop = true;
  for (auto& t : threads) t.join();
  watching = false;
  watcher.join();
  const double ran = clock.now();
  ASSERT_TRUE(failed_over) << "s02 never took over the slots of the killed s01:\n"
                           << switches_[2]->log();
  ASSERT_TRUE(restarted) << switches_[1]->log();

  std::vector<std::vector<Record>> histories;
  size_t records = 0;
  for (auto& c : clients) {
    records += c->history.size();
    histories.push_back(std::move(c->history));
  }
  if (const char* path = std::getenv("ASN_TORTURE_HISTORY"); path != nullptr && *path != '\0') {
    write_history(path, histories);
  }
  // The grace of a restart: the sessions' lease, below asnd's locks.grace_period (15 s).
  HistoryChecker checker(static_cast<double>(kTtl.count()));
  const auto violations = checker.check(histories, restarts);
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << "fabric locks torture (seed " << seed << "): " << ran
      << " s, " << kSwitches << " switches, " << kClients << " clients, " << counters.calls
      << " calls, " << records << " records, " << counters.sessions << " sessions ("
      << counters.lost << " lost), " << counters.grants << " grants (" << counters.waited
      << " waited; at s00..s03: " << counters.at_switch[0] << " " << counters.at_switch[1] << " "
      << counters.at_switch[2] << " " << counters.at_switch[3] << "), " << counters.conflicts
      << " TryLock conflicts, " << counters.deadlines << " Lock deadlines, " << counters.unavailable
      << " UNAVAILABLE, " << counters.unlocks << " unlocks, " << counters.downgrades
      << " downgrades, " << counters.redirects << " redirects followed, " << counters.other
      << " other errors; moved at " << phases.moved_at << " s (" << phases.moved_grants
      << " grants at s03 after), s01 killed at " << kill.killed << " s, failed over by "
      << phases.failover_at << " s (" << phases.failover_grants << " grants at s02 after), back at "
      << kill.ready << " s";
  if (part) {
    out << ", given back at " << phases.given_back_at << " s (" << phases.given_back_grants
        << " grants at s01 after)";
  }
  out << "; violations " << violations.size() << "\n";
  std::printf("%s", out.str().c_str());
  for (const auto& v : violations) std::printf("VIOLATION: %s\n", v.c_str());
  EXPECT_TRUE(violations.empty()) << "seed " << seed;
  // The run did what it is for: grants everywhere, redirects, sessions ended by the move, and
  // grants at each changed range's new owner after the change.
  EXPECT_GT(counters.grants.load(), 400u);
  EXPECT_GT(counters.redirects.load(), 0u);
  EXPECT_GT(counters.lost.load(), 0u);
  EXPECT_GT(phases.moved_grants.load(), 0u);
  EXPECT_GT(phases.failover_grants.load(), 0u);
  if (part) {
    EXPECT_GT(phases.given_back_grants.load(), 0u);
  }
  for (int i = 0; i < kSwitches; ++i) {
    // s00 owns nothing after a whole move.
    if (i != 0 || part) {
      EXPECT_GT(counters.at_switch[i].load(), 0u) << i;
    }
  }
}

TEST_F(FabricLocksTorture, NoConflictingGrantsAcrossAWholeMoveAndAKilledOwner) {
  torture(Scenario::kWholeOwner);
}

// A switch that loses some of its slots and keeps others ends every session that held a lock
// on a lost slot; that session's locks on the files it keeps must outlive the end until its
// lease runs out, since its client holds them as far as it can know until its next call
// there. This run found them granted to the next client at once (about one run in three, at
// the move on s00's kept file or at the give-back on s02's own; e.g. client 6 held [44, 47)
// of its kept file shared at s00, last call answered OK sent at 10.13 s, learned the session
// gone at 10.47 s, while s00 applied the move and granted client 2 [31, 46) exclusive at
// 10.25 s); LockManager::drop_slots now keeps them (lock_fabric_test has the same case).
// ASN_TORTURE_HISTORY=<file> keeps the records of a run.
TEST_F(FabricLocksTorture, NoConflictingGrantsWhenASwitchLosesPartOfItsSlots) {
  torture(Scenario::kPartMove);
}

}  // namespace
}  // namespace asn::test

// asnctl lock acquire|list|stats|sessions|revoke|release (`locks` is an alias of `lock`): the
// lock service (issue 9) for people. list and stats read what asnd grants; revoke and release are
// the admin's way out when a client holds what it should not (issue 24); `lock acquire` takes a
// lock by hand as a PFS client would (a session kept alive while it holds, the fencing token
// printed), to try the service out or to hold a file still while something is checked.
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "asn/text/text.hpp"
#include "asn/v1/locks.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace asnctl {

namespace {

using asn::v1::Locks;

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int) { g_interrupted = 1; }

// SIGINT and SIGTERM set a flag the command polls, so that it can unlock and close its
// session before it exits.
class InterruptGuard {
 public:
  InterruptGuard() {
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
};

std::string range_text(const asn::v1::ByteRange& r) {
  const unsigned __int128 end = static_cast<unsigned __int128>(r.offset()) + r.length();
  const std::string end_text = end == (static_cast<unsigned __int128>(1) << 64)
                                   ? "2^64"
                                   : std::to_string(static_cast<uint64_t>(end));
  return "[" + std::to_string(r.offset()) + ", " + end_text + ")";
}

std::string mode_text(asn::v1::LockMode mode) {
  return mode == asn::v1::LOCK_MODE_SHARED ? "shared" : "exclusive";
}

std::string session_text(uint64_t session) { return session == 0 ? "-" : std::to_string(session); }

// OFFSET:LENGTH, each in bytes with an optional K/M/G suffix ("0:4096", "1M:64K").
void parse_range(const std::string& text, asn::v1::ByteRange* range) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw UsageError("RANGE '" + text + "' is not OFFSET:LENGTH (e.g. 0:4096)");
  }
  range->set_offset(parse_bytes("RANGE offset", text.substr(0, colon)));
  range->set_length(parse_bytes("RANGE length", text.substr(colon + 1)));
}

class LocksRevoke final : public Command {
 public:
  explicit LocksRevoke(CLI::App* sub) {
    sub->add_option("SESSION", session_, "The session's id (asnctl lock stats lists them)")
        ->required();
  }
  void check() override {
    if (session_ == 0) throw UsageError("SESSION 0 is no session; asnctl lock stats lists them");
  }
  int run(Session& s) override {
    auto stub = Locks::NewStub(s.connection.channel());
    asn::v1::RevokeSessionRequest request;
    request.set_session(session_);
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::RevokeSessionResponse response;
    s.connection.check(stub->RevokeSession(&context, request, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    std::printf(
        "revoked session %llu of %s (%s): %llu lock entries released, %llu waiting "
        "requests cancelled\n",
        static_cast<unsigned long long>(session_), response.owner().c_str(),
        asn::text::quoted(response.name(), 64).c_str(),
        static_cast<unsigned long long>(response.released()),
        static_cast<unsigned long long>(response.cancelled()));
    return kExitOk;
  }

 private:
  uint64_t session_ = 0;
};

class LocksRelease final : public Command {
 public:
  explicit LocksRelease(CLI::App* sub) {
    sub->add_option("FILE", file_, "The file's id")->required();
    sub->add_option("RANGE", ranges_, "OFFSET:LENGTH in bytes (e.g. 0:4096, 1M:64K)")->required();
    sub->add_flag("--dry-run", dry_run_, "Show what would be released; release nothing");
  }
  void check() override {
    request_.set_file(file_);
    request_.set_dry_run(dry_run_);
    for (const auto& text : ranges_) parse_range(text, request_.add_ranges());
  }
  int run(Session& s) override {
    auto stub = Locks::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ReleaseLocksResponse response;
    s.connection.check(stub->ReleaseLocks(&context, request_, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    if (response.released_size() == 0) {
      std::printf("no session holds those bytes of %s: nothing released\n",
                  asn::text::quoted(file_, 64).c_str());
      return kExitOk;
    }
    Table table({"FILE", "RANGE", "MODE", "TOKEN", "SESSION", "OWNER", "DOMAIN"});
    for (const auto& h : response.released()) {
      table.add_row({asn::text::escaped(h.file(), 48), range_text(h.range()), mode_text(h.mode()),
                     std::to_string(h.token()), session_text(h.session()), h.owner(), h.domain()});
    }
    std::printf(dry_run_ ? "would release:\n" : "released:\n");
    table.print(stdout);
    if (!dry_run_) {
      std::printf("%llu waiting requests granted\n",
                  static_cast<unsigned long long>(response.granted()));
    }
    return kExitOk;
  }

 private:
  std::string file_;
  std::vector<std::string> ranges_;
  bool dry_run_ = false;
  asn::v1::ReleaseLocksRequest request_;
};

class LocksList final : public Command {
 public:
  explicit LocksList(CLI::App* sub) {
    sub->add_option("--file", file_, "Only this file (its id as text)");
    sub->add_option("--limit", limit_, "Entries at most (default 1000)");
  }
  int run(Session& s) override {
    auto stub = Locks::NewStub(s.connection.channel());
    asn::v1::ListLocksRequest request;
    request.set_file(file_);
    request.set_limit(limit_);
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::ListLocksResponse response;
    s.connection.check(stub->ListLocks(&context, request, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    Table held({"FILE", "RANGE", "MODE", "TOKEN", "SESSION", "OWNER", "DOMAIN"});
    for (const auto& h : response.held()) {
      held.add_row({asn::text::escaped(h.file(), 48), range_text(h.range()), mode_text(h.mode()),
                    std::to_string(h.token()), session_text(h.session()), h.owner(), h.domain()});
    }
    if (held.empty() && response.waiting_size() == 0) {
      std::printf(file_.empty() ? "no locks are held\n" : "no locks are held on this file\n");
      return kExitOk;
    }
    held.print(stdout);
    if (response.waiting_size() > 0) {
      std::printf("\nwaiting:\n");
      Table waiting({"FILE", "REQUEST", "MODE", "RANGES", "SESSION", "OWNER", "DOMAIN"});
      for (const auto& w : response.waiting()) {
        std::string ranges;
        for (int i = 0; i < w.ranges_size() && i < 3; ++i) {
          ranges += (i ? " " : "") + range_text(w.ranges(i));
        }
        if (w.ranges_size() > 3) ranges += " +" + std::to_string(w.ranges_size() - 3);
        waiting.add_row({asn::text::escaped(w.file(), 48), std::to_string(w.request()),
                         mode_text(w.mode()), ranges, session_text(w.session()), w.owner(),
                         w.domain()});
      }
      waiting.print(stdout);
    }
    if (!response.next_after().empty() || !response.next_page_token().empty()) {
      std::printf("\n(more entries follow; raise --limit to see them)\n");
    }
    return kExitOk;
  }

 private:
  std::string file_;
  uint32_t limit_ = 0;
};

// The columns of a session, in `locks stats` and `locks sessions`.
Table session_table() {
  return Table({"SESSION", "OWNER", "NAME", "LEASE", "EXPIRES IN", "HELD", "WAITING"});
}

void add_session(Table& table, const asn::v1::LockSessionInfo& x) {
  table.add_row({std::to_string(x.session()), x.owner(), x.name(),
                 std::to_string(x.ttl_seconds()) + "s",
                 x.reattached() ? strprintf("%.1fs", x.expires_in_seconds())
                                : strprintf("%.1fs (not re-attached)", x.expires_in_seconds()),
                 std::to_string(x.held_entries()), std::to_string(x.waiting_requests())});
}

class LocksStats final : public Command {
 public:
  explicit LocksStats(CLI::App* sub) {
    sub->add_option("--top", top_, "Sessions listed: those holding the most (default 20)");
  }
  int run(Session& s) override {
    auto stub = Locks::NewStub(s.connection.channel());
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::GetLockStatsRequest request;
    request.set_top(top_);
    asn::v1::GetLockStatsResponse response;
    s.connection.check(stub->GetLockStats(&context, request, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
      return kExitOk;
    }
    KeyValues summary;
    summary.add("placement", response.placement());
    summary.add(
        "sessions",
        std::to_string(response.sessions()) +
            (response.sessions_not_reattached() > 0
                 ? strprintf(" (%llu not re-attached)",
                             static_cast<unsigned long long>(response.sessions_not_reattached()))
                 : std::string()));
    summary.add("held entries", std::to_string(response.held_entries()));
    summary.add("waiting requests", std::to_string(response.waiting_requests()));
    summary.add("waiting calls", std::to_string(response.waiting_calls()));
    if (response.grace_remaining_seconds() > 0) {
      summary.add("grace period", strprintf("%.1f s left for sessions to re-attach",
                                            response.grace_remaining_seconds()));
    }
    if (response.loss_grace_remaining_seconds() > 0) {
      summary.add("loss grace",
                  strprintf("the switch lost its lock table: its files go only to reclaims for "
                            "%.1f s at most, or until %llu sessions have reclaimed",
                            response.loss_grace_remaining_seconds(),
                            static_cast<unsigned long long>(response.reclaiming_sessions())));
    }
    const auto& c = response.session_counters();
    auto n = [](uint64_t v) { return static_cast<unsigned long long>(v); };
    summary.add("sessions ended",
                strprintf("%llu closed, %llu expired, %llu revoked (of %llu opened since asnd "
                          "started)",
                          n(c.closed()), n(c.expired()), n(c.revoked()), n(c.opened())));
    if (c.locks_lost() > 0) {
      summary.add("board resets",
                  strprintf("%llu sessions lost switch locks; %llu reclaims granted, %llu refused",
                            n(c.locks_lost()), n(c.reclaims()), n(c.reclaims_refused())));
    }
    summary.print(stdout, 0);
    std::printf("\n");
    Table domains({"DOMAIN", "CAPACITY", "IN USE", "HELD", "WAITING", "FILES", "GRANTS", "QUEUED",
                   "RELEASES", "CONFLICTS", "TABLE FULL", "CANCELLED", "ENDED"});
    for (const auto& d : response.domains()) {
      domains.add_row({d.name(), std::to_string(d.capacity()), std::to_string(d.entries_in_use()),
                       std::to_string(d.held_entries()), std::to_string(d.waiting_requests()),
                       std::to_string(d.files()), std::to_string(d.grants()),
                       std::to_string(d.queued()), std::to_string(d.releases()),
                       std::to_string(d.conflicts()), std::to_string(d.table_full()),
                       std::to_string(d.cancelled()), std::to_string(d.expired())});
    }
    domains.print(stdout);
    if (response.session_list_size() > 0) {
      std::printf("\n");
      Table sessions = session_table();
      for (const auto& x : response.session_list()) add_session(sessions, x);
      sessions.print(stdout);
      if (static_cast<uint64_t>(response.session_list_size()) < response.sessions()) {
        std::printf(
            "\n(the %d sessions holding the most of %llu; asnctl lock sessions lists "
            "them all)\n",
            response.session_list_size(), static_cast<unsigned long long>(response.sessions()));
      }
    }
    return kExitOk;
  }

 private:
  uint32_t top_ = 0;
};

// Every session, page after page of ListSessions.
class LocksSessions final : public Command {
 public:
  explicit LocksSessions(CLI::App* sub) {
    sub->add_option("--page", page_, "Sessions asked for a call (default 1000)");
  }
  int run(Session& s) override {
    auto stub = Locks::NewStub(s.connection.channel());
    std::vector<asn::v1::LockSessionInfo> all;
    asn::v1::ListSessionsRequest request;
    request.set_limit(page_);
    for (;;) {
      grpc::ClientContext context;
      s.connection.prepare(context);
      asn::v1::ListSessionsResponse response;
      s.connection.check(stub->ListSessions(&context, request, &response));
      for (auto& x : *response.mutable_sessions()) all.push_back(std::move(x));
      if (response.next_after() == 0) break;
      request.set_after(response.next_after());
    }
    if (s.format == OutputFormat::kJson) {
      print_json_array(all);
      return kExitOk;
    }
    if (all.empty()) {
      std::printf("no sessions are open\n");
      return kExitOk;
    }
    Table sessions = session_table();
    for (const auto& x : all) add_session(sessions, x);
    sessions.print(stdout);
    return kExitOk;
  }

 private:
  uint32_t page_ = 0;
};

class LockAcquire final : public Command {
 public:
  explicit LockAcquire(CLI::App* sub) {
    sub->add_option("FILE", file_, "The file's id")->required();
    sub->add_option("RANGE", ranges_, "OFFSET:LENGTH in bytes (e.g. 0:4096, 1M:64K)")->required();
    sub->add_flag("--shared", shared_, "A shared (read) lock; default exclusive");
    sub->add_flag("--try", try_, "Fail at once if the lock is taken");
    sub->add_option("--hold", hold_,
                    "Seconds to hold the lock, then release it (default: "
                    "until Ctrl-C)");
    sub->add_option("--wait", wait_, "Seconds to wait for the lock (default: until Ctrl-C)");
    sub->add_option("--ttl", ttl_, "The session's lease in seconds (kept alive while held)");
  }
  void check() override {
    request_.set_file(file_);
    request_.set_mode(shared_ ? asn::v1::LOCK_MODE_SHARED : asn::v1::LOCK_MODE_EXCLUSIVE);
    for (const auto& text : ranges_) parse_range(text, request_.add_ranges());
    if ((hold_ && *hold_ < 0) || (wait_ && *wait_ < 0)) {
      throw UsageError("--hold and --wait take seconds >= 0");
    }
  }
  int run(Session& s) override {
    InterruptGuard interrupts;
    auto stub = Locks::NewStub(s.connection.channel());
    asn::v1::OpenSessionRequest open;
    open.set_ttl_seconds(ttl_);
    open.set_name("asnctl lock acquire");
    asn::v1::OpenSessionResponse opened;
    {
      grpc::ClientContext context;
      s.connection.prepare(context);
      s.connection.check(stub->OpenSession(&context, open, &opened));
    }
    request_.set_session(opened.session());
    request_.set_secret(opened.secret());
    asn::v1::LockResponse granted;
    grpc::Status status = acquire(*stub, s, granted);
    if (!status.ok()) {
      close(*stub, s, opened);
      if (g_interrupted) {
        std::fprintf(stderr, "asnctl: interrupted while waiting; nothing is held\n");
        return kExitFailed;
      }
      // With --wait the call's deadline is the wait: its passing is the lock not granted in
      // time (whether asnd's timer or the call's deadline said so first), not asnd silent.
      if (wait_ && !try_ && status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        std::string ranges;
        for (const auto& r : request_.ranges()) {
          ranges += (ranges.empty() ? "" : " ") + range_text(r);
        }
        std::fprintf(stderr,
                     "asnctl: DEADLINE_EXCEEDED: waited %g s (--wait) for the %s lock on %s %s "
                     "and it was not granted: it is held or waited for by another session "
                     "(asnctl lock list --file shows who); nothing is held\n",
                     *wait_, shared_ ? "shared" : "exclusive", asn::text::quoted(file_, 64).c_str(),
                     ranges.c_str());
        return kExitFailed;
      }
      s.connection.check(status);
    }
    if (s.format == OutputFormat::kJson) {
      print_json(granted);
    } else {
      std::string ranges;
      for (const auto& r : granted.ranges()) ranges += (ranges.empty() ? "" : " ") + range_text(r);
      std::printf("granted %s lock on %s %s: fencing token %llu (session %llu, %s domain%s)\n",
                  shared_ ? "shared" : "exclusive", asn::text::quoted(file_, 64).c_str(),
                  ranges.c_str(), static_cast<unsigned long long>(granted.token()),
                  static_cast<unsigned long long>(opened.session()), granted.domain().c_str(),
                  granted.waited() ? ", after waiting" : "");
      if (hold_) {
        std::printf("holding for %g s\n", *hold_);
      } else {
        std::printf("holding until Ctrl-C\n");
      }
    }
    std::fflush(stdout);
    const int rc = hold(*stub, s, opened, granted.token());
    close(*stub, s, opened);
    if (rc == kExitOk && s.format != OutputFormat::kJson) std::printf("released\n");
    return rc;
  }

 private:
  // Lock (or TryLock) as an asynchronous call, so that Ctrl-C can cancel the wait.
  grpc::Status acquire(Locks::Stub& stub, Session& s, asn::v1::LockResponse& granted) {
    grpc::ClientContext context;
    if (wait_ || try_) {
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::milliseconds(static_cast<int64_t>(
                               1000 * (try_ ? s.connection.timeout_seconds() : *wait_))));
    }
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    auto finish = [&](grpc::Status st) {
      std::lock_guard lock(mu);
      status = std::move(st);
      done = true;
      cv.notify_all();
    };
    if (try_) {
      stub.async()->TryLock(&context, &request_, &granted, finish);
    } else {
      stub.async()->Lock(&context, &request_, &granted, finish);
    }
    std::unique_lock lock(mu);
    bool cancelled = false;
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
      if (g_interrupted && !cancelled) {
        context.TryCancel();
        cancelled = true;
      }
    }
    return status;
  }

  // Keeps the session alive until --hold passes or Ctrl-C. After an asnd restart asnd asks
  // which locks the session holds (confirm_held): the one it was granted, `token`.
  int hold(Locks::Stub& stub, Session& s, const asn::v1::OpenSessionResponse& opened,
           uint64_t token) {
    bool confirm = false;
    const auto start = std::chrono::steady_clock::now();
    const auto period =
        std::chrono::milliseconds(std::max<int64_t>(opened.ttl_seconds() * 1000 / 3, 200));
    auto next_keepalive = start + period;
    while (!g_interrupted) {
      const auto now = std::chrono::steady_clock::now();
      if (hold_ && now - start >= std::chrono::duration<double>(*hold_)) break;
      if (now >= next_keepalive) {
        grpc::ClientContext context;
        s.connection.prepare(context);
        asn::v1::KeepAliveRequest request;
        request.set_session(opened.session());
        request.set_secret(opened.secret());
        if (confirm) request.mutable_held()->add_tokens(token);
        asn::v1::KeepAliveResponse response;
        grpc::Status status = stub.KeepAlive(&context, request, &response);
        if (!status.ok() && status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
          std::fprintf(stderr, "asnctl: the session was lost: %s\n",
                       status.error_message().c_str());
          return kExitFailed;
        }
        if (status.ok() && response.locks_lost()) {
          // A board reset emptied the switch's lock table: the lock may be gone. asnctl
          // does not take it back: it says so, and ends the session (close() after this),
          // which lets the others have the file at once.
          std::fprintf(stderr,
                       "asnctl: the lock was lost: the board was reset, which emptied the "
                       "switch's lock table; take the lock again if it is still needed\n");
          return kExitFailed;
        }
        confirm = status.ok() && response.confirm_held();
        next_keepalive = confirm ? now : now + period;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return kExitOk;
  }

  // Closing the session releases the lock (and cancels nothing else: it waits for nothing).
  void close(Locks::Stub& stub, Session& s, const asn::v1::OpenSessionResponse& opened) {
    grpc::ClientContext context;
    s.connection.prepare(context);
    asn::v1::CloseSessionRequest request;
    request.set_session(opened.session());
    request.set_secret(opened.secret());
    asn::v1::CloseSessionResponse response;
    (void)stub.CloseSession(&context, request, &response);
  }

  std::string file_;
  std::vector<std::string> ranges_;
  bool shared_ = false;
  bool try_ = false;
  std::optional<double> hold_;  // unset: until Ctrl-C
  std::optional<double> wait_;  // unset: until granted or Ctrl-C
  uint32_t ttl_ = 0;
  asn::v1::LockRequest request_;
};

// One group, `lock`, as `port` and `stripe` are named; `locks` is its alias, so that
// `locks list` (its name until issue 28) and `locks acquire` work as well as `lock list`.
const Registrar kLocks(60, [](CLI::App& app, CommandSet& commands) {
  auto* lock = app.add_subcommand("lock",
                                  "File locks the switch grants: take one by hand, list them, "
                                  "statistics, revoke and release (admin)");
  lock->alias("locks");
  lock->require_subcommand(1);
  auto* acquire = lock->add_subcommand(
      "acquire", "Lock byte ranges of a file, print the fencing token, hold until Ctrl-C");
  commands.add<LockAcquire>(acquire, acquire);
  auto* list = lock->add_subcommand("list", "Held locks and waiting requests");
  commands.add<LocksList>(list, list);
  auto* stats =
      lock->add_subcommand("stats", "Lock domains, their capacity and counters, sessions");
  commands.add<LocksStats>(stats, stats);
  auto* sessions = lock->add_subcommand("sessions", "Every open session, its lease and locks");
  commands.add<LocksSessions>(sessions, sessions);
  auto* revoke = lock->add_subcommand(
      "revoke", "End a session (admin): its locks are released, its waiting calls aborted");
  commands.add<LocksRevoke>(revoke, revoke);
  auto* release = lock->add_subcommand(
      "release", "Release bytes of a file from whichever sessions hold them (admin)");
  commands.add<LocksRelease>(release, release);
});

}  // namespace

}  // namespace asnctl

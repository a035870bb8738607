// libasnclient: byte-range file locks from asnd (the Locks gRPC service, asn/v1/locks.proto)
// for parallel file system clients. docs/client-library.md explains the semantics.
//
//   asn::client::LockClient client("unix:/run/asn/asnd.sock");
//   asn::client::Session session = client.open_session(std::chrono::seconds(15), "io-node-7");
//   asn::client::LockGuard lock(session, "inode:4711", {0, 1 << 20},
//                               asn::client::Mode::kExclusive, std::chrono::seconds(5));
//   write_to_storage(data, lock.token());  // the storage server fences on the token
//
// Errors are exceptions (asn::client::Error and its subclasses), because a lock is taken in
// a constructor (LockGuard) and a failed lock leaves the caller nothing to use: there is no
// value to return and every caller must stop. The C API (asnclient.h) turns them into codes.
//
// This header includes no gRPC header: programs using the library need neither gRPC nor
// protobuf headers, only -lasnclient (pkg-config asnclient).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__GNUC__)
#define ASN_CLIENT_API __attribute__((visibility("default")))
#else
#define ASN_CLIENT_API
#endif

namespace asn::client {

// The gRPC status codes, with the same numbers (the header does not include gRPC).
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "DEADLINE_EXCEEDED", ...
ASN_CLIENT_API const char* to_string(StatusCode code) noexcept;

// A call failed. what() is "LOCK: DEADLINE_EXCEEDED: <message>"; code() and message() are
// the gRPC status asnd (or the channel) returned.
class ASN_CLIENT_API Error : public std::runtime_error {
 public:
  Error(std::string_view call, StatusCode code, std::string message);
  StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

 private:
  StatusCode code_;
  std::string message_;
};

// The session is gone: asnd expired it (no KeepAlive within the lease, or no re-attach
// within the grace period after a restart) or it was closed. Its locks are gone; the
// caller must stop writing under them and open a new session. code() is FAILED_PRECONDITION
// (or, for a Lock that was waiting when the session ended, ABORTED).
class ASN_CLIENT_API SessionLost : public Error {
 public:
  using Error::Error;
};

// try_lock: another holder has a conflicting lock (FAILED_PRECONDITION; message() names its
// range). The session itself is fine.
class ASN_CLIENT_API Conflict : public Error {
 public:
  using Error::Error;
};

// The fabric's lock map gives the file to another switch (FAILED_PRECONDITION, reason
// "moved"): owner() is that switch's asnd endpoint. FabricSession follows it by itself.
class ASN_CLIENT_API Moved : public Error {
 public:
  Moved(std::string_view call, StatusCode code, std::string message, std::string owner);
  const std::string& owner() const noexcept { return owner_; }

 private:
  std::string owner_;
};

// Bytes [offset, offset + length) of a file.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// Datatype locking: `count` blocks of `block_length` bytes, `stride` bytes apart.
struct Strided {
  std::uint64_t offset = 0;
  std::uint64_t block_length = 0;
  std::uint64_t stride = 0;
  std::uint64_t count = 0;
};

// What a request names: a list of byte ranges or one strided pattern.
//   Ranges(0, 4096)   Ranges({{0, 10}, {100, 10}})   Ranges(Strided{0, 64, 1024, 16})
class ASN_CLIENT_API Ranges {
 public:
  Ranges(std::uint64_t offset, std::uint64_t length) : list_{{offset, length}} {}
  Ranges(ByteRange range) : list_{range} {}  // NOLINT: implicit on purpose
  Ranges(std::initializer_list<ByteRange> ranges) : list_(ranges) {}
  Ranges(std::span<const ByteRange> ranges) : list_(ranges.begin(), ranges.end()) {}
  Ranges(const std::vector<ByteRange>& ranges) : list_(ranges) {}
  Ranges(Strided strided) : strided_(strided) {}

  bool is_strided() const { return strided_.has_value(); }
  const std::vector<ByteRange>& list() const { return list_; }
  const Strided& strided() const { return *strided_; }

 private:
  std::vector<ByteRange> list_;
  std::optional<Strided> strided_;
};

enum class Mode { kShared = 1, kExclusive = 2 };

// When a call gives up: a timeout from now, a steady_clock time, or never (a Lock then waits
// until it is granted, cancelled, or its session ends).
class ASN_CLIENT_API Deadline {
 public:
  template <class Rep, class Period>
  Deadline(std::chrono::duration<Rep, Period> timeout)  // NOLINT: implicit on purpose
      : at_(std::chrono::steady_clock::now() +
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout)) {}
  Deadline(std::chrono::steady_clock::time_point at) : at_(at) {}  // NOLINT
  static Deadline never() { return Deadline(); }

  bool is_never() const { return !at_.has_value(); }
  std::chrono::steady_clock::time_point at() const { return *at_; }

 private:
  Deadline() = default;
  std::optional<std::chrono::steady_clock::time_point> at_;
};

// A lock granted.
struct Grant {
  // The fencing token: grows with every grant asnd makes. Send it with every write done
  // under the lock; a storage server refuses a write whose token is lower than one it has
  // already seen for those bytes (the holder lost the lock and someone else got it).
  std::uint64_t token = 0;
  std::uint64_t request = 0;      // the request's id in its domain (ListLocks shows it)
  std::vector<ByteRange> ranges;  // granted, in file-offset order
  std::string domain;             // "switch" (held in the switch) or "software"
  bool waited = false;            // queued behind a conflict before it was granted
};

// What a board reset took from a session (Session::on_locks_lost): the switch lost its lock
// table; the session reclaimed what it held there, and these could not be taken back.
struct LocksLost {
  std::uint64_t reclaimed = 0;  // ranges taken again (new, higher tokens)
  std::uint64_t lost = 0;       // ranges lost: stop writing under them
  std::vector<std::string> lost_files;
};

struct UnlockResult {
  std::uint64_t released = 0;  // unlock: the lock entries released or cut; downgrade: 0
  std::uint64_t granted = 0;   // waiting requests this let through
};

// Mutual TLS for TCP endpoints: PEM files. All empty: no TLS (the Unix socket, or a TCP
// listener without TLS).
struct TlsOptions {
  std::string ca_file;      // the CA that signed asnd's certificate
  std::string cert_file;    // this client's certificate (names the client to asnd)
  std::string key_file;     // its private key
  std::string server_name;  // override of the name checked in asnd's certificate
};

struct ClientOptions {
  TlsOptions tls;
  // Deadline of calls that do not wait for a lock (OpenSession, TryLock, Unlock, ...).
  std::chrono::milliseconds call_timeout{10000};
  // Reconnecting after asnd went away: the first retry after `initial_backoff`, then
  // doubling up to `max_backoff` (also the channel's own reconnect backoff).
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // Lock, try_lock, unlock and downgrade of all the client's sessions go as ops of one Batch
  // stream (opened at first use, opened again after it fails), the ops ready at once in one
  // message: far fewer messages than a call each when many threads lock at once. The same
  // results and exceptions; a lock whose stop_token can be stopped still goes as its own
  // call (an op of the stream cannot be cancelled alone), and an op sent while asnd is
  // unreachable fails at once (UNAVAILABLE) instead of waiting for it.
  bool batch = false;
};

// The outcome of an asynchronous call (Session::lock_async, ...): its value, or the exception
// the blocking call would have thrown (Error, SessionLost, Conflict).
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}                   // NOLINT: implicit on purpose
  Result(std::exception_ptr error) : error_(std::move(error)) {}  // NOLINT
  bool ok() const noexcept { return !error_; }
  // The value; throws the call's exception when it failed.
  const T& value() const& {
    if (error_) std::rethrow_exception(error_);
    return value_;
  }
  T&& value() && {
    if (error_) std::rethrow_exception(error_);
    return std::move(value_);
  }
  // Null when the call succeeded.
  const std::exception_ptr& error() const noexcept { return error_; }

 private:
  T value_{};
  std::exception_ptr error_;
};

class Session;

// One channel to asnd. Endpoints: "unix:/run/asn/asnd.sock", a socket path ("/run/...",
// "./asnd.sock"), or "host:port" (TCP; use TlsOptions for mutual TLS); empty: the default
// endpoint. Thread-safe; cheap to share. Sessions keep the channel alive, so a LockClient
// may be destroyed before them.
class ASN_CLIENT_API LockClient {
 public:
  struct Impl;  // opaque
  static constexpr const char* kDefaultEndpoint = "unix:/run/asn/asnd.sock";

  // The endpoint of an empty one: the socket $ASN_SOCKET names when it is set and not
  // empty (a path, as asnctl reads it), else kDefaultEndpoint.
  static std::string default_endpoint();

  explicit LockClient(std::string endpoint = {}, ClientOptions options = {});
  ~LockClient();
  LockClient(LockClient&&) noexcept;
  LockClient& operator=(LockClient&&) noexcept;

  // The gRPC target ("unix:/path" or "host:port").
  const std::string& target() const;

  // Opens a session with a lease of `ttl` (0: asnd's default, 15 s; at most 3600 s) and a
  // name for people (`asnctl locks list` shows it). Fails at once (UNAVAILABLE) when asnd
  // is not there. The session keeps itself alive from a background thread.
  Session open_session(std::chrono::seconds ttl = std::chrono::seconds(0), std::string name = {});

 private:
  std::shared_ptr<Impl> impl_;
};

// A session with its lease. Thread-safe: many threads may lock and unlock through one
// Session. A background thread sends KeepAlive every ttl/3; when asnd is unreachable it
// retries with capped exponential backoff and, once asnd is back (a restart keeps sessions
// for a grace period), re-attaches the same session id. When asnd says the session is gone
// the session is lost: the callback runs (once, on the keepalive thread or the thread that
// found out), lost() is true, and every call throws SessionLost without reaching asnd.
//
// Destroying a Session closes it (CloseSession releases its locks). Movable, not copyable.
class ASN_CLIENT_API Session {
 public:
  struct Impl;  // opaque

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  std::uint64_t id() const;
  std::chrono::seconds ttl() const;  // the lease asnd granted (KeepAlive may change it)
  bool lost() const;
  // How many times the session re-attached after asnd restarted.
  std::uint64_t reattach_count() const;
  // How many times asnd said this session's switch locks were lost (a board reset emptied
  // the switch's lock table). The session itself lives on and takes its locks again at once
  // (with new, higher tokens); what it could not take back is gone (on_locks_lost says
  // which, and their unlock fails with FAILED_PRECONDITION).
  std::uint64_t locks_lost_count() const;
  // Called on the keepalive thread when asnd said the switch lost this session's locks and
  // the session took them again (reclaim), with what it could not take back: stop using
  // those. Nobody else was granted any of them before the reclaims were done and this
  // returned. Must not block for long.
  void on_locks_lost(std::function<void(const LocksLost&)> callback);
  // The client's conservative view of the lease: the time of the last KeepAlive that asnd
  // answered, sent at t, plus the ttl. Past it, asnd may have expired the session (unless
  // it restarted and is within its grace period); the fencing token still protects data.
  std::chrono::steady_clock::time_point lease_expires() const;

  // Called once when the session is found lost, with the error that said so. Set it early;
  // it must not call back into this Session's destructor.
  void on_lost(std::function<void(const Error&)> callback);

  // Waits for the lock until `deadline` (DEADLINE_EXCEEDED), until `stop` is requested
  // (CANCELLED; the waiting request is withdrawn), or until the session ends (SessionLost).
  Grant lock(std::string_view file, const Ranges& ranges, Mode mode,
             Deadline deadline = Deadline::never(), std::stop_token stop = {});
  // Grants now or throws Conflict.
  Grant try_lock(std::string_view file, const Ranges& ranges, Mode mode);
  // Releases the session's locks on those bytes (all must be held: FAILED_PRECONDITION
  // otherwise, e.g. a double unlock).
  UnlockResult unlock(std::string_view file, const Ranges& ranges);
  // Turns the session's exclusive locks on those bytes into shared ones (same token).
  UnlockResult downgrade(std::string_view file, const Ranges& ranges);

  // Releases every lock and ends the session; the keepalive thread stops. Idempotent; a
  // lost session closes without a call.
  void close();

  // The asynchronous calls: the same requests and outcomes as the blocking ones, but they
  // return at once and `done` runs once with the Result. They go as ops of the client's Batch
  // stream (with or without ClientOptions::batch), so that the ops of many sessions, and all
  // the ops the callbacks of one reply make, share a message: one thread can keep many
  // sessions' locks moving without a thread each.
  //  - `done` runs on a library thread (or at once on the calling thread when the session is
  //    already lost or closed). It must not block and must not throw; it may make more
  //    asynchronous calls, which go out together once it and its neighbours returned. A
  //    blocking lock call in it fails with FAILED_PRECONDITION (it would wait for itself).
  //  - A lock_async waits at most until `deadline` (asnd answers DEADLINE_EXCEEDED); it cannot
  //    be cancelled alone. When asnd is unreachable, the op fails with UNAVAILABLE.
  //  - Destroying the Session closes it; the calls it still had pending then fail (their
  //    callbacks still run).
  void lock_async(std::string_view file, const Ranges& ranges, Mode mode, Deadline deadline,
                  std::function<void(Result<Grant>)> done);
  void try_lock_async(std::string_view file, const Ranges& ranges, Mode mode,
                      std::function<void(Result<Grant>)> done);
  void unlock_async(std::string_view file, const Ranges& ranges,
                    std::function<void(Result<UnlockResult>)> done);
  void downgrade_async(std::string_view file, const Ranges& ranges,
                       std::function<void(Result<UnlockResult>)> done);

 private:
  friend class LockClient;
  friend class LockGuard;
  explicit Session(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// A lock held for a scope: the constructor locks (like Session::lock), the destructor
// unlocks the same bytes (errors ignored: if the session is lost, the lock is gone anyway).
// Movable; keeps the session's state alive, not the Session object.
class ASN_CLIENT_API LockGuard {
 public:
  LockGuard(Session& session, std::string file, Ranges ranges, Mode mode,
            Deadline deadline = Deadline::never(), std::stop_token stop = {});
  // Takes over a lock already granted by session.lock(file, ranges, ...).
  LockGuard(Session& session, std::string file, Ranges ranges, Grant grant);
  LockGuard(LockGuard&&) noexcept;
  LockGuard& operator=(LockGuard&&) noexcept;
  ~LockGuard();

  bool owns_lock() const { return session_ != nullptr; }
  std::uint64_t token() const { return grant_.token; }
  const Grant& grant() const { return grant_; }
  const std::string& file() const { return file_; }

  // Exclusive -> shared, in place.
  void downgrade();
  // Unlocks now (throws on failure); the destructor then does nothing.
  void unlock();
  // Forgets the lock without unlocking it (it lives until unlocked or the session ends).
  Grant release();

 private:
  void reset() noexcept;
  std::shared_ptr<Session::Impl> session_;
  std::string file_;
  Ranges ranges_;
  Grant grant_;
};

}  // namespace asn::client

// libasnclient: the C API over the C++ one. Exceptions never cross into C.
#include "asn/client/asnclient.h"

#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <stop_token>
#include <string>
#include <utility>

#include "asn/client/locks.hpp"

using namespace asn::client;

struct asn_client {
  LockClient client;
};

struct asn_session {
  explicit asn_session(Session opened) : session(std::move(opened)) {}
  Session session;
  // The stop_source of the locks waiting now: asn_lock_cancel stops it and puts a fresh one
  // in its place, so that it cancels only the calls that were waiting when it was called.
  std::mutex cancel_mutex;
  std::stop_source cancel;
};

struct asn_lock_handle {
  LockGuard guard;
};

namespace {

thread_local std::string last_error;

asn_status fail(int status, std::string message) {
  last_error = std::move(message);
  return static_cast<asn_status>(status);
}

// Runs `body` (which returns nothing) and turns its exceptions into a status.
template <class Body>
asn_status guarded(Body&& body) {
  last_error.clear();
  try {
    body();
    return ASN_OK;
  } catch (const SessionLost& e) {
    return fail(ASN_SESSION_LOST, e.what());
  } catch (const Conflict& e) {
    return fail(ASN_CONFLICT, e.what());
  } catch (const Error& e) {
    return fail(static_cast<int>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ASN_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return fail(ASN_INTERNAL, e.what());
  } catch (...) {
    return fail(ASN_INTERNAL, "unknown error");
  }
}

bool valid_ranges(const void* file, size_t file_len, const asn_range* ranges, size_t n) {
  return file != nullptr && file_len > 0 && (ranges != nullptr || n == 0);
}

// ASN_TO_EOF (length 0) becomes what asnd's ranges say for "to the end of the file": up to
// 2^64 (lib/locks range.hpp: a length of 0 is refused there, the end of the space is offset +
// length = 2^64). From offset 0 that is 2^64 bytes, one more than a length holds, so the whole
// file goes as two touching ranges, [0, 2^64 - 1) and the last byte; unlock and downgrade
// map it the same way, so they name the same bytes.
Ranges to_ranges(const asn_range* ranges, size_t n) {
  constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();
  std::vector<ByteRange> list;
  list.reserve(n + 1);
  for (size_t i = 0; i < n; ++i) {
    const asn_range& r = ranges[i];
    if (r.length != ASN_TO_EOF) {
      list.push_back({r.offset, r.length});
    } else if (r.offset != 0) {
      list.push_back({r.offset, 0 - r.offset});  // 2^64 - offset
    } else {
      list.push_back({0, kLast});
      list.push_back({kLast, 1});
    }
  }
  return Ranges(list);
}

Mode to_mode(asn_lock_mode mode) {
  return mode == ASN_LOCK_EXCLUSIVE ? Mode::kExclusive : Mode::kShared;
}

bool valid_mode(asn_lock_mode mode) {
  return mode == ASN_LOCK_SHARED || mode == ASN_LOCK_EXCLUSIVE;
}

Deadline to_deadline(int64_t timeout_ms) {
  if (timeout_ms < 0) return Deadline::never();
  return Deadline(std::chrono::milliseconds(timeout_ms));
}

std::stop_token cancel_token(asn_session* session) {
  std::lock_guard lock(session->cancel_mutex);
  return session->cancel.get_token();
}

// The grant of a lock or try_lock; throws as the C++ API does.
Grant grant_of(asn_session* session, std::string_view file, const Ranges& ranges,
               asn_lock_mode mode, int64_t timeout_ms, bool try_lock) {
  if (try_lock) return session->session.try_lock(file, ranges, to_mode(mode));
  return session->session.lock(file, ranges, to_mode(mode), to_deadline(timeout_ms),
                               cancel_token(session));
}

asn_status lock_common(asn_session* session, const void* file, size_t file_len,
                       const Ranges& ranges, asn_lock_mode mode, int64_t timeout_ms, bool try_lock,
                       uint64_t* token) {
  return guarded([&] {
    std::string_view id(static_cast<const char*>(file), file_len);
    Grant grant = grant_of(session, id, ranges, mode, timeout_ms, try_lock);
    if (token != nullptr) *token = grant.token;
  });
}

asn_status acquire(const char* call, asn_session* session, const void* file, size_t file_len,
                   const asn_range* ranges, size_t n_ranges, asn_lock_mode mode, int64_t timeout_ms,
                   bool try_lock, asn_lock_handle** handle) {
  if (handle == nullptr) return fail(ASN_INVALID_ARGUMENT, std::string(call) + ": handle is NULL");
  *handle = nullptr;
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges) || !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT,
                std::string(call) + ": NULL session, empty file id or bad mode");
  }
  return guarded([&] {
    std::string id(static_cast<const char*>(file), file_len);
    Ranges list = to_ranges(ranges, n_ranges);
    Grant grant = grant_of(session, id, list, mode, timeout_ms, try_lock);
    // The guard first: if `new` fails, its destructor gives the granted lock back.
    LockGuard guard(session->session, std::move(id), std::move(list), std::move(grant));
    *handle = new asn_lock_handle{std::move(guard)};
  });
}

}  // namespace

extern "C" {

const char* asn_strerror(int status) {
  switch (status) {
    case ASN_SESSION_LOST:
      return "SESSION_LOST";
    case ASN_CONFLICT:
      return "CONFLICT";
    default:
      if (status < 0 || status > 16) return "UNKNOWN";
      return to_string(static_cast<StatusCode>(status));
  }
}

const char* asn_last_error(void) { return last_error.c_str(); }

asn_status asn_client_open(const char* endpoint, const char* tls_ca, const char* tls_cert,
                           const char* tls_key, asn_client** client) {
  if (client == nullptr) return fail(ASN_INVALID_ARGUMENT, "asn_client_open: client is NULL");
  *client = nullptr;
  return guarded([&] {
    ClientOptions options;
    if (tls_ca != nullptr) options.tls.ca_file = tls_ca;
    if (tls_cert != nullptr) options.tls.cert_file = tls_cert;
    if (tls_key != nullptr) options.tls.key_file = tls_key;
    // NULL: the default endpoint ($ASN_SOCKET, else /run/asn/asnd.sock).
    *client = new asn_client{LockClient(endpoint != nullptr ? endpoint : "", options)};
  });
}

void asn_client_close(asn_client* client) { delete client; }

asn_status asn_session_open(asn_client* client, unsigned ttl_seconds, const char* name,
                            asn_session** session) {
  if (client == nullptr || session == nullptr) {
    return fail(ASN_INVALID_ARGUMENT, "asn_session_open: client or session is NULL");
  }
  *session = nullptr;
  return guarded([&] {
    Session opened =
        client->client.open_session(std::chrono::seconds(ttl_seconds), name != nullptr ? name : "");
    *session = new asn_session(std::move(opened));
  });
}

asn_status asn_session_close(asn_session* session) {
  if (session == nullptr) return ASN_OK;
  asn_status status = guarded([&] { session->session.close(); });
  delete session;
  return status;
}

uint64_t asn_session_id(const asn_session* session) {
  return session != nullptr ? session->session.id() : 0;
}

int asn_session_lost(const asn_session* session) {
  return session != nullptr && session->session.lost() ? 1 : 0;
}

uint64_t asn_session_locks_lost(const asn_session* session) {
  return session != nullptr ? session->session.locks_lost_count() : 0;
}

void asn_session_on_locks_lost(asn_session* session, void (*callback)(void* arg), void* arg) {
  if (session == nullptr) return;
  if (callback == nullptr) {
    session->session.on_locks_lost(nullptr);
    return;
  }
  session->session.on_locks_lost([callback, arg](const asn::client::LocksLost&) { callback(arg); });
}

void asn_session_on_lost(asn_session* session, void (*callback)(void* arg), void* arg) {
  if (session == nullptr) return;
  if (callback == nullptr) {
    session->session.on_lost({});
    return;
  }
  session->session.on_lost([callback, arg](const Error&) { callback(arg); });
}

asn_status asn_lock(asn_session* session, const void* file, size_t file_len,
                    const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                    int64_t timeout_ms, uint64_t* token) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges) || !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_lock: NULL session, empty file id or bad mode");
  }
  return lock_common(session, file, file_len, to_ranges(ranges, n_ranges), mode, timeout_ms, false,
                     token);
}

asn_status asn_lock_strided(asn_session* session, const void* file, size_t file_len,
                            const asn_strided* strided, asn_lock_mode mode, int64_t timeout_ms,
                            uint64_t* token) {
  if (session == nullptr || strided == nullptr || !valid_ranges(file, file_len, nullptr, 0) ||
      !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_lock_strided: NULL argument or bad mode");
  }
  Strided pattern{strided->offset, strided->block_length, strided->stride, strided->count};
  return lock_common(session, file, file_len, Ranges(pattern), mode, timeout_ms, false, token);
}

asn_status asn_try_lock(asn_session* session, const void* file, size_t file_len,
                        const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                        uint64_t* token) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges) || !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_try_lock: NULL session, empty file id or bad mode");
  }
  return lock_common(session, file, file_len, to_ranges(ranges, n_ranges), mode, 0, true, token);
}

asn_status asn_unlock(asn_session* session, const void* file, size_t file_len,
                      const asn_range* ranges, size_t n_ranges) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_unlock: NULL session or empty file id");
  }
  return guarded([&] {
    session->session.unlock(std::string_view(static_cast<const char*>(file), file_len),
                            to_ranges(ranges, n_ranges));
  });
}

asn_status asn_downgrade(asn_session* session, const void* file, size_t file_len,
                         const asn_range* ranges, size_t n_ranges) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_downgrade: NULL session or empty file id");
  }
  return guarded([&] {
    session->session.downgrade(std::string_view(static_cast<const char*>(file), file_len),
                               to_ranges(ranges, n_ranges));
  });
}

asn_status asn_lock_cancel(asn_session* session) {
  if (session == nullptr) return fail(ASN_INVALID_ARGUMENT, "asn_lock_cancel: session is NULL");
  std::lock_guard lock(session->cancel_mutex);
  session->cancel.request_stop();
  session->cancel = std::stop_source();
  return ASN_OK;
}

asn_status asn_lock_acquire(asn_session* session, const void* file, size_t file_len,
                            const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                            int64_t timeout_ms, asn_lock_handle** handle) {
  return acquire("asn_lock_acquire", session, file, file_len, ranges, n_ranges, mode, timeout_ms,
                 false, handle);
}

asn_status asn_try_lock_acquire(asn_session* session, const void* file, size_t file_len,
                                const asn_range* ranges, size_t n_ranges, asn_lock_mode mode,
                                asn_lock_handle** handle) {
  return acquire("asn_try_lock_acquire", session, file, file_len, ranges, n_ranges, mode, 0, true,
                 handle);
}

asn_status asn_unlock_handle(asn_lock_handle* handle) {
  if (handle == nullptr) return fail(ASN_INVALID_ARGUMENT, "asn_unlock_handle: handle is NULL");
  return guarded([&] { handle->guard.unlock(); });
}

asn_status asn_downgrade_handle(asn_lock_handle* handle) {
  if (handle == nullptr) return fail(ASN_INVALID_ARGUMENT, "asn_downgrade_handle: handle is NULL");
  return guarded([&] { handle->guard.downgrade(); });
}

uint64_t asn_lock_handle_token(const asn_lock_handle* handle) {
  return handle != nullptr ? handle->guard.token() : 0;
}

void asn_lock_handle_free(asn_lock_handle* handle) {
  if (handle == nullptr) return;
  handle->guard.release();  // the lock lives on until unlocked or the session ends
  delete handle;
}

}  // extern "C"

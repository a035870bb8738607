// libasnclient: the C API over the C++ one. Exceptions never cross into C.
#include "asn/client/asnclient.h"

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "asn/client/locks.hpp"

using namespace asn::client;

struct asn_client {
  LockClient client;
};

struct asn_session {
  Session session;
};

namespace {

thread_local std::string last_error;

int fail(int status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body` (which returns nothing) and turns its exceptions into a status.
template <class Body>
int guarded(Body&& body) {
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

Ranges to_ranges(const asn_range* ranges, size_t n) {
  std::vector<ByteRange> list;
  list.reserve(n);
  for (size_t i = 0; i < n; ++i) list.push_back({ranges[i].offset, ranges[i].length});
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

int lock_common(asn_session* session, const void* file, size_t file_len, const Ranges& ranges,
                asn_lock_mode mode, int64_t timeout_ms, bool try_lock, uint64_t* token) {
  return guarded([&] {
    std::string_view id(static_cast<const char*>(file), file_len);
    Grant grant = try_lock
                      ? session->session.try_lock(id, ranges, to_mode(mode))
                      : session->session.lock(id, ranges, to_mode(mode), to_deadline(timeout_ms));
    if (token != nullptr) *token = grant.token;
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

int asn_client_open(const char* endpoint, const char* tls_ca, const char* tls_cert,
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

int asn_session_open(asn_client* client, unsigned ttl_seconds, const char* name,
                     asn_session** session) {
  if (client == nullptr || session == nullptr) {
    return fail(ASN_INVALID_ARGUMENT, "asn_session_open: client or session is NULL");
  }
  *session = nullptr;
  return guarded([&] {
    Session opened =
        client->client.open_session(std::chrono::seconds(ttl_seconds), name != nullptr ? name : "");
    *session = new asn_session{std::move(opened)};
  });
}

int asn_session_close(asn_session* session) {
  if (session == nullptr) return ASN_OK;
  int status = guarded([&] { session->session.close(); });
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

int asn_lock(asn_session* session, const void* file, size_t file_len, const asn_range* ranges,
             size_t n_ranges, asn_lock_mode mode, int64_t timeout_ms, uint64_t* token) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges) || !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_lock: NULL session, empty file id or bad mode");
  }
  return lock_common(session, file, file_len, to_ranges(ranges, n_ranges), mode, timeout_ms, false,
                     token);
}

int asn_lock_strided(asn_session* session, const void* file, size_t file_len,
                     const asn_strided* strided, asn_lock_mode mode, int64_t timeout_ms,
                     uint64_t* token) {
  if (session == nullptr || strided == nullptr || !valid_ranges(file, file_len, nullptr, 0) ||
      !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_lock_strided: NULL argument or bad mode");
  }
  Strided pattern{strided->offset, strided->block_length, strided->stride, strided->count};
  return lock_common(session, file, file_len, Ranges(pattern), mode, timeout_ms, false, token);
}

int asn_try_lock(asn_session* session, const void* file, size_t file_len, const asn_range* ranges,
                 size_t n_ranges, asn_lock_mode mode, uint64_t* token) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges) || !valid_mode(mode)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_try_lock: NULL session, empty file id or bad mode");
  }
  return lock_common(session, file, file_len, to_ranges(ranges, n_ranges), mode, 0, true, token);
}

int asn_unlock(asn_session* session, const void* file, size_t file_len, const asn_range* ranges,
               size_t n_ranges) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_unlock: NULL session or empty file id");
  }
  return guarded([&] {
    session->session.unlock(std::string_view(static_cast<const char*>(file), file_len),
                            to_ranges(ranges, n_ranges));
  });
}

int asn_downgrade(asn_session* session, const void* file, size_t file_len, const asn_range* ranges,
                  size_t n_ranges) {
  if (session == nullptr || !valid_ranges(file, file_len, ranges, n_ranges)) {
    return fail(ASN_INVALID_ARGUMENT, "asn_downgrade: NULL session or empty file id");
  }
  return guarded([&] {
    session->session.downgrade(std::string_view(static_cast<const char*>(file), file_len),
                               to_ranges(ranges, n_ranges));
  });
}

}  // extern "C"
